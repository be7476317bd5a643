import { MessageIngested } from '@atlas/core';
import { describe, expect, it } from 'vitest';
import { MOCK_HISTORY_DAYS, MockPlatformClient, PlatformError, platformClient } from './index.js';

const NOW = Date.parse('2026-03-06T15:00:00Z');
const slack = (now = NOW, bot_token = 'anything') =>
  new MockPlatformClient({ platform: 'platform_a', bot_token, signing_secret: 'x' }, { now: () => now });
const discord = (now = NOW) =>
  new MockPlatformClient({ platform: 'platform_b', bot_token: 'anything', guild_id: '42' }, { now: () => now });

/** Every page of a channel, following the cursor. */
const history = async (c: MockPlatformClient, channelId: string, limit: number, after: string | null = null) => {
  const out: MessageIngested[] = [];
  let pages = 0;
  for (;;) {
    const p = await c.fetchMessages(channelId, { after, limit });
    out.push(...p.messages);
    pages += 1;
    after = p.cursor;
    if (!p.hasMore) return { messages: out, pages, cursor: after };
  }
};

describe('the mock platform (ADAPTER_MOCK)', () => {
  it('validates any credentials but the bot token `invalid`; platformClient picks it with `mock`', async () => {
    expect(await slack().validate()).toMatchObject({ valid: true, workspace: { id: 'T0MOCKNSL' } });
    expect(await slack(NOW, 'invalid').validate()).toMatchObject({
      valid: false,
      error: { code: 'INVALID_CREDENTIALS' },
    });
    expect(await discord().validate()).toMatchObject({ valid: true, scopes: ['VIEW_CHANNEL', 'READ_MESSAGE_HISTORY'] });
    const c = platformClient({ platform: 'platform_a', bot_token: 'x', signing_secret: 'y' }, { mock: true });
    expect(c).toBeInstanceOf(MockPlatformClient);
    expect((await c.listChannels()).map((ch) => ch.name)).toEqual(['engineering', 'product', 'support']);
    expect((await discord().listChannels()).map((ch) => ch.name)).toEqual(['general', 'help', 'dev', 'announcements']);
  });

  it('serves the same valid messages every time, paged oldest first, within the history window', async () => {
    const [ch] = await slack().listChannels();
    const a = await history(slack(), ch!.id, 10);
    const b = await history(slack(), ch!.id, 500);
    expect(a.pages).toBeGreaterThan(3);
    expect(a.messages.length).toBeGreaterThan(60);
    expect(new Set(a.messages.map((m) => m.messageId)).size).toBe(a.messages.length);
    expect([...a.messages].sort((x, y) => x.timestamp.localeCompare(y.timestamp))).toEqual(b.messages);
    for (const m of a.messages) {
      expect(MessageIngested.safeParse(m).success).toBe(true);
      expect(m.source).toBe('sync');
      expect(Date.parse(m.timestamp)).toBeLessThanOrEqual(NOW);
      expect(Date.parse(m.timestamp)).toBeGreaterThan(NOW - (MOCK_HISTORY_DAYS + 1) * 86_400_000);
    }
    const threads = a.messages.filter((m) => m.threadTs !== null && m.threadTs !== m.platformMessageId);
    expect(threads.length).toBeGreaterThan(20);
    const mentioned = a.messages.filter((m) => m.mentions.length > 0);
    expect(mentioned[0]!.mentions[0]!.name).toMatch(/^[A-Z][a-z]+ [A-Z][a-z]+$/); // resolved to a display name
    expect(a.messages.some((m) => /we decided to/i.test(m.text))).toBe(true);
    expect(a.messages.some((m) => m.text.endsWith('?'))).toBe(true);
    expect(a.messages.some((m) => m.reactions.length > 0)).toBe(true);
  });

  it('shows new conversations and late thread replies as time passes; an incremental fetch sees only those', async () => {
    const [ch] = await slack().listChannels();
    const before = await history(slack(), ch!.id, 50);
    const later = NOW + 6 * 3_600_000;
    const next = await history(slack(later), ch!.id, 50, before.cursor);
    const known = new Set(before.messages.map((m) => m.platformMessageId));
    expect(next.messages.every((m) => !known.has(m.platformMessageId))).toBe(true);
    // Some thread of the earlier read got replies later: fetchReplies after its newest known reply finds them.
    let late = 0;
    for (const root of before.messages.filter((m) => m.threadTs === null)) {
      const replies = before.messages.filter((m) => m.threadTs === root.platformMessageId);
      const after = replies.at(-1)?.platformMessageId ?? root.platformMessageId;
      late += (await slack(later).fetchReplies(ch!.id, root.platformMessageId, { after, limit: 100 })).length;
    }
    expect(next.messages.length + late).toBeGreaterThan(0);
    expect(await discord().fetchReplies('1', '2', { limit: 10 })).toEqual([]);
  });

  it('platform_b replies point at their root; an unknown channel is CHANNEL_NOT_FOUND', async () => {
    const chans = await discord().listChannels();
    const dev = chans.find((c) => c.name === 'dev')!;
    const { messages } = await history(discord(), dev.id, 25);
    const replies = messages.filter((m) => m.replyToId !== null);
    expect(replies.length).toBeGreaterThan(10);
    const ids = new Set(messages.map((m) => m.platformMessageId));
    expect(replies.every((m) => m.threadTs === m.replyToId && ids.has(m.replyToId!))).toBe(true);
    expect(messages[0]!.permalink).toMatch(/^https:\/\/discord\.com\/channels\/\d+\/\d+\/\d+$/);
    await expect(slack().fetchMessages('C0NOPE', { limit: 10 })).rejects.toMatchObject({
      code: 'CHANNEL_NOT_FOUND',
    });
    await expect(slack().fetchMessages('C0NOPE', { limit: 10 })).rejects.toBeInstanceOf(PlatformError);
  });
});
