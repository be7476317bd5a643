import { AskDoneEventSchema, FreshnessSchema, parseSse, SearchResponseSchema } from '@atlas/api';
import { startProjector, waitForProjectors } from '@atlas/runtime';
import { ADMIN_KEY, MOCK_NOW, openSyncHarness, type SyncHarness } from '@atlas/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 27 point 3: every answer says how current it is. A sync on the mock platform is projected while the facts
 * projector is stopped (its messages stored, none of them read for facts yet): search, memory search and ask report
 * the channel behind by exactly the synced messages; once the projector has caught up they report nothing pending
 * and current_to at the channel's newest message.
 */
describe('freshness marks while a sync is being projected (mock platform)', () => {
  let h: SyncHarness;
  let eng: string;
  let prd: string;
  let synced: number;
  let jobId: string;

  beforeAll(async () => {
    // The mock platform (as openMockSyncHarness), with an admin key: the suite makes a scoped key, which ends the open
    // local default; the harness's calls carry the admin key.
    h = await openSyncHarness(
      { url: 'http://127.0.0.1:9/api/' },
      { ADAPTER_MOCK: 'true', ATLAS_ADMIN_API_KEY: ADMIN_KEY },
      { client: { mock: { now: () => MOCK_NOW } } },
    );
    const created = await h.call('POST', '/api/connections', {
      platform: 'platform_a',
      name: 'Freshness',
      credentials: { bot_token: 'xoxb-anything', signing_secret: 'anything' },
    });
    const channels = await h.call('GET', `/api/connections/${created.body.id}/channels`);
    eng = channels.body[0].id as string;
    prd = channels.body[1].id as string;
    await h.call('PUT', `/api/connections/${created.body.id}/channels`, { channel_ids: [eng] });
  }, 60_000);
  afterAll(async () => h?.close());

  const search = async (body: object) => {
    const r = await h.call('POST', '/api/search', { query: 'latency', ...body });
    expect(r.status).toBe(200);
    expect(SearchResponseSchema.safeParse(r.body).error).toBeUndefined();
    return r.body.freshness;
  };

  it('reports the synced messages as pending while the facts projector is stopped', async () => {
    const facts = h.subs.findIndex((s) => s.group === 'atlas.projector.facts');
    expect(facts).toBeGreaterThanOrEqual(0);
    await h.subs[facts]!.stop();
    h.subs.splice(facts, 1);

    const started = await h.call('POST', '/api/sync', { channel_id: eng });
    // The job has appended every message and waits for the facts group (its extracting_facts stage).
    let job = (await h.call('GET', `/api/sync/status?channel_id=${eng}&job_id=${started.body.job_id}`)).body;
    for (let i = 0; i < 600 && job.current_stage !== 'extracting_facts'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      job = (await h.call('GET', `/api/sync/status?channel_id=${eng}&job_id=${started.body.job_id}`)).body;
    }
    expect(job.current_stage).toBe('extracting_facts');
    jobId = started.body.job_id;
    synced = job.progress.processed_messages as number;
    expect(synced).toBeGreaterThan(50);
    await waitForProjectors(h.rt, ['documents']); // the messages are stored; none has been read for facts

    const mid = await search({ channel_id: eng });
    expect(FreshnessSchema.safeParse(mid).error).toBeUndefined();
    expect(mid).toMatchObject({ behind: true, pending_messages: synced });
    expect(mid.channels).toEqual([{ channel_id: eng, newest_message_at: mid.current_to, pending_messages: synced }]);
    expect(mid.summary).toMatch(new RegExp(`^current to .+ UTC, ${synced} messages still being read$`));

    // Every channel: the behind channel is listed though no result comes from it.
    const all = await search({ channel_id: null });
    expect(all.channels.map((c: { channel_id: string }) => c.channel_id)).toContain(eng);
    expect(all.pending_messages).toBe(synced);

    // Access: a key scoped to another channel never hears of this one, not even through its pending count.
    const scoped = await h.call('POST', '/api/admin/keys', {
      name: 'other',
      role: 'reader',
      scope: { channels: [prd] },
    });
    expect(scoped.status).toBe(201);
    const theirs = await h.call(
      'POST',
      '/api/search',
      { query: 'latency', channel_id: null },
      { authorization: `Bearer ${scoped.body.secret}` },
    );
    expect(theirs.status).toBe(200);
    expect(theirs.body.freshness).toMatchObject({ channels: [], pending_messages: 0, behind: false });

    const mem = await h.call('POST', '/api/memories/search', { channel_id: eng, query: 'latency' });
    expect(mem.body.freshness).toMatchObject({ behind: true, pending_messages: synced });

    const asked = await h.call('POST', `/api/channels/${eng}/ask`, { question: 'What did they decide about latency?' });
    const doneEvent = parseSse(String(asked.body)).events.find((e) => e.type === 'done');
    expect(AskDoneEventSchema.safeParse(doneEvent).error).toBeUndefined();
    expect(doneEvent?.freshness).toMatchObject({ behind: true, pending_messages: synced });
  }, 120_000);

  it('reports nothing pending and current_to at the newest message once the projectors caught up', async () => {
    h.subs.push(await startProjector(h.rt, 'facts'));
    const t0 = performance.now();
    await waitForProjectors(h.rt);
    const caughtUpMs = Math.round(performance.now() - t0);
    const done = await h.finished(eng, jobId);
    expect(done.status).toBe('completed');
    let after = await search({ channel_id: eng });
    // The mark is cached for a second: poll past it.
    for (let i = 0; i < 40 && after.behind; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await search({ channel_id: eng });
    }
    const newest = await h.call('GET', `/api/channels/${eng}/messages?limit=1`);
    expect(after).toMatchObject({ behind: false, pending_messages: 0 });
    expect(Date.parse(after.current_to)).toBe(Date.parse(newest.body.messages[0].timestamp));
    expect(after.summary).toMatch(/^current to [^,]+ UTC$/);
    console.log(
      `freshness: ${synced} messages pending mid-projection; caught up in ${caughtUpMs} ms: ${after.summary}`,
    );

    const asked = await h.call('POST', '/api/ask', { question: 'What did they decide about latency?' });
    const doneEvent = parseSse(String(asked.body)).events.find((e) => e.type === 'done');
    expect(doneEvent?.freshness).toMatchObject({ behind: false, pending_messages: 0 });
    const mark = FreshnessSchema.parse(doneEvent?.freshness);
    expect(mark.channels.map((c) => c.channel_id)).toEqual([eng]);
  }, 120_000);
});
