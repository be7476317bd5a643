import type { BreakerLogger, Config } from '@atlas/core';
import type { Embedder } from './embedder.js';
import { EMBED_CHUNK, GuardedEmbedder, LOCAL_EMBED_CHUNK, LOCAL_EMBED_TIMEOUT_MS } from './guarded-embedder.js';
import { LocalSentenceEncoder } from './local-use.js';
import { cachedModel } from './models/cache.js';
import { modelsDir, ONNX_MODEL_NAMES, onnxModel } from './models/catalog.js';
import { OnnxEmbedder } from './onnx-embedder.js';
import { OpenAiEmbedder } from './openai-embedder.js';

export * from './embedder.js';
export * from './files/index.js';
export * from './guarded-embedder.js';
export * from './llm/index.js';
export * from './local-use.js';
export * from './models/index.js';
export * from './onnx-embedder.js';
export * from './openai-embedder.js';
export * from './web-search.js';

/** Where createEmbedder says that the configured ONNX model is not in the cache (a pino logger has `warn`). */
export type EmbedderLogger = BreakerLogger & { warn?(obj: object | string, msg?: string): void };

/**
 * The local embedder EMBEDDING_LOCAL_MODEL names: an OnnxEmbedder when it names an ONNX model whose files are in the
 * cache (modelsDir: ATLAS_MODELS_DIR), with EMBEDDING_THREADS; else (`use-lite`, or a model not fetched: warned,
 * naming `atlas models fetch`) Universal Sentence Encoder lite. Never fetches: no network at run time.
 */
export const createLocalEmbedder = (
  cfg: Pick<Config, 'EMBEDDING_LOCAL_MODEL' | 'EMBEDDING_THREADS' | 'ATLAS_MODELS_DIR'>,
  opts: { logger?: EmbedderLogger | null } = {},
): Embedder => {
  if (cfg.EMBEDDING_LOCAL_MODEL === 'use-lite') return new LocalSentenceEncoder();
  const model = onnxModel(cfg.EMBEDDING_LOCAL_MODEL);
  const dir = modelsDir(cfg);
  const cached = model ? cachedModel(model, dir) : null;
  if (model && cached) return new OnnxEmbedder({ model, files: cached.files, threads: cfg.EMBEDDING_THREADS });
  const msg =
    `EMBEDDING_LOCAL_MODEL=${cfg.EMBEDDING_LOCAL_MODEL} is not in the model cache ${dir}: using Universal Sentence ` +
    `Encoder lite instead. Run 'atlas models fetch ${cfg.EMBEDDING_LOCAL_MODEL}' (or copy the folder from a machine ` +
    'that has it; docs/models.md).';
  const log = opts.logger;
  if (log?.warn) log.warn({ model: cfg.EMBEDDING_LOCAL_MODEL, models_dir: dir }, msg);
  else if (log) log.info({ model: cfg.EMBEDDING_LOCAL_MODEL, models_dir: dir }, msg);
  else console.warn(`atlas: ${msg}`);
  return new LocalSentenceEncoder();
};

/**
 * The embedder configuration asks for: an OpenAI-compatible endpoint, the local model (default; createLocalEmbedder),
 * or none; behind its circuit breaker (GuardedEmbedder: an endpoint 10 s per call, the local in-process model
 * LOCAL_EMBED_TIMEOUT_MS; cold start excepted; breaker `embedding_provider:<id>`), whose openings and closings go to
 * `opts.logger` at info level.
 */
export const createEmbedder = (cfg: Config, opts: { logger?: EmbedderLogger | null } = {}): GuardedEmbedder | null => {
  if (cfg.EMBEDDING_PROVIDER === 'none') return null;
  const remote = cfg.EMBEDDING_PROVIDER === 'openai' || Boolean(cfg.EMBEDDING_BASE_URL);
  const inner: Embedder = remote
    ? new OpenAiEmbedder({
        baseURL: cfg.EMBEDDING_BASE_URL ?? 'https://api.openai.com/v1',
        apiKey: cfg.EMBEDDING_API_KEY,
        model: cfg.EMBEDDING_MODEL,
        dim: cfg.EMBEDDING_DIM,
      })
    : createLocalEmbedder(cfg, opts);
  return guardEmbedder(inner, cfg, remote, opts);
};

// The in-process model: small chunks, one at a time (time spent waiting for the CPU behind another call is no
// outage). The ONNX encoder is ~3x faster than USE-lite and batches by 32: it gets chunks of 32.
const guardEmbedder = (
  inner: Embedder,
  cfg: Pick<Config, 'BREAKER_RESET_MS'>,
  remote: boolean,
  opts: { logger?: EmbedderLogger | null },
): GuardedEmbedder =>
  new GuardedEmbedder(inner, {
    logger: opts.logger ?? null,
    breaker: { resetMs: cfg.BREAKER_RESET_MS, ...(remote ? {} : { timeoutMs: LOCAL_EMBED_TIMEOUT_MS }) },
    ...(remote ? {} : { chunk: inner instanceof OnnxEmbedder ? EMBED_CHUNK : LOCAL_EMBED_CHUNK, serial: true }),
  });

/**
 * The local embedder of a model id stored beside vectors (Embedder.id), behind its breaker as createEmbedder's, or
 * null when it cannot be had here: an ONNX model not in the cache, an endpoint's model (the caller has the configured
 * embedder already, and no other endpoint is configured), an unknown id. What serves the queries of a vector space built by an earlier configuration while its replacement is
 * rebuilt (docs/models.md "Changing the model"). Never fetches.
 */
export const createEmbedderForModel = (
  modelId: string,
  cfg: Config,
  opts: { logger?: EmbedderLogger | null } = {},
): GuardedEmbedder | null => {
  if (modelId === LocalSentenceEncoder.ID) return guardEmbedder(new LocalSentenceEncoder(), cfg, false, opts);
  const onnx = ONNX_MODEL_NAMES.map((n) => onnxModel(n)).find((m) => m?.id === modelId);
  if (onnx) {
    const cached = cachedModel(onnx, modelsDir(cfg));
    return cached
      ? guardEmbedder(
          new OnnxEmbedder({ model: onnx, files: cached.files, threads: cfg.EMBEDDING_THREADS }),
          cfg,
          false,
          opts,
        )
      : null;
  }
  return null;
};
