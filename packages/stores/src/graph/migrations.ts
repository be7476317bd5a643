import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * The Postgres graph store (PostgresGraphStore), tracked as `graph_migrations`.
 *
 * Write side, one row per message contribution, replaced per message (primary key (message_uuid, ord),
 * ord = position in the event's list):
 * - graph_mentions: one per EntitiesExtracted.entities item: entity_id, channel_id, type, name, norm
 *   (normalizeEntityName), aliases, alias_norms (normalised aliases), confidence, fact_ids, properties (jsonb),
 *   message_ts (timestamptz), source_message_id (platform id). Index on entity_id, channel_id.
 * - graph_evidence: one per relationship item: relationship_id (relationshipUuid), type, source_id, target_id,
 *   confidence, valid_from/valid_until (date), context, source_fact_id, message_ts, source_message_id.
 *   Index on relationship_id, channel_id.
 * - graph_supersessions: the supersessions that name both an old and a new entity: old_entity_id,
 *   new_entity_id, certain, message_ts. Index on old_entity_id, new_entity_id, channel_id.
 *
 * Read side, the folds of the above (rewritten by every write that touches them):
 * - graph_entities: id, channel_id, type, name, norm, aliases, alias_norms (for findEntities, GIN), properties,
 *   source_fact_ids, confidence (noisy-or), mention_count, source_message_id, message_ts, last_mentioned_at,
 *   created_at, updated_at. Status is not stored: it is confidence ≥ the store's threshold, computed on read.
 *   Indexes on (channel_id, type), norm, GIN on alias_norms.
 * - graph_relationships: id, channel_id, type, source_id, target_id, confidence, valid_from, valid_until, context,
 *   source_message_id, source_fact_id, created_at, updated_at. Indexes on source_id, target_id, channel_id.
 *
 * Also the aggregate graph_noisy_or(float8) = 1 − Π(1 − x), exact (a product, no logarithms).
 */
export const migrateGraph = (db: MigrationDb) =>
  runMigrations(db, 'graph', {
    '0001_graph': {
      async up(db: MigrationDb) {
        await sql`create or replace function graph_noisy_or_step(acc float8, x float8) returns float8
          language sql immutable parallel safe as $$ select acc * (1 - coalesce(x, 0)) $$`.execute(db);
        await sql`create or replace function graph_noisy_or_final(acc float8) returns float8
          language sql immutable parallel safe as $$ select 1 - acc $$`.execute(db);
        await sql`create or replace aggregate graph_noisy_or(float8) (sfunc = graph_noisy_or_step, stype = float8,
          finalfunc = graph_noisy_or_final, initcond = '1')`.execute(db);

        await sql`create table if not exists graph_mentions (
          message_uuid uuid not null, ord int not null, entity_id uuid not null, channel_id text not null,
          type text not null, name text not null, norm text not null, aliases text[] not null default '{}',
          alias_norms text[] not null default '{}', confidence float8 not null, fact_ids text[] not null default '{}',
          properties jsonb not null default '{}', message_ts timestamptz not null, source_message_id text not null,
          primary key (message_uuid, ord))`.execute(db);
        await sql`create index if not exists graph_mentions_entity on graph_mentions (entity_id)`.execute(db);
        await sql`create index if not exists graph_mentions_channel on graph_mentions (channel_id)`.execute(db);

        await sql`create table if not exists graph_evidence (
          message_uuid uuid not null, ord int not null, relationship_id uuid not null, channel_id text not null,
          type text not null, source_id uuid not null, target_id uuid not null, confidence float8 not null,
          valid_from date not null, valid_until date, context text not null, source_fact_id text,
          message_ts timestamptz not null, source_message_id text not null,
          primary key (message_uuid, ord))`.execute(db);
        await sql`create index if not exists graph_evidence_relationship on graph_evidence (relationship_id)`.execute(
          db,
        );
        await sql`create index if not exists graph_evidence_channel on graph_evidence (channel_id)`.execute(db);

        await sql`create table if not exists graph_supersessions (
          message_uuid uuid not null, ord int not null, channel_id text not null, fact_id uuid not null,
          superseded_by uuid not null, old_entity_id uuid not null, new_entity_id uuid not null,
          certain boolean not null, message_ts timestamptz not null, primary key (message_uuid, ord))`.execute(db);
        await sql`create index if not exists graph_supersessions_old on graph_supersessions (old_entity_id)`.execute(
          db,
        );
        await sql`create index if not exists graph_supersessions_new on graph_supersessions (new_entity_id)`.execute(
          db,
        );
        await sql`create index if not exists graph_supersessions_channel on graph_supersessions (channel_id)`.execute(
          db,
        );

        await sql`create table if not exists graph_entities (
          id uuid primary key, channel_id text not null, type text not null, name text not null, norm text not null,
          aliases text[] not null default '{}', alias_norms text[] not null default '{}',
          properties jsonb not null default '{}', source_fact_ids text[] not null default '{}',
          confidence float8 not null, mention_count int not null, source_message_id text not null,
          message_ts timestamptz not null, last_mentioned_at timestamptz not null,
          created_at timestamptz not null, updated_at timestamptz not null)`.execute(db);
        await sql`create index if not exists graph_entities_channel_type on graph_entities (channel_id, type)`.execute(
          db,
        );
        await sql`create index if not exists graph_entities_norm on graph_entities (norm)`.execute(db);
        await sql`create index if not exists graph_entities_alias_norms on graph_entities using gin (alias_norms)`.execute(
          db,
        );

        await sql`create table if not exists graph_relationships (
          id uuid primary key, channel_id text not null, type text not null, source_id uuid not null,
          target_id uuid not null, confidence float8 not null, valid_from date not null, valid_until date,
          context text not null, source_message_id text not null, source_fact_id text,
          created_at timestamptz not null, updated_at timestamptz not null)`.execute(db);
        await sql`create index if not exists graph_relationships_source on graph_relationships (source_id)`.execute(db);
        await sql`create index if not exists graph_relationships_target on graph_relationships (target_id)`.execute(db);
        await sql`create index if not exists graph_relationships_channel on graph_relationships (channel_id)`.execute(
          db,
        );
      },
    },
  });
