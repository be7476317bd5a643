import type { Runtime } from '@atlas/runtime';
import { waitForProjectors } from '@atlas/runtime';
import { openMockSyncHarness, type SyncHarness } from '@atlas/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricBands } from './routes/stats.js';

type Json = ReturnType<typeof JSON.parse>;

/**
 * The activity feed and the sync figures of GET /api/stats/metrics from a real run on the mock platform
 * (ADAPTER_MOCK): a connection created (connection_established), one whose credentials stop working
 * (connection_failed), a sync job that completes (sync_completed with the messages it synced, and its duration in
 * performance.avg_sync_duration_seconds), the facts of the synced messages (fact_extracted).
 */
describe('stats activity from connections and a sync (mock platform)', () => {
  let h: SyncHarness;
  let rt: Runtime;
  let call: SyncHarness['call'];

  beforeAll(async () => {
    h = await openMockSyncHarness();
    ({ rt, call } = h);
  }, 60_000);
  afterAll(async () => h?.close());

  it('lists connection_established, connection_failed, sync_completed and fact_extracted, newest first', async () => {
    const created = await call('POST', '/api/connections', {
      platform: 'platform_a',
      name: 'Try Atlas',
      credentials: { bot_token: 'xoxb-anything', signing_secret: 'anything' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const channels = await call('GET', `/api/connections/${id}/channels`);
    const eng = channels.body[0].id as string;
    expect((await call('PUT', `/api/connections/${id}/channels`, { channel_ids: [eng] })).status).toBe(200);
    const started = await call('POST', '/api/sync', { channel_id: eng });
    expect(started.status).toBe(200);
    const until = Date.now() + 60_000;
    let job: Json;
    for (;;) {
      job = (await call('GET', `/api/sync/status?channel_id=${eng}&job_id=${started.body.job_id}`)).body;
      if (['completed', 'failed', 'cancelled'].includes(job?.status)) break;
      if (Date.now() > until) throw new Error(`sync still ${job?.status}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(job.status).toBe('completed');
    await waitForProjectors(rt);

    const second = await call('POST', '/api/connections', {
      platform: 'platform_a',
      name: 'Second',
      credentials: { bot_token: 'xoxb-other', signing_secret: 'other' },
    });
    expect(second.status).toBe(201);
    // Its credentials stop working: the store's status is `error` (what a refused validation leaves).
    await rt.connections.update(second.body.id, { status: 'error' });

    const { activities } = (await call('GET', '/api/stats/activity?limit=50')).body as { activities: Json[] };
    const times = activities.map((a) => a.timestamp as string);
    expect(times).toEqual([...times].sort().reverse());
    const sync = activities.find((a) => a.type === 'sync_completed');
    const record = (await rt.sync.getJob(started.body.job_id))!;
    expect(record.messages_synced).toBeGreaterThan(50);
    expect(sync).toMatchObject({
      channel_id: eng,
      job_id: started.body.job_id,
      message_count: record.messages_synced,
      fact_count: record.facts_extracted,
      timestamp: record.completed_at,
    });
    expect(
      activities
        .filter((a) => a.type === 'connection_established')
        .map((a) => a.connection_id)
        .sort(),
    ).toEqual([id, second.body.id].sort());
    expect(activities.filter((a) => a.type === 'connection_failed')).toEqual([
      expect.objectContaining({ connection_id: second.body.id, platform: 'platform_a' }),
    ]);
    const facts = activities.filter((a) => a.type === 'fact_extracted' && a.channel_id === eng);
    expect(facts.length).toBeGreaterThan(0);
    expect(facts.reduce((s, a) => s + a.fact_count, 0)).toBe((await rt.documents.getChannel(eng))!.fact_count);

    const metrics = (await call('GET', '/api/stats/metrics')).body;
    expect(metrics.performance.avg_sync_duration_seconds).toBeGreaterThan(0);
    expect(metrics.bands).toEqual({
      query_latency: expect.stringMatching(/^(excellent|good|fair|poor)$/),
      fact_quality: expect.stringMatching(/^(excellent|good|fair|poor)$/),
      sync_duration: metrics.performance.avg_sync_duration_seconds < 60 ? 'excellent' : expect.any(String),
    });
    const stats = (await call('GET', `/api/stats/channel/${eng}`)).body;
    expect(stats.message_count).toBe((await rt.documents.getChannel(eng))!.message_count);
    // Every fact of the channel was extracted by this sync: all were added within the last 7 days.
    expect(stats.activity.facts_added_last_7d).toBe(stats.fact_count);
  }, 120_000);
});

describe('metricBands (spec "Metric quality bands")', () => {
  it('rates by the spec bands, boundaries to the better band, null with nothing to rate', () => {
    const b = (avgQueryLatencyMs: number | null, avgFactQuality: number | null, avgSyncSeconds: number | null) =>
      metricBands({ avgQueryLatencyMs, avgFactQuality, avgSyncSeconds });
    expect(b(49.9, 0.81, 59)).toEqual({
      query_latency: 'excellent',
      fact_quality: 'excellent',
      sync_duration: 'excellent',
    });
    expect(b(50, 0.8, 60)).toEqual({ query_latency: 'good', fact_quality: 'good', sync_duration: 'good' });
    expect(b(150, 0.5, 200)).toEqual({ query_latency: 'fair', fact_quality: 'fair', sync_duration: 'fair' });
    expect(b(201, 0.39, 301)).toEqual({ query_latency: 'poor', fact_quality: 'poor', sync_duration: 'poor' });
    expect(b(null, null, null)).toEqual({ query_latency: null, fact_quality: null, sync_duration: null });
  });
});
