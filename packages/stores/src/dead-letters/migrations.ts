import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * Table `dead_letters` (the dead-letters projector's read store): one row per event a projector gave up on (spec
 * "Degraded behaviour": dead-letter items need manual inspection after 5 failures), keyed by the UUID v5 of (consumer
 * group, topic, partition, offset), with the error, the original event's data (JSON text; null when the DeadLettered
 * event kept none) and its re-drive (status `pending` → `redriven`, the position the event was appended again at).
 * Idempotent.
 *
 * 0002 (error codes): `error_code` is the failure's code (DeadLettered `errorCode`; null when absent), so items can be
 * found by their cause (the LLM recovery re-drive takes those of PROVIDER_UNAVAILABLE).
 */
export const migrateDeadLetters = (db: MigrationDb) =>
  runMigrations(db, 'dead_letters', {
    '0001_dead_letters': {
      async up(db: MigrationDb) {
        await sql`create table if not exists dead_letters (id text primary key, group_name text not null,
          topic text not null, partition integer not null, "offset" bigint not null, event_type text not null,
          key text not null, error text not null, attempts integer not null, failed_at timestamptz not null,
          event_data text, status text not null default 'pending', redriven_at timestamptz, redrive_topic text,
          redrive_partition integer, redrive_offset bigint, updated_at timestamptz not null default now())`.execute(db);
        await sql`create index if not exists dead_letters_failed on dead_letters (failed_at desc, id)`.execute(db);
        await sql`create index if not exists dead_letters_status on dead_letters (status)`.execute(db);
      },
    },
    '0002_dead_letter_codes': {
      async up(db: MigrationDb) {
        await sql`alter table dead_letters add column if not exists error_code text`.execute(db);
      },
    },
  });
