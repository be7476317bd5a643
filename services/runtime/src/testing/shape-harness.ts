import { randomUUID } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import path from 'node:path';
import { buildApp } from '@atlas/api';
import { loadConfig } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { planImport } from '@atlas/platforms';
import type { FastifyInstance } from 'fastify';
import { apiPorts } from '../api-ports.js';
import { appendPlan, drainProjectors } from '../drain.js';
import { waitForProjectors } from '../lag.js';
import { openRuntime } from '../open.js';
import { startProjectors } from '../run-projectors.js';
import type { Runtime } from '../runtime.js';
import { startRuntimeSyncWorker } from '../sync-wiring.js';
import { MOCK_NOW } from './sync-harness.js';

/** The real exports the shape harness imports (shared data beside the checkout, never copied into the repository). */
const DATA = path.resolve(import.meta.dirname, '../../../../../shared/data');
const OLAKE = path.join(DATA, 'slack-olake/export');
const ETHGLOBAL = path.join(DATA, 'discord-ethglobal');

/** A route as Fastify knows it: `GET /api/channels/:channel_id`. */
export type RouteKey = string;

/** One answered request: the route it matched, its status, headers and raw and parsed body. */
export interface Answer {
  route: RouteKey | null;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  raw: string;
  /** The JSON body (undefined when empty or not JSON). */
  body: ReturnType<typeof JSON.parse>;
}

export interface ShapeHarness {
  rt: Runtime;
  app: FastifyInstance;
  /** Every /api route the app serves (from onRoute), HEAD left out. */
  served: Set<RouteKey>;
  call(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object | string | Buffer,
    headers?: Record<string, string>,
  ): Promise<Answer>;
  /** Polls GET /api/sync/status until the job is terminal; returns the last job object. */
  finished(channelId: string, jobId: string, timeoutMs?: number): Promise<Answer>;
  /** Waits until every projector has caught up (cross-route counts are compared on a settled state). */
  settle(): Promise<void>;
  /** Polls GET /api/wiki/status until no generation runs for the channel. */
  wikiIdle(channelId: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** `/api/channels/{channel_id}` (endpoints.txt) and `/api/channels/:channel_id` (Fastify) as one key. */
export const routeKey = (method: string, url: string): RouteKey =>
  `${method.toUpperCase()} ${url.replace(/\{([^}]+)\}/g, ':$1')}`;

/**
 * The route-shape suite's harness (services/api route-shape.test.ts, docs/route-shape.md): the embedded runtime (memory data dir, local embeddings, ADAPTER_MOCK=true) holding the olake Slack export and the
 * ETHGlobal Discord export, its projectors and sync worker running (the mock platform's clock at MOCK_NOW), and the
 * API built on it with every route it registers recorded (through the `fastify.initialization` diagnostics channel,
 * before any route is added) and the route each request matched.
 */
export const openShapeHarness = async (): Promise<ShapeHarness> => {
  const rt = await openRuntime(
    loadConfig({
      ATLAS_DATA_DIR: 'memory://',
      ADAPTER_MOCK: 'true',
      CREDENTIAL_MASTER_KEY: '3c'.repeat(32),
      PLATFORM_A_API_URL: 'http://127.0.0.1:9/api/', // nothing listens: the mock platform must answer everything
      PLATFORM_B_API_URL: 'http://127.0.0.1:9/api/',
    }),
    { pollIntervalMs: 20, sessionTimeoutMs: 2000 },
  );
  for (const dir of [OLAKE, ETHGLOBAL]) await appendPlan(rt, await planImport(dir));
  await drainProjectors(rt, 0, false);
  const subs: Subscription[] = await startProjectors(rt);
  const worker = await startRuntimeSyncWorker(rt, {
    client: { backoffMs: 10, maxBackoffMs: 50, maxRetries: 3, mock: { now: () => MOCK_NOW } },
    pollMs: 20,
  });

  const served = new Set<RouteKey>();
  const matched = new Map<string, RouteKey>();
  const onInit = (message: unknown) => {
    const app = (message as { fastify: FastifyInstance }).fastify;
    app.addHook('onRoute', (r) => {
      if (!r.url.startsWith('/api')) return;
      for (const m of [r.method].flat()) if (m !== 'HEAD') served.add(routeKey(m, r.url));
    });
    app.addHook('onRequest', async (request) => {
      const url = request.routeOptions.url;
      if (url) matched.set(request.id, routeKey(request.method, url));
    });
  };
  diagnostics.subscribe('fastify.initialization', onInit);
  let app: FastifyInstance;
  try {
    app = await buildApp(apiPorts(rt));
  } finally {
    diagnostics.unsubscribe('fastify.initialization', onInit);
  }

  const call: ShapeHarness['call'] = async (method, url, payload, headers = {}) => {
    const id = `shape-${randomUUID()}`;
    const res = await app.inject({
      method,
      url,
      headers: { 'x-request-id': id, ...headers },
      ...(payload === undefined ? {} : { payload }),
    });
    let body: ReturnType<typeof JSON.parse>;
    try {
      body = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      body = undefined;
    }
    const route = matched.get(id) ?? null;
    matched.delete(id);
    return { route, status: res.statusCode, headers: res.headers, raw: res.body, body };
  };

  return {
    rt,
    app,
    served,
    call,
    finished: async (channelId, jobId, timeoutMs = 90_000) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const r = await call('GET', `/api/sync/status?channel_id=${channelId}&job_id=${jobId}`);
        if (['completed', 'failed', 'cancelled'].includes(r.body?.status)) return r;
        if (Date.now() > until) throw new Error(`job ${jobId} still ${r.body?.status} after ${timeoutMs} ms`);
        await new Promise((res) => setTimeout(res, 50));
      }
    },
    settle: () => waitForProjectors(rt, undefined, 20),
    wikiIdle: async (channelId, timeoutMs = 60_000) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const r = await call('GET', `/api/wiki/status?channel_id=${channelId}`);
        if (r.status === 200 && !r.body.is_generating && !r.body.job_id) return;
        if (Date.now() > until) throw new Error(`wiki of ${channelId} still generating after ${timeoutMs} ms`);
        await new Promise((res) => setTimeout(res, 50));
      }
    },
    close: async () => {
      await worker.stop();
      await app?.close();
      await Promise.all(subs.map((s) => s.stop()));
      await rt.close();
    },
  };
};
