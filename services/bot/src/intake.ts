import { AtlasError, type CircuitBreaker } from '@atlas/core';
import type { CacheQueueStore } from '@atlas/stores';
import { type BotJob, CLAIM_TTL_MS, COMMAND_QUEUE } from './jobs.js';

/** What taking a command in came to: queued, a platform's repeated delivery of one already taken, or offline. */
export type IntakeResult = 'queued' | 'duplicate' | 'offline';

/** The cache/queue store the routes and the health check use (guarded) with its breaker and its kind. */
export interface BotStore {
  port: CacheQueueStore;
  breaker: CircuitBreaker;
  kind: 'redis' | 'memory';
}

/**
 * Takes a command in: claims its delivery id for CLAIM_TTL_MS (a platform's retry of the same delivery is a
 * `duplicate` and not queued again), then pushes the job on COMMAND_QUEUE. `offline` when the cache/queue store fails
 * or its breaker is open (AtlasError STORE_UNAVAILABLE): spec "Degraded behaviour": cache/queue store down, chat bot
 * offline. Other errors are bugs and are thrown.
 */
export const intake = async (store: CacheQueueStore, deliveryId: string, job: BotJob): Promise<IntakeResult> => {
  try {
    if (!(await store.claim(`bot:delivery:${deliveryId}`, CLAIM_TTL_MS))) return 'duplicate';
    await store.push(COMMAND_QUEUE, JSON.stringify(job));
    return 'queued';
  } catch (err) {
    if (err instanceof AtlasError && err.code === 'STORE_UNAVAILABLE') return 'offline';
    throw err;
  }
};
