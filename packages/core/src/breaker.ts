import Opossum from 'opossum';
import { AtlasError } from './errors.js';

/** The spec's breaker states (spec "Dependency circuit breaker"). */
export type BreakerState = 'CLOSED' | 'OPEN' | 'HALF_OPEN';

/** Why a breaker opened: a run of consecutive failures, a failure streak that lasted too long, or a failed probe. */
export type BreakerOpenReason = 'consecutive_failures' | 'failure_streak' | 'probe_failed';

/** A state change, as given to `onStateChange` listeners. `reason` is set when `to` is OPEN. */
export interface BreakerTransition {
  name: string;
  from: BreakerState;
  to: BreakerState;
  reason?: BreakerOpenReason;
  /** The error of the failure that caused an opening, if any. */
  cause?: unknown;
}

/** The logger a breaker reports to (pino's `info` fits): `info(obj, msg)` or `info(msg)`. */
export interface BreakerLogger {
  info(obj: object | string, msg?: string): void;
}

/** What `CircuitBreaker.snapshot()` returns (for /api/health). Times are epoch ms. */
export interface BreakerSnapshot {
  name: string;
  state: BreakerState;
  /** Failures since the last success (0 once OPEN). */
  consecutiveFailures: number;
  /** When the breaker last opened, or null if it never did. */
  openedAt: number | null;
}

export interface CircuitBreakerOptions {
  /** Names the dependency in logs, errors and snapshots, e.g. `llm:gpt-4o-mini@api.openai.com`. */
  name: string;
  /** Per-call timeout, ms: a call still running then is aborted (its signal fires) and counts as a failure. */
  timeoutMs: number;
  /** Consecutive failures that open the breaker (spec: 3). */
  failureThreshold?: number;
  /** How long a failure streak (no success since its first failure) may last before a failure opens it, ms (spec: 30 s). */
  streakMs?: number;
  /** Time OPEN before HALF_OPEN lets one probe through, ms (spec: 30 s). */
  resetMs?: number;
  /**
   * Whether an error counts against the dependency (default: every error does). An error for which it returns false
   * (say a 400: the request was bad, the server answered) counts as a sign of life: it ends the failure streak.
   */
  isFailure?: (err: unknown) => boolean;
  /** Where openings (and closings after a probe) are logged at info level (spec "Alerts": an info log entry). */
  logger?: BreakerLogger;
  /**
   * The dependency it guards (DEPENDENCY_TIMEOUTS_MS names: `vector_store`, `llm_provider`, ...): when given, a
   * BreakerSet that holds the breaker lists it under that name (health, Prometheus) until `shutdown()`.
   */
  dependency?: string;
}

/** Per-call options of `CircuitBreaker.fire`. */
export interface FireOptions {
  /** The caller's signal: its abort aborts the call, and such an abort is no evidence about the dependency. */
  signal?: AbortSignal;
  /** This call's timeout, ms, instead of the breaker's `timeoutMs` (e.g. a call that makes two requests). */
  timeoutMs?: number;
}

/**
 * Thrown by `fire` without calling the dependency: the breaker is OPEN, or HALF_OPEN with its one probe in flight.
 * AtlasError PROVIDER_UNAVAILABLE, retriable; `details` = {breaker, state}.
 */
export class BreakerOpenError extends AtlasError {
  constructor(
    readonly breaker: string,
    readonly state: BreakerState,
  ) {
    super('PROVIDER_UNAVAILABLE', `${breaker}: circuit ${state}, call not sent`, {
      retriable: true,
      details: { breaker, state },
    });
    this.name = 'BreakerOpenError';
  }
}

/** A call that ran past its timeout (ms) and was aborted. AtlasError PROVIDER_UNAVAILABLE, retriable. */
export class BreakerTimeoutError extends AtlasError {
  constructor(
    readonly breaker: string,
    readonly timeoutMs: number,
  ) {
    super('PROVIDER_UNAVAILABLE', `${breaker}: timed out after ${timeoutMs} ms`, {
      retriable: true,
      details: { breaker, timeoutMs },
    });
    this.name = 'BreakerTimeoutError';
  }
}

type Call = (signal: AbortSignal) => Promise<unknown>;
type Action = (fn: Call, signal: AbortSignal) => Promise<unknown>;

/** Marks an error as the caller's own abort (neutral for the breaker); a WeakSet keeps the error untouched. */
const callerAborts = new WeakSet<object>();

/**
 * A circuit breaker around one dependency, over opossum (spec "Dependency circuit breaker").
 *
 * - CLOSED → OPEN after `failureThreshold` (3) consecutive failures, or when a failure arrives while a failure
 *   streak has lasted `streakMs` (30 s). "Or a 30 s timeout" of the spec is read as that streak rule: a dependency
 *   failing for 30 s without one success is cut off even when its failures are sparse (the per-call timeout, e.g.
 *   the LLM's 10 s, is `timeoutMs`, and a timed-out call is one failure).
 * - OPEN → HALF_OPEN after `resetMs` (30 s); calls while OPEN are rejected with BreakerOpenError, unsent.
 * - HALF_OPEN lets exactly one probe through; concurrent calls are rejected at once. Probe success → CLOSED;
 *   failed probe → OPEN for another `resetMs` (the spec leaves this outcome open).
 *
 * Opossum's own trigger (an error percentage) is disabled; the consecutive count and the streak are kept here from its
 * events. The caller aborting a call (its `signal`) is no evidence: it neither counts nor ends a streak, except that
 * an aborted probe counts as failed (the breaker re-opens rather than stay HALF_OPEN with no probe). Answers of calls
 * sent before the breaker opened are ignored while it is OPEN; a success arriving while HALF_OPEN closes it (as
 * opossum does: the dependency answered).
 */
export class CircuitBreaker {
  readonly name: string;
  /** The dependency it guards (options.dependency), or null. */
  readonly dependency: string | null;
  private readonly breaker: Opossum<Parameters<Action>, unknown>;
  private readonly threshold: number;
  private readonly streakMs: number;
  private readonly isFailure: (err: unknown) => boolean;
  private readonly listeners = new Set<(t: BreakerTransition) => void>();
  private current: BreakerState = 'CLOSED';
  private failures = 0;
  private streakStart: number | null = null;
  private openedAt: number | null = null;
  private pendingReason: { reason: BreakerOpenReason; cause: unknown } | null = null;

  constructor(private readonly opts: CircuitBreakerOptions) {
    this.name = opts.name;
    this.dependency = opts.dependency ?? null;
    this.threshold = opts.failureThreshold ?? 3;
    this.streakMs = opts.streakMs ?? 30_000;
    this.isFailure = opts.isFailure ?? (() => true);
    const action: Action = (fn, signal) => fn(signal);
    this.breaker = new Opossum(action, {
      name: opts.name,
      timeout: false, // timeouts are per call below, each with its own AbortController
      resetTimeout: opts.resetMs ?? 30_000,
      // Opossum's own trigger (failures / fires of its rolling 10 s window above a percentage) never fires: a call
      // fired before the window (a cold start, a 10 s timeout) that fails inside it makes failures exceed fires, an
      // error rate above 100 %, which opened breakers after 2 failures under load. Only a failed probe (HALF_OPEN)
      // still goes through opossum's check, and that one re-opens it as the spec wants.
      errorThresholdPercentage: Number.POSITIVE_INFINITY,
      volumeThreshold: Number.MAX_SAFE_INTEGER,
      enableSnapshots: false,
      // Errors that are no fault of the dependency reach opossum as 'success' (so a probe ending so closes it).
      errorFilter: (err: unknown) => !this.countsAgainst(err),
    });
    this.breaker.on('success', (result: unknown) => this.onSuccess(result));
    this.breaker.on('failure', (err: unknown) => this.onFailure(err));
    this.breaker.on('open', () => this.transition('OPEN'));
    this.breaker.on('halfOpen', () => this.transition('HALF_OPEN'));
    this.breaker.on('close', () => this.transition('CLOSED'));
  }

  /** The current state (spec names). */
  get state(): BreakerState {
    return this.current;
  }

  /** Name, state, consecutive failures and when it last opened (for /api/health). */
  snapshot(): BreakerSnapshot {
    return { name: this.name, state: this.current, consecutiveFailures: this.failures, openedAt: this.openedAt };
  }

  /** Calls `listener` on every state change; returns a function that removes it. */
  onStateChange(listener: (t: BreakerTransition) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs `fn` through the breaker. `fn` gets a signal that aborts at the call's timeout or when the caller's signal
   * aborts, and should pass it on (e.g. to fetch). Resolves with `fn`'s value; rejects with BreakerOpenError (not sent),
   * BreakerTimeoutError (timed out; a failure), the caller's abort reason, or `fn`'s own error.
   */
  async fire<T>(fn: (signal: AbortSignal) => Promise<T>, opts: FireOptions = {}): Promise<T> {
    const timeoutMs = opts.timeoutMs ?? this.opts.timeoutMs;
    const ctl = new AbortController();
    const onCallerAbort = () => ctl.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onCallerAbort, { once: true });
    if (opts.signal?.aborted) onCallerAbort();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort(new BreakerTimeoutError(this.name, timeoutMs));
    }, timeoutMs);
    const guarded = (signal: AbortSignal): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        const onAbort = () => reject(this.abortError(signal, timedOut));
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        fn(signal).then(resolve, (err: unknown) => reject(signal.aborted ? this.abortError(signal, timedOut) : err));
      });
    try {
      return (await this.breaker.fire(guarded, ctl.signal)) as T;
    } catch (err) {
      if (err instanceof Error && Opossum.isOurError(err) && (err as { code?: string }).code === 'EOPENBREAKER') {
        throw new BreakerOpenError(this.name, this.current);
      }
      throw err;
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  /**
   * Counts a failure seen after `fire` resolved (e.g. a stream that broke after its first chunk). Goes through the
   * breaker as a failed call, so it is ignored while OPEN and re-opens a HALF_OPEN breaker.
   */
  async recordFailure(err: unknown): Promise<void> {
    await this.fire(() => Promise.reject(err)).catch(() => undefined);
  }

  /** Whether `shutdown()` was called (a BreakerSet then drops it). */
  get isShutdown(): boolean {
    return this.breaker.isShutdown;
  }

  /** Stops the breaker's timers and listeners (its BreakerSet drops it); later calls are rejected. */
  shutdown(): void {
    this.breaker.shutdown();
    this.listeners.clear();
  }

  /** The abort's reason; a caller's reason that is no object is wrapped in an AbortError so it can be marked. */
  private abortError(signal: AbortSignal, timedOut: boolean): unknown {
    const raw: unknown = signal.reason;
    const reason =
      typeof raw === 'object' && raw !== null ? raw : new DOMException(String(raw ?? 'aborted'), 'AbortError');
    if (!timedOut) callerAborts.add(reason);
    return reason;
  }

  private countsAgainst(err: unknown): boolean {
    if (typeof err === 'object' && err !== null && callerAborts.has(err)) return this.breaker.halfOpen;
    return this.isFailure(err);
  }

  private onSuccess(result: unknown): void {
    if (typeof result === 'object' && result !== null && callerAborts.has(result)) return; // neutral
    this.failures = 0;
    this.streakStart = null;
  }

  private onFailure(err: unknown): void {
    if (this.breaker.opened) return; // a late answer of a call sent before the breaker opened
    if (this.breaker.halfOpen) {
      this.pendingReason = { reason: 'probe_failed', cause: err }; // opossum re-opens it itself
      return;
    }
    const now = Date.now();
    this.failures += 1;
    this.streakStart ??= now;
    const reason: BreakerOpenReason | null =
      this.failures >= this.threshold
        ? 'consecutive_failures'
        : now - this.streakStart >= this.streakMs
          ? 'failure_streak'
          : null;
    if (reason) {
      this.pendingReason = { reason, cause: err };
      this.breaker.open();
    }
  }

  private transition(to: BreakerState): void {
    const from = this.current;
    if (from === to) return;
    this.current = to;
    const t: BreakerTransition = { name: this.name, from, to };
    if (to === 'OPEN') {
      const pending = this.pendingReason ?? { reason: 'consecutive_failures', cause: undefined };
      t.reason = pending.reason;
      t.cause = pending.cause;
      this.openedAt = Date.now();
      this.opts.logger?.info(
        {
          breaker: this.name,
          from,
          reason: pending.reason,
          failures: this.failures,
          error: pending.cause instanceof Error ? pending.cause.message : undefined,
        },
        `circuit breaker ${this.name} opened`,
      );
    }
    if (to === 'CLOSED') this.opts.logger?.info({ breaker: this.name, from }, `circuit breaker ${this.name} closed`);
    if (to !== 'HALF_OPEN') {
      this.failures = 0;
      this.streakStart = null;
    }
    this.pendingReason = null;
    for (const listener of this.listeners) listener(t);
  }
}
