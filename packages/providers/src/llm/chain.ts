import {
  AtlasError,
  type BreakerLogger,
  type BreakerSnapshot,
  CircuitBreaker,
  type CircuitBreakerOptions,
} from '@atlas/core';
import type { z } from 'zod';
import {
  hasImages,
  type LlmCompletion,
  type LlmJsonOptions,
  type LlmJsonResult,
  type LlmMessage,
  type LlmProvider,
  LlmProviderError,
  type LlmRequest,
  type LlmStreamEvent,
  LlmStreamInterruptedError,
  LlmUnavailableError,
} from './port.js';

/** Slack given to a breaker's own timeout over the provider's (ms): the provider's timeout is the one that fires. */
const BREAKER_SLACK_MS = 1_000;

export interface LlmChainOptions {
  /** The tier's name, in errors and breaker names: `fast` (routing, extraction) or `quality` (answers, wiki). */
  tier: string;
  /** Tried in order (spec "LLM fallback chain": the primary model, then the secondary provider's). */
  providers: readonly LlmProvider[];
  /** Breaker settings shared by the providers' breakers (spec defaults: 3 failures, 30 s streak, 30 s reset). */
  breaker?: Pick<CircuitBreakerOptions, 'failureThreshold' | 'streakMs' | 'resetMs'>;
  /** Gets the breakers' info lines (a breaker opening; spec "Alerts"). */
  logger?: BreakerLogger;
}

/** One provider's place in /api/health: who, and its breaker's snapshot. */
export interface LlmProviderHealth extends BreakerSnapshot {
  provider: string;
  model: string;
}

/**
 * Errors that say the request was bad, not that the provider is: a 400 / 413 / 422 answer, or INVALID_REQUEST
 * (images to a text-only model). The chain still tries the next provider, but the breaker does not count them.
 */
const isProviderFault = (err: unknown): boolean => {
  if (err instanceof LlmProviderError)
    return !(err.kind === 'rejected' && [400, 413, 422].includes(err.httpStatus ?? 0));
  return !(err instanceof AtlasError && err.code === 'INVALID_REQUEST');
};

const combine = (...signals: (AbortSignal | undefined)[]): AbortSignal =>
  AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));

/**
 * One tier of the LLM fallback chain (spec "Degraded behaviour when a dependency fails", "LLM fallback chain"): an
 * ordered list of providers, each behind its own CircuitBreaker (spec "Dependency circuit breaker"). A call goes to the
 * first provider whose breaker lets it through and moves on when it fails (429, 5xx, timeout, network, malformed
 * JSON) or its breaker is open. When every provider failed it throws LlmUnavailableError: the tier's last resort
 * (the regex fast path, raw retrieved results) is the caller's. Results say which provider and model answered.
 * The caller's abort stops the chain at once (its reason is rethrown; no other provider is tried).
 */
export class LlmChain {
  readonly tier: string;
  /** True when every provider accepts image parts: only then may a caller send images (config LLM_ACCEPTS_IMAGES). */
  readonly acceptsImages: boolean;
  private readonly links: readonly { provider: LlmProvider; breaker: CircuitBreaker }[];

  constructor(opts: LlmChainOptions) {
    this.tier = opts.tier;
    this.acceptsImages = opts.providers.length > 0 && opts.providers.every((p) => p.acceptsImages);
    this.links = opts.providers.map((provider) => ({
      provider,
      breaker: new CircuitBreaker({
        name: `llm:${opts.tier}:${provider.provider}`,
        dependency: 'llm_provider', // the runtime's BreakerSet lists it so (health, Prometheus)
        timeoutMs: provider.timeoutMs + BREAKER_SLACK_MS,
        isFailure: isProviderFault,
        ...opts.breaker,
        ...(opts.logger ? { logger: opts.logger } : {}),
      }),
    }));
  }

  /** The providers in order, with their breakers' states (for /api/health). */
  health(): LlmProviderHealth[] {
    return this.links.map(({ provider, breaker }) => ({
      provider: provider.provider,
      model: provider.model,
      ...breaker.snapshot(),
    }));
  }

  /** The breaker of each provider, in order (to listen to state changes). */
  breakers(): readonly { provider: string; breaker: CircuitBreaker }[] {
    return this.links.map(({ provider, breaker }) => ({ provider: provider.provider, breaker }));
  }

  /** The first provider's whole answer. Throws LlmUnavailableError when none answered. */
  complete(req: LlmRequest): Promise<LlmCompletion> {
    return this.attempt(req.messages, req.signal, 1, (p, signal) => p.complete({ ...req, signal }));
  }

  /**
   * A JSON object validated by `schema` (see LlmProvider.json: one repair call per provider). A provider whose answer
   * is still invalid after its repair counts as failed and the next one is asked. Throws LlmUnavailableError.
   */
  json<T>(schema: z.ZodType<T>, messages: readonly LlmMessage[], opts: LlmJsonOptions = {}): Promise<LlmJsonResult<T>> {
    return this.attempt(messages, opts.signal, 2, (p, signal) => p.json(schema, messages, { ...opts, signal }));
  }

  /**
   * Streams from the first provider that yields its first event; one that fails before any delta is passed over.
   * Yields the provider's events (LlmStreamEvent: deltas, then `done` with usage and who answered). Throws
   * LlmUnavailableError when no provider started, and LlmStreamInterruptedError (with the text so far) when the
   * answering provider fails mid-stream: the caller finishes with its fallback, no other provider is tried.
   */
  async *stream(req: LlmRequest): AsyncGenerator<LlmStreamEvent> {
    const attempts: { provider: string; error: unknown }[] = [];
    for (const { provider, breaker } of this.links) {
      if (!this.usable(provider, req.messages, attempts)) continue;
      let started: { it: AsyncIterator<LlmStreamEvent>; first: IteratorResult<LlmStreamEvent> };
      try {
        started = await breaker.fire(
          async (signal) => {
            // The breaker's signal serves the start only; the stream lives on with the caller's.
            const it = provider.stream({ ...req, signal: combine(req.signal, signal) })[Symbol.asyncIterator]();
            return { it, first: await it.next() };
          },
          { signal: req.signal, timeoutMs: provider.timeoutMs + BREAKER_SLACK_MS },
        );
      } catch (err) {
        if (req.signal?.aborted) throw err;
        attempts.push({ provider: provider.provider, error: err });
        continue;
      }
      let text = '';
      let done = false;
      try {
        for (let r = started.first; !r.done; r = await started.it.next()) {
          if (r.value.type === 'delta') text += r.value.text;
          yield r.value;
        }
        done = true;
        return;
      } catch (err) {
        done = true;
        if (req.signal?.aborted) throw err;
        await breaker.recordFailure(err);
        throw new LlmStreamInterruptedError(provider.provider, provider.model, text, err);
      } finally {
        if (!done) await started.it.return?.(); // the consumer stopped early: let the provider close its request
      }
    }
    throw new LlmUnavailableError(this.tier, attempts);
  }

  /** Stops the breakers' timers. */
  shutdown(): void {
    for (const { breaker } of this.links) breaker.shutdown();
  }

  private async attempt<T>(
    messages: readonly LlmMessage[],
    signal: AbortSignal | undefined,
    callsPerAttempt: number,
    run: (p: LlmProvider, signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const attempts: { provider: string; error: unknown }[] = [];
    for (const { provider, breaker } of this.links) {
      if (!this.usable(provider, messages, attempts)) continue;
      try {
        return await breaker.fire((s) => run(provider, s), {
          signal,
          timeoutMs: callsPerAttempt * provider.timeoutMs + BREAKER_SLACK_MS,
        });
      } catch (err) {
        if (signal?.aborted) throw err;
        attempts.push({ provider: provider.provider, error: err });
      }
    }
    throw new LlmUnavailableError(this.tier, attempts);
  }

  /** False (and noted) for a text-only provider when the messages carry images: it is passed over, not failed. */
  private usable(
    provider: LlmProvider,
    messages: readonly LlmMessage[],
    attempts: { provider: string; error: unknown }[],
  ): boolean {
    if (provider.acceptsImages || !hasImages(messages)) return true;
    attempts.push({
      provider: provider.provider,
      error: new AtlasError('INVALID_REQUEST', `${provider.provider} does not accept images`),
    });
    return false;
  }
}
