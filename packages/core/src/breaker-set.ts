import type { BreakerSnapshot, BreakerState, CircuitBreaker } from './breaker.js';

/**
 * The spec's dependencies (spec "Degraded behaviour when a dependency fails", first table) with their per-call
 * timeouts in ms, plus the keyword index (a store of its own here; the document store's 5 s) and the event log.
 * These names are the ones GET /api/health reports and a BreakerSet lists the breakers under.
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

/**
 * The circuit breakers of one runtime (spec "Dependency circuit breaker"): what GET /api/health and the Prometheus
 * gauge `atlas_circuit_breaker_state{breaker, dependency}` (values: BREAKER_STATE_VALUE) read. The runtime that makes a
 * breaker adds it; a breaker that is shut down (CircuitBreaker.shutdown) leaves the set. Iterates the live breakers in
 * the order they joined.
 */
export class BreakerSet implements Iterable<CircuitBreaker> {
  private readonly members = new Set<CircuitBreaker>();

  /** Adds breakers (again: no change); returns the set. */
  add(...breakers: readonly CircuitBreaker[]): this {
    for (const b of breakers) this.members.add(b);
    return this;
  }

  /** The live breakers, in the order they joined (shut-down ones are dropped here). */
  list(): CircuitBreaker[] {
    for (const b of this.members) if (b.isShutdown) this.members.delete(b);
    return [...this.members];
  }

  [Symbol.iterator](): Iterator<CircuitBreaker> {
    return this.list()[Symbol.iterator]();
  }

  /** The live breakers guarding any of `dependencies` (DEPENDENCY_TIMEOUTS_MS names). */
  ofDependency(...dependencies: readonly string[]): CircuitBreaker[] {
    return this.list().filter((b) => b.dependency !== null && dependencies.includes(b.dependency));
  }

  /**
   * Every live breaker that guards a named dependency, with its dependency, state, consecutive failures and last
   * opening (epoch ms), in the order they joined.
   */
  snapshots(): DependencyBreakerSnapshot[] {
    return this.list().flatMap((b) => (b.dependency === null ? [] : [{ ...b.snapshot(), dependency: b.dependency }]));
  }

  /** Shuts every breaker of the set down (their timers and listeners stop; later calls are rejected). */
  shutdown(): void {
    for (const b of this.list()) b.shutdown();
  }
}

/**
 * A dependency's health from its breakers' states (spec "Dependency circuit breaker" → "Health status values"):
 * `failing` when every breaker is OPEN, `degraded` when any is OPEN or HALF_OPEN (probing), `healthy` when all are
 * CLOSED; null for no breakers. Pass the snapshots of one dependency's breakers (BreakerSet.ofDependency).
 */
export const healthOfBreakers = (snapshots: readonly Pick<BreakerSnapshot, 'state'>[]): BreakerHealth | null => {
  if (snapshots.length === 0) return null;
  if (snapshots.every((s) => s.state === 'CLOSED')) return 'healthy';
  return snapshots.every((s) => s.state === 'OPEN') ? 'failing' : 'degraded';
};
