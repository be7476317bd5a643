import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * Tables of the ask store (spec "Ask session and messages", "Ask session" states; idempotent):
 * - `ask_sessions`: session_id, channel_id (null for sessions of POST /api/ask, the channel of a channel-scoped
 *   ask), created_at, last_activity (the last completed stream: the 30-minute inactivity rule reads it);
 * - `ask_messages`: message_id, session_id (deleted with its session), seq (order in the session), role
 *   (`user` | `assistant`), content, citations (jsonb array of ask citations), created_at, metadata (jsonb: mode,
 *   tokens_used, route, model, duration_ms of an answer);
 * - `ask_feedback`: one rating per answer (message_id), `up` | `down`, optional comment; a second rating replaces
 *   the first.
 */
export const migrateAsk = (db: MigrationDb) =>
  runMigrations(db, 'ask', {
    '0001_ask': {
      async up(db: MigrationDb) {
        await sql`create table if not exists ask_sessions (session_id text primary key, channel_id text,
          created_at timestamptz not null, last_activity timestamptz not null)`.execute(db);
        await sql`create index if not exists ask_sessions_channel on ask_sessions (channel_id, last_activity desc)`.execute(
          db,
        );
        await sql`create table if not exists ask_messages (message_id text primary key,
          session_id text not null references ask_sessions (session_id) on delete cascade, seq integer not null,
          role text not null check (role in ('user', 'assistant')), content text not null,
          citations jsonb not null default '[]'::jsonb, created_at timestamptz not null,
          metadata jsonb not null default '{}'::jsonb, unique (session_id, seq))`.execute(db);
        await sql`create table if not exists ask_feedback (message_id text primary key
          references ask_messages (message_id) on delete cascade, session_id text not null,
          rating text not null check (rating in ('up', 'down')), comment text, created_at timestamptz not null,
          updated_at timestamptz not null)`.execute(db);
      },
    },
    '0002_ask_session_owner': {
      async up(db: MigrationDb) {
        // Sessions belong to the key (or bridge user) that made them (docs/access.md "Ask sessions").
        await sql`alter table ask_sessions add column if not exists owner text`.execute(db);
        await sql`create index if not exists ask_sessions_owner on ask_sessions (owner, last_activity desc)`.execute(
          db,
        );
      },
    },
  });
