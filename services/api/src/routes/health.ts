import type { FastifyPluginAsync } from 'fastify';
import type { ApiPorts, DependencyStatus } from '../ports.js';

const TIMEOUT_MS = 5000;

const probe = async (check: () => Promise<DependencyStatus>): Promise<DependencyStatus> => {
  try {
    return await Promise.race([
      check(),
      new Promise<DependencyStatus>((resolve) => setTimeout(() => resolve('failing'), TIMEOUT_MS).unref()),
    ]);
  } catch {
    return 'failing';
  }
};

/**
 * GET /api/health (spec "Stats and health"): overall status, one status per dependency, uptime in
 * seconds, and degraded_since when any dependency is not healthy.
 */
export const healthRoutes: FastifyPluginAsync<ApiPorts> = async (app, ports) => {
  let degradedSince: string | null = null;
  app.get('/api/health', async () => {
    const entries = await Promise.all(ports.health.map(async (h) => [h.name, await probe(() => h.check())] as const));
    const dependencies = Object.fromEntries(entries);
    const statuses = entries.map(([, s]) => s);
    const critical = ['document_store', 'event_log'];
    const status = entries.some(([n, s]) => critical.includes(n) && s === 'failing')
      ? 'unhealthy'
      : statuses.every((s) => s === 'healthy')
        ? 'healthy'
        : 'degraded';
    if (status === 'healthy') degradedSince = null;
    else degradedSince ??= new Date().toISOString();
    return {
      status,
      dependencies,
      uptime: Math.round((Date.now() - ports.startedAt) / 100) / 10,
      ...(degradedSince ? { degraded_since: degradedSince } : {}),
    };
  });
};
