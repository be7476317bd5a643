import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * Tables of the channel-access store (docs/access.md "Channel access"; idempotent): `channel_access` (one row per
 * channel, its latest ChannelMembershipObserved) and `channel_access_members` (that observation's member user ids,
 * primary key (channel_id, user_id), indexed by user for "which private channels may this user see").
 */
export const migrateAccess = (db: MigrationDb) =>
  runMigrations(db, 'access', {
    '0001_channel_access': {
      async up(db: MigrationDb) {
        await sql`create table if not exists channel_access (channel_id text primary key,
          platform text not null check (platform in ('platform_a', 'platform_b')), connection_id text,
          is_private boolean not null, members_known boolean not null,
          source text not null check (source in ('sync', 'refresh', 'import')),
          observed_at timestamptz not null, updated_at timestamptz not null default now())`.execute(db);
        await sql`create index if not exists channel_access_private on channel_access (observed_at)
          where is_private`.execute(db);
        await sql`create table if not exists channel_access_members (
          channel_id text not null references channel_access (channel_id) on delete cascade, user_id text not null,
          primary key (channel_id, user_id))`.execute(db);
        await sql`create index if not exists channel_access_members_user on channel_access_members (user_id)`.execute(
          db,
        );
      },
    },
  });
