/** The fields of a fact that search filters on (spec "Search": filters), kept by every search store. */
export interface FactFilterFields {
  factId: string;
  messageId: string;
  channelId: string;
  factType: string;
  importance: string;
  topicTags: string[];
  entityTags: string[];
  authorName: string;
  /** ISO 8601 UTC. */
  messageTs: string;
}

/** One fact as the keyword index stores it (a projection of FactsExtracted). */
export interface KeywordDoc extends FactFilterFields {
  /** The fact's text: matched, ranked first and highlighted. */
  text: string;
  /** What the fact stands in (author, source message, preceding conversation): matched and ranked at a lower weight. */
  context: string;
  qualityScore: number;
}

/** Filters of the spec's search body ("Search": filters). Arrays match any of their values. */
export interface KeywordFilters {
  /**
   * The channels a search may read (a restricted caller's visible channels, docs/access.md "What a caller sees"):
   * facts of other channels never match, are never counted and never enter a facet. Absent: every channel; empty:
   * nothing matches. Not a spec filter: the API sets it from the caller, never from the body.
   */
  channels?: readonly string[] | undefined;
  factTypes?: string[] | undefined;
  importance?: string[] | undefined;
  topics?: string[] | undefined;
  entities?: string[] | undefined;
  authors?: string[] | undefined;
  dateRange?: { start?: string | undefined; end?: string | undefined } | undefined;
}

export type Facet = 'fact_type' | 'importance' | 'topics';

export interface KeywordQuery {
  /** Natural language; `*` (or empty) matches every fact. Quoted phrases and `-term` follow web-search syntax. */
  query: string;
  /** null searches every channel. */
  channelId: string | null;
  filters?: KeywordFilters | undefined;
  /** Candidates to return, best first. */
  limit: number;
  /** Typo tolerance; fuzziness `AUTO` (default) scales with word length, or '1'/'2' edits. */
  fuzzy?: boolean | undefined;
  fuzziness?: string | undefined;
  /** Query terms must stand within this many words of each other. */
  proximity?: number | undefined;
  facets?: readonly Facet[] | undefined;
  /** false: total is not counted (it is the number of hits), for callers that only rank (ask). Default true. */
  total?: boolean | undefined;
}

/** What KeywordIndex.count counts: a query's matches, plus other facts (`include`) that pass the filters. */
export interface KeywordCountQuery extends Omit<KeywordQuery, 'limit' | 'total'> {
  /**
   * Fact ids that count as matches too when they pass the channel and filters (a hybrid search's vector and graph
   * matches): the union is counted, each fact once. Ids the index does not hold are not counted.
   */
  include?: readonly string[] | undefined;
  /** false: only `include` counts (a vector search's facets); the query is not matched. Default true. */
  queryMatches?: boolean | undefined;
}

export interface KeywordHit {
  factId: string;
  /** Keyword relevance in [0, 1]: the hit's rank divided by the best rank of this query (1 for match-all). */
  score: number;
  /** Fragments with matches wrapped in `<mark>` and `</mark>`. */
  highlights: string[];
}

export interface KeywordResult {
  hits: KeywordHit[];
  /** Facts matching query and filters (not capped by `limit`). */
  total: number;
  /** Facet name → value → count over all matching facts (present when facets were asked). */
  facets?: Record<string, Record<string, number>>;
}

/**
 * The keyword index port (spec "Search": keyword_score, highlights, fuzzy, proximity, facets).
 * Adapters: Postgres full text (tsvector, ts_headline, pg_trgm) and, later, Elasticsearch.
 * Writes are idempotent on factId. Errors: AtlasError STORE_UNAVAILABLE (retriable).
 */
export interface KeywordIndex {
  /** Removes every indexed fact (before a replay rebuilds the index). */
  truncate(): Promise<void>;
  /** Replaces the indexed facts of each message with `docs` (an empty list removes them). */
  replaceForMessages(sets: readonly { messageId: string; docs: readonly KeywordDoc[] }[]): Promise<void>;
  search(q: KeywordQuery): Promise<KeywordResult>;
  /**
   * The number of facts matching the query and filters (as search's `total` counts them) or listed in `include` and
   * passing the filters, each once, and the facets over those same facts (when asked). Exact.
   */
  count(q: KeywordCountQuery): Promise<{ total: number; facets?: Record<string, Record<string, number>> }>;
  /**
   * Removes every indexed fact of a channel (ChannelDataDeleted) and returns how many; other channels are untouched and
   * the next search no longer finds them. Idempotent (0 the second time).
   */
  deleteChannel(channelId: string): Promise<number>;
}
