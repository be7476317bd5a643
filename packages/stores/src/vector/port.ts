import type { FactFilterFields, KeywordFilters } from '../keyword/port.js';

/** One fact's vector, with the fields search filters on. `model` is the embedder id that made it. */
export interface FactVector extends FactFilterFields {
  model: string;
  vector: number[];
}

export interface VectorQuery {
  /** null searches every channel. */
  channelId: string | null;
  /** A unit vector from the same model as the stored ones. */
  vector: number[];
  model: string;
  limit: number;
  filters?: KeywordFilters | undefined;
}

/**
 * The vector store port: facts nearest a query vector; score = cosine similarity clamped to [0, 1].
 * Writes are idempotent on factId. Adapters: pgvector (embedded default), Qdrant.
 * Errors: AtlasError STORE_UNAVAILABLE (retriable).
 */
export interface VectorStore {
  truncate(): Promise<void>;
  /** Replaces the vectors of each message with `points` (an empty list removes them). */
  replaceForMessages(sets: readonly { messageId: string; points: readonly FactVector[] }[]): Promise<void>;
  search(q: VectorQuery): Promise<{ factId: string; score: number }[]>;
  /**
   * Every fact (of the channel, model and filters) whose cosine to the query is at least `q.minScore`, best first
   * (ties by fact id), at most `q.limit`; computed exactly over the facts, never through an approximate index, so
   * the same query gives the same set whatever else is asked. What search counts as a vector match (its `total`).
   */
  matches(q: VectorQuery & { minScore: number }): Promise<{ factId: string; score: number }[]>;
  /** Cosine similarity of the query to each given fact (facts without a vector are absent). */
  similarities(q: { vector: number[]; model: string; factIds: readonly string[] }): Promise<Map<string, number>>;
  /**
   * The stored vectors of the given facts, as unit vectors (re-normalised on read), keyed by fact id; facts without a
   * vector are absent. Whatever model made them (the caller compares vectors of one model only).
   */
  vectorsOf(factIds: readonly string[]): Promise<Map<string, number[]>>;
  count(): Promise<number>;
  /** Removes every vector of a channel (ChannelDataDeleted) and returns how many. Idempotent (0 the second time). */
  deleteChannel(channelId: string): Promise<number>;
  /**
   * Optional: false when a search of this channel (null: all) would first load something slow (pgvector's in-memory
   * channel matrix), so the breaker gives that cold start a longer timeout instead of counting it as an outage.
   */
  isWarm?(channelId: string | null): boolean;
  /** Optional: loads what makes first searches fast (pgvector's in-memory channel matrices); resolves to how much. */
  warm?(): Promise<number>;
}
