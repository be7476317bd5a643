import { type BreakerLogger, DEPENDENCY_TIMEOUTS_MS, dependencyBreaker, guardPort } from '@atlas/core';
import type { GuardedStore } from '../guard.js';
import { MemoryCacheQueue } from './memory.js';
import type { CacheQueueStore } from './port.js';
import { RedisCacheQueue } from './redis.js';

export interface GuardCacheQueueOptions {
  /** The breaker's name (default `cache_queue`; e.g. `cache_queue:redis`). */
  name?: string;
  /** Gets the breaker's openings and closings at info level (spec "Alerts": an info log entry). */
  logger?: BreakerLogger | null;
  /** Breaker settings for tests (spec defaults otherwise: 3 failures, 30 s streak, 30 s reset, 2 s timeout). */
  breaker?: { timeoutMs?: number; resetMs?: number; streakMs?: number; failureThreshold?: number };
}

/**
 * The cache/queue store behind its circuit breaker (spec "Degraded behaviour": cache/queue store, 2 s timeout; the
 * registry's dependency `cache_queue`, DEPENDENCY_TIMEOUTS_MS): every call at 2 s, except a blocking `pop`, whose
 * timeout is its `waitMs` plus 2 s; `close` unguarded. 3 consecutive failures (or a 30 s failure streak) open it;
 * calls are then refused unsent until one probe after `resetMs` (30 s). Every failure is AtlasError
 * STORE_UNAVAILABLE (retriable), which the bot answers with "temporarily offline".
 */
export const guardCacheQueue = <T extends CacheQueueStore>(
  store: T,
  opts: GuardCacheQueueOptions = {},
): GuardedStore<T> => {
  const timeoutMs = opts.breaker?.timeoutMs ?? DEPENDENCY_TIMEOUTS_MS.cache_queue;
  const breaker = dependencyBreaker('cache_queue', {
    name: opts.name ?? 'cache_queue',
    logger: opts.logger ?? null,
    ...opts.breaker,
  });
  const port = guardPort(store, breaker, {
    errorCode: 'STORE_UNAVAILABLE',
    methods: { close: 'bypass' } as { [K in keyof T]?: 'bypass' },
    timeoutFor: (method, args) => (method === 'pop' ? Math.max(0, Number(args[2]) || 0) + timeoutMs : undefined),
  });
  return { port, breaker };
};

/**
 * The configured cache/queue store, unguarded: Redis at `redisUrl` (REDIS_URL; keys under `keyPrefix`, default
 * `atlas:`), else the in-process store (embedded default). Does not wait for Redis: calls fail with STORE_UNAVAILABLE
 * until it answers.
 */
export const createCacheQueue = (opts: { redisUrl?: string | undefined; keyPrefix?: string }): CacheQueueStore =>
  opts.redisUrl
    ? new RedisCacheQueue(opts.redisUrl, opts.keyPrefix === undefined ? {} : { keyPrefix: opts.keyPrefix })
    : new MemoryCacheQueue();

export { MemoryCacheQueue } from './memory.js';
export type * from './port.js';
export { decodeJob, encodeJob } from './port.js';
export { RedisCacheQueue, type RedisCacheQueueOptions } from './redis.js';
