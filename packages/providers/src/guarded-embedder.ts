import { AtlasError, type BreakerLogger, type CircuitBreaker, dependencyBreaker, isDependencyFault } from '@atlas/core';
import { type Embedder, type EmbedOptions, providerUnavailable } from './embedder.js';

/** Texts per call through the breaker: each call has the spec's 10 s, however many texts a batch holds. */
export const EMBED_CHUNK = 32;
/**
 * Timeout (ms) of the calls until the first one succeeds: the local model loads its weights on its first call
 * (a few seconds, more on a busy machine) and a remote endpoint may be waking up. A cold start is no outage; a
 * provider that really is down still fails these calls (refused, an error status) and they count.
 */
export const EMBED_COLD_START_TIMEOUT_MS = 120_000;

export interface GuardedEmbedderOptions {
  /** Breaker name (default `embedding_provider:<embedder id>`). */
  name?: string;
  /** Gets the breaker's openings and closings at info level. */
  logger?: BreakerLogger | null;
  /** Breaker settings for tests (spec defaults otherwise: 10 s timeout, 3 failures, 30 s streak, 30 s reset). */
  breaker?: { timeoutMs?: number; resetMs?: number; streakMs?: number; failureThreshold?: number };
  /** Timeout of the calls before the first success, ms (default EMBED_COLD_START_TIMEOUT_MS). */
  coldStartTimeoutMs?: number;
  /** Texts per call through the breaker (default EMBED_CHUNK). */
  chunk?: number;
  /**
   * One call at a time, the others waiting before the breaker (not timed): for an in-process model, where a call
   * that waits for another one to finish is no sign of an outage (default false).
   */
  serial?: boolean;
}

/** Texts per call for the in-process local model: small enough to finish well within 10 s on a busy 2-core machine. */
export const LOCAL_EMBED_CHUNK = 8;
/**
 * Timeout (ms) of one call to the in-process local model. The spec's 10 s is an embedding provider's over the network;
 * the local model cannot be unreachable, and a call that is slow because every core is busy (a 2-core machine running
 * a test suite or an import) is no outage: counted as one, it sent facts text-only for nothing. A model that crashed
 * or hangs still fails calls (its worker's error, or this timeout).
 */
export const LOCAL_EMBED_TIMEOUT_MS = 60_000;

/**
 * An embedding provider behind its circuit breaker (spec "Degraded behaviour": embedding provider, 10 s; "Dependency
 * circuit breaker"). Same port (Embedder: same id and dim, so stored vectors keep their model id). `embed` sends the
 * texts in chunks of EMBED_CHUNK, each one call through the breaker with the 10 s timeout; until a call has succeeded
 * once (warm-up: the local model's load) calls get EMBED_COLD_START_TIMEOUT_MS instead. `warm()` makes that first
 * call at start, outside any request.
 *
 * Errors: AtlasError PROVIDER_UNAVAILABLE (retriable) when the breaker is open, a call times out or the provider
 * fails; the embeddings projector then queues the facts for backfill (text-only facts) and search goes keyword-only.
 */
export class GuardedEmbedder implements Embedder {
  readonly id: string;
  readonly dim: number;
  readonly breaker: CircuitBreaker;
  private warmed = false;

  constructor(
    readonly inner: Embedder,
    private readonly opts: GuardedEmbedderOptions = {},
  ) {
    this.id = inner.id;
    this.dim = inner.dim;
    this.breaker = dependencyBreaker('embedding_provider', {
      name: opts.name ?? `embedding_provider:${inner.id}`,
      logger: opts.logger ?? null,
      ...opts.breaker,
    });
  }

  /** Whether a call has succeeded (the model is loaded). */
  get isWarm(): boolean {
    return this.warmed;
  }

  /** Embeds one short text with the cold-start timeout (loads the local model); resolves false when it failed. */
  async warm(): Promise<boolean> {
    return this.embed(['warm up']).then(
      () => true,
      () => false,
    );
  }

  async embed(texts: readonly string[], opts: EmbedOptions = {}): Promise<number[][]> {
    const out: number[][] = [];
    const chunk = this.opts.chunk ?? EMBED_CHUNK;
    for (let i = 0; i < texts.length; i += chunk) out.push(...(await this.queued(texts.slice(i, i + chunk), opts)));
    return out;
  }

  /** The tail of the calls in flight when `serial`: the next call starts (and its timeout runs) after it. */
  private tail: Promise<unknown> = Promise.resolve();

  private queued(texts: readonly string[], opts: EmbedOptions): Promise<number[][]> {
    if (!this.opts.serial) return this.call(texts, opts);
    const run = this.tail.then(
      () => this.call(texts, opts),
      () => this.call(texts, opts),
    );
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async call(texts: readonly string[], opts: EmbedOptions): Promise<number[][]> {
    const cold = !this.warmed;
    try {
      const vectors = await this.breaker.fire(
        () => this.inner.embed(texts, opts),
        cold ? { timeoutMs: this.opts.coldStartTimeoutMs ?? EMBED_COLD_START_TIMEOUT_MS } : {},
      );
      this.warmed = true;
      return vectors;
    } catch (err) {
      if (err instanceof AtlasError || !isDependencyFault(err)) throw err;
      throw providerUnavailable(`embedding provider ${this.id}`, err);
    }
  }

  async close(): Promise<void> {
    this.breaker.shutdown();
    await this.inner.close?.();
  }
}
