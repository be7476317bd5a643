import { type Kysely, sql } from 'kysely';
import { runMigrations } from '../migrate.js';

/** The Postgres keyword index: one row per fact with a stored English tsvector and a trigram index. */
export const migrateKeywordIndex = (db: Kysely<unknown>) =>
  runMigrations(db, 'keyword', {
    '0001_keyword_facts': {
      async up(db: Kysely<unknown>) {
        await sql`create table if not exists keyword_facts (
          fact_id uuid primary key, message_id uuid not null, channel_id text not null, text text not null,
          fact_type text not null, importance text not null, topic_tags text[] not null default '{}',
          entity_tags text[] not null default '{}', author_name text not null, message_ts timestamptz not null,
          quality_score double precision not null,
          tsv tsvector generated always as (to_tsvector('english', text)) stored)`.execute(db);
        await sql`create index if not exists keyword_facts_tsv on keyword_facts using gin (tsv)`.execute(db);
        await sql`create index if not exists keyword_facts_trgm on keyword_facts using gin (text gin_trgm_ops)`.execute(
          db,
        );
        await sql`create index if not exists keyword_facts_channel on keyword_facts (channel_id, message_ts desc)`.execute(
          db,
        );
        await sql`create index if not exists keyword_facts_message on keyword_facts (message_id)`.execute(db);
      },
    },
  });
