import { Worker } from 'node:worker_threads';
import { providerUnavailable } from './embedder.js';

interface Pending {
  resolve: (vectors: number[][]) => void;
  reject: (err: unknown) => void;
}

/**
 * The main-thread side of a sentence encoder's worker thread (local-use-worker.mjs, onnx-embedder-worker.mjs): the
 * worker is started on first use, posted `{id, texts}` jobs and answers `{id, vectors}` (Float32Array per text) or
 * `{id, error}`. It keeps the process alive only while a job is pending. A worker that errors or exits fails its
 * pending jobs and is replaced on the next call. Errors: PROVIDER_UNAVAILABLE (retriable) naming `what`.
 */
export class EncoderWorker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  /**
   * @param url the worker module's file URL.
   * @param what the encoder's name in error messages.
   * @param workerData handed to the worker at each start.
   */
  constructor(
    private readonly url: URL,
    private readonly what: string,
    private readonly workerData?: unknown,
  ) {}

  /** Embeds `texts` on the worker: one unit vector per text, in order. */
  run(texts: readonly string[]): Promise<number[][]> {
    const worker = this.start();
    const id = this.nextId++;
    const done = new Promise<number[][]>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    worker.ref();
    worker.postMessage({ id, texts: [...texts] });
    return done;
  }

  /** Stops the worker thread, failing pending jobs (a later `run` starts a new one). */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.fail(new Error('encoder closed'));
    await w?.terminate();
  }

  /** Whether a worker thread is running. */
  get running(): boolean {
    return this.worker !== undefined;
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.url, this.workerData === undefined ? {} : { workerData: this.workerData });
    worker.on('message', (msg: { id: number; vectors?: Float32Array[]; error?: string }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (this.pending.size === 0) worker.unref();
      if (msg.error !== undefined) p.reject(providerUnavailable(this.what, new Error(msg.error)));
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
    for (const p of this.pending.values()) p.reject(providerUnavailable(this.what, err));
    this.pending.clear();
  }
}
