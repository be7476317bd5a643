import { AtlasError } from '@atlas/core';

/**
 * What a text is for. Some models are trained with a different prefix for each side of a search (e5: `query: ` /
 * `passage: `; bge: an instruction before queries): a search or ask question is a `query`, a stored fact a `passage`.
 * Models without such prefixes ignore it.
 */
export type EmbedKind = 'query' | 'passage';

export interface EmbedOptions {
  /** Default `passage`. */
  kind?: EmbedKind;
}

/**
 * An embedding provider (ARCHITECTURE.md: providers). Vectors are unit length (dot product = cosine).
 * `id` names the model and version and is stored beside every vector, so a model change is a re-embed
 * (a replay), never a mix of vector spaces. Errors: AtlasError PROVIDER_UNAVAILABLE (retriable).
 */
export interface Embedder {
  readonly id: string;
  readonly dim: number;
  /** One unit vector per text, in order. Empty texts are allowed. `opts.kind`: see EmbedKind (default passage). */
  embed(texts: readonly string[], opts?: EmbedOptions): Promise<number[][]>;
  /**
   * The model that made a vector this embedder returned, for an embedder that answers with more than one model over
   * time (the runtime's vector spaces during a model switch, docs/models.md): a caller that reads `id` after embedding
   * may otherwise pair one model's vector with another's id, floor or threshold. Optional; undefined (or absent):
   * `id`. Use modelOfVector.
   */
  modelOf?(vector: readonly number[]): string | undefined;
  /** Releases what the provider holds (a worker thread, sockets); optional. */
  close?(): Promise<void>;
}

/**
 * The model id that made `vector` (returned by `embedder.embed`): Embedder.modelOf when it knows, else `embedder.id`.
 * Searches pair a query vector with this id, its vector floor and its abstention threshold, never with whatever model
 * is active by the time they read it.
 */
export const modelOfVector = (embedder: Embedder, vector: readonly number[]): string =>
  embedder.modelOf?.(vector) ?? embedder.id;

/** Scales a vector to unit length (zero vectors stay zero). */
export const normalize = (v: number[]): number[] => {
  const n = Math.hypot(...v);
  return n === 0 ? v : v.map((x) => x / n);
};

export const providerUnavailable = (what: string, cause: unknown): AtlasError =>
  new AtlasError(
    'PROVIDER_UNAVAILABLE',
    `${what} unavailable: ${cause instanceof Error ? cause.message : String(cause)}`,
    {
      retriable: true,
      cause,
    },
  );
