import { buildApp } from '@atlas/api';
import { type Config, loadConfig, type SyncJobUpdated, TOPICS } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import type { SlackEmulator } from '@atlas/platforms/testing';
import type { SyncWorker } from '@atlas/projectors';
import type { FastifyInstance } from 'fastify';
import { apiPorts } from '../api-ports.js';
import { openRuntime } from '../open.js';
import { startProjectors } from '../run-projectors.js';
import type { Runtime } from '../runtime.js';
import { startRuntimeSyncWorker } from '../sync-wiring.js';

/** A JSON response body, read loosely by tests. */
type Json = ReturnType<typeof JSON.parse>;

/** One Atlas process for sync tests: runtime, projectors, sync worker and API, the platform pointed at `emu`. */
export interface SyncHarness {
  rt: Runtime;
  app: FastifyInstance;
  worker: SyncWorker;
  subs: Subscription[];
  /** Every SyncJobUpdated seen on atlas.sync-jobs, in order. */
  updates: SyncJobUpdated[];
  call(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
    /** Request headers; default: the bootstrap admin key when ATLAS_ADMIN_API_KEY is in the harness's env. */
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Json }>; // body: parsed JSON, or the raw text of another content type (an ask stream)
  /** Polls GET /api/sync/status until the job is in a terminal state; returns the job object. */
  finished(channelId: string, jobId: string, timeoutMs?: number): Promise<Json>;
  /** Stops the worker, the projectors and the API; closes the runtime (the data stays in the data dir). */
  close(): Promise<void>;
}

/**
 * Opens a harness (data dir `env.ATLAS_DATA_DIR`, default memory) with platform_a on `emu` and config overrides
 * (PLATFORM_B_API_URL for a Discord emulator); the worker's clients back off in milliseconds.
 */
export const openSyncHarness = async (
  emu: { url: string },
  env: Record<string, string> = {},
  over: Parameters<typeof startRuntimeSyncWorker>[1] = {},
): Promise<SyncHarness> => {
  const cfg: Config = loadConfig({
    ATLAS_DATA_DIR: 'memory://',
    EMBEDDING_PROVIDER: 'none',
    CREDENTIAL_MASTER_KEY: '7e'.repeat(32),
    PLATFORM_A_API_URL: emu.url,
    ...env,
  });
  const rt = await openRuntime(cfg, { pollIntervalMs: 20, sessionTimeoutMs: 2000 });
  const updates: SyncJobUpdated[] = [];
  const subs = await startProjectors(rt);
  subs.push(
    await rt.eventLog.subscribe({
      group: `test.sync-updates.${Math.random()}`,
      topics: [TOPICS.syncJobs],
      start: 'latest',
      handler: async (batch) => {
        for (const e of batch) if (e.type === 'SyncJobUpdated') updates.push(e.data);
      },
    }),
  );
  const worker = await startRuntimeSyncWorker(rt, {
    client: { backoffMs: 10, maxBackoffMs: 50, maxRetries: 3 },
    pollMs: 20,
    ...over,
  });
  const app = await buildApp(apiPorts(rt));
  const call = async (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
    headers: Record<string, string> = cfg.ATLAS_ADMIN_API_KEY
      ? { authorization: `Bearer ${cfg.ATLAS_ADMIN_API_KEY}` }
      : {},
  ) => {
    const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
    const json = String(res.headers['content-type'] ?? '').includes('json');
    return { status: res.statusCode, body: res.body ? (json ? res.json() : res.body) : undefined };
  };
  return {
    rt,
    app,
    worker,
    subs,
    updates,
    call,
    finished: async (channelId, jobId, timeoutMs = 60_000) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const r = await call('GET', `/api/sync/status?channel_id=${channelId}&job_id=${jobId}`);
        if (['completed', 'failed', 'cancelled'].includes(r.body?.status)) return r.body;
        if (Date.now() > until) throw new Error(`job ${jobId} still ${r.body?.status} after ${timeoutMs} ms`);
        await new Promise((res) => setTimeout(res, 25));
      }
    },
    close: async () => {
      await worker.stop();
      await app.close();
      await Promise.all(subs.map((s) => s.stop()));
      await rt.close();
    },
  };
};

/** The mock platform's clock for the worker of a mock harness: the same generated history on every run. */
export const MOCK_NOW = Date.parse('2026-03-06T15:00:00Z');

/**
 * A harness on the mock platform (ADAPTER_MOCK=true, the worker's mock clock at MOCK_NOW): no platform is reached
 * (PLATFORM_A_API_URL points where nothing listens, so a request to a platform would fail the test).
 */
export const openMockSyncHarness = (): Promise<SyncHarness> =>
  openSyncHarness(
    { url: 'http://127.0.0.1:9/api/' },
    { ADAPTER_MOCK: 'true' },
    { client: { mock: { now: () => MOCK_NOW } } },
  );

/** Saves a connection on the emulator's token with `channelIds` selected; returns its id. */
export const connect = async (rt: Runtime, emu: SlackEmulator, channelIds: string[], token = emu.token) => {
  const c = await rt.connections.create({
    name: 'Emulated workspace',
    platform: 'platform_a',
    credentials: { bot_token: token, signing_secret: 'signing-secret' },
  });
  await rt.connections.saveChannels(
    c.id,
    channelIds.map((id) => ({ id, name: `#${id}`, is_private: false, member_count: 1, sync_enabled: true })),
  );
  return c.id;
};
