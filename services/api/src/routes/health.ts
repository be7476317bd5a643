import type { FastifyPluginAsync } from 'fastify';

/** A dependency's state as the spec's GET /api/health reports it. */
export type DependencyStatus = 'healthy' | 'degraded' | 'failing';

/** One dependency's probe (GET /api/health, GET /api/stats/health and the alert monitor read them). */
export interface HealthCheck {
  /** Spec names: vector_store, graph_store, document_store, llm_provider, embedding_provider, web_search_provider, plus event_log. */
  name: string;
  check(): Promise<DependencyStatus>;
}

/** What the health routes read: the dependency checks and the process start time (ms since epoch, for uptime). */
export interface HealthRoutesOptions {
  health: readonly HealthCheck[];
  startedAt: number;
}

/**
 * A health check's status, or `failing` when it throws or takes longer than `ms` (GET /api/health, GET
 * /api/stats/health and the monitor all probe through it).
 */
export const probeHealth = async (check: () => Promise<DependencyStatus>, ms: number): Promise<DependencyStatus> => {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      check(),
      new Promise<DependencyStatus>((resolve) => {
        timer = setTimeout(() => resolve('failing'), ms);
      }),
    ]);
  } catch {
    return 'failing';
  } finally {
    clearTimeout(timer);
  }
};

const TIMEOUT_MS = 5000;

const probe = (check: () => Promise<DependencyStatus>) => probeHealth(check, TIMEOUT_MS);

/** The components of GET /api/stats/health (spec "Health (stats)") and the health checks that answer for them. */
const STATS_COMPONENTS = ['vector_store', 'document_store', 'graph_store', 'llm_provider'] as const;
/** A dependency status in the stats health's words: `up` (seen in the spec), `degraded`, `down`. */
const COMPONENT_STATUS = { healthy: 'up', degraded: 'degraded', failing: 'down' } as const;

/**
 * GET /api/health (spec "Stats and health"): overall status, one status per dependency, uptime in
 * seconds, and degraded_since when any dependency is not healthy. GET /api/stats/health: below.
 */
export const healthRoutes: FastifyPluginAsync<HealthRoutesOptions> = async (app, ports) => {
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

  /**
   * GET /api/stats/health (spec "Health (stats)", "Health status values"): each of vector_store, document_store,
   * graph_store and llm_provider probed now (at most 5 s each, in parallel) as {status: up | degraded | down,
   * latency_ms: the probe's round trip, 2 decimals}; status `unhealthy` when one is down, `degraded` when one is
   * degraded (e.g. no LLM configured: the offline fallbacks serve), else `healthy`; checked_at (ISO 8601) when the
   * probes started. A component with no check here (e.g. vector_store with embeddings off) is `down`, latency 0.
   */
  app.get('/api/stats/health', async () => {
    const checkedAt = new Date().toISOString();
    const components = Object.fromEntries(
      await Promise.all(
        STATS_COMPONENTS.map(async (name) => {
          const h = ports.health.find((x) => x.name === name);
          const started = performance.now();
          const s = h ? await probe(() => h.check()) : 'failing';
          const latency = h ? Math.round((performance.now() - started) * 100) / 100 : 0;
          return [name, { status: COMPONENT_STATUS[s], latency_ms: latency }] as const;
        }),
      ),
    );
    const statuses = Object.values(components).map((c) => c.status);
    const status = statuses.includes('down') ? 'unhealthy' : statuses.includes('degraded') ? 'degraded' : 'healthy';
    return { status, components, checked_at: checkedAt };
  });
};
