import type { Fact, MessageIngested } from '@atlas/core';
import type { z } from 'zod';

/** A chat message as the LLM chain takes it. */
export interface LlmChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * The part of an LLM chain the LLM extractors (facts, entities) use: the fast tier's `json` (packages/providers
 * LlmChain satisfies it: primary → secondary provider, each behind its circuit breaker, one repair call per provider
 * on an invalid answer). Throws when no provider gave a valid answer; the error's `attempts` list why each was passed
 * over.
 */
export interface JsonLlm {
  json<T>(
    schema: z.ZodType<T>,
    messages: readonly LlmChatMessage[],
    opts?: { temperature?: number },
  ): Promise<{ value: T; repaired: boolean }>;
}

/**
 * True when a JsonLlm.json failure means every provider of the chain answered but none validly (each attempt failed
 * with kind `malformed_output` after its repair call): the model is up, so an extractor serves its offline result
 * instead of treating the message as failed (dead letter, queue).
 */
export const onlyMalformed = (err: unknown): boolean => {
  const attempts = (err as { attempts?: readonly { error: unknown }[] } | null)?.attempts;
  return (
    Array.isArray(attempts) &&
    attempts.length > 0 &&
    attempts.every((a) => (a.error as { details?: { kind?: string } } | null)?.details?.kind === 'malformed_output')
  );
};

/** What the facts projector knows about the thread a message belongs to (it keeps this state itself). */
export interface ThreadContext {
  /** Preprocessed text of the thread root (or, on platform_b, the message replied to). */
  rootText: string;
  rootAuthorName: string;
  /** Platform message id of the root. */
  rootId: string;
}

export interface ExtractionInput {
  message: MessageIngested;
  /** null for a top-level message, or when the root was never seen. */
  thread: ThreadContext | null;
  /**
   * The question this top-level message answers: the channel's message just before it, by another author, asking
   * something, at most ANSWER_WINDOW_MS earlier (the facts projector finds it from the channel flow). Absent or null
   * for a thread reply (its root is `thread`) or when the message before asks nothing.
   */
  answers?: ThreadContext | null;
}

/**
 * Turns one message into atomic facts (spec "Ingestion pipeline": fact extraction).
 * Returns every candidate with its quality_score; the caller drops those under QUALITY_THRESHOLD.
 * Deterministic for the offline extractor; an LLM extractor may throw AtlasError (retriable) when its provider fails.
 */
export interface FactExtractor {
  /** Stable id with version, e.g. `offline-regex@1`; recorded in FactsExtracted.extractor. */
  readonly id: string;
  extract(input: ExtractionInput): Promise<Fact[]>;
}
