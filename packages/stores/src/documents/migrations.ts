import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/** Tables of the document store: channels, messages, memories (spec "Channel", "Channel message", "Memory"). */
export const migrateDocuments = (db: MigrationDb) =>
  runMigrations(db, 'documents', {
    '0001_documents': {
      async up(db: MigrationDb) {
        await sql`create table if not exists channels (
          id text primary key, platform text not null, workspace_id text not null, workspace_name text not null,
          name text not null, is_private boolean not null default false, member_count int not null default 0, topic text,
          platform_created_at timestamptz, connected boolean not null default false, last_sync timestamptz,
          created_at timestamptz not null default now(), updated_at timestamptz not null default now(),
          settings jsonb not null default '{}'::jsonb)`.execute(db);
        await sql`create table if not exists messages (
          channel_id text not null, id text not null, message_uuid uuid not null unique, platform text not null,
          text text not null, author_id text not null, author_name text not null, author_is_bot boolean not null default false,
          ts timestamptz not null, thread_ts text, reply_to_id text, subtype text,
          reactions jsonb not null default '[]'::jsonb, attachments jsonb not null default '[]'::jsonb,
          has_media boolean not null default false, edited_at timestamptz, permalink text not null, content_hash text not null,
          deleted_at timestamptz, ingested_at timestamptz not null default now(), primary key (channel_id, id))`.execute(
          db,
        );
        await sql`create index if not exists messages_channel_ts on messages (channel_id, ts desc)`.execute(db);
        await sql`create table if not exists memories (
          id uuid primary key, message_uuid uuid not null, channel_id text not null, source_message_id text not null,
          platform text not null, memory_text text not null, quality_score double precision not null,
          tier text not null default 'atomic', author_id text not null, author_name text not null, message_ts timestamptz not null,
          thread_ts text, permalink text not null, topic_tags text[] not null default '{}', entity_tags text[] not null default '{}',
          action_tags text[] not null default '{}', importance text not null, fact_type text not null,
          thread_context_summary text not null default '', valid_at timestamptz not null, invalid_at timestamptz,
          superseded_by uuid, potential_contradiction boolean not null default false, source_lang text not null default 'en',
          cluster_id text, graph_entity_ids text[] not null default '{}', extractor text not null,
          created_at timestamptz not null default now(), updated_at timestamptz not null default now())`.execute(db);
        await sql`create index if not exists memories_channel_ts on memories (channel_id, message_ts desc)`.execute(db);
        await sql`create index if not exists memories_message on memories (message_uuid)`.execute(db);
        await sql`create index if not exists memories_topics on memories using gin (topic_tags)`.execute(db);
        await sql`create index if not exists memories_entities on memories using gin (entity_tags)`.execute(db);
      },
    },
    '0002_graph_links': {
      // Written from EntitiesExtracted (atlas.graph), which may arrive before or after the facts it names,
      // so they live beside memories and are joined on read (spec memory detail: graph_entity_ids, validity).
      async up(db: MigrationDb) {
        await sql`create table if not exists memory_entities (
          fact_id uuid not null, entity_id uuid not null, message_uuid uuid not null, channel_id text not null,
          primary key (fact_id, entity_id))`.execute(db);
        await sql`create index if not exists memory_entities_message on memory_entities (message_uuid)`.execute(db);
        await sql`create index if not exists memory_entities_channel on memory_entities (channel_id, entity_id)`.execute(
          db,
        );
        await sql`create table if not exists fact_supersessions (
          by_message_uuid uuid not null, fact_id uuid not null, superseded_by uuid not null,
          invalid_at timestamptz not null, certain boolean not null, reason text not null default '',
          primary key (by_message_uuid, fact_id))`.execute(db);
        await sql`create index if not exists fact_supersessions_fact on fact_supersessions (fact_id)`.execute(db);
      },
    },
    '0003_supersession_channel': {
      // DELETE /api/channels/{channel_id}/data removes a channel's supersessions by channel (ChannelDataDeleted).
      async up(db: MigrationDb) {
        await sql`alter table fact_supersessions add column if not exists channel_id text`.execute(db);
        await sql`update fact_supersessions s set channel_id = m.channel_id from messages m
          where s.channel_id is null and m.message_uuid = s.by_message_uuid`.execute(db);
        await sql`update fact_supersessions s set channel_id = f.channel_id from memories f
          where s.channel_id is null and f.id = s.fact_id`.execute(db);
        await sql`create index if not exists fact_supersessions_channel on fact_supersessions (channel_id)`.execute(db);
      },
    },
    '0004_contradiction_resolutions': {
      // ContradictionResolved (atlas.graph; issue 27, point 5): an admin's resolution of a potential contradiction,
      // kept beside the supersession it resolves and joined on read (re-extraction replaces supersessions, not these).
      async up(db: MigrationDb) {
        await sql`create table if not exists contradiction_resolutions (
          id uuid primary key, channel_id text not null, fact_id uuid not null, superseded_by uuid not null,
          outcome text not null, invalid_at timestamptz not null, note text, resolved_by text not null,
          resolved_at timestamptz not null)`.execute(db);
        await sql`create index if not exists contradiction_resolutions_fact on contradiction_resolutions (fact_id)`.execute(
          db,
        );
        await sql`create index if not exists contradiction_resolutions_channel on contradiction_resolutions (channel_id)`.execute(
          db,
        );
      },
    },
    '0005_digest_posts': {
      // DigestPosted (atlas.messages; issue 27 point 4): the newest digest the bot posted to each channel.
      async up(db: MigrationDb) {
        await sql`create table if not exists digest_posts (channel_id text primary key, platform text not null,
          connection_id text not null, period_start timestamptz not null, period_end timestamptz not null,
          days integer not null, platform_message_id text not null, citations integer not null,
          posted_at timestamptz not null)`.execute(db);
      },
    },
    '0006_message_versions': {
      // The texts an edited message had, each from the time it was written (the message's time, then each edit's):
      // the channel messages as of a date show the text of then (docs/routes.md "As of a date").
      async up(db: MigrationDb) {
        await sql`create table if not exists message_versions (channel_id text not null, id text not null,
          valid_from timestamptz not null, text text not null, primary key (channel_id, id, valid_from))`.execute(db);
      },
    },
  });
