import { type Kysely, type RawBuilder, sql } from 'kysely';
import { factFilterSql } from '../fact-filters.js';
import { runMigrations } from '../migrate.js';
import type { FactVector, VectorQuery, VectorStore } from './port.js';

const CHUNK = 200;
const literal = (v: readonly number[]) => `[${v.map((x) => x.toFixed(7)).join(',')}]`;

/**
 * Creates the vector table of one dimension (`vector_facts_<dim>`) with an HNSW cosine index.
 * Idempotent. Needs the pgvector extension (PGlite ships it; a server must have it installed).
 */
export const migrateVectors = async (db: Kysely<unknown>, dim: number): Promise<void> => {
  await sql`create extension if not exists vector`.execute(db);
  await runMigrations(db, `vectors_${dim}`, {
    [`0001_vector_facts_${dim}`]: {
      async up(db: Kysely<unknown>) {
        const t = sql.raw(`vector_facts_${dim}`);
        await sql`create table if not exists ${t} (
          fact_id uuid primary key, message_id uuid not null, channel_id text not null, model text not null,
          embedding vector(${sql.raw(String(dim))}) not null, fact_type text not null, importance text not null,
          topic_tags text[] not null default '{}', entity_tags text[] not null default '{}', author_name text not null,
          message_ts timestamptz not null)`.execute(db);
        await sql`create index if not exists ${sql.raw(`vector_facts_${dim}_hnsw`)} on ${t} using hnsw (embedding vector_cosine_ops)`.execute(
          db,
        );
        await sql`create index if not exists ${sql.raw(`vector_facts_${dim}_message`)} on ${t} (message_id)`.execute(
          db,
        );
        await sql`create index if not exists ${sql.raw(`vector_facts_${dim}_channel`)} on ${t} (channel_id)`.execute(
          db,
        );
      },
    },
  });
};

/**
 * The VectorStore on pgvector: cosine distance through an HNSW index, searched with iterative scans
 * so that filters (channel, fact type, …) still return `limit` rows.
 */
export class PgVectorStore implements VectorStore {
  private readonly table: RawBuilder<unknown>;

  constructor(
    private readonly db: Kysely<unknown>,
    readonly dim: number,
  ) {
    this.table = sql.raw(`vector_facts_${dim}`);
  }

  async truncate(): Promise<void> {
    await sql`truncate table ${this.table}`.execute(this.db);
  }

  async replaceForMessages(sets: readonly { messageId: string; points: readonly FactVector[] }[]): Promise<void> {
    if (sets.length === 0) return;
    const last = [...new Map(sets.map((s) => [s.messageId, s])).values()];
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < last.length; i += CHUNK) {
        const chunk = last.slice(i, i + CHUNK);
        const keep = chunk.flatMap((s) => s.points.map((p) => p.factId));
        const keepClause = keep.length > 0 ? sql`and fact_id <> all(${keep}::uuid[])` : sql``;
        await sql`delete from ${this.table} where message_id = any(${chunk.map((s) => s.messageId)}::uuid[]) ${keepClause}`.execute(
          trx,
        );
        const points = chunk.flatMap((s) => s.points);
        if (points.length === 0) continue;
        const values = points.map(
          (
            p,
          ) => sql`(${p.factId}::uuid, ${p.messageId}::uuid, ${p.channelId}, ${p.model}, ${literal(p.vector)}::vector, ${p.factType},
            ${p.importance}, ${p.topicTags}::text[], ${p.entityTags}::text[], ${p.authorName}, ${p.messageTs}::timestamptz)`,
        );
        await sql`insert into ${this.table} (fact_id, message_id, channel_id, model, embedding, fact_type, importance, topic_tags,
            entity_tags, author_name, message_ts) values ${sql.join(values)}
          on conflict (fact_id) do update set embedding = excluded.embedding, model = excluded.model, channel_id = excluded.channel_id,
            fact_type = excluded.fact_type, importance = excluded.importance, topic_tags = excluded.topic_tags,
            entity_tags = excluded.entity_tags, author_name = excluded.author_name, message_ts = excluded.message_ts`.execute(
          trx,
        );
      }
    });
  }

  async search(q: VectorQuery): Promise<{ factId: string; score: number }[]> {
    // The vector literal is parsed once (an InitPlan); pgvector still walks the HNSW index with it.
    const query = sql<{
      fact_id: string;
      distance: number;
    }>`with q as materialized (select ${literal(q.vector)}::vector as v)
      select fact_id, embedding <=> (select v from q) as distance
      from ${this.table} where model = ${q.model} and ${factFilterSql(q.channelId, q.filters)}
      order by embedding <=> (select v from q) limit ${q.limit}`;
    // Iterative scans keep filtered searches from returning short; set on the same connection, no transaction.
    const settings = sql`select set_config('hnsw.iterative_scan', 'relaxed_order', false),
      set_config('hnsw.ef_search', ${String(Math.max(100, q.limit * 2))}, false)`;
    const rows = await this.db.connection().execute(async (conn) => {
      await settings.execute(conn);
      return query.execute(conn);
    });
    return rows.rows
      .map((r) => ({ factId: r.fact_id, score: Math.min(1, Math.max(0, 1 - Number(r.distance))) }))
      .sort((a, b) => b.score - a.score);
  }

  async similarities(q: { vector: number[]; model: string; factIds: readonly string[] }): Promise<Map<string, number>> {
    if (q.factIds.length === 0) return new Map();
    const rows = await sql<{
      fact_id: string;
      distance: number;
    }>`select fact_id, embedding <=> ${literal(q.vector)}::vector as distance
      from ${this.table} where model = ${q.model} and fact_id = any(${[...q.factIds]}::uuid[])`.execute(this.db);
    return new Map(rows.rows.map((r) => [r.fact_id, Math.min(1, Math.max(0, 1 - Number(r.distance)))]));
  }

  async count(): Promise<number> {
    const r = await sql<{ n: number }>`select count(*)::int as n from ${this.table}`.execute(this.db);
    return Number(r.rows[0]?.n ?? 0);
  }
}
