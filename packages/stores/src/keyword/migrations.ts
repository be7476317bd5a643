import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * Weight of a term occurrence in a fact's context (author, source message, previous turn) against 1 in its text
 * (BM25F-style). Baked into keyword_facts.tf when a row is written: a change needs a reindex (replay).
 */
export const CONTEXT_WEIGHT = 0.5;

/**
 * The Postgres keyword index: one row per fact with an English tsvector (the fact's text at weight A,
 * its context at weight B) and its token count, a trigram index on the text, and the corpus statistics
 * BM25 needs, kept by statement triggers in the same transaction as every write: keyword_terms
 * (lexeme → document frequency) and keyword_stats (documents, tokens).
 */
export const migrateKeywordIndex = (db: MigrationDb) =>
  runMigrations(db, 'keyword', {
    '0001_keyword_facts': {
      async up(db: MigrationDb) {
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
    '0002_bm25': {
      async up(db: MigrationDb) {
        await sql`alter table keyword_facts add column if not exists context text not null default ''`.execute(db);
        await sql`alter table keyword_facts drop column if exists tsv`.execute(db); // was generated from text alone
        await sql`alter table keyword_facts add column tsv tsvector, add column doc_len int not null default 0`.execute(
          db,
        );
        await sql`create or replace function keyword_token_count(t tsvector) returns int language sql immutable
          parallel safe as $$ select coalesce(sum(coalesce(array_length(positions, 1), 1)), 0)::int from unnest(t) $$`.execute(
          db,
        );
        await sql`create or replace function keyword_facts_vector() returns trigger language plpgsql as $$
          begin
            new.tsv := setweight(to_tsvector('english', new.text), 'A') || setweight(to_tsvector('english', new.context), 'B');
            new.doc_len := keyword_token_count(new.tsv);
            return new;
          end $$`.execute(db);
        await sql`create trigger keyword_facts_vector before insert or update of text, context on keyword_facts
          for each row execute function keyword_facts_vector()`.execute(db);
        await sql`update keyword_facts set context = context`.execute(db);
        await sql`create index if not exists keyword_facts_tsv on keyword_facts using gin (tsv)`.execute(db);
        await sql`create table if not exists keyword_terms (lexeme text primary key, df int not null)`.execute(db);
        await sql`create table if not exists keyword_stats (id int primary key check (id = 1), docs bigint not null,
          tokens bigint not null)`.execute(db);
        await sql`insert into keyword_terms (lexeme, df) select u.lexeme, count(*) from keyword_facts k, unnest(k.tsv) u
          group by u.lexeme on conflict (lexeme) do update set df = excluded.df`.execute(db);
        await sql`insert into keyword_stats (id, docs, tokens) select 1, count(*), coalesce(sum(doc_len), 0)
          from keyword_facts on conflict (id) do update set docs = excluded.docs, tokens = excluded.tokens`.execute(db);
        // Deltas in lexeme order, so that concurrent writers lock keyword_terms rows in the same order.
        await sql`create or replace function keyword_stats_apply() returns trigger language plpgsql as $$
          begin
            if tg_op = 'INSERT' then
              insert into keyword_terms (lexeme, df)
                select u.lexeme, count(*) from new_rows r, unnest(r.tsv) u group by u.lexeme order by u.lexeme
                on conflict (lexeme) do update set df = keyword_terms.df + excluded.df;
              update keyword_stats set docs = docs + (select count(*) from new_rows),
                tokens = tokens + (select coalesce(sum(doc_len), 0) from new_rows) where id = 1;
            elsif tg_op = 'DELETE' then
              insert into keyword_terms (lexeme, df)
                select u.lexeme, -count(*) from old_rows r, unnest(r.tsv) u group by u.lexeme order by u.lexeme
                on conflict (lexeme) do update set df = keyword_terms.df + excluded.df;
              update keyword_stats set docs = docs - (select count(*) from old_rows),
                tokens = tokens - (select coalesce(sum(doc_len), 0) from old_rows) where id = 1;
            else
              insert into keyword_terms (lexeme, df)
                select lexeme, sum(d)::int from (
                  select u.lexeme, -1 as d from old_rows r, unnest(r.tsv) u
                  union all select u.lexeme, 1 from new_rows r, unnest(r.tsv) u) x
                group by lexeme having sum(d) <> 0 order by lexeme
                on conflict (lexeme) do update set df = keyword_terms.df + excluded.df;
              update keyword_stats set tokens = tokens + (select coalesce(sum(doc_len), 0) from new_rows)
                - (select coalesce(sum(doc_len), 0) from old_rows) where id = 1;
            end if;
            return null;
          end $$`.execute(db);
        await sql`create trigger keyword_stats_insert after insert on keyword_facts referencing new table as new_rows
          for each statement execute function keyword_stats_apply()`.execute(db);
        await sql`create trigger keyword_stats_delete after delete on keyword_facts referencing old table as old_rows
          for each statement execute function keyword_stats_apply()`.execute(db);
        await sql`create trigger keyword_stats_update after update on keyword_facts
          referencing old table as old_rows new table as new_rows
          for each statement execute function keyword_stats_apply()`.execute(db);
      },
    },
    // Each fact's weighted term frequencies as jsonb (lexeme → tf, a term in the text counting 1 and in the context
    // CONTEXT_WEIGHT), so that BM25 reads the query's few terms instead of unnesting every tsvector it ranks.
    '0003_term_weights': {
      async up(db: MigrationDb) {
        await sql`alter table keyword_facts add column if not exists tf jsonb not null default '{}'`.execute(db);
        const tf = (row: string) =>
          sql.raw(`(select coalesce(jsonb_object_agg(u.lexeme, ${CONTEXT_WEIGHT} * cardinality(u.positions)
            + ${1 - CONTEXT_WEIGHT} * cardinality(array_positions(u.weights, 'A'))), '{}') from unnest(${row}.tsv) u)`);
        await sql`create or replace function keyword_facts_vector() returns trigger language plpgsql as $$
          begin
            new.tsv := setweight(to_tsvector('english', new.text), 'A') || setweight(to_tsvector('english', new.context), 'B');
            new.doc_len := keyword_token_count(new.tsv);
            new.tf := ${tf('new')};
            return new;
          end $$`.execute(db);
        await sql`update keyword_facts k set tf = ${tf('k')}`.execute(db);
      },
    },
    // The term index keyed by channel too (btree_gin), so that a search in one channel reads that channel's postings
    // of its terms instead of every channel's: at 100,000 facts in 24 channels a channel's match count took 12.5 ms
    // p50 through the terms-only index and the channel index together, 2.1 ms through this one (docs/benchmarks.md
    // "Search latency"). A query without a channel uses it as the terms-only index it replaces. Without btree_gin
    // (a server that lacks PostgreSQL's contrib) the terms-only index stays.
    '0004_channel_terms': {
      async up(db: MigrationDb) {
        const { rows } = await sql<{
          n: number;
        }>`select count(*)::int as n from pg_extension where extname = 'btree_gin'`.execute(db);
        if (rows[0]?.n !== 1) return;
        await sql`create index if not exists keyword_facts_channel_tsv on keyword_facts using gin (channel_id, tsv)`.execute(
          db,
        );
        await sql`drop index if exists keyword_facts_tsv`.execute(db);
      },
    },
  });
