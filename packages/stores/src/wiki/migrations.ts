import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * Tables of the wiki store (idempotent):
 * - `wiki_clusters`: topic clusters per channel (id, channel_id, centroid jsonb number[] — base64 float32 in
 *   centroid_f32 since 0007 —, member_ids text[], coherence,
 *   parent_id, updated_at);
 * - `wiki_pages`: the current pages per channel (page_id, channel_id, page jsonb, updated_at) and `wiki_structures`
 *   (channel_id, structure jsonb);
 * - `wiki_versions`: every generated version (channel_id, version_number, generated_at, archived_at — null while
 *   current —, page_count, model, snapshot jsonb {structure, pages, metadata});
 * - `wiki_state`: per channel is_generating, is_stale, last_generated_at, current_version, last_duration_ms.
 *
 * 0002 (cheap versions): `wiki_page_revisions` (channel_id, page_id, hash, page jsonb) keeps every distinct page
 * content once; `wiki_pages.hash` is the current page's revision hash; a version's snapshot then holds `page_refs`
 * ([page id, hash] in order) instead of the pages (older snapshots keep their `pages`); `wiki_state.source_fingerprint`
 * is the fingerprint of the channel's facts and messages the current version was generated from.
 *
 * 0003 (stale sequence): `wiki_state.stale_seq` counts markStale calls; a generation records the value it started
 * from and clears is_stale only when no markStale came in meanwhile (facts that arrive during a run keep the wiki
 * stale, so the next run picks them up).
 *
 * 0004 (sources): `wiki_sources` (channel_id, kind, id, digest, body: JSON text, read whole, never queried into) is what the current version was generated
 * from: kind `fact` (a fact as the wiki reads it), `message` (a cited source message) and `graph` (`people`,
 * `decisions`), each with the digest sourceDigests gave it. An incremental run compares digests and reads from the
 * document store only what changed; `wiki_state.source_fingerprint` is the digest of all of them, so an unchanged
 * channel is recognised without reading its sources. `wiki_versions.metadata` holds the generation metadata apart
 * from the snapshot (read without it).
 *
 * 0005 (pages written once): a current page's content lives in `wiki_page_revisions` only; `wiki_pages` keeps its
 * (page id, hash) and `page` is null for rows written since (older rows keep theirs; reads take either).
 *
 * 0006 (channel deletions): `wiki_channel_deletions` (channel_id, requested_at) is when the channel's data was last
 * deleted (ChannelDataDeleted); a generation that started before it cannot save (it read the deleted data).
 *
 * 0007 (compact centroids): a cluster's centroid is `centroid_f32`, its float32 components (little-endian) as base64
 * text: under the TOAST threshold, so a cluster upsert no longer compresses a 3 KB JSON array (about 3x cheaper on
 * the embedded engine). `centroid` jsonb is null for rows written since; older rows keep theirs and read as before.
 *
 * 0008 (pages as text): a page revision's `page`, a version's `snapshot` and a channel's `structure` are written and
 * read whole, never queried into, so they are JSON text with storage `external` (kept out of line, not compressed):
 * no jsonb parse and no compression on every save (about 2x cheaper writes on the embedded engine).
 *
 * 0009 (cluster of a fact): a GIN index on `wiki_clusters.member_ids`, so the cluster of given facts (a memory's
 * cluster_id, WikiStore.clusterIdsOf) is found without reading every cluster.
 */
export const migrateWiki = (db: MigrationDb) =>
  runMigrations(db, 'wiki', {
    '0001_wiki': {
      async up(db: MigrationDb) {
        await sql`create table if not exists wiki_clusters (channel_id text not null, id text not null,
          centroid jsonb not null, member_ids text[] not null default '{}', coherence double precision not null,
          parent_id text, updated_at timestamptz not null default now(), primary key (channel_id, id))`.execute(db);
        await sql`create table if not exists wiki_pages (channel_id text not null, page_id text not null,
          page jsonb not null, updated_at timestamptz not null default now(), primary key (channel_id, page_id))`.execute(
          db,
        );
        await sql`create table if not exists wiki_structures (channel_id text primary key, structure jsonb not null,
          updated_at timestamptz not null default now())`.execute(db);
        await sql`create table if not exists wiki_versions (channel_id text not null, version_number int not null,
          generated_at timestamptz not null, archived_at timestamptz, page_count int not null, model text not null,
          snapshot jsonb not null, primary key (channel_id, version_number))`.execute(db);
        await sql`create table if not exists wiki_state (channel_id text primary key,
          is_generating boolean not null default false, is_stale boolean not null default false,
          last_generated_at timestamptz, current_version int, last_duration_ms int)`.execute(db);
      },
    },
    '0002_wiki_revisions': {
      async up(db: MigrationDb) {
        await sql`create table if not exists wiki_page_revisions (channel_id text not null, page_id text not null,
          hash text not null, page jsonb not null, primary key (channel_id, page_id, hash))`.execute(db);
        await sql`alter table wiki_pages add column if not exists hash text`.execute(db);
        await sql`alter table wiki_state add column if not exists source_fingerprint text`.execute(db);
      },
    },
    '0003_wiki_stale_seq': {
      async up(db: MigrationDb) {
        await sql`alter table wiki_state add column if not exists stale_seq bigint not null default 0`.execute(db);
      },
    },
    '0004_wiki_sources': {
      async up(db: MigrationDb) {
        await sql`create table if not exists wiki_sources (channel_id text not null, kind text not null, id text not null,
          digest text not null, body text not null, primary key (channel_id, kind, id))`.execute(db);
        await sql`alter table wiki_versions add column if not exists metadata jsonb`.execute(db);
      },
    },
    '0005_wiki_pages_by_revision': {
      async up(db: MigrationDb) {
        await sql`alter table wiki_pages alter column page drop not null`.execute(db);
      },
    },
    '0006_wiki_channel_deletions': {
      async up(db: MigrationDb) {
        await sql`create table if not exists wiki_channel_deletions (channel_id text primary key,
          requested_at timestamptz not null)`.execute(db);
      },
    },
    '0007_wiki_compact_centroids': {
      async up(db: MigrationDb) {
        await sql`alter table wiki_clusters add column if not exists centroid_f32 text`.execute(db);
        await sql`alter table wiki_clusters alter column centroid drop not null`.execute(db);
      },
    },
    '0008_wiki_pages_as_text': {
      async up(db: MigrationDb) {
        for (const [table, column] of [
          ['wiki_page_revisions', 'page'],
          ['wiki_versions', 'snapshot'],
          ['wiki_structures', 'structure'],
        ] as const) {
          await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} type text
            using ${sql.ref(column)}::text`.execute(db);
          await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} set storage external`.execute(db);
        }
      },
    },
    '0009_wiki_cluster_members_index': {
      async up(db: MigrationDb) {
        await sql`create index if not exists wiki_clusters_members on wiki_clusters using gin (member_ids)`.execute(db);
      },
    },
    '0010_wiki_jobs': {
      async up(db: MigrationDb) {
        await sql`create table if not exists wiki_jobs (job_id text primary key, channel_id text not null,
          mode text not null, status text not null, requested_by text not null, requested_at timestamptz not null,
          started_at timestamptz, completed_at timestamptz, version_number integer, skipped boolean not null default false,
          facts integer not null default 0, pages_rebuilt integer not null default 0, duration_ms integer,
          error_code text, error_message text)`.execute(db);
        await sql`create index if not exists wiki_jobs_channel on wiki_jobs (channel_id, requested_at desc)`.execute(
          db,
        );
      },
    },
  });
