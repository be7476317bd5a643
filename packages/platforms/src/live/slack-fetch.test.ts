import path from 'node:path';
import type { MessageIngested } from '@atlas/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ImportPlan, planImport } from '../index.js';
import { compareTs } from '../slack-message.js';
import { type PlatformClient, PlatformError, platformClient } from './index.js';
import { SlackEmulator } from './slack-emulator.test-support.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../../shared/data/slack-olake/export');
const FAST = { maxRetries: 3, backoffMs: 5, maxBackoffMs: 20, timeoutMs: 5000 };
const HELP = 'C081MV728N7';

const byTs = (ms: MessageIngested[]) => [...ms].sort((a, b) => compareTs(a.platformMessageId, b.platformMessageId));
const asSynced = (ms: MessageIngested[]) => ms.map((m) => ({ ...m, source: 'sync' as const }));

/** Pages a channel to the end; returns the messages and the last cursor. */
async function pageAll(client: PlatformClient, channelId: string, limit: number, after: string | null = null) {
  const messages: MessageIngested[] = [];
  let pages = 0;
  for (;;) {
    const page = await client.fetchMessages(channelId, { after, limit });
    messages.push(...page.messages);
    after = page.cursor;
    pages += 1;
    if (!page.hasMore) return { messages, cursor: after, pages };
  }
}

describe('Slack client: fetching history and threads from the emulator (olake export)', () => {
  let emu: SlackEmulator;
  let plan: ImportPlan;
  const client = (extra = {}) =>
    platformClient(
      { platform: 'platform_a', bot_token: emu.token, signing_secret: 'secret' },
      { slackApiUrl: emu.url, ...FAST, ...extra },
    );
  beforeAll(async () => {
    [emu, plan] = await Promise.all([SlackEmulator.start(OLAKE), planImport(OLAKE)]);
  });
  afterAll(() => emu.close());

  it('paging every channel gives exactly the importer events (only source differs), oldest first per page', async () => {
    const c = client();
    for (const ch of plan.channels) {
      const { messages, pages } = await pageAll(c, ch.channelId, 7);
      const want = plan.messages.filter((m) => m.channelId === ch.channelId);
      expect(byTs(messages)).toEqual(byTs(asSynced(want)));
      if (want.length > 7) expect(pages).toBeGreaterThan(1);
    }
    const calls = new Set(emu.requests.map((r) => r.call));
    expect(calls).toEqual(
      new Set(['auth.test', 'users.list', 'conversations.info', 'conversations.history', 'conversations.replies']),
    );
    expect(emu.requests.filter((r) => r.call === 'users.list').length).toBe(4); // 682 users, 200 a page
  });

  it('a page holds its threads whole: every reply of a root in the page, sorted by ts', async () => {
    const page = await client().fetchMessages(HELP, { limit: 3 });
    const roots = page.messages.filter((m) => m.threadTs === m.platformMessageId);
    expect(roots.length).toBeGreaterThan(0);
    for (const root of roots) {
      const want = plan.messages.filter((m) => m.channelId === HELP && m.threadTs === root.platformMessageId);
      expect(page.messages.filter((m) => m.threadTs === root.platformMessageId)).toHaveLength(want.length);
    }
    expect(page.messages.map((m) => m.platformMessageId)).toEqual(byTs(page.messages).map((m) => m.platformMessageId));
  });

  it('a 429 mid-paging is waited out (Retry-After) and paging completes with the same events', async () => {
    emu.fault({ match: 'conversations.replies', kind: 'ratelimit', retryAfter: 1, skip: 2 });
    emu.fault({ match: 'conversations.history', kind: 'status', status: 503 });
    const logged: string[] = [];
    const t0 = Date.now();
    const { messages } = await pageAll(client({ log: (e: { code?: string }) => logged.push(e.code ?? '') }), HELP, 5);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(logged).toEqual(['PLATFORM_ERROR', 'RATE_LIMIT']);
    expect(emu.requests.filter((r) => r.status === 429)).not.toHaveLength(0);
    expect(byTs(messages)).toEqual(byTs(asSynced(plan.messages.filter((m) => m.channelId === HELP))));
  });

  it('a Retry-After longer than maxRetryAfterMs is not waited: RATE_LIMIT with retryAfter', async () => {
    emu.fault({ match: 'conversations.history', kind: 'ratelimit', retryAfter: 300 });
    const err = await client({ maxRetryAfterMs: 1000 })
      .fetchMessages(HELP, { limit: 5 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ code: 'RATE_LIMIT', retriable: true, retryAfter: 300 });
  });

  it('an abort interrupts a Retry-After wait', async () => {
    emu.fault({ match: 'conversations.history', kind: 'ratelimit', retryAfter: 30 });
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 100);
    const t0 = Date.now();
    await expect(client().fetchMessages(HELP, { limit: 5, signal: ctl.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(Date.now() - t0).toBeLessThan(3000);
    emu.clearFaults();
  });

  it('new messages and a late thread reply after a first pass: fetchMessages picks up the new, fetchReplies the late reply', async () => {
    const c = client();
    const first = await pageAll(c, HELP, 50);
    const again = await c.fetchMessages(HELP, { after: first.cursor, limit: 50 });
    expect(again).toEqual({ messages: [], cursor: first.cursor, hasMore: false });

    const root = first.messages.find((m) => m.threadTs === m.platformMessageId)!;
    const knownReplies = first.messages.filter((m) => m.threadTs === root.platformMessageId && m !== root);
    const lastKnown = byTs(knownReplies).at(-1)!.platformMessageId;
    const newTop = emu.postMessage(HELP, { user: 'U0ATLASBOT', text: 'a new question <@U0ATLASBOT>' });
    const late = emu.postMessage(HELP, {
      user: 'U0ATLASBOT',
      text: 'a late answer',
      thread_ts: root.platformMessageId,
    });

    const next = await c.fetchMessages(HELP, { after: first.cursor, limit: 50 });
    expect(next.messages.map((m) => m.platformMessageId)).toEqual([newTop]);
    expect(next.cursor).toBe(newTop);

    const replies = await c.fetchReplies(HELP, root.platformMessageId, { after: lastKnown, limit: 100 });
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({
      platformMessageId: late,
      text: 'a late answer',
      threadTs: root.platformMessageId,
      source: 'sync',
      permalink: `https://getolake.slack.com/archives/${HELP}/p${late.replace('.', '')}?thread_ts=${root.platformMessageId}&cid=${HELP}`,
    });
    expect(await c.fetchReplies(HELP, root.platformMessageId, { after: late, limit: 100 })).toEqual([]);
    expect(await c.fetchReplies(HELP, '1000000000.000001', { limit: 100 })).toEqual([]); // thread_not_found
    emu.deleteMessage(HELP, late);
    emu.deleteMessage(HELP, newTop);
  });

  it('not_in_channel and an unknown channel → CHANNEL_NOT_FOUND; a revoked token → AUTH_ERROR, never with the token', async () => {
    emu.setMember(HELP, false);
    await expect(client().fetchMessages(HELP, { limit: 5 })).rejects.toMatchObject({
      code: 'CHANNEL_NOT_FOUND',
      opts: { platformCode: 'not_in_channel' },
    });
    emu.setMember(HELP, true);
    await expect(client().fetchMessages('C000NOPE', { limit: 5 })).rejects.toMatchObject({ code: 'CHANNEL_NOT_FOUND' });
    const token = 'xoxb-fetch-revoked-secretpart';
    emu.setToken(token, { state: 'token_revoked' });
    const err = await platformClient(
      { platform: 'platform_a', bot_token: token, signing_secret: 's' },
      { slackApiUrl: emu.url, ...FAST },
    )
      .fetchMessages(HELP, { limit: 5 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AUTH_ERROR' });
    expect(`${(err as Error).message} ${(err as Error).stack} ${JSON.stringify(err)}`).not.toContain(token);
  });
});

describe('Slack client: the Clojurians export (82 channels) through the emulator', () => {
  const CLOJURIANS = path.resolve(import.meta.dirname, '../../../../../shared/data/slack-clojurians-2018-02/export');

  it('every channel pages to the importer events, except replies whose thread root predates the export', async () => {
    const [emu, plan] = await Promise.all([SlackEmulator.start(CLOJURIANS), planImport(CLOJURIANS)]);
    try {
      const c = platformClient(
        { platform: 'platform_a', bot_token: emu.token, signing_secret: 's' },
        { slackApiUrl: emu.url, ...FAST },
      );
      let orphans = 0;
      for (const ch of plan.channels) {
        const { messages } = await pageAll(c, ch.channelId, 200);
        const want = plan.messages.filter((m) => m.channelId === ch.channelId);
        const ids = new Set(want.map((m) => m.platformMessageId));
        // The regrouped export starts on 2018-02-01: a reply to an older root has no root here, so neither history
        // nor conversations.replies can reach it (on Slack the root exists and brings it).
        const reachable = want.filter(
          (m) =>
            m.threadTs === null ||
            m.threadTs === m.platformMessageId ||
            ids.has(m.threadTs) ||
            m.subtype === 'thread_broadcast',
        );
        orphans += want.length - reachable.length;
        expect(byTs(messages)).toEqual(byTs(asSynced(reachable)));
      }
      expect(orphans).toBe(20);
    } finally {
      await emu.close();
    }
  });
});
