import { AsOf, AtlasError, FactType, Importance } from '@atlas/core';
import { type Embedder, modelOfVector } from '@atlas/providers';
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
  /**
   * As of this instant (issue 27 point 2): only facts stated at or before it (as if date_range ended there), the
   * recency boost measured from it, and each fact's validity as it stood then. ISO 8601; a future one is now.
   */
  as_of: AsOf.optional(),
});
export type SearchBody = z.infer<typeof SearchBody>;

/**
 * The search body with `as_of` folded into its filters (date_range.end = the earlier of date_range.end and as_of):
 * every store reads facts stated by then, through the filters they already apply.
 */
export const withAsOf = (body: SearchBody): SearchBody => {
  if (!body.as_of) return body;
  const end = body.filters?.date_range?.end;
  const capped = end !== undefined && Date.parse(end) < Date.parse(body.as_of) ? end : body.as_of;
  return { ...body, filters: { ...body.filters, date_range: { ...body.filters?.date_range, end: capped } } };
};

/**
 * Importance multipliers of the spec's final_score: importance breaks near-ties without burying a relevant
 * low fact (0.85/0.7 cost 2 points of recall@10 on LoCoMo; docs/routes.md "Search").
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

/**
 * The query's unit vector, or null when there is no embedder, the query is empty or `*`, or the embedder fails
 * (`failed` true; then search is keyword-only).
 */
const queryVector = async (
  vectors: SearchPorts['vectors'],
  query: string,
): Promise<{ vector: number[] | null; failed: boolean }> => {
  if (!vectors || /^\s*\*?\s*$/.test(query)) return { vector: null, failed: false };
  try {
    return { vector: (await vectors.embedder.embed([query], { kind: 'query' }))[0] ?? null, failed: false };
  } catch {
    return { vector: null, failed: true };
  }
};

/**
 * Graph-expanded retrieval: the facts of the entities a query names (and, at half weight, of their
 * neighbours), as fact id → graph score in (0, 1]. Built from the graph store and an entity recogniser.
 */
export type GraphExpansion = (query: string, channelId: string | null) => Promise<Map<string, number>>;

/** Weight of the graph score added to final_score when graph expansion is on (0.1 and 0.05 measured on LoCoMo; docs/graph.md). */
export const GRAPH_WEIGHT = 0.05;

/** A signal a search ran without: the embedder or the vector store was down (spec degraded mode). */
export type SearchDegradation = 'vector_store' | 'embedding_provider';

/** A search's response, the memory records of its candidates by fact id, and the signals it ran without. */
export interface SearchOutcome {
  response: SearchResponse;
  memories: Map<string, MemoryDetailView & { permalink: string }>;
  degraded: ReadonlySet<SearchDegradation>;
}

/**
 * What a search reads: the facts' records (documents), the keyword index, the embedder and vector store (null:
 * keyword only) and graph-expanded retrieval (null or absent: none).
 */
export interface SearchPorts {
  documents: Pick<DocumentStore, 'getMemories'>;
  keyword: Pick<KeywordIndex, 'search' | 'count'>;
  vectors?: { embedder: Embedder; store: VectorStore } | null;
  /** When set, hybrid and vector searches add graph-expanded candidates (off by default: see docs/graph.md). */
  graphExpansion?: GraphExpansion | null;
}

/**
 * The cosine to the query at or above which a fact is a vector match (search_mode `vector` and `hybrid`: what
 * `total` counts and what may be returned; docs/conventions.md "Search total"), per embedder id. Calibrated on real
 * data with scripts/calibrate-vector-floor.ts (383 LoCoMo dev questions against the 1,070 facts of their
 * conversations, 724 question-evidence pairs).
 * - USE-lite (`use-lite-512@energetic-ai-0.2.0`): evidence facts have cosines p10/p50/p90 0.309/0.451/0.569 and the
 *   other facts 0.154/0.281/0.416. At 0.30 a question matches 90.7 % of its evidence facts (87.7 % of questions at
 *   least one) and 44.0 % of its conversation; 0.35 (where evidence matched minus the rest matched peaks: 82.6 − 26.7)
 *   cost retrieval 0.4 points of hybrid recall@10 (75.2 → 74.8 %) and 1.9 of vector recall@10 on the same questions
 *   (bench:retrieval), 0.30 costs 0.1 and 0.2 (75.1 %, 55.6 %): the floor keeps what the vector signal finds.
 * - e5-small-v2 int8 (`onnx:e5-small-v2-q`; query and passage prefixes as trained): every cosine is high and the
 *   range narrow, evidence p10/p50/p90 0.793/0.830/0.869, the other facts 0.720/0.767/0.805. At 0.77 a question
 *   matches 97.7 % of its evidence facts (89.6 % of questions at least one; 91.6 % have evidence with facts at all) and
 *   47.9 % of its conversation, as USE-lite's 0.30 does; the peak of evidence matched minus the rest matched is 0.80
 *   (85.2 − 13.3). With VECTOR_SCORE_ZERO at the floor, floors 0.74-0.80 give hybrid recall@10 75.3-76.0 % and
 *   vector 67.9-70.9 %: 0.77 gives 75.8 % and 70.9 %, 0.80 loses vector recall (questions whose evidence is at
 *   0.78-0.80).
 */
export const VECTOR_MATCH_FLOOR: Readonly<Record<string, number>> = {
  'use-lite-512@energetic-ai-0.2.0': 0.3,
  'onnx:e5-small-v2-q': 0.77,
};
/**
 * The floor of an embedder without a calibrated one (bge, MiniLM, an OpenAI-compatible endpoint): USE-lite's, until
 * scripts/calibrate-vector-floor.ts is run with that embedder (EMBEDDING_PROVIDER / EMBEDDING_LOCAL_MODEL) and its
 * floor added above.
 */
export const DEFAULT_VECTOR_MATCH_FLOOR = 0.3;

/**
 * The cosine that gives vector_score 0, per embedder id (absent: 0): vector_score = (cosine − zero) / (best cosine
 * of the candidates − zero), at least 0, so the best candidate scores 1 and one at `zero` or below scores 0. An
 * encoder whose unrelated texts are far apart (USE-lite, cosines of other facts p50 0.281) keeps zero 0, the plain
 * cosine over the best. An encoder whose every cosine is high (e5: other facts p50 0.767, evidence 0.830) needs its
 * own: over the best cosine alone, its candidates all score 0.85-1, and quality and importance decide the vector
 * ranking. Measured on LoCoMo dev (bench:retrieval, 383 questions): e5 at its floor (0.77) takes vector recall@10
 * from 33.7 to 70.9 % and hybrid from 72.1 to 75.8 %; zero 0.70-0.78 all give hybrid 75.3-76.0 %. USE-lite at its
 * floor (0.30) would lose hybrid recall@10 (75.1 → 71.2 %): its vector signal is weaker than the keyword one, and
 * widening it lets it outvote keyword matches.
 */
export const VECTOR_SCORE_ZERO: Readonly<Record<string, number>> = { 'onnx:e5-small-v2-q': 0.77 };

/**
 * At most this many vector matches are counted (the nearest first): a fixed pool, the same for every limit, so that
 * `total` never depends on the page size; a query matching more reports this many vector matches.
 */
export const VECTOR_MATCH_CAP = 10_000;

/** The vector match floor of an embedder (VECTOR_MATCH_FLOOR, else the default). */
export const vectorFloorOf = (embedderId: string): number =>
  VECTOR_MATCH_FLOOR[embedderId] ?? DEFAULT_VECTOR_MATCH_FLOOR;

/** The cosine an embedder's vector_score is 0 at (VECTOR_SCORE_ZERO, else 0). */
export const vectorScoreZeroOf = (embedderId: string): number => VECTOR_SCORE_ZERO[embedderId] ?? 0;

/**
 * vector_score of a cosine: (cosine − zero) / (best − zero), clamped to [0, 1], where `best` is the best cosine of
 * the search's candidates and `zero` the embedder's vectorScoreZeroOf (both cosines, in [-1, 1]).
 */
export const vectorScore = (cosine: number, best: number, zero: number): number =>
  Math.min(1, Math.max(0, cosine - zero) / Math.max(best - zero, Number.EPSILON));

/**
 * Whether a fact passes the spec's search filters and channel, as the stores' factFilterSql reads them (topics
 * lower-cased, entities and authors case-insensitive, date_range inclusive): for graph-expanded candidates, which
 * the graph finds without the filters.
 */
const passesFilters = (
  m: Pick<
    MemoryDetailView,
    'channel_id' | 'fact_type' | 'importance' | 'topic_tags' | 'entity_tags' | 'author_name' | 'message_ts'
  >,
  channelId: string | null,
  f: SearchBody['filters'],
  channels?: ReadonlySet<string>,
): boolean => {
  const lower = (xs: readonly string[]) => new Set(xs.map((x) => x.toLowerCase()));
  if (channelId !== null && m.channel_id !== channelId) return false;
  if (channels && !channels.has(m.channel_id)) return false;
  if (!f) return true;
  if (f.fact_types?.length && !f.fact_types.includes(m.fact_type as never)) return false;
  if (f.importance?.length && !f.importance.includes(m.importance as never)) return false;
  if (f.topics?.length) {
    const want = new Set(f.topics.map((t) => t.toLowerCase()));
    if (!m.topic_tags.some((t) => want.has(t))) return false;
  }
  if (f.entities?.length) {
    const want = lower(f.entities);
    if (!m.entity_tags.some((e) => want.has(e.toLowerCase()))) return false;
  }
  if (f.authors?.length && !lower(f.authors).has(m.author_name.toLowerCase())) return false;
  const ts = Date.parse(m.message_ts);
  if (f.date_range?.start && ts < Date.parse(f.date_range.start)) return false;
  if (f.date_range?.end && ts > Date.parse(f.date_range.end)) return false;
  return true;
};

/**
 * Runs a search (spec "Search"). keyword: the keyword index; vector: the vector store (cosine); hybrid
 * (default): both, the union of their candidates, each candidate scored with both signals (the cosine of
 * keyword-only candidates is looked up). Without an embedder or vector store, or when the embedder fails,
 * every mode is served by the keyword index and search_method says `keyword` (spec degraded mode).
 *
 * Matching facts (docs/conventions.md "Search total"): keyword, the facts the keyword index matches with the query
 * and filters (its exact count); vector, the facts whose cosine to the query is at or above the embedder's floor
 * (vectorFloorOf), counted exactly up to VECTOR_MATCH_CAP, plus graph-expanded facts that pass the filters when graph
 * expansion is on; hybrid, the union of both (each fact once, counted by the keyword index with the vector and graph
 * matches included). `total` is that number and `facets` count over those same facts, both independent of `limit`;
 * results are the best `limit` of them by final_score (candidates per signal: max(limit·5, 50)), so results never
 * exceed total. With `opts.count` false (callers that only rank, like ask) nothing is counted and total is the number
 * of candidates. `opts.channels` bounds every signal, count and facet to those channels (a restricted caller's visible
 * channels, docs/access.md "What a caller sees"; KeywordFilters.channels). Besides the response, returns the memory records of the candidates (`memories`, by fact id) and
 * the signals the search ran without (`degraded`).
 *
 * Degraded modes (spec "Degraded behaviour when a dependency fails"): the embedding provider down (or its breaker
 * open) → keyword only; the vector store down (search fails with STORE_UNAVAILABLE, breaker open or 5 s timeout) →
 * keyword only too (the keyword index is a store of its own); in both `search_method` says `keyword`, and `degraded`
 * holds `embedding_provider` / `vector_store`. The keyword index or the document store down fails the search
 * (AtlasError STORE_UNAVAILABLE, 503).
 */
export const runSearch = async (
  ports: SearchPorts,
  input: SearchBody,
  opts: { count?: boolean; channels?: readonly string[] | undefined } = {},
): Promise<SearchOutcome> => {
  const started = performance.now();
  const body = withAsOf(input);
  const counting = opts.count !== false;
  const degraded = new Set<SearchDegradation>();
  const f = body.filters;
  const visible = opts.channels ? new Set(opts.channels) : undefined;
  const filters =
    f || opts.channels
      ? {
          factTypes: f?.fact_types,
          importance: f?.importance,
          topics: f?.topics,
          entities: f?.entities,
          authors: f?.authors,
          dateRange: f?.date_range,
          channels: opts.channels,
        }
      : undefined;
  const k = Math.max(body.limit * 5, 50);
  const textQuery = {
    query: body.query,
    channelId: body.channel_id,
    filters,
    fuzzy: body.fuzzy,
    fuzziness: body.fuzziness?.toUpperCase(),
    proximity: body.proximity,
  };
  // keyword mode counts in its search; hybrid counts afterwards, with the vector matches (KeywordIndex.count).
  const keywordSearch = (withTotal: boolean) =>
    ports.keyword.search({
      ...textQuery,
      limit: k,
      ...(withTotal ? { facets: body.facets, total: counting } : { total: false }),
    });
  // The query embedding and the keyword search do not depend on each other: run them together.
  const [queried, early, graphScores] = await Promise.all([
    body.search_mode === 'keyword' ? { vector: null, failed: false } : queryVector(ports.vectors, body.query),
    body.search_mode === 'vector' ? null : keywordSearch(body.search_mode === 'keyword'),
    ports.graphExpansion && body.search_mode !== 'keyword'
      ? ports.graphExpansion(body.query, body.channel_id).catch(() => new Map<string, number>()) // graph down: semantic only
      : new Map<string, number>(),
  ]);
  // The vector matches (cosine at or above the floor), best first; the store down → keyword only (spec: 5 s).
  if (queried.failed) degraded.add('embedding_provider');
  let vector = queried.vector;
  // The model that made the query's vector: its floor, zero and space, even when the active model changed meanwhile
  // (a vector space switch: docs/models.md "Changing the model").
  const model = vector && ports.vectors ? modelOfVector(ports.vectors.embedder, vector) : null;
  let vectorHits: { factId: string; score: number }[] = [];
  if (vector && model && ports.vectors) {
    const { store } = ports.vectors;
    try {
      vectorHits = await store.matches({
        channelId: body.channel_id,
        vector,
        model,
        limit: counting ? VECTOR_MATCH_CAP : k,
        filters,
        minScore: vectorFloorOf(model),
      });
    } catch (err) {
      if (!isOutage(err)) throw err;
      degraded.add('vector_store');
      vector = null;
    }
  }
  const method: SearchResponse['search_method'] = vector === null ? 'keyword' : body.search_mode;
  const candidates = new Map<string, Candidate>();
  /** Candidates the keyword index or the vector store matched (they pass the filters by construction). */
  const matched = new Set<string>();
  let total = 0;
  let facets: Record<string, Record<string, number>> | undefined;
  if (method !== 'vector') {
    // A vector search without vectors falls back to keyword, counting as keyword mode does.
    const kw = early ?? (await keywordSearch(true));
    for (const h of kw.hits) {
      candidates.set(h.factId, { factId: h.factId, keyword: h.score, vector: null, highlights: h.highlights });
      matched.add(h.factId);
    }
    total = kw.total;
    facets = kw.facets;
  }
  if (vector && model && ports.vectors) {
    const { store } = ports.vectors;
    for (const h of vectorHits.slice(0, k)) {
      matched.add(h.factId);
      const c = candidates.get(h.factId);
      if (c) c.vector = h.score;
      else
        candidates.set(h.factId, {
          factId: h.factId,
          keyword: method === 'hybrid' ? 0 : null,
          vector: h.score,
          highlights: [],
        });
    }
    for (const id of graphScores.keys())
      if (!candidates.has(id))
        candidates.set(id, { factId: id, keyword: method === 'hybrid' ? 0 : null, vector: null, highlights: [] });
    const missing = [...candidates.values()].filter((c) => c.vector === null).map((c) => c.factId);
    const sims = await store.similarities({ vector, model, factIds: missing }).catch((err: unknown) => {
      if (!isOutage(err)) throw err;
      degraded.add('vector_store'); // failed between two calls: those candidates rank without a cosine
      return new Map<string, number>();
    });
    for (const id of missing) candidates.get(id)!.vector = sims.get(id) ?? 0;
  } else {
    // No vectors (embedder or vector store down): the graph's facts still join, ranked by keyword 0 and the graph
    // score (spec "Query fallbacks": a vector timeout gives graph results).
    for (const id of graphScores.keys())
      if (!candidates.has(id)) candidates.set(id, { factId: id, keyword: 0, vector: null, highlights: [] });
  }
  const memories = await ports.documents.getMemories([...candidates.keys()], { asOf: body.as_of });
  // Graph-expanded facts are matches only where they pass the channel and filters (the graph knows neither): the
  // others leave the candidates unless the keyword index or the vector store matched them too.
  const graphMatches = new Set(
    [...graphScores.keys()].filter((id) => {
      const m = memories.get(id);
      return m !== undefined && passesFilters(m, body.channel_id, f, visible);
    }),
  );
  for (const id of graphScores.keys()) if (!graphMatches.has(id) && !matched.has(id)) candidates.delete(id);
  if (counting) {
    // The vector and graph matches beside the query's keyword matches (a set: each fact once).
    const extra = [...new Set([...(method === 'keyword' ? [] : vectorHits.map((h) => h.factId)), ...graphMatches])];
    if (method === 'vector') {
      total = extra.length;
      if (body.facets?.length)
        facets = (await ports.keyword.count({ ...textQuery, include: extra, queryMatches: false, facets: body.facets }))
          .facets;
    } else if (body.search_mode === 'hybrid' || extra.length > 0) {
      const counted = await ports.keyword.count({ ...textQuery, include: extra, facets: body.facets });
      total = counted.total;
      facets = counted.facets;
    }
  }
  // vector_score: the cosine rescaled from the embedder's zero to the best cosine of the candidates, so that, like
  // keyword_score, the best match is 1 (vectorScore; VECTOR_SCORE_ZERO).
  const zero = model ? vectorScoreZeroOf(model) : 0;
  const bestCosine = Math.max(...[...candidates.values()].map((c) => c.vector ?? 0), Number.EPSILON);
  for (const c of candidates.values()) if (c.vector !== null) c.vector = vectorScore(c.vector, bestCosine, zero);
  const weights = { vector: body.vector_weight ?? 0.5, keyword: body.keyword_weight ?? 0.3 };
  const now = body.as_of ? Date.parse(body.as_of) : Date.now();
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
  const response: SearchResponse = {
    results,
    total: counting ? total : candidates.size,
    query_time_ms: Math.round((performance.now() - started) * 100) / 100,
    search_method: method,
    ...(facets ? { facets } : {}),
  };
  return { response, memories, degraded };
};

/**
 * POST /api/search's answer (spec "Search"): runSearch's response, counted; `channels` bounds it to a restricted
 * caller's visible channels (runSearch). Errors as runSearch.
 */
export const searchMemories = async (
  ports: SearchPorts,
  body: SearchBody,
  channels?: readonly string[],
): Promise<SearchResponse> => (await runSearch(ports, body, { channels })).response;
