import path from 'node:path';
import { planImport } from '@atlas/platforms';
import { SlackEmulator } from '@atlas/platforms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DigestPoster, digestPostDepsOf, digestPostText, nextDigestDue } from './digest-posts.js';
import { appendPlan } from './drain.js';
import { waitForProjectors } from './lag.js';
import { syncDepsOf } from './sync-wiring.js';
import { connect, openSyncHarness, type SyncHarness } from './testing/sync-harness.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');
/** OLake #help (synced through the emulator) and #general (imported only: in no connection). */
const HELP = 'C081MV728N7';
const GENERAL = 'C081MTEGP8B';
/** The end of OLake's busy week of #help (its digest has decisions, action items and topics). */
const WEEK_END = Date.parse('2026-06-01T00:00:00Z');
const DAY = 86_400_000;

describe('posted digests (issue 27 point 4) on OLake #help through the Slack emulator', () => {
  let emu: SlackEmulator;
  let h: SyncHarness;
  let poster: DigestPoster;
  const posts = () => emu.requests.filter((r) => r.call === 'chat.postMessage');
  const deps = () => digestPostDepsOf(h.rt, syncDepsOf(h.rt).platformClient);
  const settled = () => waitForProjectors(h.rt, undefined, 50);

  beforeAll(async () => {
    emu = await SlackEmulator.start(OLAKE);
    h = await openSyncHarness(emu);
    await connect(h.rt, emu, [HELP]);
    const r = await h.call('POST', '/api/sync', { channel_id: HELP });
    expect((await h.finished(HELP, r.body.job_id as string)).status).toBe('completed');
    const plan = await planImport(OLAKE);
    await appendPlan(h.rt, {
      ...plan,
      channels: plan.channels.filter((c) => c.channelId === GENERAL),
      messages: plan.messages.filter((m) => m.channelId === GENERAL),
    });
    await settled();
    poster = new DigestPoster(deps());
  }, 180_000);
  afterAll(async () => {
    await h?.close();
    await emu?.close();
  });

  it('settings: digest_enabled (default off) and digest_days (1-31, default 7); opting in needs a connection', async () => {
    expect((await h.call('GET', `/api/channels/${HELP}/settings`)).body).toMatchObject({
      digest_enabled: false,
      digest_days: 7,
    });
    expect((await poster.runDigestPass(WEEK_END)).posted).toEqual([]); // nobody opted in
    for (const bad of [{ digest_days: 0 }, { digest_days: 32 }, { digest_enabled: 'yes' }]) {
      const r = await h.call('PUT', `/api/channels/${HELP}/settings`, bad);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('INVALID_REQUEST');
    }
    // #general was imported from the export: no connection lists it, so no bot token can post there.
    const refused = await h.call('PUT', `/api/channels/${GENERAL}/settings`, { digest_enabled: true });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: { channel_id: GENERAL } });
    expect((await h.call('GET', `/api/channels/${GENERAL}/settings`)).body.digest_enabled).toBe(false);
    const on = await h.call('PUT', `/api/channels/${HELP}/settings`, { digest_enabled: true });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ digest_enabled: true, digest_days: 7, sync_enabled: true, wiki_enabled: true });
    expect(await h.rt.documents.channelsWithDigest()).toEqual([{ channelId: HELP, days: 7, lastPost: null }]);
  });

  it('posts the week’s digest to the channel, equal to the API’s, and records it (DigestPosted)', async () => {
    // The bot removed from the channel: the platform refuses (not_in_channel); nothing is recorded, the next pass retries.
    emu.setMember(HELP, false);
    const refused = await poster.runDigestPass(WEEK_END);
    expect(refused.posted).toEqual([]);
    expect(refused.failed.map((f) => f.channelId)).toEqual([HELP]);
    await settled();
    expect((await h.rt.documents.channelsWithDigest())[0]!.lastPost).toBeNull();
    emu.setMember(HELP, true);
    const pass = await poster.runDigestPass(WEEK_END);
    expect(pass.failed).toEqual([]);
    expect(pass.posted.map((p) => p.channelId)).toEqual([HELP]);
    const post = posts().at(-1);
    expect(posts()).toHaveLength(2); // the refused one and this one
    const api = (await h.call('GET', `/api/channels/${HELP}/digest?end=${new Date(WEEK_END).toISOString()}&days=7`))
      .body;
    expect(api.has_activity).toBe(true);
    expect(post!.params.channel).toBe(HELP);
    expect(post!.params.text).toBe(digestPostText('platform_a', api));
    expect(post!.params.text).toContain('Digest of #help, 2026-05-25 to 2026-05-31');
    // Every citation is a link to its message.
    for (const c of api.citations as { id: number; permalink: string }[])
      expect(post!.params.text).toContain(`<${c.permalink}|[${c.id}] `);
    await settled();
    const [row] = await h.rt.documents.channelsWithDigest();
    expect(row!.lastPost).toMatchObject({
      channelId: HELP,
      platform: 'platform_a',
      periodStart: '2026-05-25T00:00:00.000Z',
      periodEnd: '2026-06-01T00:00:00.000Z',
      days: 7,
      platformMessageId: pass.posted[0]!.platformMessageId,
      citations: api.citations.length,
    });
    // The message is in the channel on the platform, from the bot.
    const history = (await fetch(new URL(`conversations.history?channel=${HELP}&limit=5`, emu.url), {
      headers: { authorization: `Bearer ${emu.token}` },
    }).then((r) => r.json())) as { messages: { ts: string; user: string; text: string }[] };
    expect(history.messages.find((m) => m.ts === row!.lastPost!.platformMessageId)).toMatchObject({
      user: 'U0ATLASBOT',
    });
  });

  it('is not posted again before digest_days have passed, by this process or after a restart', async () => {
    expect((await poster.runDigestPass(WEEK_END + DAY)).notDue).toEqual([HELP]);
    const restarted = new DigestPoster(deps()); // reads the last post from the store
    expect((await restarted.runDigestPass(WEEK_END + 6 * DAY)).notDue).toEqual([HELP]);
    expect(posts()).toHaveLength(2);
    expect(nextDigestDue('2026-06-01T00:00:00.000Z', 7)).toBe(WEEK_END + 7 * DAY);
    expect(nextDigestDue(null, 7)).toBe(Number.NEGATIVE_INFINITY);
  });

  it('a quiet period is neither posted nor recorded', async () => {
    // Years later: nothing happened in #help in the week before.
    const later = Date.parse('2030-01-08T00:00:00Z');
    expect(await poster.runDigestPass(later)).toMatchObject({ posted: [], quiet: [HELP], failed: [] });
    expect(posts()).toHaveLength(2);
    await settled();
    expect((await h.rt.documents.channelsWithDigest())[0]!.lastPost!.periodEnd).toBe('2026-06-01T00:00:00.000Z');
  });

  it('opting out stops the posts', async () => {
    await h.call('PUT', `/api/channels/${HELP}/settings`, { digest_enabled: false });
    await settled();
    expect(await h.rt.documents.channelsWithDigest()).toEqual([]);
    const before = posts().length;
    expect((await poster.runDigestPass(WEEK_END + 60 * DAY)).posted).toEqual([]);
    expect(posts()).toHaveLength(before);
  });
});
