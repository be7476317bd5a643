/**
 * The cache/queue store (spec "What the service does" 9 "Bot": the bot talks to the backend using a shared bridge key
 * and a cache/queue store; "Degraded behaviour": cache/queue store, not critical, 2 s, "chat bot offline").
 * ARCHITECTURE.md: in process on the embedded default, Redis at scale. Only the bot uses it.
 *
 * Keys and queue names are plain strings; each adapter adds its own prefix (RedisCacheQueue: `keyPrefix`), so
 * deployments (or test runs) sharing one server stay apart. Values and job payloads are strings (callers encode JSON).
 *
 * Errors: a store that cannot be reached, or that cut the connection mid-call, throws AtlasError STORE_UNAVAILABLE
 * (retriable); behind guardCacheQueue the same error also comes from its breaker (OPEN, or past the 2 s timeout).
 */
export interface CacheQueueStore {
  /** The value stored under `key`, or null when none or expired. */
  get(key: string): Promise<string | null>;
  /** Stores `value` under `key` for `ttlMs` milliseconds (≥ 1), replacing any value and its TTL. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /**
   * Claims `key` once (Redis `SET NX PX`): true for the first caller, false while the claim lives (`ttlMs`, ≥ 1).
   * Atomic across callers and processes sharing the store: of concurrent claims of one key exactly one is true.
   * The bot claims each slash-command delivery so a platform's retry of the same command is not worked off twice.
   */
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** Appends a job to the tail of `queue` (FIFO). */
  push(queue: string, payload: string): Promise<void>;
  /**
   * Takes the oldest job of `queue` for `consumer`, waiting up to `waitMs` ms (0: do not wait) for one to arrive;
   * null when none came. The job stays in the consumer's in-flight list until `ack`: a consumer that stops before
   * acking gets it again from `recover` (at-least-once). One pop at a time per store object (Redis: one blocking
   * connection).
   */
  pop(queue: string, consumer: string, waitMs: number): Promise<QueuedJob | null>;
  /** Removes a job taken by `pop` from the consumer's in-flight list (idempotent: a second ack does nothing). */
  ack(queue: string, consumer: string, job: QueuedJob): Promise<void>;
  /**
   * Moves every job in `consumer`'s in-flight list back to the head of `queue` (oldest first), e.g. at the start of a
   * consumer that stopped before acking; returns how many moved. Call it while no `pop` of that consumer runs.
   */
  recover(queue: string, consumer: string): Promise<number>;
  /** Jobs waiting in `queue` (not in flight). */
  depth(queue: string): Promise<number>;
  /** Answers when the store is reachable (health probe); throws STORE_UNAVAILABLE otherwise. */
  ping(): Promise<void>;
  /** Releases connections and wakes waiting pops (they return null). */
  close(): Promise<void>;
}

/** A job taken from a queue: its id (unique per push) and the payload given to `push`. */
export interface QueuedJob {
  id: string;
  payload: string;
}

/** The wire form of a job (one string per list entry on Redis): `{"id", "payload"}` JSON. */
export const encodeJob = (job: QueuedJob): string => JSON.stringify({ id: job.id, payload: job.payload });

/** Parses encodeJob's string; throws a TypeError on anything else (a foreign value in the list). */
export const decodeJob = (raw: string): QueuedJob => {
  const v = JSON.parse(raw) as { id?: unknown; payload?: unknown };
  if (typeof v.id !== 'string' || typeof v.payload !== 'string') throw new TypeError(`not a queued job: ${raw}`);
  return { id: v.id, payload: v.payload };
};
