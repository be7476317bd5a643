import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { apiPorts, openRuntime, type Runtime } from '@atlas/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const read = (p: string) => readFileSync(path.join(ROOT, p), 'utf8');

interface Panel {
  type: string;
  title: string;
  gridPos: { y: number };
  targets?: { expr: string }[];
}

/**
 * The ops dashboard (infra/grafana/dashboards/atlas-ops.json) and the compose stack's scrape config agree with what
 * GET /metrics really exposes: every `atlas_*` series a panel queries is a metric of a live app's scrape, lag comes
 * first, and Prometheus scrapes the API's /metrics.
 */
describe('ops dashboard and scrape config', () => {
  let rt: Runtime;
  let exposed: Set<string>;
  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none' }));
    const app = await buildApp(apiPorts(rt));
    try {
      const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      exposed = new Set([...text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].map((m) => m[1]!));
    } finally {
      await app.close();
    }
  });
  afterAll(async () => {
    await rt?.close();
  });

  const dashboard = JSON.parse(read('infra/grafana/dashboards/atlas-ops.json')) as {
    uid: string;
    panels: Panel[];
  };
  const queries = dashboard.panels.filter((p) => p.type !== 'row');

  it('every metric a panel queries is exposed by /metrics (histograms by their _bucket/_count series)', () => {
    const used = new Set(queries.flatMap((p) => (p.targets ?? []).flatMap((t) => t.expr.match(/atlas_\w+/g) ?? [])));
    expect(used.size).toBeGreaterThan(10);
    for (const name of used) {
      const base = name.replace(/_(bucket|count|sum)$/, '');
      expect(exposed.has(name) || exposed.has(base), `${name} is not exposed`).toBe(true);
    }
    for (const required of [
      'atlas_consumer_lag',
      'atlas_projector_events_total',
      'atlas_dead_letter_queue',
      'atlas_circuit_breaker_state',
      'atlas_write_intents',
      'atlas_llm_calls_total',
      'atlas_llm_tokens_total',
      'atlas_llm_cost_usd_total',
      'atlas_http_request_duration_seconds',
    ])
      expect(used.has(required) || used.has(`${required}_bucket`), `the dashboard shows ${required}`).toBe(true);
  });

  it('lag comes first', () => {
    const first = [...queries].sort((a, b) => a.gridPos.y - b.gridPos.y)[0]!;
    expect(first.targets?.[0]?.expr).toMatch(/atlas_consumer_lag/);
    expect(dashboard.panels[0]!.title).toMatch(/lag/i);
  });

  it('Prometheus scrapes the API in the compose stack, and Grafana loads the dashboard', () => {
    const prom = read('infra/prometheus/prometheus.yml');
    expect(prom).toMatch(/metrics_path: \/metrics/);
    expect(prom).toMatch(/targets: \["api:8000"\]/);
    const compose = read('docker-compose.yml');
    expect(compose).toMatch(/^ {2}prometheus:\n(?: {4}.*\n)*? {6}- \.\/infra\/prometheus\/prometheus\.yml:/m);
    expect(compose).toMatch(/^ {2}grafana:\n(?: {4}.*\n)*? {6}- \.\/infra\/grafana\/dashboards:/m);
    expect(compose).toMatch(/^ {2}projector-stats:\n {4}<<: \*atlas-service\n {4}command: \["run", "stats"\]/m);
    // Every other Atlas service serves /metrics on METRICS_PORT and is a scrape target.
    expect(compose).toMatch(/^ {4}METRICS_PORT: "9464"$/m);
    const services = [
      ...compose.matchAll(/^ {2}([\w-]+):\n {4}<<: \*atlas-service\n {4}command: \["run", "([\w-]+)"\]/gm),
    ];
    expect(services.length).toBeGreaterThan(4);
    for (const [, name, what] of services)
      if (what !== 'api') expect(prom, `${name} is scraped`).toContain(`targets: ["${name}:9464"]`);
    const ds = read('infra/grafana/provisioning/datasources/prometheus.yml');
    expect(ds).toMatch(/uid: atlas-prometheus/);
    expect(read('infra/grafana/dashboards/atlas-ops.json')).toContain('"uid": "atlas-prometheus"');
  });
});
