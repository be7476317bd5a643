import path from 'node:path';
import type { MessageIngested } from '@atlas/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ImportPlan, planImport } from '../index.js';
import { DiscordEmulator } from './discord-emulator.test-support.js';
import { type PlatformClient, platformClient } from './index.js';

const ETHGLOBAL = path.resolve(import.meta.dirname, '../../../../../shared/data/discord-ethglobal');
const FAST = { maxRetries: 3, backoffMs: 5, maxBackoffMs: 20, timeoutMs: 5000 };
const CHANNEL = '1319401418532065280';

const byId = (ms: MessageIngested[]) =>
  [...ms].sort((a, b) => (BigInt(a.platformMessageId) < BigInt(b.platformMessageId) ? -1 : 1));
const asSynced = (ms: MessageIngested[]) => ms.map((m) => ({ ...m, source: 'sync' as const }));

async function pageAll(client: PlatformClient, limit: number, after: string | null = null) {
  const messages: MessageIngested[] = [];
  let pages = 0;
  for (;;) {
    const page = await client.fetchMessages(CHANNEL, { after, limit });
    const ids = page.messages.map((m) => BigInt(m.platformMessageId));
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))); // oldest first
    messages.push(...page.messages);
    after = page.cursor;
    pages += 1;
    if (!page.hasMore) return { messages, cursor: after, pages };
  }
}

describe('Discord client: fetching history from the emulator (ethglobal export)', () => {
  let emu: DiscordEmulator;
  let plan: ImportPlan;
  const client = (extra = {}) =>
    platformClient(
      { platform: 'platform_b', bot_token: emu.token, guild_id: emu.guild.id },
      { discordApiUrl: emu.url, ...FAST, ...extra },
    );
  beforeAll(async () => {
    [emu, plan] = await Promise.all([DiscordEmulator.start(ETHGLOBAL), planImport(ETHGLOBAL)]);
  });
  afterAll(() => emu.close());

  it('paging the channel gives exactly the importer events: replies, chains, reactions with users, edits', async () => {
    const { messages, pages } = await pageAll(client(), 100);
    expect(pages).toBe(6); // 520 messages, 100 a page
    expect(messages).toHaveLength(518); // 2 ThreadCreated skipped, as by the importer
    expect(byId(messages)).toEqual(byId(asSynced(plan.messages)));
    expect(messages.some((m) => m.reactions.some((r) => r.users.length > 0))).toBe(true);
  });

  it('a 429 mid-paging is waited out (retry_after) and paging completes with the same events', async () => {
    emu.fault({ match: /\/messages$/, kind: 'ratelimit', retryAfter: 1, skip: 2 });
    emu.fault({ match: /\/reactions\//, kind: 'status', status: 500, skip: 10 });
    const codes: string[] = [];
    const t0 = Date.now();
    const { messages } = await pageAll(client({ log: (e: { code?: string }) => codes.push(e.code ?? '') }), 100);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(codes).toContain('RATE_LIMIT');
    expect(codes).toContain('PLATFORM_ERROR');
    expect(byId(messages)).toEqual(byId(asSynced(plan.messages)));
  });

  it('a new reply after a first pass, read by a fresh client, follows its chain through GET message', async () => {
    const first = await pageAll(client(), 100);
    const target = plan.messages.find((m) => m.replyToId !== null && m.threadTs !== m.replyToId)!; // a reply to a reply
    const id = emu.postMessage(CHANNEL, {
      author: { id: '1300000000000000009', username: 'late_user', global_name: 'Late User' },
      content: 'a late reply',
      replyTo: target.platformMessageId,
    });
    const fresh = client();
    const before = emu.requests.length;
    const next = await fresh.fetchMessages(CHANNEL, { after: first.cursor, limit: 100 });
    expect(next.messages).toHaveLength(1);
    expect(next.messages[0]).toMatchObject({
      platformMessageId: id,
      text: 'a late reply',
      replyToId: target.platformMessageId,
      threadTs: target.threadTs,
      author: { id: '1300000000000000009', name: 'Late User', isBot: false },
      permalink: `https://discord.com/channels/${emu.guild.id}/${CHANNEL}/${id}`,
      source: 'sync',
    });
    expect(emu.requests.slice(before).some((r) => r.call === `/channels/${CHANNEL}/messages/${target.replyToId}`)).toBe(
      true,
    );
    expect(await fresh.fetchReplies(CHANNEL, id, { limit: 10 })).toEqual([]);
    emu.deleteMessage(CHANNEL, id);
  });

  it('no VIEW_CHANNEL → CHANNEL_NOT_FOUND (403, 50001); an unknown channel → CHANNEL_NOT_FOUND (10003)', async () => {
    emu.everyonePermissions = 0n;
    emu.botPermissions = 0n;
    await expect(client().fetchMessages(CHANNEL, { limit: 10 })).rejects.toMatchObject({
      code: 'CHANNEL_NOT_FOUND',
      opts: { platformCode: '50001' },
    });
    emu.everyonePermissions = 1n << 10n; // VIEW_CHANNEL without READ_MESSAGE_HISTORY: an empty history
    expect(await client().fetchMessages(CHANNEL, { limit: 10 })).toEqual({
      messages: [],
      cursor: null,
      hasMore: false,
    });
    emu.everyonePermissions = (1n << 10n) | (1n << 16n);
    await expect(client().fetchMessages('1319401418532065999', { limit: 10 })).rejects.toMatchObject({
      code: 'CHANNEL_NOT_FOUND',
      opts: { platformCode: '10003' },
    });
  });

  it('a wrong token → AUTH_ERROR without the token in it', async () => {
    const token = 'MTIz.fetch-wrong.secretpart';
    const err = await platformClient(
      { platform: 'platform_b', bot_token: token, guild_id: emu.guild.id },
      { discordApiUrl: emu.url, ...FAST },
    )
      .fetchMessages(CHANNEL, { limit: 10 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AUTH_ERROR', retriable: false });
    expect(`${(err as Error).message} ${(err as Error).stack} ${JSON.stringify(err)}`).not.toContain(token);
  });

  it('postMessage posts the bot’s message (mentions never ping) and a later sync reads it; an unknown channel is CHANNEL_NOT_FOUND', async () => {
    const text =
      '**Digest of #general**\n\n*Decisions made*\n- ship v2 [1]\n\n**Sources:**\n[1] [alice, 2024-12-20](<https://x>)';
    const before = await pageAll(client(), 100);
    const { message_id } = await client().postMessage(CHANNEL, text);
    const post = emu.requests.filter((r) => r.method === 'POST').at(-1)!;
    expect(post.call).toBe(`/channels/${CHANNEL}/messages`);
    expect(post.params.content).toBe(text);
    expect(JSON.parse(post.params.allowed_mentions!)).toEqual({ parse: [] });
    const after = await pageAll(client(), 100, before.cursor);
    expect(after.messages.map((m) => [m.platformMessageId, m.text, m.author.isBot])).toEqual([
      [message_id, text, true],
    ]);
    await expect(client().postMessage('1319401418532065999', text)).rejects.toMatchObject({
      code: 'CHANNEL_NOT_FOUND',
    });
  });
});
