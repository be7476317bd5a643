import type { BreakerLogger, Config } from '@atlas/core';
import type { Embedder } from './embedder.js';
import { GuardedEmbedder, LOCAL_EMBED_CHUNK, LOCAL_EMBED_TIMEOUT_MS } from './guarded-embedder.js';
import { LocalSentenceEncoder } from './local-use.js';
import { OpenAiEmbedder } from './openai-embedder.js';

export * from './embedder.js';
export * from './files/index.js';
export * from './guarded-embedder.js';
export * from './llm/index.js';
export * from './local-use.js';
export * from './openai-embedder.js';
export * from './web-search.js';

/**
 * The embedder configuration asks for: an OpenAI-compatible endpoint, the local model (default), or none; behind its
 * circuit breaker (GuardedEmbedder: an endpoint 10 s per call, the local in-process model LOCAL_EMBED_TIMEOUT_MS; cold
 * start excepted; breaker `embedding_provider:<id>`), whose openings and closings go to `opts.logger` at info level.
 */
export const createEmbedder = (cfg: Config, opts: { logger?: BreakerLogger | null } = {}): GuardedEmbedder | null => {
  if (cfg.EMBEDDING_PROVIDER === 'none') return null;
  const remote = cfg.EMBEDDING_PROVIDER === 'openai' || Boolean(cfg.EMBEDDING_BASE_URL);
  const inner: Embedder = remote
    ? new OpenAiEmbedder({
        baseURL: cfg.EMBEDDING_BASE_URL ?? 'https://api.openai.com/v1',
        apiKey: cfg.EMBEDDING_API_KEY,
        model: cfg.EMBEDDING_MODEL,
        dim: cfg.EMBEDDING_DIM,
      })
    : new LocalSentenceEncoder();
  // The in-process model: small chunks, one at a time (time spent waiting for the CPU behind another call is no outage).
  return new GuardedEmbedder(inner, {
    logger: opts.logger ?? null,
    breaker: { resetMs: cfg.BREAKER_RESET_MS, ...(remote ? {} : { timeoutMs: LOCAL_EMBED_TIMEOUT_MS }) },
    ...(remote ? {} : { chunk: LOCAL_EMBED_CHUNK, serial: true }),
  });
};
