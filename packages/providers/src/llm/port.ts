import { AtlasError } from '@atlas/core';
import type { z } from 'zod';

/** A part of a message's content: text, or an image (an https or `data:` URL) for models that accept images. */
export type LlmContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

/** A chat message in the OpenAI shape. Image parts only where the provider's `acceptsImages` is true. */
export interface LlmMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | LlmContentPart[];
}

/** One completion request. `maxTokens` bounds the answer (tokens); `temperature` in [0, 2]; `signal` cancels. */
export interface LlmRequest {
  messages: readonly LlmMessage[];
  maxTokens?: number;
  temperature?: number;
  signal?: AbortSignal;
}

/** Token counts of one call. `estimated` is true when the server sent none and they are chars / 4 (rounded up). */
export interface LlmUsage {
  prompt_tokens: number;
  completion_tokens: number;
  estimated?: boolean;
}

/** Who answered: the provider's id (`<model>@<host>`) and its model name. */
export interface LlmAnswerer {
  provider: string;
  model: string;
}

/** A whole answer: its text, its usage and who answered. */
export interface LlmCompletion extends LlmAnswerer {
  text: string;
  usage: LlmUsage;
}

/**
 * What `stream` yields: `delta` events (non-empty text pieces, in order), then exactly one `done` event holding the
 * whole text, the usage (estimated when the server sent none) and who answered. An iterator that throws instead of
 * yielding `done` was interrupted (see LlmStreamInterruptedError).
 */
export type LlmStreamEvent = { type: 'delta'; text: string } | ({ type: 'done' } & LlmCompletion);

/** A validated structured answer: `value` passed the zod schema; `repaired` says a repair call was needed. */
export interface LlmJsonResult<T> extends LlmAnswerer {
  value: T;
  usage: LlmUsage;
  repaired: boolean;
}

/** Options of `json`: as LlmRequest without the messages. */
export type LlmJsonOptions = Omit<LlmRequest, 'messages'>;

/**
 * A chat model behind an OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, ...). Every call has a timeout (ms) and no
 * retries of its own: failover is the chain's (LlmChain). Errors: LlmProviderError (PROVIDER_UNAVAILABLE, retriable)
 * for 429, 5xx, timeouts, network errors and malformed answers; INVALID_REQUEST when image parts go to a model that
 * does not accept images; the caller's abort reason when `signal` aborts.
 */
export interface LlmProvider extends LlmAnswerer {
  /** Per-call timeout, ms (config LLM_TIMEOUT_MS; spec: 10 s). */
  readonly timeoutMs: number;
  /** Whether image content parts may be sent (config LLM_ACCEPTS_IMAGES). */
  readonly acceptsImages: boolean;
  complete(req: LlmRequest): Promise<LlmCompletion>;
  /** Streams the answer (see LlmStreamEvent). The per-call timeout applies to each wait for the next chunk. */
  stream(req: LlmRequest): AsyncIterable<LlmStreamEvent>;
  /**
   * Asks for one JSON object matching `schema` (the prompt says so; response_format json_object where the server
   * takes it), parses and validates it; on invalid JSON or a schema failure makes ONE repair call (the bad answer
   * and the zod error sent back), then throws LlmProviderError kind `malformed_output`.
   */
  json<T>(schema: z.ZodType<T>, messages: readonly LlmMessage[], opts?: LlmJsonOptions): Promise<LlmJsonResult<T>>;
}

/**
 * Why a provider call failed: `rate_limited` (429; `retryAfterSeconds` from Retry-After), `server_error` (5xx),
 * `timeout` (no answer within the per-call timeout), `network` (refused, reset, a stream cut short), `malformed_output`
 * (no valid JSON of the schema after the repair call), `rejected` (another 4xx: 400 bad request, 401, 404 model).
 */
export type LlmFailureKind = 'rate_limited' | 'server_error' | 'timeout' | 'network' | 'malformed_output' | 'rejected';

/** A failed provider call. AtlasError PROVIDER_UNAVAILABLE, retriable; `details` = {provider, kind, status?, retryAfterSeconds?}. */
export class LlmProviderError extends AtlasError {
  constructor(
    readonly provider: string,
    readonly kind: LlmFailureKind,
    message: string,
    extra: { status?: number | undefined; retryAfterSeconds?: number | undefined; cause?: unknown } = {},
  ) {
    super('PROVIDER_UNAVAILABLE', `${provider}: ${message}`, {
      retriable: true,
      cause: extra.cause,
      details: {
        provider,
        kind,
        ...(extra.status !== undefined ? { status: extra.status } : {}),
        ...(extra.retryAfterSeconds !== undefined ? { retryAfterSeconds: extra.retryAfterSeconds } : {}),
      },
    });
    this.name = 'LlmProviderError';
    this.httpStatus = extra.status;
  }

  /** The HTTP status the server answered with, if it answered. */
  readonly httpStatus: number | undefined;
}

/**
 * Every provider of a chain failed or had its breaker open (spec "LLM fallback chain"): the caller applies its tier's
 * last resort (fast tier: the regex fast path; quality tier: raw retrieved results). AtlasError PROVIDER_UNAVAILABLE,
 * retriable; `attempts` lists each provider and why it was passed over.
 */
export class LlmUnavailableError extends AtlasError {
  constructor(
    readonly tier: string,
    readonly attempts: readonly { provider: string; error: unknown }[],
  ) {
    const why = attempts.map((a) => `${a.provider}: ${a.error instanceof Error ? a.error.message : String(a.error)}`);
    super('PROVIDER_UNAVAILABLE', `no ${tier} LLM available (${why.join('; ') || 'no providers'})`, {
      retriable: true,
      details: { tier, providers: attempts.map((a) => a.provider) },
    });
    this.name = 'LlmUnavailableError';
  }
}

/**
 * A stream that failed after it had yielded text: no other provider is tried (the text so far was shown). The caller
 * finishes with its fallback; `partialText` is everything yielded before the failure. AtlasError PROVIDER_UNAVAILABLE.
 */
export class LlmStreamInterruptedError extends AtlasError {
  constructor(
    readonly provider: string,
    readonly model: string,
    readonly partialText: string,
    cause: unknown,
  ) {
    super('PROVIDER_UNAVAILABLE', `${provider}: stream interrupted after ${partialText.length} chars`, {
      retriable: true,
      cause,
      details: { provider, model, partialChars: partialText.length },
    });
    this.name = 'LlmStreamInterruptedError';
  }
}

/** Tokens estimated from text when a server reports none: ceil(chars / 4) (OpenAI's rule of thumb for English). */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

/** The characters of a request's messages (text parts only), for estimating prompt tokens. */
export const messageChars = (messages: readonly LlmMessage[]): string =>
  messages
    .map((m) =>
      typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''),
    )
    .join('\n');

/** True when some message carries an image part. */
export const hasImages = (messages: readonly LlmMessage[]): boolean =>
  messages.some((m) => typeof m.content !== 'string' && m.content.some((p) => p.type === 'image_url'));
