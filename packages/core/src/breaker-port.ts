import {
  type BreakerLogger,
  BreakerOpenError,
  BreakerTimeoutError,
  CircuitBreaker,
  type CircuitBreakerOptions,
} from './breaker.js';
import { DEPENDENCY_TIMEOUTS_MS, type DependencyName } from './breaker-set.js';
import { AtlasError } from './errors.js';

/** SQLSTATE classes that say the database is unreachable or refusing work (not that the query was wrong). */
const SQLSTATE_OUTAGE = /^(08|28|53|57|58|XX)/;
/** Node / driver error codes of an unreachable server. */
const NET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ServiceUnavailable', // neo4j-driver
  'SessionExpired', // neo4j-driver
]);
const NET_MESSAGE =
  /connection (?:terminated|refused|reset|closed|ended)|terminating connection|socket hang up|fetch failed|econn|timeout|timed out|not permitted to log in|could not connect|failed to connect|connect ECONN/i;

/**
 * Whether an error is evidence that a dependency is down (counts against its breaker): a retriable AtlasError
 * (STORE_UNAVAILABLE, PROVIDER_UNAVAILABLE, breaker timeouts), a Postgres error of an outage class (SQLSTATE 08
 * connection, 28 authorization, 53 resources, 57 operator intervention, 58 system, XX internal), a network error code
 * (ECONNREFUSED, ECONNRESET, ETIMEDOUT, undici socket errors, neo4j ServiceUnavailable / SessionExpired) or a message
 * saying the connection broke. A non-retriable AtlasError (bad input, not found), a SQL error of the query itself
 * (syntax, constraint) or a plain bug (TypeError) is not: the dependency answered.
 */
export const isDependencyFault = (err: unknown): boolean => {
  if (err instanceof AtlasError) return err.retriable;
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (/^[0-9A-Z]{5}$/.test(code) && !NET_CODES.has(code)) return SQLSTATE_OUTAGE.test(code);
    if (NET_CODES.has(code)) return true;
  }
  const cause = (err as { cause?: unknown }).cause;
  if (cause && cause !== err && isDependencyFault(cause)) return true;
  return err instanceof Error && NET_MESSAGE.test(err.message);
};

/** Per-method settings of a guarded port: its own timeout (ms), or `bypass` (not a call to the dependency). */
export type GuardedMethod = { timeoutMs: number } | 'bypass';

export interface GuardPortOptions<T> {
  /** Code of the error a rejected, timed-out or broken call becomes (stores: STORE_UNAVAILABLE). */
  errorCode: 'STORE_UNAVAILABLE' | 'PROVIDER_UNAVAILABLE';
  /** Methods with their own timeout (e.g. bulk writes of a projector batch) or not guarded (`close`, `warm`). */
  methods?: { [K in keyof T]?: GuardedMethod };
  /**
   * This call's timeout (ms), when it is special: e.g. the first search of a channel whose in-memory matrix is not
   * loaded yet (a cold start must not count as an outage). Returns undefined for the usual timeout.
   */
  timeoutFor?: (method: string, args: readonly unknown[]) => number | undefined;
  /** What counts against the breaker (default isDependencyFault). */
  isFailure?: (err: unknown) => boolean;
}

/**
 * Wraps every method of a port (a store adapter) so each call goes through `breaker` (spec "Dependency circuit
 * breaker"; the breaker's `timeoutMs` is the dependency's timeout, DEPENDENCY_TIMEOUTS_MS). Every guarded method must
 * return a Promise (the ports here are all asynchronous); methods marked `bypass` and non-function properties pass
 * through, bound to the adapter. The adapter's own calls are not cancelled at a timeout (ports take no signal): the
 * caller gets the error at once and the late answer is dropped.
 *
 * Errors: a call refused by an OPEN (or probing HALF_OPEN) breaker, a call past its timeout, and any error that
 * `isFailure` counts and is no AtlasError yet (a driver's connection error) become AtlasError `opts.errorCode`,
 * retriable, details {dependency, breaker, state}, cause the original; other errors pass through unchanged.
 * So the projectors' "store down → queue for backfill" rules (STORE_UNAVAILABLE) and the query fallbacks see one
 * kind of error whichever adapter is behind the port.
 */
export const guardPort = <T extends object>(target: T, breaker: CircuitBreaker, opts: GuardPortOptions<T>): T => {
  const isFailure = opts.isFailure ?? isDependencyFault;
  const dependency = breaker.dependency ?? breaker.name;
  const translate = (err: unknown): unknown => {
    if (err instanceof BreakerOpenError || err instanceof BreakerTimeoutError || !(err instanceof AtlasError)) {
      if (err instanceof BreakerOpenError || err instanceof BreakerTimeoutError || isFailure(err)) {
        const why = err instanceof Error ? err.message : String(err);
        return new AtlasError(opts.errorCode, `${dependency} unavailable: ${why}`, {
          retriable: true,
          cause: err,
          details: { dependency, breaker: breaker.name, state: breaker.state },
        });
      }
    }
    return err;
  };
  const methods = (opts.methods ?? {}) as Record<string, GuardedMethod | undefined>;
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(obj, prop) {
      const value: unknown = Reflect.get(obj, prop, obj);
      if (typeof value !== 'function' || prop === 'constructor') return value;
      const cached = wrapped.get(prop);
      if (cached) return cached;
      const setting = typeof prop === 'string' ? methods[prop] : 'bypass';
      const fn =
        setting === 'bypass'
          ? (value as (...a: unknown[]) => unknown).bind(obj)
          : async (...args: unknown[]) => {
              const timeoutMs = opts.timeoutFor?.(String(prop), args) ?? setting?.timeoutMs;
              try {
                return await breaker.fire(
                  () => (value as (...a: unknown[]) => Promise<unknown>).apply(obj, args),
                  timeoutMs === undefined ? {} : { timeoutMs },
                );
              } catch (err) {
                throw translate(err);
              }
            };
      wrapped.set(prop, fn);
      return fn;
    },
  });
};

/** Options of dependencyBreaker: everything of CircuitBreakerOptions is optional; the logger may be null. */
export type DependencyBreakerOptions = Partial<Omit<CircuitBreakerOptions, 'dependency' | 'logger'>> & {
  logger?: BreakerLogger | null | undefined;
};

/**
 * A CircuitBreaker for one of the spec's dependencies, named after it (BreakerSet lists it so): timeout
 * DEPENDENCY_TIMEOUTS_MS[dependency] (vector, graph, document store 5 s; LLM, embedding 10 s; web search 5 s;
 * cache/queue 2 s), 3 consecutive failures or a 30 s failure streak open it, 30 s later one probe (spec "Dependency
 * circuit breaker"); isDependencyFault decides what counts. `name` defaults to the dependency (give one per adapter
 * or endpoint, e.g. `graph_store:neo4j`).
 */
export const dependencyBreaker = (dependency: DependencyName, opts: DependencyBreakerOptions = {}): CircuitBreaker => {
  const { logger, ...rest } = opts;
  return new CircuitBreaker({
    name: dependency,
    timeoutMs: DEPENDENCY_TIMEOUTS_MS[dependency],
    isFailure: isDependencyFault,
    ...rest,
    dependency,
    ...(logger ? { logger } : {}),
  });
};
