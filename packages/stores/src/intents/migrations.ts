import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * Table `write_intents` of the reconciler's read store (spec "Write intent (two-phase persist)"), one row per intent,
 * written only by the reconciler projector from WriteIntentCreated, StoreWriteApplied and StoreWriteFailed
 * (atlas.intents): per-store status (`pending` | `done` | `failed` | `skipped`; null while only outcomes are known),
 * the last error of each store, retry_count (the highest reconciler attempt reported) and the folded `state`
 * (`pending` | `done` | `failed`; `abandoned` is derived at read time from created_at). created_at is null for an
 * intent whose WriteIntentCreated has not been folded (yet). Idempotent.
 */
export const migrateIntents = (db: MigrationDb) =>
  runMigrations(db, 'write_intents', {
    '0001_write_intents': {
      async up(db: MigrationDb) {
        await sql`create table if not exists write_intents (intent_id text primary key, message_id text not null,
          channel_id text not null, fact_count integer not null default 0, extracted_at text,
          facts_partition integer, facts_offset bigint,
          created_at timestamptz, vector_status text, vector_error text, graph_status text, graph_error text,
          retry_count integer not null default 0, state text not null default 'pending',
          last_attempt_at timestamptz, updated_at timestamptz not null)`.execute(db);
        // The reconciler's pass reads pending intents by age; counts read by state.
        await sql`create index if not exists write_intents_pending on write_intents (created_at)
          where state = 'pending'`.execute(db);
        await sql`create index if not exists write_intents_state on write_intents (state)`.execute(db);
        await sql`create index if not exists write_intents_message on write_intents (message_id)`.execute(db);
      },
    },
  });
