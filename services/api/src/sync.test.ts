import path from 'node:path';
import { SYNC_STAGES } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { SlackEmulator } from '@atlas/platforms/testing';
import { connect, openSyncHarness, type SyncHarness } from '@atlas/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');
/** #help: 256 messages in the export (254 kept), 228 of them thread replies. */
const HELP = 'C081MV728N7';
const GENERAL = 'C081MTEGP8B';
const CONTRIBUTING = 'C081KBMJQUD';
const ANNOUNCEMENTS = 'C081GUXUQ5U';

/** Stored (not deleted) messages of a channel: platform id → text. */
const stored = async (h: SyncHarness, channelId: string) => {
  const rows = await h.rt.database.db
    .selectFrom('messages' as never)
    .select(['id', 'text'] as never)
    .where('channel_id' as never, '=', channelId as never)
    .where('deleted_at' as never, 'is', null as never)
    .execute();
  return new Map((rows as { id: string; text: string }[]).map((r) => [r.id, r.text]));
};

describe('sync jobs over the Slack emulator (olake export)', () => {
  let emu: SlackEmulator;
  let h: SyncHarness;
  /** Messages of #help the importer keeps (system subtypes skipped). */
  let kept: number;
  beforeAll(async () => {
    kept = (await planImport(OLAKE)).messages.filter((m) => m.channelId === HELP).length;
    emu = await SlackEmulator.start(OLAKE);
    h = await openSyncHarness(emu, { SYNC_BATCH_SIZE: '10' });
    await connect(h.rt, emu, [HELP, GENERAL, CONTRIBUTING]);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await emu?.close();
  });

  it('runs a job queued → running (four stages in order) → completed, with progress, history and last_sync', async () => {
    const r = await h.call('POST', '/api/sync', { channel_id: HELP });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'started',
      job_id: expect.any(String),
      channel_id: HELP,
      estimated_messages: 1000,
      started_at: expect.any(String),
    });
    const jobId = r.body.job_id as string;
    const now = await h.call('GET', `/api/sync/status?channel_id=${HELP}&job_id=${jobId}`);
    expect(['queued', 'running']).toContain(now.body.status);
    // A second sync of the channel while this one is open.
    const again = await h.call('POST', `/api/channels/${HELP}/sync`, {});
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'CONFLICT', details: { job_id: jobId } });

    const done = await h.finished(HELP, jobId);
    expect(done).toMatchObject({
      job_id: jobId,
      channel_id: HELP,
      status: 'completed',
      current_stage: 'generating_wiki',
      started_at: r.body.started_at,
      progress: { total_messages: kept, processed_messages: kept, failing_messages: 0, percentage: 100 },
    });
    // Issue 21: a finished job has no estimate (null); completed_at says when it ended.
    expect(done.estimated_completion).toBeNull();
    expect(Date.parse(done.completed_at)).toBeGreaterThanOrEqual(Date.parse(done.started_at));
    expect((await stored(h, HELP)).size).toBe(kept);

    const mine = h.updates.filter((u) => u.jobId === jobId);
    expect(mine.map((u) => u.seq)).toEqual(mine.map((_, i) => i + 1));
    expect(mine[0]).toMatchObject({ status: 'running', stage: 'fetching_messages', processedMessages: 0 });
    expect(mine.at(-1)).toMatchObject({ status: 'completed', messagesSynced: kept });
    const stages = [...new Set(mine.map((u) => u.stage))];
    expect(stages).toEqual([...SYNC_STAGES]);
    const fetching = mine.filter((u) => u.stage === 'fetching_messages' && u.processedMessages > 0);
    expect(fetching.length).toBeGreaterThan(1); // batches of 10 top-level messages, each persisted with its cursor
    const pct = mine.map((u) => u.percentage);
    expect(pct).toEqual([...pct].sort((a, b) => a - b));
    expect(fetching.every((u) => u.cursor !== null)).toBe(true);

    const history = await h.call('GET', `/api/sync/history?channel_id=${HELP}`);
    expect(history.body.history[0]).toEqual({
      job_id: jobId,
      channel_id: HELP,
      status: 'completed',
      started_at: r.body.started_at,
      completed_at: expect.any(String),
      duration_seconds: expect.any(Number),
      messages_synced: kept,
      facts_extracted: expect.any(Number),
      entities_created: expect.any(Number),
      error: null,
    });
    expect(history.body.history[0].facts_extracted).toBeGreaterThan(0);
    const channel = await h.call('GET', `/api/channels/${HELP}`);
    expect(channel.body).toMatchObject({ id: HELP, name: 'help', message_count: kept });
    expect(Date.parse(channel.body.last_sync)).toBeGreaterThanOrEqual(Date.parse(r.body.started_at));
    const conns = await h.rt.connections.list();
    expect(conns[0]!.last_sync).not.toBeNull();
    const byChannel = await h.call('GET', `/api/channels/${HELP}/sync/status`);
    expect(byChannel.body.job_id).toBe(jobId);

    // An incremental sync with nothing new appends nothing.
    const inc = await h.call('POST', '/api/sync', { channel_id: HELP });
    expect(inc.body.estimated_messages).toBe(kept);
    const incDone = await h.finished(HELP, inc.body.job_id);
    expect(incDone.status).toBe('completed');
    const last = (await h.call('GET', `/api/sync/history?channel_id=${HELP}&limit=1`)).body.history;
    expect(last).toHaveLength(1);
    expect(last[0]).toMatchObject({ job_id: inc.body.job_id, messages_synced: 0 });
  }, 60_000);

  it('picks up new messages, a late reply to a thread synced earlier; force finds edits and deletes', async () => {
    const first = await h.call('POST', '/api/sync', { channel_id: CONTRIBUTING });
    await h.finished(CONTRIBUTING, first.body.job_id);
    const before = await stored(h, CONTRIBUTING);
    const msgs = [...emu.messages.get(CONTRIBUTING)!.values()];
    const root = msgs.find((m) => typeof m.thread_ts === 'string' && m.thread_ts === m.ts)!;
    const user = String(msgs[0]!.user);
    const reply = emu.postMessage(CONTRIBUTING, {
      user,
      text: 'Late reply: the connector needs Java 17.',
      thread_ts: String(root.ts),
    });
    const top = emu.postMessage(CONTRIBUTING, { user, text: 'A new top-level question about CDC.' });

    const inc = await h.call('POST', `/api/channels/${CONTRIBUTING}/sync`);
    expect((await h.finished(CONTRIBUTING, inc.body.job_id)).status).toBe('completed');
    const after = await stored(h, CONTRIBUTING);
    expect(after.get(reply)).toBe('Late reply: the connector needs Java 17.');
    expect(after.get(top)).toBe('A new top-level question about CDC.');
    expect(after.size).toBe(before.size + 2);

    const edited = [...before.keys()][1]!;
    const deleted = [...before.keys()][2]!;
    const beforeEdit = new Date(Date.now() - 2000).toISOString();
    emu.editMessage(CONTRIBUTING, edited, 'Edited: use the new flag instead.');
    emu.deleteMessage(CONTRIBUTING, deleted);
    const force = await h.call('POST', '/api/sync', { channel_id: CONTRIBUTING, force: true });
    const done = await h.finished(CONTRIBUTING, force.body.job_id);
    expect(done.status).toBe('completed');
    const synced = await stored(h, CONTRIBUTING);
    expect(synced.get(edited)).toBe('Edited: use the new flag instead.');
    expect(synced.has(deleted)).toBe(false);
    expect(synced.size).toBe(after.size - 1);
    // As of a time before the edit, the messages route shows the text the message had then. (The export has it
    // already edited 31 s after it was written: as of its own time, the text before that edit was never seen, and the
    // earliest text known is shown.)
    const shown = async (asOf?: string) => {
      const q = `?limit=200${asOf ? `&as_of=${encodeURIComponent(asOf)}` : ''}`;
      const page = await h.call('GET', `/api/channels/${CONTRIBUTING}/messages${q}`);
      expect(page.status).toBe(200);
      return page.body.messages as { id: string; text: string; timestamp: string }[];
    };
    const now = (await shown()).find((m) => m.id === edited)!;
    expect(now.text).toBe('Edited: use the new flag instead.');
    expect((await shown(beforeEdit)).find((m) => m.id === edited)?.text).toBe(before.get(edited));
    expect((await shown(now.timestamp)).find((m) => m.id === edited)?.text).toBe(before.get(edited));
    const entry = (await h.call('GET', `/api/sync/history?channel_id=${CONTRIBUTING}&limit=1`)).body.history[0];
    expect(entry.messages_synced).toBe(2); // one changed, one deleted
  }, 60_000);

  it('honours a 429 Retry-After and completes', async () => {
    emu.fault({ match: 'conversations.history', kind: 'ratelimit', retryAfter: 1 });
    const t0 = Date.now();
    const r = await h.call('POST', '/api/sync', { channel_id: GENERAL });
    const done = await h.finished(GENERAL, r.body.job_id);
    expect(done.status).toBe('completed');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    const calls = emu.requests.filter((q) => q.call === 'conversations.history' && q.params.channel === GENERAL);
    expect(calls[0]).toMatchObject({ status: 429, fault: 'ratelimit' });
    expect(calls[1]).toMatchObject({ status: 200 });
    expect((await stored(h, GENERAL)).size).toBe(11);
  }, 30_000);

  it('after DELETE /api/channels/{id}/data, the next sync starts over and restores the channel', async () => {
    const del = await h.call('DELETE', `/api/channels/${GENERAL}/data`);
    expect(del.status).toBe(200);
    expect((await h.rt.documents.getChannel(GENERAL))?.message_count ?? 0).toBe(0);
    const r = await h.call('POST', '/api/sync', { channel_id: GENERAL });
    expect((await h.finished(GENERAL, r.body.job_id)).status).toBe('completed');
    expect((await stored(h, GENERAL)).size).toBe(11);
  }, 30_000);

  it('cancels a running job', async () => {
    emu.fault({ match: 'conversations.history', kind: 'ratelimit', retryAfter: 2, times: 3 });
    const r = await h.call('POST', '/api/sync', { channel_id: GENERAL, force: true });
    const jobId = r.body.job_id as string;
    const until = Date.now() + 10_000;
    while (!h.updates.some((u) => u.jobId === jobId && u.status === 'running') && Date.now() < until)
      await new Promise((res) => setTimeout(res, 20));
    const c = await h.call('POST', '/api/sync/cancel', { job_id: jobId });
    expect(c.status).toBe(200);
    expect(c.body).toEqual({ status: 'cancelled', job_id: jobId, cancelled_at: expect.any(String) });
    const done = await h.finished(GENERAL, jobId, 5000);
    expect(done.status).toBe('cancelled');
    emu.clearFaults();
    const again = await h.call('POST', '/api/sync/cancel', { job_id: jobId });
    expect(again.status).toBe(409);
    const history = (await h.call('GET', `/api/sync/history?channel_id=${GENERAL}&limit=1`)).body.history[0];
    expect(history).toMatchObject({ job_id: jobId, status: 'cancelled', error: null });
  }, 30_000);

  it('cancels a queued job before it runs (two jobs run at once)', async () => {
    emu.fault({ match: 'conversations.history', kind: 'ratelimit', retryAfter: 2, times: 2 });
    const ids: Record<string, string> = {};
    for (const c of [HELP, CONTRIBUTING, GENERAL])
      ids[c] = (await h.call('POST', '/api/sync', { channel_id: c, force: true })).body.job_id;
    const queued = ids[GENERAL]!;
    expect((await h.call('GET', `/api/sync/status?channel_id=${GENERAL}&job_id=${queued}`)).body.status).toBe('queued');
    expect((await h.call('POST', '/api/sync/cancel', { job_id: queued })).status).toBe(200);
    expect((await h.finished(GENERAL, queued, 10_000)).status).toBe('cancelled');
    expect(h.updates.filter((u) => u.jobId === queued).map((u) => u.status)).toEqual(['cancelled']);
    for (const c of [HELP, CONTRIBUTING]) expect((await h.finished(c, ids[c]!)).status).toBe('completed');
    emu.clearFaults();
  }, 60_000);

  it('fails with AUTH_ERROR when the token is revoked (spec "Sync errors" shape)', async () => {
    const token = 'xoxb-revoked-later-0001';
    emu.setToken(token, { state: 'token_revoked' });
    await connect(h.rt, emu, [ANNOUNCEMENTS], token);
    const r = await h.call('POST', '/api/sync', { channel_id: ANNOUNCEMENTS });
    const done = await h.finished(ANNOUNCEMENTS, r.body.job_id);
    expect(done).toMatchObject({
      status: 'failed',
      job_id: r.body.job_id,
      error: { code: 'AUTH_ERROR', message: expect.any(String), details: { retry_after: null } },
    });
    expect(JSON.stringify(done)).not.toContain(token);
    const entry = (await h.call('GET', `/api/sync/history?channel_id=${ANNOUNCEMENTS}`)).body.history[0];
    expect(entry.error.code).toBe('AUTH_ERROR');
  }, 30_000);

  it('answers 404 for an unknown channel or job, 400 for a channel in no connection or a bad body', async () => {
    expect((await h.call('POST', '/api/sync', { channel_id: 'C-NOPE' })).status).toBe(404);
    expect((await h.call('GET', '/api/sync/status?channel_id=C-NOPE')).status).toBe(404);
    expect((await h.call('GET', `/api/sync/status?channel_id=${HELP}&job_id=nope`)).status).toBe(404);
    expect((await h.call('POST', '/api/sync/cancel', { job_id: 'nope' })).status).toBe(404);
    expect((await h.call('POST', '/api/sync', {})).status).toBe(400);
    expect((await h.call('GET', '/api/sync/history')).status).toBe(400);
    // A channel known from an import but in no connection.
    await h.rt.eventLog.append('atlas.messages', [
      {
        type: 'ChannelDiscovered',
        key: 'C-IMPORTED',
        data: {
          platform: 'platform_a',
          workspaceId: 'T1',
          workspaceName: 'w',
          channelId: 'C-IMPORTED',
          name: 'imported',
          isPrivate: false,
          memberCount: 1,
          topic: null,
          createdAt: null,
          source: 'import',
        },
      },
    ]);
    const until = Date.now() + 10_000;
    while ((await h.call('GET', '/api/channels/C-IMPORTED')).status !== 200 && Date.now() < until)
      await new Promise((res) => setTimeout(res, 20));
    const r = await h.call('POST', '/api/sync', { channel_id: 'C-IMPORTED' });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain('in no connection');
    // Listed by a connection but not selected for sync.
    const c = await h.rt.connections.create({
      name: 'Unselected',
      platform: 'platform_a',
      credentials: { bot_token: emu.token, signing_secret: 's' },
    });
    await h.rt.connections.saveChannels(c.id, [
      { id: 'C-IMPORTED', name: '#imported', is_private: false, member_count: 1, sync_enabled: false },
    ]);
    const unselected = await h.call('POST', '/api/sync', { channel_id: 'C-IMPORTED' });
    expect(unselected.status).toBe(400);
    expect(unselected.body.error.message).toContain('not selected for sync');
  }, 30_000);
});

describe('a first sync stops at SYNC_MAX_MESSAGES; the next continues from its cursor', () => {
  let emu: SlackEmulator;
  let h: SyncHarness;
  beforeAll(async () => {
    emu = await SlackEmulator.start(OLAKE);
    h = await openSyncHarness(emu, { SYNC_BATCH_SIZE: '5', SYNC_MAX_MESSAGES: '30' });
    await connect(h.rt, emu, [HELP]);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await emu?.close();
  });

  it('takes at most 30 top-level messages with their threads, then the rest', async () => {
    const kept = (await planImport(OLAKE)).messages.filter((m) => m.channelId === HELP).length;
    const first = await h.call('POST', '/api/sync', { channel_id: HELP });
    expect(first.body.estimated_messages).toBe(30);
    const a = await h.finished(HELP, first.body.job_id);
    expect(a.status).toBe('completed');
    // 30 top-level messages, each page's thread replies with it.
    const stored = (await h.rt.documents.getChannel(HELP))!.message_count;
    expect(a.progress.processed_messages).toBe(stored);
    expect(stored).toBeGreaterThanOrEqual(30);
    expect(stored).toBeLessThan(kept);
    const second = await h.call('POST', '/api/sync', { channel_id: HELP });
    expect((await h.finished(HELP, second.body.job_id)).status).toBe('completed');
    expect((await h.rt.documents.getChannel(HELP))!.message_count).toBe(kept);
  }, 60_000);
});
