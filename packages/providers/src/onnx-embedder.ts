import type { Embedder, EmbedOptions } from './embedder.js';
import { EncoderWorker } from './encoder-worker.js';
import type { ModelFiles } from './models/cache.js';
import type { OnnxModel } from './models/catalog.js';

export interface OnnxEmbedderOptions {
  /** The catalog entry (ONNX_MODELS): pooling, token limit, prefixes, dimensions, id. */
  model: OnnxModel;
  /** Its files in the cache (cachedModel / fetchModel). */
  files: ModelFiles;
  /** onnxruntime's intra-op threads (EMBEDDING_THREADS; default 1). Above 1, its threads do not spin-wait. */
  threads?: number;
}

/**
 * A BERT-style int8 ONNX sentence encoder (e5-small-v2, bge-small-en-v1.5, all-MiniLM-L6-v2; docs/models.md) run by
 * onnxruntime-node on a worker thread (onnx-embedder-worker.mjs), started on first use, like LocalSentenceEncoder:
 * the worker serves the job with the fewest texts left first, between turns of 32 texts, so a search's one-text job
 * waits for at most 32 texts of a backfill; it does not keep the process alive when idle. Each text is its own model
 * run, so its vector does not depend on the texts embedded with it (the int8 model's activation quantisation spans a
 * padded batch) and no time goes to padding. Each text gets the model's query or passage prefix (`opts.kind`, default passage), is cut to the model's
 * token limit (keeping the final [SEP]), pooled (mean or [CLS]) and L2-normalised: unit vectors of `dim` (384).
 * `id` is `onnx:<file stem>`, stored beside every vector. Errors: PROVIDER_UNAVAILABLE (retriable), e.g. a model file
 * that cannot be loaded; a crashed worker is replaced on the next call.
 */
export class OnnxEmbedder implements Embedder {
  readonly id: string;
  readonly dim: number;
  private readonly worker: EncoderWorker;

  constructor(private readonly opts: OnnxEmbedderOptions) {
    this.id = opts.model.id;
    this.dim = opts.model.dim;
    const { model, files, threads } = opts;
    this.worker = new EncoderWorker(new URL('./onnx-embedder-worker.mjs', import.meta.url), `ONNX encoder ${this.id}`, {
      onnx: files.onnx,
      tokenizer: files.tokenizer,
      pooling: model.pooling,
      maxTokens: model.maxTokens,
      threads: Math.max(1, Math.floor(threads ?? 1)),
    });
  }

  async embed(texts: readonly string[], opts: EmbedOptions = {}): Promise<number[][]> {
    if (texts.length === 0) return [];
    const m = this.opts.model;
    const prefix = opts.kind === 'query' ? m.queryPrefix : m.passagePrefix;
    return this.worker.run(texts.map((t) => prefix + t));
  }

  /** Stops the worker thread (a later `embed` starts a new one). */
  close(): Promise<void> {
    return this.worker.close();
  }

  /** Whether a worker thread is running (tests). */
  get running(): boolean {
    return this.worker.running;
  }
}
