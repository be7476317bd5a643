import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { planImport } from '@atlas/platforms';
import { SlackEmulator } from '@atlas/platforms/testing';
import { connect, openSyncHarness, type SyncHarness } from '@atlas/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');
const HELP = 'C081MV728N7';

const waitUntil = async (ok: () => boolean | Promise<boolean>, what: string, ms = 20_000) => {
  const until = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

/**
 * A worker stopped mid-sync (process shutdown) leaves its job running with the cursor of its last batch; a new
 * process on the same data dir resumes the job from that cursor instead of starting over.
 */
describe('sync resumes from the last persisted cursor after a restart (embedded data dir)', () => {
  let emu: SlackEmulator;
  let dir: string;
  let h: SyncHarness | undefined;
  beforeAll(async () => {
    emu = await SlackEmulator.start(OLAKE);
    dir = mkdtempSync(path.join(tmpdir(), 'atlas-sync-resume-'));
  });
  afterAll(async () => {
    await h?.close();
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops mid-fetch, restarts, continues from the cursor and ends with every message once', async () => {
    const kept = (await planImport(OLAKE)).messages.filter((m) => m.channelId === HELP).length;
    const env = { ATLAS_DATA_DIR: dir, SYNC_BATCH_SIZE: '5' };
    h = await openSyncHarness(emu, env);
    await connect(h.rt, emu, [HELP]);
    // The 8th thread read of the job gets a 429 with Retry-After 5 s: the job is waiting there when the process stops.
    emu.fault({ match: 'conversations.replies', kind: 'ratelimit', retryAfter: 5, skip: 7 });
    const r = await h.call('POST', '/api/sync', { channel_id: HELP });
    const jobId = r.body.job_id as string;
    await waitUntil(() => emu.requests.some((q) => q.fault === 'ratelimit'), 'the 429');
    const first = h;
    await waitUntil(
      async () => ((await first.rt.sync.getJob(jobId))?.processed_messages ?? 0) > 0,
      'a persisted batch',
    );
    await h.close();
    h = undefined;

    const mid = emu.requests.length;
    h = await openSyncHarness(emu, env);
    const before = await h.rt.sync.getJob(jobId);
    expect(before).toMatchObject({ status: 'running', stage: 'fetching_messages' });
    expect(before!.cursor).not.toBeNull();
    expect(before!.processed_messages).toBeGreaterThan(0);
    expect(before!.processed_messages).toBeLessThan(kept);

    const done = await h.finished(HELP, jobId);
    expect(done).toMatchObject({
      status: 'completed',
      progress: { processed_messages: kept, total_messages: kept, percentage: 100 },
    });
    // After the restart, history is read from the persisted cursor, never from the start of the channel.
    const history = emu.requests.slice(mid).filter((q) => q.call === 'conversations.history');
    expect(history[0]!.params.oldest).toBe(before!.cursor);
    expect(history.every((q) => q.params.oldest !== '0')).toBe(true);
    const n = await h.rt.documents.getChannel(HELP);
    expect(n?.message_count).toBe(kept);
    const updates = (await h.call('GET', `/api/sync/history?channel_id=${HELP}`)).body.history;
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({ job_id: jobId, status: 'completed' });
    // Counted from the store, so the facts of the batches before the restart count too.
    expect(updates[0].facts_extracted).toBe(n?.fact_count);
    expect(n?.fact_count).toBeGreaterThan(0);
    // A batch appended but not yet projected when the process stopped may be appended again (idempotent downstream).
    expect(updates[0].messages_synced).toBeGreaterThanOrEqual(kept);
  }, 90_000);
});
