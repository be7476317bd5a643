import { healthOfBreakers } from '@atlas/core';
import type { FastifyPluginAsync } from 'fastify';
import type { BackendClient } from '../backend.js';
import type { BotStore } from '../intake.js';

/** A dependency's status as health reports it (the API's words: spec "Health status values"). */
export type BotDependencyStatus = 'healthy' | 'degraded' | 'failing';

/**
 * The cache/queue store's status from its breaker and a probe (as the API's checks do): OPEN, `failing` without a
 * call; else a `ping` through the guarded store (2 s): it answers, `healthy` (a HALF_OPEN breaker's probe closes it);
 * refused because another call is the half-open probe, `degraded`; it fails, `failing`.
 */
export const cacheQueueStatus = async (store: BotStore): Promise<BotDependencyStatus> => {
  const before = healthOfBreakers([store.breaker.snapshot()]);
  if (before === 'failing') return 'failing';
  try {
    await store.port.ping();
  } catch (err) {
    const rejected = (err as { details?: { state?: string } }).details?.state === 'HALF_OPEN';
    return before === 'degraded' && rejected ? 'degraded' : 'failing';
  }
  return healthOfBreakers([store.breaker.snapshot()]) ?? 'healthy';
};

/**
 * `GET /health` of the bot (spec "What the service does" 9: the bot exposes GET /health on its own port):
 * `{status, dependencies: {cache_queue_store, backend}, cache_queue, platforms: {platform_a, platform_b}, uptime}`.
 * `status` is `offline` with HTTP 503 while the cache/queue store is failing (spec: cache/queue store down → chat bot
 * offline; every command is answered "temporarily offline"), else `degraded` when the store is probing or the backend
 * (GET /api/health within 2 s) does not answer 2xx, else `healthy`; `cache_queue` is `redis` or `memory`, `platforms`
 * which platforms' routes are configured, `uptime` seconds.
 */
export const healthRoutes: FastifyPluginAsync<{
  store: BotStore;
  backend: BackendClient;
  platforms: { platform_a: boolean; platform_b: boolean };
  startedAt: number;
}> = async (app, { store, backend, platforms, startedAt }) => {
  app.get('/health', async (_request, reply) => {
    const [cache, reachable] = await Promise.all([cacheQueueStatus(store), backend.reachable(2_000)]);
    const status = cache === 'failing' ? 'offline' : cache === 'degraded' || !reachable ? 'degraded' : 'healthy';
    return reply.status(status === 'offline' ? 503 : 200).send({
      status,
      dependencies: { cache_queue_store: cache, backend: reachable ? 'healthy' : 'failing' },
      cache_queue: store.kind,
      platforms,
      uptime: Math.round((Date.now() - startedAt) / 1000),
    });
  });
};
