import type { BreakerSnapshot, BreakerState, CircuitBreaker } from './breaker.js';

/**
 * The spec's dependencies (spec "Degraded behaviour when a dependency fails", first table) with their per-call
 * timeouts in ms, plus the keyword index (a store of its own here; the document store's 5 s) and the event log.
 * These names are the ones GET /api/health reports and the breakers register under.
 */
export const DEPENDENCY_TIMEOUTS_MS = {
  vector_store: 5_000,
  graph_store: 5_000,
  document_store: 5_000,
  keyword_index: 5_000,
  llm_provider: 10_000,
  embedding_provider: 10_000,
  web_search_provider: 5_000,
  cache_queue: 2_000,
} as const;

/** A dependency named in DEPENDENCY_TIMEOUTS_MS. */
export type DependencyName = keyof typeof DEPENDENCY_TIMEOUTS_MS;

/** A breaker's snapshot with the dependency it guards (for /api/health and the Prometheus breaker gauge). */
export interface DependencyBreakerSnapshot extends BreakerSnapshot {
  /** The dependency name (DEPENDENCY_TIMEOUTS_MS keys; any string for others). */
  dependency: string;
}

/** A dependency's status as GET /api/health says it (spec "Health status values"). */
export type BreakerHealth = 'healthy' | 'degraded' | 'failing';

/** The numeric value of a state for gauges: CLOSED 0, HALF_OPEN 1, OPEN 2. */
export const BREAKER_STATE_VALUE: Record<BreakerState, number> = { CLOSED: 0, HALF_OPEN: 1, OPEN: 2 };

const live = new Map<CircuitBreaker, string>();

/**
 * Adds a breaker to the process-wide registry under `dependency` (done by CircuitBreaker itself when its options
 * name a dependency; shutdown() removes it). Returns a function that removes it.
 */
export const registerBreaker = (breaker: CircuitBreaker, dependency: string): (() => void) => {
  live.set(breaker, dependency);
  return () => {
    live.delete(breaker);
  };
};

/**
 * Every live breaker of this process with its dependency, state, consecutive failures and last opening (epoch ms),
 * in registration order. For the Prometheus gauge `atlas_circuit_breaker_state{breaker, dependency}` (values:
 * BREAKER_STATE_VALUE) and for health. Breakers of several runtimes in one process (tests) are all listed.
 */
export const breakerSnapshots = (): DependencyBreakerSnapshot[] =>
  [...live].map(([b, dependency]) => ({ ...b.snapshot(), dependency }));

/**
 * A dependency's health from its breakers' states (spec "Dependency circuit breaker" → "Health status values"):
 * `failing` when every breaker is OPEN, `degraded` when any is OPEN or HALF_OPEN (probing), `healthy` when all are
 * CLOSED; null for no breakers. Pass the breakers of one runtime, or `breakerSnapshots()` filtered by dependency.
 */
export const healthOfBreakers = (snapshots: readonly Pick<BreakerSnapshot, 'state'>[]): BreakerHealth | null => {
  if (snapshots.length === 0) return null;
  if (snapshots.every((s) => s.state === 'CLOSED')) return 'healthy';
  return snapshots.every((s) => s.state === 'OPEN') ? 'failing' : 'degraded';
};
