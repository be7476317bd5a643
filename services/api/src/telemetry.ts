import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ApiPorts } from './ports.js';

/** Request latency of /api routes: a running mean for GET /api/stats/metrics, a histogram for Prometheus. */
export interface Telemetry {
  registry: Registry;
  avgQueryLatencyMs(): number;
}

/**
 * Registers the Prometheus metrics of one app (its own registry, so several apps in one process stay
 * apart): process defaults, `atlas_http_request_duration_seconds`, and `atlas_consumer_lag` /
 * `atlas_consumer_committed_offset` / `atlas_topic_end_offset` per group, topic and partition,
 * read from the event log at scrape time.
 */
export const registerTelemetry = (app: FastifyInstance, ports: ApiPorts): Telemetry => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'atlas_' });
  const duration = new Histogram({
    name: 'atlas_http_request_duration_seconds',
    help: 'Duration of /api requests',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2, 5],
    registers: [registry],
  });
  const labels = ['group', 'topic', 'partition'] as const;
  const lag = new Gauge({
    name: 'atlas_consumer_lag',
    help: 'End offset minus committed offset',
    labelNames: labels,
    registers: [registry],
  });
  const committed = new Gauge({
    name: 'atlas_consumer_committed_offset',
    help: 'Committed offset',
    labelNames: labels,
    registers: [registry],
  });
  const end = new Gauge({
    name: 'atlas_topic_end_offset',
    help: 'End offset (high watermark) of a partition',
    labelNames: labels,
    registers: [registry],
    async collect() {
      lag.reset();
      committed.reset();
      end.reset();
      for (const r of await ports.eventLog.lag()) {
        const l = { group: r.group, topic: r.topic, partition: String(r.partition) };
        lag.set(l, r.lag);
        end.set(l, r.endOffset);
        if (r.committedOffset !== null) committed.set(l, r.committedOffset);
      }
    },
  });
  let count = 0;
  let totalMs = 0;
  app.addHook('onResponse', async (request, reply) => {
    if (!request.url.startsWith('/api/')) return;
    const ms = reply.elapsedTime;
    count++;
    totalMs += ms;
    duration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unknown', status: String(reply.statusCode) },
      ms / 1000,
    );
  });
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
  return { registry, avgQueryLatencyMs: () => (count === 0 ? 0 : Math.round((totalMs / count) * 100) / 100) };
};
