import type { Config } from '@atlas/core';
import type { Embedder } from './embedder.js';
import { LocalSentenceEncoder } from './local-use.js';
import { OpenAiEmbedder } from './openai-embedder.js';

export * from './embedder.js';
export * from './files/index.js';
export * from './llm/index.js';
export * from './local-use.js';
export * from './openai-embedder.js';

/** The embedder configuration asks for: an OpenAI-compatible endpoint, the local model (default), or none. */
export const createEmbedder = (cfg: Config): Embedder | null => {
  if (cfg.EMBEDDING_PROVIDER === 'none') return null;
  if (cfg.EMBEDDING_PROVIDER === 'openai' || cfg.EMBEDDING_BASE_URL) {
    return new OpenAiEmbedder({
      baseURL: cfg.EMBEDDING_BASE_URL ?? 'https://api.openai.com/v1',
      apiKey: cfg.EMBEDDING_API_KEY,
      model: cfg.EMBEDDING_MODEL,
      dim: cfg.EMBEDDING_DIM,
    });
  }
  return new LocalSentenceEncoder();
};
