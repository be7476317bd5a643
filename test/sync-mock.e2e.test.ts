import { runDueSchedules } from '@atlas/projectors';
import type { Runtime } from '@atlas/runtime';
import { syncSchedulerDepsOf } from '@atlas/runtime';
import { MOCK_NOW, openMockSyncHarness, openSyncHarness, type SyncHarness } from '@atlas/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('ADAPTER_MOCK=true: a new user tries connections and sync with no credentials', () => {
  let h: SyncHarness;
  let rt: Runtime;
  let call: SyncHarness['call'];
  let finished: SyncHarness['finished'];

  beforeAll(async () => {
    h = await openMockSyncHarness();
    ({ rt, call, finished } = h);
  }, 60_000);
  afterAll(async () => h?.close());

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
    // Issue 21, point 1, bullet 1: selected in a connected connection and just synced, so connected (was false).
    expect(channel.body.connected).toBe(true);
    const listed = (await call('GET', '/api/channels')).body as { id: string; connected: boolean }[];
    expect(listed.find((c) => c.id === eng)?.connected).toBe(true);
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

describe('stopping the sync worker with jobs still queued', () => {
  it('returns once the running jobs end: a job queued behind the concurrency limit does not hold the stop', async () => {
    // The two running jobs sit in a wiki step that does not answer the abort for 4 s (longer than a subscription's
    // 2 s stop grace), so the other jobs are still queued when the worker stops.
    let inWiki = 0;
    const slowWiki = async () => {
      inWiki++;
      await new Promise((r) => setTimeout(r, 4_000));
    };
    const h = await openSyncHarness(
      { url: 'http://127.0.0.1:9/api/' },
      { ADAPTER_MOCK: 'true' },
      { client: { mock: { now: () => MOCK_NOW } }, generateWiki: slowWiki },
    );
    let closed = false;
    try {
      const created = await h.call('POST', '/api/connections', {
        platform: 'platform_b',
        name: 'Queued jobs',
        credentials: { bot_token: 'anything', guild_id: '123' },
      });
      const id = created.body.id as string;
      const ids = (await h.call('GET', `/api/connections/${id}/channels`)).body.map((c: { id: string }) => c.id);
      expect(ids.length).toBeGreaterThan(2); // more channels than the worker runs at once (2)
      await h.call('PUT', `/api/connections/${id}/channels`, { channel_ids: ids });
      for (const channelId of ids)
        expect((await h.call('POST', '/api/sync', { channel_id: channelId })).status).toBe(200);
      const until = Date.now() + 60_000;
      while (inWiki < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      expect(inWiki).toBe(2);
      expect(h.worker.jobs().length).toBe(ids.length); // two in the wiki step, the rest queued
      const stopped = h.worker.stop().then(() => 'stopped');
      const late = new Promise((r) => setTimeout(() => r('still waiting after 15 s'), 15_000));
      expect(await Promise.race([stopped, late])).toBe('stopped');
      expect(inWiki).toBe(2); // the queued jobs did not run: they stay open for the next worker
      // The queued jobs stay open for the next worker (a running one may have finished before it saw the stop).
      expect((await h.rt.sync.openJobs()).length).toBeGreaterThanOrEqual(ids.length - 2);
      await h.close();
      closed = true;
    } finally {
      if (!closed) await Promise.race([h.close().catch(() => undefined), new Promise((r) => setTimeout(r, 10_000))]);
    }
  }, 120_000);
});
