import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * Tables of the connection store (spec "Connection", "Connection channel", "Connection status"; idempotent):
 * - `connections`: id, name, platform (`platform_a` | `platform_b`), status (`connected` | `disconnected` |
 *   `error`), created_at, updated_at, last_sync (null until a sync completes), validated_at (the last successful
 *   validation), settings (jsonb: sync_interval_minutes, wiki_enabled, graph_enabled), credentials (the AES-256-GCM
 *   envelope of the credentials JSON, never plaintext: packages/core/src/credentials.ts);
 * - `connection_channels`: the connection's saved channel list (deleted with its connection): channel_id (the
 *   platform's), name, is_private, member_count, sync_enabled, updated_at.
 */
export const migrateConnections = (db: MigrationDb) =>
  runMigrations(db, 'connections', {
    '0001_connections': {
      async up(db: MigrationDb) {
        await sql`create table if not exists connections (id text primary key, name text not null,
          platform text not null check (platform in ('platform_a', 'platform_b')),
          status text not null check (status in ('connected', 'disconnected', 'error')),
          created_at timestamptz not null, updated_at timestamptz not null, last_sync timestamptz,
          validated_at timestamptz, settings jsonb not null default '{}'::jsonb, credentials text not null)`.execute(
          db,
        );
        await sql`create table if not exists connection_channels (
          connection_id text not null references connections (id) on delete cascade, channel_id text not null,
          name text not null, is_private boolean not null, member_count integer not null,
          sync_enabled boolean not null, updated_at timestamptz not null,
          primary key (connection_id, channel_id))`.execute(db);
      },
    },
  });
