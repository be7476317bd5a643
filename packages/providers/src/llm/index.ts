import type { BreakerLogger, Config } from '@atlas/core';
import { LlmChain } from './chain.js';
import { OpenAiLlmProvider } from './openai-llm.js';

export * from './chain.js';
export * from './json-output.js';
export * from './openai-llm.js';
export * from './port.js';

/** The two tiers of the LLM fallback chain; null where no provider is configured (the offline default). */
export interface LlmChains {
  /** Routing and extraction: LLM_FAST_MODEL, then LLM_SECONDARY_FAST_MODEL on the secondary provider. */
  fast: LlmChain | null;
  /** Answers and wiki summaries: LLM_QUALITY_MODEL, then LLM_SECONDARY_QUALITY_MODEL on the secondary provider. */
  quality: LlmChain | null;
}

/**
 * The fast and quality chains configuration asks for (spec "LLM fallback chain"): the primary provider (LLM_BASE_URL)
 * first, then the secondary (LLM_SECONDARY_BASE_URL), each model behind its own breaker, every call bounded by
 * LLM_TIMEOUT_MS. The secondary models default to the primary's names. Neither URL set: `{fast: null, quality: null}`.
 * `logger` gets the breakers' info lines.
 */
export const llmChainsFromConfig = (cfg: Config, logger?: BreakerLogger): LlmChains => {
  const endpoints = [
    cfg.LLM_BASE_URL
      ? { baseURL: cfg.LLM_BASE_URL, apiKey: cfg.LLM_API_KEY, fast: cfg.LLM_FAST_MODEL, quality: cfg.LLM_QUALITY_MODEL }
      : null,
    cfg.LLM_SECONDARY_BASE_URL
      ? {
          baseURL: cfg.LLM_SECONDARY_BASE_URL,
          apiKey: cfg.LLM_SECONDARY_API_KEY,
          fast: cfg.LLM_SECONDARY_FAST_MODEL ?? cfg.LLM_FAST_MODEL,
          quality: cfg.LLM_SECONDARY_QUALITY_MODEL ?? cfg.LLM_QUALITY_MODEL,
        }
      : null,
  ].filter((e) => e !== null);
  if (endpoints.length === 0) return { fast: null, quality: null };
  const chain = (tier: 'fast' | 'quality') =>
    new LlmChain({
      tier,
      providers: endpoints.map(
        (e) =>
          new OpenAiLlmProvider({
            baseURL: e.baseURL,
            apiKey: e.apiKey,
            model: e[tier],
            timeoutMs: cfg.LLM_TIMEOUT_MS,
            acceptsImages: cfg.LLM_ACCEPTS_IMAGES,
          }),
      ),
      breaker: { resetMs: cfg.BREAKER_RESET_MS },
      ...(logger ? { logger } : {}),
    });
  return { fast: chain('fast'), quality: chain('quality') };
};
