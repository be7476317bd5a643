import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * Tables of the lifecycle store (issue 27 point 1), written only by the lifecycle projector; every write idempotent:
 * - `lifecycle_facts`: the decision, action-item and proposal facts of each message's current fact set
 *   (FactsExtracted replaces the message's rows), `data` the LifecycleFact as JSON text;
 * - `lifecycle_signals`: one row per message carrying a lifecycle cue (MessageIngested upserts or removes it,
 *   MessageDeleted removes it), `data` the LifecycleSignal as JSON text;
 * - `lifecycle_supersessions`: the supersessions of each message's graph contribution (EntitiesExtracted replaces them);
 * - `lifecycle_resolutions` (0002): admins' resolutions of potential contradictions (ContradictionResolved), one row
 *   per contradiction id, the first one winning (a redelivery or replay writes the same row);
 * - `lifecycle_items`: the derived decisions and action items of each channel (replaced per channel after each batch
 *   from the three tables above), filter columns beside `data`, the LifecycleItem with its transitions as JSON text.
 */
export const migrateLifecycle = (db: MigrationDb) =>
  runMigrations(db, 'lifecycle', {
    '0001_lifecycle': {
      async up(db: MigrationDb) {
        await sql`create table if not exists lifecycle_facts (fact_id text primary key, channel_id text not null,
          message_id text not null, message_ts text not null, data text not null)`.execute(db);
        await sql`create index if not exists lifecycle_facts_channel on lifecycle_facts (channel_id)`.execute(db);
        await sql`create index if not exists lifecycle_facts_message on lifecycle_facts (message_id)`.execute(db);
        await sql`create table if not exists lifecycle_signals (message_id text primary key, channel_id text not null,
          ts text not null, data text not null)`.execute(db);
        await sql`create index if not exists lifecycle_signals_channel on lifecycle_signals (channel_id, ts)`.execute(
          db,
        );
        await sql`create table if not exists lifecycle_supersessions (message_id text not null, channel_id text not null,
          fact_id text not null, superseded_by text not null, invalid_at text not null, certain boolean not null,
          primary key (message_id, fact_id, superseded_by))`.execute(db);
        await sql`create index if not exists lifecycle_supersessions_channel on lifecycle_supersessions (channel_id)`.execute(
          db,
        );
        await sql`create table if not exists lifecycle_items (item_id text primary key, channel_id text not null,
          kind text not null, state text not null, owner text, due_date text, created_at text not null,
          updated_at text not null, superseded_by text, data text not null)`.execute(db);
        await sql`create index if not exists lifecycle_items_channel on lifecycle_items (channel_id, created_at)`.execute(
          db,
        );
        await sql`create index if not exists lifecycle_items_created on lifecycle_items (created_at)`.execute(db);
      },
    },
    '0002_lifecycle_resolutions': {
      async up(db: MigrationDb) {
        await sql`create table if not exists lifecycle_resolutions (contradiction_id text primary key,
          channel_id text not null, fact_id text not null, superseded_by text not null, outcome text not null)`.execute(
          db,
        );
        await sql`create index if not exists lifecycle_resolutions_channel on lifecycle_resolutions (channel_id)`.execute(
          db,
        );
      },
    },
  });
