import { buildApp } from '@atlas/api';
import { loadConfig, type NewEvent, type SyncJobUpdated, TOPICS } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { runDueSchedules, scheduledJobId } from '@atlas/projectors';
import {
  apiPorts,
  openRuntime,
  type Runtime,
  startProjectors,
  syncSchedulerDepsOf,
  waitForProjectors,
} from '@atlas/runtime';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CH = 'C0SCHED01';
const OTHER = 'C0SCHED02';

describe('sync schedules (GET/PUT /api/sync/schedules, the scheduler) with an injected clock', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let subs: Subscription[];
  let clock = new Date('2026-03-02T10:07:00Z');
  const now = () => clock;
  const put = (payload: object) => app.inject({ method: 'PUT', url: '/api/sync/schedules', payload });
  const settle = () => waitForProjectors(rt, ['sync-jobs', 'sync-schedules'], 10);
  const due = (over: Partial<Parameters<typeof syncSchedulerDepsOf>[1]> = {}) =>
    runDueSchedules(syncSchedulerDepsOf(rt, { now, ...over }));
  const jobUpdate = (data: Partial<SyncJobUpdated> & Pick<SyncJobUpdated, 'jobId' | 'status'>): NewEvent => ({
    type: 'SyncJobUpdated',
    key: CH,
    data: {
      channelId: CH,
      seq: 1,
      stage: 'fetching_messages',
      totalMessages: 10,
      processedMessages: 10,
      failingMessages: 0,
      percentage: 100,
      startedAt: clock.toISOString(),
      estimatedCompletion: null,
      completedAt: null,
      cursor: null,
      messagesSynced: 10,
      factsExtracted: 0,
      entitiesCreated: 0,
      error: null,
      updatedAt: clock.toISOString(),
      ...data,
    },
  });

  beforeAll(async () => {
    rt = await openRuntime(
      loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none', CREDENTIAL_MASTER_KEY: '5c'.repeat(32) }),
      { pollIntervalMs: 10 },
    );
    subs = await startProjectors(rt);
    const ports = apiPorts(rt);
    app = await buildApp({ ...ports, schedules: { ...ports.schedules!, now } });
    const c = await rt.connections.create({
      name: 'Scheduled workspace',
      platform: 'platform_a',
      credentials: { bot_token: 'xoxb-test', signing_secret: 'secret' },
    });
    await rt.connections.saveChannels(c.id, [
      { id: CH, name: '#eng', is_private: false, member_count: 3, sync_enabled: true },
      { id: OTHER, name: '#random', is_private: false, member_count: 3, sync_enabled: true },
    ]);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await Promise.all((subs ?? []).map((s) => s.stop()));
    await rt?.close();
  });

  it('refuses a bad expression and a missing schedule with 400 INVALID_REQUEST, an unknown channel with 404', async () => {
    for (const schedule of ['0 * * * * *', '61 * * * *', 'every hour', '* * * 13 *']) {
      const r = await put({ channel_id: CH, schedule, enabled: true });
      expect(r.statusCode, schedule).toBe(400);
      expect(r.json().error).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining(schedule) });
    }
    const unknown = await put({ channel_id: 'C0NOWHERE', schedule: '0 * * * *', enabled: true });
    // Issue 21 (one rule for an unknown channel_id): 404 NOT_FOUND, no longer 400.
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: 'NOT_FOUND', details: { channel_id: 'C0NOWHERE' } });
    expect((await put({ channel_id: CH, enabled: true })).statusCode).toBe(400); // no schedule saved yet
    expect((await put({ channel_id: CH, schedule: '0 * * * *', every: 5 })).statusCode).toBe(400);
    expect((await app.inject({ url: '/api/sync/schedules' })).json()).toEqual({ schedules: [] });
  });

  it('saves a schedule and lists it with next_sync from the clock; disabling clears next_sync', async () => {
    const r = await put({ channel_id: CH, schedule: ' */15   * * * * ', enabled: true });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({
      channel_id: CH,
      schedule: '*/15 * * * *',
      enabled: true,
      next_sync: '2026-03-02T10:15:00.000Z',
      last_sync: null,
      updated_at: '2026-03-02T10:07:00.000Z',
    });
    const off = await put({ channel_id: OTHER, schedule: '0 3 * * mon-fri', enabled: false });
    expect(off.json()).toMatchObject({ enabled: false, next_sync: null });
    const list = (await app.inject({ url: '/api/sync/schedules' })).json();
    expect(list.schedules.map((s: { channel_id: string }) => s.channel_id)).toEqual([CH, OTHER]);
    expect(list.schedules[0]).toEqual(r.json());
    // Toggling keeps the saved expression.
    const on = await put({ channel_id: OTHER, enabled: true });
    expect(on.json()).toMatchObject({
      schedule: '0 3 * * mon-fri',
      enabled: true,
      next_sync: '2026-03-03T03:00:00.000Z',
    });
    await put({ channel_id: OTHER, enabled: false });
  });

  it('fires each due time once (SyncRequested by the scheduler), also with two schedulers at once', async () => {
    clock = new Date('2026-03-02T10:14:59Z');
    expect(await due()).toEqual([]); // nothing due since the schedule was saved at 10:07
    clock = new Date('2026-03-02T10:15:20Z');
    const jobId = scheduledJobId(CH, new Date('2026-03-02T10:15:00Z'));
    const [a, b] = await Promise.all([due(), due()]); // two processes: the same deterministic job id
    expect([...a, ...b].every((o) => o.job_id === jobId)).toBe(true);
    expect([...a, ...b].map((o) => o.outcome)).toContain('fired');
    await settle();
    const jobs = await rt.sync.history(CH, 10);
    expect(jobs.map((j) => [j.job_id, j.status, j.requested_by, j.started_at])).toEqual([
      [jobId, 'queued', 'scheduler', '2026-03-02T10:15:20.000Z'],
    ]);
    // The next pass: the job exists, and later it is the open sync that covers the due time.
    expect((await due()).map((o) => o.outcome)).toEqual(['already_fired']);
    clock = new Date('2026-03-02T10:30:10Z'); // the 10:30 due time while the 10:15 job is still open
    expect((await due()).map((o) => o.outcome)).toEqual(['covered']);
    await settle();
    expect(await rt.sync.history(CH, 10)).toHaveLength(1);
  });

  it('fires again once the open sync completed, and last_sync is the last completed sync', async () => {
    const first = scheduledJobId(CH, new Date('2026-03-02T10:15:00Z'));
    await rt.eventLog.append(TOPICS.syncJobs, [
      jobUpdate({
        jobId: first,
        status: 'completed',
        stage: 'generating_wiki',
        startedAt: '2026-03-02T10:15:20.000Z',
        completedAt: '2026-03-02T10:32:00.000Z',
      }),
    ]);
    await settle();
    clock = new Date('2026-03-02T10:40:00Z'); // the 10:30 due time was covered by the job open then
    expect((await due()).map((o) => o.outcome)).toEqual(['covered']);
    clock = new Date('2026-03-02T10:45:01Z');
    const fired = await due();
    expect(fired).toEqual([
      {
        channel_id: CH,
        due: '2026-03-02T10:45:00.000Z',
        job_id: scheduledJobId(CH, new Date('2026-03-02T10:45:00Z')),
        outcome: 'fired',
      },
    ]);
    await settle();
    const job = await rt.sync.getJob(fired[0]!.job_id);
    expect(job).toMatchObject({ status: 'queued', estimated_messages: 10, force: false });
    const list = (await app.inject({ url: '/api/sync/schedules' })).json();
    expect(list.schedules[0]).toMatchObject({
      channel_id: CH,
      last_sync: '2026-03-02T10:32:00.000Z',
      next_sync: '2026-03-02T11:00:00.000Z',
    });
  });

  it('after downtime fires only the latest missed due time; a disabled schedule or sync_enabled off fires nothing', async () => {
    const open = scheduledJobId(CH, new Date('2026-03-02T10:45:00Z'));
    await rt.eventLog.append(TOPICS.syncJobs, [
      jobUpdate({ jobId: open, status: 'completed', completedAt: '2026-03-02T10:46:00.000Z' }),
    ]);
    await settle();
    clock = new Date('2026-03-02T13:52:00Z'); // down from 10:46 to 13:52: 12 due times missed
    const fired = await due();
    expect(fired.map((o) => [o.due, o.outcome])).toEqual([['2026-03-02T13:45:00.000Z', 'fired']]);
    await rt.eventLog.append(TOPICS.syncJobs, [
      jobUpdate({ jobId: fired[0]!.job_id, status: 'completed', completedAt: '2026-03-02T13:53:00.000Z' }),
    ]);
    await put({ channel_id: CH, enabled: false });
    await settle();
    clock = new Date('2026-03-02T14:00:30Z');
    expect(await due()).toEqual([]);
    await put({ channel_id: CH, enabled: true }); // saved at 14:00:30: the 14:00 due time predates it
    await settle();
    expect(await due()).toEqual([]);
    await rt.eventLog.append(TOPICS.messages, [
      {
        type: 'ChannelDiscovered',
        key: CH,
        data: {
          platform: 'platform_a',
          workspaceId: 'T0SCHED',
          workspaceName: 'sched',
          channelId: CH,
          name: 'eng',
          isPrivate: false,
          memberCount: 3,
          topic: null,
          createdAt: null,
          source: 'sync',
        },
      },
      {
        type: 'ChannelSettingsUpdated',
        key: CH,
        data: {
          channelId: CH,
          syncEnabled: false,
          wikiEnabled: true,
          graphEnabled: true,
          factExtractionEnabled: true,
          retentionDays: null,
          updatedAt: clock.toISOString(),
        },
      },
    ]);
    await waitForProjectors(rt, ['documents'], 10);
    clock = new Date('2026-03-02T14:15:00Z');
    expect((await due()).map((o) => o.outcome)).toEqual(['sync_disabled']);
  });
});
