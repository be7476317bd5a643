import { loadConfig } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { runDueSchedules, type SyncWorker, startRuntimeSyncWorker, syncSchedulerDepsOf } from '@atlas/projectors';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiPorts, openRuntime, type Runtime, startProjectors } from '../../cli/src/runtime.js';
import { buildApp } from './app.js';

type Json = ReturnType<typeof JSON.parse>;
/** The mock platform's clock for the worker: the same history on every run. */
const MOCK_NOW = Date.parse('2026-03-06T15:00:00Z');

describe('ADAPTER_MOCK=true: a new user tries connections and sync with no credentials', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let subs: Subscription[];
  let worker: SyncWorker;
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
    const res = await app.inject({ method, url, ...(payload === undefined ? {} : { payload }) });
    return { status: res.statusCode, body: (res.body ? res.json() : undefined) as Json };
  };
  const finished = async (channelId: string, jobId: string) => {
    const until = Date.now() + 60_000;
    for (;;) {
      const r = await call('GET', `/api/sync/status?channel_id=${channelId}&job_id=${jobId}`);
      if (['completed', 'failed', 'cancelled'].includes(r.body?.status)) return r.body;
      if (Date.now() > until) throw new Error(`job ${jobId} still ${r.body?.status}`);
      await new Promise((res) => setTimeout(res, 25));
    }
  };

  beforeAll(async () => {
    const cfg = loadConfig({
      ATLAS_DATA_DIR: 'memory://',
      EMBEDDING_PROVIDER: 'none',
      CREDENTIAL_MASTER_KEY: '3d'.repeat(32),
      ADAPTER_MOCK: 'true',
      // Nothing listens here: a request to a platform would fail the test.
      PLATFORM_A_API_URL: 'http://127.0.0.1:9/api/',
    });
    rt = await openRuntime(cfg, { pollIntervalMs: 20 });
    subs = await startProjectors(rt);
    worker = await startRuntimeSyncWorker(rt, { pollMs: 20, client: { mock: { now: () => MOCK_NOW } } });
    app = await buildApp(apiPorts(rt));
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await Promise.all((subs ?? []).map((s) => s.stop()));
    await rt?.close();
  });

  it('creates a connection, selects a channel, syncs generated messages and finds their facts', async () => {
    const refused = await call('POST', '/api/connections', {
      platform: 'platform_a',
      name: 'Nope',
      credentials: { bot_token: 'invalid', signing_secret: 's' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.validation_error.code).toBe('INVALID_CREDENTIALS');

    const created = await call('POST', '/api/connections', {
      platform: 'platform_a',
      name: 'Try Atlas',
      credentials: { bot_token: 'xoxb-anything', signing_secret: 'anything' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ platform: 'platform_a', status: 'connected' });
    const id = created.body.id as string;
    const channels = await call('GET', `/api/connections/${id}/channels`);
    expect(channels.body.map((c: { name: string }) => c.name)).toEqual(['#engineering', '#product', '#support']);
    const eng = channels.body[0].id as string;
    const selected = await call('PUT', `/api/connections/${id}/channels`, { channel_ids: [eng] });
    expect(selected.status).toBe(200);

    const started = await call('POST', '/api/sync', { channel_id: eng });
    expect(started.status).toBe(200);
    const done = await finished(eng, started.body.job_id);
    expect(done).toMatchObject({ status: 'completed', progress: { failing_messages: 0, percentage: 100 } });
    expect(done.progress.processed_messages).toBeGreaterThan(50);

    const channel = await call('GET', `/api/channels/${eng}`);
    expect(channel.body).toMatchObject({ name: 'engineering', platform: 'platform_a' });
    expect(channel.body.message_count).toBe(done.progress.processed_messages);
    expect(channel.body.fact_count).toBeGreaterThan(30);
    const history = await call('GET', `/api/sync/history?channel_id=${eng}`);
    expect(history.body.history[0]).toMatchObject({ status: 'completed', error: null });
    expect(history.body.history[0].facts_extracted).toBeGreaterThan(30);

    for (const query of ['decided to switch', 'runbook', 'latency']) {
      const found = await call('POST', '/api/search', { query, channel_id: eng, limit: 5 });
      expect(found.status, query).toBe(200);
      expect(found.body.results.length, query).toBeGreaterThan(0);
    }
    const decisions = await call('POST', '/api/search', {
      query: 'decided',
      channel_id: eng,
      limit: 5,
      filters: { fact_types: ['decision'] },
    });
    expect(decisions.body.results[0].memory.memory_text).toMatch(/decided to switch/i);
  }, 90_000);

  it('platform_b: a guild connection with any token syncs a generated community channel', async () => {
    const created = await call('POST', '/api/connections', {
      platform: 'platform_b',
      name: 'Try Atlas community',
      credentials: { bot_token: 'anything', guild_id: '123' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const channels = await call('GET', `/api/connections/${id}/channels`);
    expect(channels.body.map((c: { name: string }) => c.name)).toEqual(['#general', '#help', '#dev', '#announcements']);
    const help = channels.body[1].id as string;
    await call('PUT', `/api/connections/${id}/channels`, { channel_ids: [help] });
    const started = await call('POST', `/api/channels/${help}/sync`, {});
    expect(started.status).toBe(200);
    const done = await finished(help, started.body.job_id);
    expect(done).toMatchObject({ status: 'completed', progress: { failing_messages: 0 } });
    const channel = await call('GET', `/api/channels/${help}`);
    expect(channel.body).toMatchObject({ name: 'help', platform: 'platform_b' });
    expect(channel.body.fact_count).toBeGreaterThan(10);
    const found = await call('POST', '/api/search', { query: 'workaround', channel_id: help, limit: 5 });
    expect(found.body.results.length).toBeGreaterThan(0);
    expect(found.body.results[0].citation.permalink).toMatch(/^https:\/\/discord\.com\/channels\//);
  }, 90_000);

  it('a schedule fires a sync of the mock channel through the same worker, once per due time', async () => {
    const eng = 'C0MOCKENG';
    const saved = await call('PUT', '/api/sync/schedules', { channel_id: eng, schedule: '*/5 * * * *', enabled: true });
    expect(saved.status).toBe(200);
    const later = new Date(Date.now() + 10 * 60_000);
    const deps = syncSchedulerDepsOf(rt, { now: () => later });
    const [a, b] = await Promise.all([runDueSchedules(deps), runDueSchedules(deps)]);
    const fired = [...a, ...b].filter((o) => o.outcome === 'fired');
    expect(fired.length).toBeGreaterThan(0);
    expect(new Set(fired.map((o) => o.job_id)).size).toBe(1);
    const done = await finished(eng, fired[0]!.job_id);
    expect(done.status).toBe('completed');
    const history = await call('GET', `/api/sync/history?channel_id=${eng}`);
    expect(history.body.history.filter((j: { job_id: string }) => j.job_id === fired[0]!.job_id)).toHaveLength(1);
    const schedules = await call('GET', '/api/sync/schedules');
    expect(schedules.body.schedules[0]).toMatchObject({ channel_id: eng, last_sync: done.completed_at });
  }, 90_000);
});
