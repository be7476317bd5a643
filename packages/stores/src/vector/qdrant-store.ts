import { AtlasError } from '@atlas/core';
import { QdrantClient } from '@qdrant/js-client-rest';
import type { KeywordFilters } from '../keyword/port.js';
import type { FactVector, VectorQuery, VectorStore } from './port.js';

/** Options of {@link QdrantVectorStore}. */
export interface QdrantOptions {
  /** e.g. `http://127.0.0.1:6333` (QDRANT_URL). */
  url: string;
  apiKey?: string | undefined;
  /** Collection name prefix (QDRANT_COLLECTION, default `atlas_facts`); the collection is `<prefix>_<dim>`. */
  collection?: string | undefined;
  /** The whole collection name, instead of `<prefix>_<dim>` (a vector space names its own, spaces.ts). */
  collectionName?: string | undefined;
  dim: number;
}

type Condition = Record<string, unknown>;

/** Payload fields with an index: every filter of the spec's search body, the message id and the model. */
const INDEXED: [string, 'keyword' | 'integer'][] = [
  ['channel_id', 'keyword'],
  ['message_id', 'keyword'],
  ['model', 'keyword'],
  ['fact_type', 'keyword'],
  ['importance', 'keyword'],
  ['topic_tags', 'keyword'],
  ['entity_tags_lc', 'keyword'],
  ['author_lc', 'keyword'],
  ['message_ts_ms', 'integer'],
];

const CHUNK = 256;

/**
 * The VectorStore on Qdrant (`@qdrant/js-client-rest`): one collection per vector size, cosine distance,
 * point id = fact id, the filter fields as indexed payload (entities and authors lower-cased, the message
 * time as epoch ms), the embedder id in `model` so that vectors of two models are never compared.
 * Same semantics as PgVectorStore (the contract suite runs both). Errors: AtlasError STORE_UNAVAILABLE (retriable).
 */
export class QdrantVectorStore implements VectorStore {
  private readonly client: QdrantClient;
  readonly collection: string;
  private ready: Promise<void> | undefined;

  constructor(private readonly opts: QdrantOptions) {
    this.client = new QdrantClient({ url: opts.url, ...(opts.apiKey ? { apiKey: opts.apiKey } : {}) });
    this.collection = opts.collectionName ?? `${opts.collection ?? 'atlas_facts'}_${opts.dim}`;
  }

  /** Creates the collection and its payload indexes unless they exist. Idempotent. */
  ensureCollection(): Promise<void> {
    this.ready ??= this.call('create collection', async () => {
      const { exists } = await this.client.collectionExists(this.collection);
      if (!exists) {
        try {
          await this.client.createCollection(this.collection, { vectors: { size: this.opts.dim, distance: 'Cosine' } });
        } catch (e) {
          if (!/already exists/i.test(String((e as { data?: unknown }).data ?? e))) throw e;
        }
      }
      for (const [field, schema] of INDEXED) {
        await this.client.createPayloadIndex(this.collection, { field_name: field, field_schema: schema, wait: true });
      }
    }).catch((e: unknown) => {
      this.ready = undefined;
      throw e;
    });
    return this.ready;
  }

  /** Deletes the collection (tests, and truncate). No error if it does not exist. */
  async drop(): Promise<void> {
    this.ready = undefined;
    await this.call('delete collection', () => this.client.deleteCollection(this.collection));
  }

  async truncate(): Promise<void> {
    await this.drop();
    await this.ensureCollection();
  }

  async replaceForMessages(sets: readonly { messageId: string; points: readonly FactVector[] }[]): Promise<void> {
    if (sets.length === 0) return;
    await this.ensureCollection();
    const last = [...new Map(sets.map((s) => [s.messageId, s])).values()];
    for (let i = 0; i < last.length; i += CHUNK) {
      const chunk = last.slice(i, i + CHUNK);
      const keep = chunk.flatMap((s) => s.points.map((p) => p.factId));
      await this.call('delete', () =>
        this.client.delete(this.collection, {
          wait: true,
          filter: {
            must: [{ key: 'message_id', match: { any: chunk.map((s) => s.messageId) } }],
            ...(keep.length > 0 ? { must_not: [{ has_id: keep }] } : {}),
          },
        }),
      );
      const points = chunk.flatMap((s) => s.points);
      if (points.length === 0) continue;
      await this.call('upsert', () =>
        this.client.upsert(this.collection, {
          wait: true,
          points: points.map((p) => ({
            id: p.factId,
            vector: p.vector,
            payload: {
              fact_id: p.factId,
              message_id: p.messageId,
              channel_id: p.channelId,
              model: p.model,
              fact_type: p.factType,
              importance: p.importance,
              topic_tags: p.topicTags.map((t) => t.toLowerCase()),
              entity_tags_lc: p.entityTags.map((e) => e.toLowerCase()),
              author_lc: p.authorName.toLowerCase(),
              message_ts_ms: Date.parse(p.messageTs),
            },
          })),
        }),
      );
    }
  }

  async search(q: VectorQuery): Promise<{ factId: string; score: number }[]> {
    await this.ensureCollection();
    const hits = await this.call('search', () =>
      this.client.search(this.collection, {
        vector: q.vector,
        limit: q.limit,
        filter: { must: conditions(q.channelId, q.model, q.filters) },
        with_payload: false,
        params: { hnsw_ef: Math.max(100, q.limit * 2) },
      }),
    );
    return hits
      .map((h) => ({ factId: String(h.id), score: Math.min(1, Math.max(0, h.score)) }))
      .sort((a, b) => b.score - a.score);
  }

  /** Qdrant's exact search (no HNSW) with a score threshold: cosine at least minScore, best first, at most limit. */
  async matches(q: VectorQuery & { minScore: number }): Promise<{ factId: string; score: number }[]> {
    if (q.limit <= 0) return [];
    await this.ensureCollection();
    const hits = await this.call('search', () =>
      this.client.search(this.collection, {
        vector: q.vector,
        limit: q.limit,
        score_threshold: q.minScore,
        filter: { must: conditions(q.channelId, q.model, q.filters) },
        with_payload: false,
        params: { exact: true },
      }),
    );
    return hits
      .map((h) => ({ factId: String(h.id), score: Math.min(1, Math.max(0, h.score)) }))
      .filter((h) => h.score >= q.minScore)
      .sort((a, b) => b.score - a.score || (a.factId < b.factId ? -1 : a.factId > b.factId ? 1 : 0));
  }

  async similarities(q: { vector: number[]; model: string; factIds: readonly string[] }): Promise<Map<string, number>> {
    if (q.factIds.length === 0) return new Map();
    await this.ensureCollection();
    const points = await this.call('retrieve', () =>
      this.client.retrieve(this.collection, { ids: [...q.factIds], with_vector: true, with_payload: ['model'] }),
    );
    const out = new Map<string, number>();
    for (const p of points) {
      if ((p.payload as { model?: string } | null | undefined)?.model !== q.model || !Array.isArray(p.vector)) continue;
      const v = p.vector as number[];
      let dot = 0;
      let norm = 0;
      for (let i = 0; i < v.length; i++) {
        dot += v[i]! * (q.vector[i] ?? 0);
        norm += v[i]! * v[i]!;
      }
      // Qdrant stores cosine-collection vectors normalised; divide anyway, as pgvector's <=> does.
      out.set(String(p.id), Math.min(1, Math.max(0, norm > 0 ? dot / Math.sqrt(norm) / hypot(q.vector) : 0)));
    }
    return out;
  }

  /** Stored vectors of the given facts (point id = fact id), unit length, keyed by fact id; absent facts are left out. */
  async vectorsOf(factIds: readonly string[]): Promise<Map<string, number[]>> {
    const out = new Map<string, number[]>();
    if (factIds.length === 0) return out;
    await this.ensureCollection();
    const ids = [...new Set(factIds)];
    for (let i = 0; i < ids.length; i += 1000) {
      const chunk = ids.slice(i, i + 1000);
      const points = await this.call('retrieve', () =>
        this.client.retrieve(this.collection, { ids: chunk, with_vector: true, with_payload: false }),
      );
      for (const p of points) {
        if (!Array.isArray(p.vector)) continue;
        const v = p.vector as number[];
        const n = hypot(v);
        out.set(String(p.id), n > 0 ? v.map((x) => x / n) : v);
      }
    }
    return out;
  }

  /** Counts the channel's points, then deletes them by a payload filter (wait: true, so searches no longer see them). */
  async deleteChannel(channelId: string): Promise<number> {
    await this.ensureCollection();
    const filter = { must: [{ key: 'channel_id', match: { value: channelId } }] };
    const { count } = await this.call('count channel', () =>
      this.client.count(this.collection, { filter, exact: true }),
    );
    if (count > 0) await this.call('delete channel', () => this.client.delete(this.collection, { wait: true, filter }));
    return count;
  }

  async count(): Promise<number> {
    await this.ensureCollection();
    return (await this.call('count', () => this.client.count(this.collection, { exact: true }))).count;
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      const status = (e as { status?: number }).status;
      const message = e instanceof Error ? e.message : String(e);
      const busy = status === undefined || status >= 500 || status === 429;
      throw new AtlasError(
        busy ? 'STORE_UNAVAILABLE' : 'INTERNAL_ERROR',
        `vector store (Qdrant) ${what} failed: ${message}`,
        { retriable: busy, cause: e, details: { collection: this.collection, status } },
      );
    }
  }
}

const hypot = (v: readonly number[]): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;

/** The spec's search filters as Qdrant `must` conditions (same matching rules as factFilterSql). */
const conditions = (channelId: string | null, model: string, f: KeywordFilters = {}): Condition[] => {
  const out: Condition[] = [{ key: 'model', match: { value: model } }];
  if (channelId !== null) out.push({ key: 'channel_id', match: { value: channelId } });
  // An empty `any` matches nothing in Qdrant only by accident of version: say so with an impossible channel id.
  if (f.channels) out.push({ key: 'channel_id', match: { any: f.channels.length ? [...f.channels] : [''] } });
  if (f.factTypes?.length) out.push({ key: 'fact_type', match: { any: f.factTypes } });
  if (f.importance?.length) out.push({ key: 'importance', match: { any: f.importance } });
  if (f.topics?.length) out.push({ key: 'topic_tags', match: { any: f.topics.map((t) => t.toLowerCase()) } });
  if (f.entities?.length) out.push({ key: 'entity_tags_lc', match: { any: f.entities.map((e) => e.toLowerCase()) } });
  if (f.authors?.length) out.push({ key: 'author_lc', match: { any: f.authors.map((a) => a.toLowerCase()) } });
  const { start, end } = f.dateRange ?? {};
  if (start || end) {
    out.push({
      key: 'message_ts_ms',
      range: { ...(start ? { gte: Date.parse(start) } : {}), ...(end ? { lte: Date.parse(end) } : {}) },
    });
  }
  return out;
};
