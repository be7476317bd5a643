import { AtlasError } from '@atlas/core';

/**
 * An embedding provider (ARCHITECTURE.md: providers). Vectors are unit length (dot product = cosine).
 * `id` names the model and version and is stored beside every vector, so a model change is a re-embed
 * (a replay), never a mix of vector spaces. Errors: AtlasError PROVIDER_UNAVAILABLE (retriable).
 */
export interface Embedder {
  readonly id: string;
  readonly dim: number;
  /** One unit vector per text, in order. Empty texts are allowed. */
  embed(texts: readonly string[]): Promise<number[][]>;
  /** Releases what the provider holds (a worker thread, sockets); optional. */
  close?(): Promise<void>;
}

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
