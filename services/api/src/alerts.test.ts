import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Alert, HealthMonitor } from './alerts.js';
import type { HealthCheck } from './routes/health.js';

const listen = async (server: Server, port = 0): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** A health check over HTTP: healthy when the server answers 200, degraded on another status, failing when down. */
const httpCheck = (name: string, url: () => string): HealthCheck => ({
  name,
  check: async () => {
    const res = await fetch(url(), { signal: AbortSignal.timeout(2_000) });
    return res.ok ? 'healthy' : 'degraded';
  },
});

describe('HealthMonitor: alerts on dependency changes (spec "Alerts (operational)")', () => {
  // Two real dependencies over HTTP (a "vector store", critical, and a "graph store", not) and a webhook receiver.
  let status = 200;
  const dependency = createServer((_req, res) => {
    res.statusCode = status;
    res.end();
  });
  const received: Alert[] = [];
  const webhook = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      received.push(JSON.parse(body) as Alert);
      res.end();
    });
  });
  let depPort = 0;
  let hookPort = 0;
  const logged: { level: string; obj: object; msg: string }[] = [];
  const log = {
    error: (obj: object, msg: string) => logged.push({ level: 'error', obj, msg }),
    warn: (obj: object, msg: string) => logged.push({ level: 'warn', obj, msg }),
    info: (obj: object, msg: string) => logged.push({ level: 'info', obj, msg }),
  };
  beforeAll(async () => {
    depPort = await listen(dependency);
    hookPort = await listen(webhook);
  });
  afterAll(async () => {
    await close(webhook);
    if (dependency.listening) await close(dependency);
  });

  it('pages for a critical dependency down, chats for another, warns on degraded, informs on recovery', async () => {
    const url = () => `http://127.0.0.1:${depPort}/`;
    const monitor = new HealthMonitor([httpCheck('vector_store', url), httpCheck('graph_store', url)], {
      log,
      webhookUrl: `http://127.0.0.1:${hookPort}/alerts`,
      intervalMs: 60_000,
    });
    expect(await monitor.tick()).toEqual([]); // healthy at the first check: nothing to say

    await close(dependency); // both down
    const down = await monitor.tick();
    expect(down.map((a) => [a.dependency, a.severity, a.status, a.previous])).toEqual([
      ['vector_store', 'page', 'failing', 'healthy'],
      ['graph_store', 'chat', 'failing', 'healthy'],
    ]);
    expect(await monitor.tick()).toEqual([]); // still down: no repeat

    status = 503;
    depPort = await listen(dependency, depPort); // back, but answering 503
    const degraded = await monitor.tick();
    expect(degraded.map((a) => [a.dependency, a.severity])).toEqual([
      ['vector_store', 'warning'],
      ['graph_store', 'warning'],
    ]);

    status = 200;
    const recovered = await monitor.tick();
    expect(recovered.map((a) => [a.severity, a.message])).toEqual([
      ['info', 'vector_store recovered (was degraded)'],
      ['info', 'graph_store recovered (was degraded)'],
    ]);

    // Every alert reached the webhook as JSON and the log as a structured event at its level.
    expect(received.map((a) => `${a.dependency}:${a.severity}`)).toEqual(
      [...down, ...degraded, ...recovered].map((a) => `${a.dependency}:${a.severity}`),
    );
    expect(logged.map((l) => l.level)).toEqual(['error', 'warn', 'warn', 'warn', 'info', 'info']);
    expect(logged[0]!.obj).toMatchObject({ alert: true, severity: 'page', dependency: 'vector_store' });
  });

  it('a dependency degraded from the start warns once; an unreachable webhook is logged, not thrown', async () => {
    logged.length = 0;
    const monitor = new HealthMonitor([{ name: 'llm_provider', check: async () => 'degraded' }], {
      log,
      webhookUrl: 'http://127.0.0.1:1/alerts',
      intervalMs: 60_000,
    });
    expect((await monitor.tick()).map((a) => [a.severity, a.previous])).toEqual([['warning', null]]);
    expect(await monitor.tick()).toEqual([]);
    expect(logged.map((l) => l.msg)).toEqual(['llm_provider is degraded', 'alert webhook unreachable']);
  });
});
