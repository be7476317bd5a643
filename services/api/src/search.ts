import { AtlasError, FactType, Importance } from '@atlas/core';
import type { Embedder } from '@atlas/providers';
import type { DocumentStore, KeywordIndex, MemoryDetailView, VectorStore } from '@atlas/stores';
import { z } from 'zod';

const IsoTime = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 timestamp');

/** Body of POST /api/search (spec "Search"). */
export const SearchBody = z.object({
  query: z.string().min(1).max(2000),
  channel_id: z.string().min(1).nullable(), // required, may be null: all channels
  limit: z.number().int().min(1).max(50).default(10), // spec Limits: default 10, max 50
  filters: z
    .object({
      fact_types: z.array(FactType).optional(),
      importance: z.array(Importance).optional(),
      topics: z.array(z.string()).optional(),
      entities: z.array(z.string()).optional(),
      authors: z.array(z.string()).optional(),
      date_range: z.object({ start: IsoTime.optional(), end: IsoTime.optional() }).optional(),
    })
    .optional(),
  include_citations: z.boolean().default(true),
  search_mode: z.enum(['hybrid', 'vector', 'keyword']).default('hybrid'),
  vector_weight: z.number().min(0).max(1).optional(),
  keyword_weight: z.number().min(0).max(1).optional(),
  fuzzy: z.boolean().default(false),
  fuzziness: z
    .string()
    .regex(/^(AUTO|0|1|2)$/i, 'must be AUTO, 0, 1 or 2')
    .optional(),
  facets: z.array(z.enum(['fact_type', 'importance', 'topics'])).optional(),
  proximity: z.number().int().min(1).max(20).optional(),
});
export type SearchBody = z.infer<typeof SearchBody>;

/**
 * Importance multipliers of the spec's final_score: importance breaks near-ties without burying a relevant
 * low fact (0.85/0.7 cost 2 points of recall@10 on LoCoMo; README "Notes").
 */
export const IMPORTANCE_MULTIPLIER: Record<string, number> = { high: 1, medium: 0.95, low: 0.9 };
/** Recency boost half-life, days: a fact from 90 days ago gets 0.5, from a year ago about 0.06. */
export const RECENCY_HALF_LIFE_DAYS = 90;

export const recencyBoost = (messageTs: string, now = Date.now()): number =>
  0.5 ** (Math.max(0, now - Date.parse(messageTs)) / 86_400_000 / RECENCY_HALF_LIFE_DAYS);

/**
 * The spec's final_score = (vector·0.5 + keyword·0.3 + quality·0.15 + recency·0.05) · importance_multiplier,
 * divided by the sum of the weights of the signals this search has (without vectors: 0.5), so a score
 * stays in [0, 1] and a perfect keyword-only hit can reach 1.
 */
export const finalScore = (
  s: { vector: number | null; keyword: number | null; quality: number; recency: number; importance: string },
  w: { vector: number; keyword: number },
): number => {
  let sum = s.quality * 0.15 + s.recency * 0.05;
  let weight = 0.2;
  if (s.vector !== null) {
    sum += s.vector * w.vector;
    weight += w.vector;
  }
  if (s.keyword !== null) {
    sum += s.keyword * w.keyword;
    weight += w.keyword;
  }
  return Math.min(1, Math.max(0, (sum / weight) * (IMPORTANCE_MULTIPLIER[s.importance] ?? 0.85)));
};

export interface SearchResult {
  memory: Pick<
    MemoryDetailView,
    | 'id'
    | 'memory_text'
    | 'quality_score'
    | 'author_name'
    | 'message_ts'
    | 'fact_type'
    | 'importance'
    | 'topic_tags'
    | 'entity_tags'
  >;
  score: number;
  highlights: string[];
  citation?: { id: string; permalink: string; author: string; timestamp: string };
}

export interface SearchResponse {
  results: SearchResult[];
  total: number;
  query_time_ms: number;
  search_method: 'vector' | 'keyword' | 'hybrid';
  facets?: Record<string, Record<string, number>>;
}

interface Candidate {
  factId: string;
  keyword: number | null;
  vector: number | null;
  highlights: string[];
}

/**
 * A store or provider outage (AtlasError STORE_UNAVAILABLE / PROVIDER_UNAVAILABLE, retriable: the breaker is open,
 * the call timed out or the server is unreachable): search answers without that signal instead of failing.
 */
export const isOutage = (err: unknown): boolean =>
  err instanceof AtlasError &&
  err.retriable &&
  (err.code === 'STORE_UNAVAILABLE' || err.code === 'PROVIDER_UNAVAILABLE');

/** The query's unit vector, or null when there is no embedder or it fails (then search is keyword-only). */
const queryVector = async (
  vectors: SearchPorts['vectors'],
  query: string,
  degraded?: Set<'vector_store' | 'embedding_provider'>,
): Promise<number[] | null> => {
  if (!vectors || /^\s*\*?\s*$/.test(query)) return null;
  try {
    return (await vectors.embedder.embed([query]))[0] ?? null;
  } catch {
    degraded?.add('embedding_provider');
    return null;
  }
};

/**
 * Graph-expanded retrieval: the facts of the entities a query names (and, at half weight, of their
 * neighbours), as fact id → graph score in (0, 1]. Built from the graph store and an entity recogniser.
 */
export type GraphExpansion = (query: string, channelId: string | null) => Promise<Map<string, number>>;

/** Weight of the graph score added to final_score when graph expansion is on (0.1 and 0.05 measured on LoCoMo; README). */
export const GRAPH_WEIGHT = 0.05;

export interface SearchPorts {
  documents: DocumentStore;
  keyword: KeywordIndex;
  vectors?: { embedder: Embedder; store: VectorStore } | null;
  /** When set, hybrid and vector searches add graph-expanded candidates (off by default: see README). */
  graphExpansion?: GraphExpansion | null;
}

/**
 * Runs a search (spec "Search"). keyword: the keyword index; vector: the vector store (cosine); hybrid
 * (default): both, the union of their candidates, each candidate scored with both signals (the cosine of
 * keyword-only candidates is looked up). Without an embedder or vector store, or when the embedder fails,
 * every mode is served by the keyword index and search_method says `keyword` (spec degraded mode).
 * Candidates per signal: max(limit·5, 50); the union is re-ranked by final_score. `total` counts keyword
 * matches, plus vector-only candidates in vector and hybrid modes; with `opts.count` false (callers that only rank,
 * like ask) the keyword matches are not counted and total counts the candidates; `opts.memories`, when given, is
 * filled with the memory records of the candidates (callers that need more of the results' fields read them there).
 *
 * Degraded modes (spec "Degraded behaviour when a dependency fails"): the embedding provider down (or its breaker
 * open) → keyword only; the vector store down (search fails with STORE_UNAVAILABLE, breaker open or 5 s timeout) →
 * keyword only too (the keyword index is a store of its own); in both `search_method` says `keyword`, and
 * `opts.degraded`, when given, gets `embedding_provider` / `vector_store` added. The keyword index or the document
 * store down fails the search (AtlasError STORE_UNAVAILABLE, 503).
 */
export const searchMemories = async (
  ports: SearchPorts,
  body: SearchBody,
  opts: {
    count?: boolean;
    memories?: Map<string, MemoryDetailView & { permalink: string }>;
    degraded?: Set<'vector_store' | 'embedding_provider'>;
  } = {},
): Promise<SearchResponse> => {
  const started = performance.now();
  const f = body.filters;
  const filters = f && {
    factTypes: f.fact_types,
    importance: f.importance,
    topics: f.topics,
    entities: f.entities,
    authors: f.authors,
    dateRange: f.date_range,
  };
  const k = Math.max(body.limit * 5, 50);
  // The query embedding and the keyword search do not depend on each other: run them together.
  const keywordSearch = () =>
    ports.keyword.search({
      query: body.query,
      channelId: body.channel_id,
      limit: k,
      filters,
      fuzzy: body.fuzzy,
      fuzziness: body.fuzziness?.toUpperCase(),
      proximity: body.proximity,
      facets: body.facets,
      total: opts.count,
    });
  const [queried, early, graphScores] = await Promise.all([
    body.search_mode === 'keyword' ? null : queryVector(ports.vectors, body.query, opts.degraded),
    body.search_mode === 'vector' ? null : keywordSearch(),
    ports.graphExpansion && body.search_mode !== 'keyword'
      ? ports.graphExpansion(body.query, body.channel_id).catch(() => new Map<string, number>()) // graph down: semantic only
      : new Map<string, number>(),
  ]);
  // The vector store's nearest facts; the store down → keyword only (spec: vector store timeout, 5 s).
  let vector = queried;
  let vectorHits: { factId: string; score: number }[] = [];
  if (vector && ports.vectors) {
    const { store, embedder } = ports.vectors;
    try {
      vectorHits = await store.search({ channelId: body.channel_id, vector, model: embedder.id, limit: k, filters });
    } catch (err) {
      if (!isOutage(err)) throw err;
      opts.degraded?.add('vector_store');
      vector = null;
    }
  }
  const method: SearchResponse['search_method'] = vector === null ? 'keyword' : body.search_mode;
  const candidates = new Map<string, Candidate>();
  let total = 0;
  let facets: Record<string, Record<string, number>> | undefined;
  if (method !== 'vector') {
    const kw = early ?? (await keywordSearch()); // a vector search without vectors falls back to keyword
    for (const h of kw.hits)
      candidates.set(h.factId, { factId: h.factId, keyword: h.score, vector: null, highlights: h.highlights });
    total = kw.total;
    facets = kw.facets;
  }
  if (vector && ports.vectors) {
    const { store, embedder } = ports.vectors;
    for (const h of vectorHits) {
      const c = candidates.get(h.factId);
      if (c) c.vector = h.score;
      else {
        candidates.set(h.factId, {
          factId: h.factId,
          keyword: method === 'hybrid' ? 0 : null,
          vector: h.score,
          highlights: [],
        });
        total++;
      }
    }
    for (const id of graphScores.keys())
      if (!candidates.has(id))
        candidates.set(id, { factId: id, keyword: method === 'hybrid' ? 0 : null, vector: null, highlights: [] });
    const missing = [...candidates.values()].filter((c) => c.vector === null).map((c) => c.factId);
    const sims = await store.similarities({ vector, model: embedder.id, factIds: missing }).catch((err: unknown) => {
      if (!isOutage(err)) throw err;
      opts.degraded?.add('vector_store'); // failed between two calls: those candidates rank without a cosine
      return new Map<string, number>();
    });
    for (const id of missing) candidates.get(id)!.vector = sims.get(id) ?? 0;
  } else {
    // No vectors (embedder or vector store down): the graph's facts still join, ranked by keyword 0 and the graph
    // score (spec "Query fallbacks": a vector timeout gives graph results).
    for (const id of graphScores.keys())
      if (!candidates.has(id)) candidates.set(id, { factId: id, keyword: 0, vector: null, highlights: [] });
  }
  // vector_score: the cosine over the best cosine of the candidates, so that, like keyword_score, the best match is 1.
  const bestCosine = Math.max(...[...candidates.values()].map((c) => c.vector ?? 0), Number.EPSILON);
  for (const c of candidates.values()) if (c.vector !== null) c.vector = Math.max(0, c.vector) / bestCosine;
  const memories = await ports.documents.getMemories([...candidates.keys()]);
  for (const [id, m] of memories) opts.memories?.set(id, m);
  const weights = { vector: body.vector_weight ?? 0.5, keyword: body.keyword_weight ?? 0.3 };
  const now = Date.now();
  const ranked = [...candidates.values()]
    .flatMap((c) => {
      const m = memories.get(c.factId);
      if (!m) return [];
      const score = Math.min(
        1,
        (graphScores.get(c.factId) ?? 0) * GRAPH_WEIGHT +
          finalScore(
            {
              vector: c.vector,
              keyword: c.keyword,
              quality: m.quality_score,
              recency: recencyBoost(m.message_ts, now),
              importance: m.importance,
            },
            weights,
          ),
      );
      return [{ m, c, score }];
    })
    .sort((a, b) => b.score - a.score || a.m.id.localeCompare(b.m.id))
    .slice(0, body.limit);
  const results = ranked.map(
    ({ m, c, score }, i): SearchResult => ({
      memory: {
        id: m.id,
        memory_text: m.memory_text,
        quality_score: m.quality_score,
        author_name: m.author_name,
        message_ts: m.message_ts,
        fact_type: m.fact_type,
        importance: m.importance,
        topic_tags: m.topic_tags,
        entity_tags: m.entity_tags,
      },
      score: Math.round(score * 10_000) / 10_000,
      highlights: c.highlights,
      ...(body.include_citations
        ? { citation: { id: `[${i + 1}]`, permalink: m.permalink, author: m.author_name, timestamp: m.message_ts } }
        : {}),
    }),
  );
  return {
    results,
    total,
    query_time_ms: Math.round((performance.now() - started) * 100) / 100,
    search_method: method,
    ...(facets ? { facets } : {}),
  };
};
