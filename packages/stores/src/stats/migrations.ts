import type { MigrationDb } from '@atlas/db';
import { runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * Tables of the stats store (spec "Statistics and health objects"), written only by the stats projector (except
 * `stats_llm_usage`, an append-only ledger written by whoever calls an LLM). Every projector write is idempotent:
 * - `stats_channels`: channel id, name, platform (ChannelDiscovered, or a message's channel name);
 * - `stats_messages`: one narrow row per message (author, world time, deleted flag; MessageIngested / MessageDeleted);
 * - `stats_facts`: one row per fact of a message's current fact set (FactsExtracted replaces the message's rows);
 *   `extracted_at` is the set's system time, `message_ts` the world time of its message;
 * - `stats_entities`: the graph contribution of each message (EntitiesExtracted replaces it), and
 *   `stats_entity_first`: when each entity was first seen (the `entity_created` activity);
 * - `stats_sync_jobs`: the latest state of each sync job (SyncJobUpdated, highest seq wins);
 * - `stats_dead_letters`: every DeadLettered event, keyed by the dead event's group, topic, partition and offset
 *   (`dl_id` = deadLetterId), with `redriven_at` once a DeadLetterRedriven names it;
 * - `stats_llm_usage`: LLM calls, tokens and estimated cost per UTC day, tier, provider and model.
 */
export const migrateStats = (db: MigrationDb) =>
  runMigrations(db, 'stats', {
    '0001_stats': {
      async up(db: MigrationDb) {
        await sql`create table if not exists stats_channels (channel_id text primary key, name text not null,
          platform text not null, updated_at timestamptz not null default now())`.execute(db);
        await sql`create table if not exists stats_messages (channel_id text not null, message_id text not null,
          author_id text not null, author_name text not null, is_bot boolean not null default false,
          ts timestamptz not null, deleted boolean not null default false, primary key (channel_id, message_id))`.execute(
          db,
        );
        await sql`create index if not exists stats_messages_ts on stats_messages (channel_id, ts)`.execute(db);
        await sql`create index if not exists stats_messages_author on stats_messages (author_id)`.execute(db);
        await sql`create table if not exists stats_facts (message_id text not null, fact_id text not null,
          channel_id text not null, author_id text not null, author_name text not null, fact_type text not null,
          importance text not null, quality double precision not null, topic_tags jsonb not null,
          message_ts timestamptz not null, extracted_at timestamptz not null, primary key (message_id, fact_id))`.execute(
          db,
        );
        await sql`create index if not exists stats_facts_channel on stats_facts (channel_id, message_ts)`.execute(db);
        await sql`create index if not exists stats_facts_extracted on stats_facts (extracted_at)`.execute(db);
        await sql`create table if not exists stats_entities (message_id text not null, entity_id text not null,
          channel_id text not null, type text not null, name text not null, primary key (message_id, entity_id))`.execute(
          db,
        );
        await sql`create index if not exists stats_entities_channel on stats_entities (channel_id)`.execute(db);
        await sql`create table if not exists stats_entity_first (entity_id text primary key, channel_id text not null,
          type text not null, name text not null, first_seen_at timestamptz not null)`.execute(db);
        await sql`create index if not exists stats_entity_first_seen on stats_entity_first (first_seen_at)`.execute(db);
        await sql`create table if not exists stats_sync_jobs (job_id text primary key, channel_id text not null,
          seq integer not null, status text not null, started_at timestamptz, completed_at timestamptz,
          messages_synced integer not null default 0, facts_extracted integer not null default 0,
          entities_created integer not null default 0)`.execute(db);
        await sql`create table if not exists stats_dead_letters (dl_group text not null, topic text not null,
          dl_partition integer not null, dl_offset bigint not null, event_type text not null, event_key text not null,
          error text not null, attempts integer not null, failed_at timestamptz not null,
          primary key (dl_group, topic, dl_partition, dl_offset))`.execute(db);
        await sql`create table if not exists stats_llm_usage (day date not null, tier text not null,
          provider text not null, model text not null, calls bigint not null default 0,
          failed_calls bigint not null default 0, prompt_tokens bigint not null default 0,
          completion_tokens bigint not null default 0, estimated_token_calls bigint not null default 0,
          cost_usd double precision not null default 0, primary key (day, tier, provider, model))`.execute(db);
      },
    },
    '0002_stats_entity_index': {
      async up(db: MigrationDb) {
        // entity_created activity counts the messages naming an hour's new entities.
        await sql`create index if not exists stats_entities_entity on stats_entities (entity_id)`.execute(db);
      },
    },
    '0003_stats_dead_letter_redrive': {
      async up(db: MigrationDb) {
        // A re-driven dead letter (DeadLetterRedriven, by deadLetterId) leaves the depth.
        await sql`alter table stats_dead_letters add column if not exists dl_id text`.execute(db);
        await sql`alter table stats_dead_letters add column if not exists redriven_at timestamptz`.execute(db);
        await sql`create index if not exists stats_dead_letters_id on stats_dead_letters (dl_id)`.execute(db);
      },
    },
  });
