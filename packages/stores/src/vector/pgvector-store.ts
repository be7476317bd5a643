import type { DatabaseHandle } from '@atlas/db';
import { type MigrationDb, runMigrations } from '@atlas/db';
import { type RawBuilder, sql } from 'kysely';
import { type FactFilterColumns, factFilterSql } from '../fact-filters.js';
import { ChannelMatrix } from './channel-matrix.js';
import type { FactVector, VectorQuery, VectorStore } from './port.js';

const CHUNK = 200;
const literal = (v: readonly number[]) => `[${v.map((x) => x.toFixed(7)).join(',')}]`;

/** The table of the vector store of one dimension before vector spaces (`vector_facts_<dim>`): a legacy space's. */
export const legacyVectorTable = (dim: number): string => `vector_facts_${dim}`;

/**
 * `create extension if not exists vector` in schema public, which every connection's search_path holds (a test's own
 * schema is dropped with it, and an extension exists once per database). Two processes creating it at once: the loser
 * sees the winner's (unique violation) and goes on. Throws when the server does not offer the extension.
 */
const createVectorExtension = async (db: MigrationDb): Promise<void> => {
  try {
    await sql`create extension if not exists vector schema public`.execute(db);
  } catch (err) {
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from pg_extension where extname = 'vector'`.execute(db);
    if (rows[0]?.n === 1) return;
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(`the PostgreSQL server has no pgvector (${why}): install it, e.g. scripts/pgvector install`);
  }
};

/**
 * Creates a vector table (`table`, default `vector_facts_<dim>`; a vector space names its own, spaces.ts) of
 * `dim`-long vectors with an HNSW cosine index. Idempotent. Needs the pgvector extension (PGlite ships it; a server
 * must have it installed). `table` must be a plain SQL identifier ([a-z0-9_]).
 */
export const migrateVectors = async (db: MigrationDb, dim: number, table = legacyVectorTable(dim)): Promise<void> => {
  if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`not a vector table name: ${table}`);
  await createVectorExtension(db);
  // The legacy table's migration keeps its old name (`vectors_<dim>`), so existing data dirs see it as applied.
  const key = table === legacyVectorTable(dim) ? `vectors_${dim}` : `vectors_${table}`;
  await runMigrations(db, key, {
    [`0001_${table}`]: {
      async up(db: MigrationDb) {
        const t = sql.raw(table);
        await sql`create table if not exists ${t} (
          fact_id uuid primary key, message_id uuid not null, channel_id text not null, model text not null,
          embedding vector(${sql.raw(String(dim))}) not null, fact_type text not null, importance text not null,
          topic_tags text[] not null default '{}', entity_tags text[] not null default '{}', author_name text not null,
          message_ts timestamptz not null)`.execute(db);
        await sql`create index if not exists ${sql.raw(`${table}_hnsw`)} on ${t} using hnsw (embedding vector_cosine_ops)`.execute(
          db,
        );
        await sql`create index if not exists ${sql.raw(`${table}_message`)} on ${t} (message_id)`.execute(db);
        await sql`create index if not exists ${sql.raw(`${table}_channel`)} on ${t} (channel_id)`.execute(db);
      },
    },
  });
};

/** pgvector's binary form (vector_send): int16 dim, int16 unused, then dim big-endian float4. */
const fromVectorSend = (b: Uint8Array): Float32Array => {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const dim = view.getInt16(0);
  const out = new Float32Array(dim);
  for (let i = 0; i < dim; i++) out[i] = view.getFloat32(4 + i * 4);
  return out;
};

/** pgvector's text form `[0.1,-0.2,…]` → numbers. */
const parseVectorText = (text: string): number[] => {
  // pgvector's text form `[0.1,-2e-05,...]` is a JSON array of numbers: JSON.parse reads it about 3x faster than
  // splitting; anything else falls back to the split.
  try {
    const v: unknown = JSON.parse(text);
    if (Array.isArray(v) && v.every((x) => typeof x === 'number')) return v as number[];
  } catch {
    // not JSON: split below
  }
  const body = text.trim().replace(/^\[/, '').replace(/\]$/, '');
  return body.length === 0 ? [] : body.split(',').map(Number);
};

/** The vector scaled to length 1 (a zero vector is returned as is). */
const toUnit = (v: number[]): number[] => {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return n > 0 ? v.map((x) => x / n) : v;
};

export interface PgVectorStoreOptions {
  /**
   * Keep channels' vectors in memory (ChannelMatrix) for channel-scoped searches, up to this many vectors in all
   * (least recently searched channels dropped first; a bigger channel is searched in SQL). 0 (default) turns it off.
   * Only for a database that no other process writes (the embedded PGlite): this store drops a channel's matrix
   * when it writes to the channel, and cannot see another process's writes.
   */
  memoryIndexMaxVectors?: number;
  /** The table (migrateVectors made it); default `vector_facts_<dim>`. A vector space names its own (spaces.ts). */
  table?: string;
}

/**
 * The VectorStore on pgvector: cosine distance through an HNSW index, searched with iterative scans
 * so that filters (channel, fact type, …) still return `limit` rows. With `memoryIndexMaxVectors`, a
 * channel-scoped search runs exactly over the channel's vectors in memory instead (same results, exact).
 */
export class PgVectorStore implements VectorStore {
  private readonly table: RawBuilder<unknown>;
  /** The table's name (`vector_facts_<dim>`, or a vector space's). */
  readonly tableName: string;
  private readonly maxInMemory: number;
  /** Channel → its matrix (or null: too big to hold), most recently used last. */
  private readonly matrices = new Map<string, Promise<ChannelMatrix | null>>();
  /** Matrix loads that have finished (a search of their channel does not load first). */
  private readonly loaded = new WeakSet<Promise<ChannelMatrix | null>>();

  /**
   * `db` stays untyped and every query raw: the table is named per dimension (`vector_facts_<dim>`), so no static
   * table interface names it, and the queries use pgvector's operators and functions (`<=>`, vector_send).
   */
  constructor(
    private readonly db: DatabaseHandle['db'],
    readonly dim: number,
    opts: PgVectorStoreOptions = {},
  ) {
    this.tableName = opts.table ?? legacyVectorTable(dim);
    this.table = sql.raw(this.tableName);
    this.maxInMemory = opts.memoryIndexMaxVectors ?? 0;
  }

  async truncate(): Promise<void> {
    await sql`truncate table ${this.table}`.execute(this.db);
    this.matrices.clear();
  }

  /** Drops the table and its indexes (a retired vector space). Idempotent. */
  async drop(): Promise<void> {
    await sql`drop table if exists ${this.table}`.execute(this.db);
    this.matrices.clear();
  }

  async replaceForMessages(sets: readonly { messageId: string; points: readonly FactVector[] }[]): Promise<void> {
    if (sets.length === 0) return;
    const last = [...new Map(sets.map((s) => [s.messageId, s])).values()];
    const touched = new Set<string>();
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < last.length; i += CHUNK) {
        const chunk = last.slice(i, i + CHUNK);
        const keep = chunk.flatMap((s) => s.points.map((p) => p.factId));
        const keepClause = keep.length > 0 ? sql`and fact_id <> all(${keep}::uuid[])` : sql``;
        const removed = await sql<{
          channel_id: string;
        }>`delete from ${this.table} where message_id = any(${chunk.map((s) => s.messageId)}::uuid[]) ${keepClause}
          returning channel_id`.execute(trx);
        for (const r of removed.rows) touched.add(r.channel_id);
        const points = chunk.flatMap((s) => s.points);
        for (const p of points) touched.add(p.channelId);
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
    for (const c of touched) this.matrices.delete(c);
  }

  async search(q: VectorQuery): Promise<{ factId: string; score: number }[]> {
    if (q.channelId !== null && q.filters?.channels && !q.filters.channels.includes(q.channelId)) return [];
    if (this.maxInMemory > 0 && q.channelId !== null) {
      const matrix = await this.matrix(q.channelId);
      if (matrix) return matrix.search(q.vector, q.model, q.limit, q.filters);
    }
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

  /**
   * Exact: the channel's in-memory matrix when it has one, else every row of the filters' distance computed in a
   * materialized CTE (a sequential scan: the HNSW index is approximate and would stop after ef_search rows).
   */
  async matches(q: VectorQuery & { minScore: number }): Promise<{ factId: string; score: number }[]> {
    if (q.limit <= 0) return [];
    const inMemory = await this.matricesFor(q.channelId, q.filters?.channels);
    if (inMemory) {
      const hits = inMemory.flatMap((m) =>
        m.search(q.vector, q.model, Number.POSITIVE_INFINITY, q.filters).filter((h) => h.score >= q.minScore),
      );
      if (inMemory.length > 1)
        hits.sort((a, b) => b.score - a.score || (a.factId < b.factId ? -1 : a.factId > b.factId ? 1 : 0));
      return hits.slice(0, q.limit);
    }
    const rows = await sql<{ fact_id: string; distance: number }>`with q as materialized (
        select ${literal(q.vector)}::vector as v),
      d as materialized (select fact_id, embedding <=> (select v from q) as distance from ${this.table}
        where model = ${q.model} and ${factFilterSql(q.channelId, q.filters)})
      select fact_id, distance from d where distance <= ${1 - q.minScore}::float8
      order by distance, fact_id limit ${q.limit}`.execute(this.db);
    return rows.rows
      .map((r) => ({ factId: r.fact_id, score: Math.min(1, Math.max(0, 1 - Number(r.distance))) }))
      .filter((h) => h.score >= q.minScore);
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

  /** Stored vectors of the given facts, unit length, keyed by fact id (absent facts are left out); pgvector text form parsed. */
  async vectorsOf(factIds: readonly string[]): Promise<Map<string, number[]>> {
    const out = new Map<string, number[]>();
    const ids = [...new Set(factIds)];
    for (let i = 0; i < ids.length; i += CHUNK * 10) {
      const rows = await sql<{ fact_id: string; embedding: string }>`select fact_id, embedding::text as embedding
        from ${this.table} where fact_id = any(${ids.slice(i, i + CHUNK * 10)}::uuid[])`.execute(this.db);
      for (const r of rows.rows) out.set(r.fact_id, toUnit(parseVectorText(r.embedding)));
    }
    return out;
  }

  /**
   * Loads the matrices of the most recently active channels, as many as the memory budget holds, so that first
   * searches do not pay for loading (a few hundred ms per 4,000 vectors). No-op without a memory index.
   * Returns the channels loaded.
   */
  async warm(): Promise<number> {
    if (this.maxInMemory <= 0) return 0;
    const channels = await sql<{ channel_id: string; n: number }>`select channel_id, count(*)::int as n
      from ${this.table} group by channel_id order by max(message_ts) desc, channel_id`.execute(this.db);
    let total = 0;
    let loaded = 0;
    for (const c of channels.rows) {
      if (total + Number(c.n) > this.maxInMemory) continue;
      total += Number(c.n);
      if ((await this.matrix(c.channel_id)) !== null) loaded++;
    }
    return loaded;
  }

  /**
   * Whether a search of `channelId` runs without loading anything first (VectorStore.isWarm): always without the
   * memory index or across channels; else once the channel's matrix is loaded (a write to the channel drops it).
   */
  isWarm(channelId: string | null): boolean {
    if (this.maxInMemory === 0 || channelId === null) return true;
    const m = this.matrices.get(channelId);
    return m !== undefined && this.loaded.has(m);
  }

  /**
   * The in-memory matrices that hold every vector of `channelId` (null: of every channel), or null when the memory
   * index is off or they do not fit its budget (then the caller reads SQL). Across channels, the channels' sizes are
   * read first (one grouped count) and every matrix is loaded when their sum fits; `channels` (KeywordFilters.channels)
   * leaves out the matrices of other channels.
   */
  private async matricesFor(
    channelId: string | null,
    channels?: readonly string[] | undefined,
  ): Promise<ChannelMatrix[] | null> {
    if (this.maxInMemory <= 0) return null;
    if (channelId !== null && channels && !channels.includes(channelId)) return [];
    if (channelId !== null) {
      const m = await this.matrix(channelId);
      return m ? [m] : null;
    }
    const counted = await sql<{
      channel_id: string;
      n: number;
    }>`select channel_id, count(*)::int as n from ${this.table}
      group by channel_id`.execute(this.db);
    const allowed = channels ? new Set(channels) : null;
    const rows = allowed ? counted.rows.filter((r) => allowed.has(r.channel_id)) : counted.rows;
    if (rows.reduce((n, r) => n + Number(r.n), 0) > this.maxInMemory) return null;
    const out: ChannelMatrix[] = [];
    for (const r of rows) {
      const m = await this.matrix(r.channel_id);
      if (!m) return null;
      out.push(m);
    }
    return out;
  }

  /** The channel's matrix, loaded on first use; null when the channel has more vectors than the memory budget. */
  private matrix(channelId: string): Promise<ChannelMatrix | null> {
    let m = this.matrices.get(channelId);
    if (m) {
      this.matrices.delete(channelId); // most recently used last
      this.matrices.set(channelId, m);
      return m;
    }
    m = this.loadMatrix(channelId);
    this.matrices.set(channelId, m);
    const loading = m;
    m.then(() => {
      this.loaded.add(loading);
      return this.evict();
    }).catch(() => this.matrices.delete(channelId));
    return m;
  }

  private async loadMatrix(channelId: string): Promise<ChannelMatrix | null> {
    const rows = await sql<
      Omit<FactFilterColumns, 'channel_id'> & { fact_id: string; model: string; embedding: Uint8Array }
    >`select fact_id, model, vector_send(embedding) as embedding, fact_type, importance, topic_tags, entity_tags, author_name,
         message_ts from ${this.table} where channel_id = ${channelId} limit ${this.maxInMemory + 1}`.execute(this.db);
    if (rows.rows.length > this.maxInMemory) return null;
    return new ChannelMatrix(
      this.dim,
      rows.rows.map((r) => ({
        factId: r.fact_id,
        model: r.model,
        vector: fromVectorSend(r.embedding),
        factType: r.fact_type,
        importance: r.importance,
        topicTags: r.topic_tags,
        entityTags: r.entity_tags,
        authorName: r.author_name,
        messageTs: new Date(r.message_ts).getTime(),
      })),
    );
  }

  /** Drops least recently used matrices while the loaded ones hold more than the budget. */
  private async evict(): Promise<void> {
    const loaded = await Promise.all([...this.matrices].map(async ([c, m]) => [c, await m.catch(() => null)] as const));
    let total = loaded.reduce((n, [, m]) => n + (m?.size ?? 0), 0);
    for (const [c, m] of loaded) {
      if (total <= this.maxInMemory) break;
      if (!m) continue;
      this.matrices.delete(c);
      total -= m.size;
    }
  }

  async deleteChannel(channelId: string): Promise<number> {
    const r = await sql`delete from ${this.table} where channel_id = ${channelId}`.execute(this.db);
    this.matrices.delete(channelId);
    return Number(r.numAffectedRows ?? 0);
  }

  async count(): Promise<number> {
    const r = await sql<{ n: number }>`select count(*)::int as n from ${this.table}`.execute(this.db);
    return Number(r.rows[0]?.n ?? 0);
  }
}
