import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageIngested, messageUuid } from '@atlas/core';
import { describe, expect, it } from 'vitest';
import { detectFormat, parseDiscordExport, planImport } from './index.js';

const DIR = path.resolve(import.meta.dirname, '../../../../shared/data/discord-ethglobal');
const FILE = path.join(DIR, 'ETHGlobal - agentic-ethereum-chat [1319401418532065280].json');
const GUILD = '554623348622098432';
const CHANNEL = '1319401418532065280';

interface RawMsg {
  id: string;
  type: string;
  timestamp: string;
  reference?: { messageId: string | null; channelId: string };
  [k: string]: unknown;
}
const raw = JSON.parse(readFileSync(FILE, 'utf8')) as { messages: RawMsg[] };

/** Independent reply-chain root: follow Reply references while the target is in the export. */
function expectedRoot(id: string): string {
  const byId = new Map(raw.messages.map((m) => [m.id, m]));
  let cur = id;
  for (let i = 0; i < 1000; i++) {
    const m = byId.get(cur);
    const next = m?.type === 'Reply' ? m.reference?.messageId : undefined;
    if (!next) return cur;
    cur = next;
  }
  return cur;
}

describe('DiscordChatExporter JSON: ethglobal (520 messages)', async () => {
  const plan = await planImport(DIR);

  it('detects the format for the directory and the file alike', async () => {
    expect(await detectFormat(DIR)).toBe('platform_b_export');
    expect(await detectFormat(FILE)).toBe('platform_b_export');
    const fromFile = await parseDiscordExport(FILE);
    expect(fromFile.messages).toEqual(plan.messages);
    expect(fromFile.source).toBe(FILE);
  });

  it('keeps Default and Reply, skips ThreadCreated', () => {
    expect(plan.format).toBe('platform_b_export');
    expect(plan.filesRead).toBe(1);
    expect(plan.messages).toHaveLength(518);
    expect(plan.messages.filter((m) => m.subtype === null)).toHaveLength(295);
    expect(plan.messages.filter((m) => m.subtype === 'Reply')).toHaveLength(223);
    expect(plan.skipped).toEqual({ 'type:ThreadCreated': 2 });
    expect(plan.perChannel).toEqual({ [CHANNEL]: { name: '👾agentic-ethereum-chat', kept: 518, skipped: 2 } });
    expect(plan.channels).toEqual([
      {
        platform: 'platform_b',
        workspaceId: GUILD,
        workspaceName: 'ETHGlobal',
        channelId: CHANNEL,
        name: '👾agentic-ethereum-chat',
        isPrivate: false,
        memberCount: new Set(plan.messages.map((m) => m.author.id)).size,
        topic: null,
        createdAt: '2024-12-19T20:30:11.471Z',
        source: 'import',
      },
    ]);
  });

  it('maps every message to a valid MessageIngested with UTC timestamps and permalinks', () => {
    for (const m of plan.messages) {
      expect(() => MessageIngested.parse(m)).not.toThrow();
      expect(m.messageId).toBe(messageUuid('platform_b', CHANNEL, m.platformMessageId));
      expect(m.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(m.permalink).toBe(`https://discord.com/channels/${GUILD}/${CHANNEL}/${m.platformMessageId}`);
    }
    const ts = plan.messages.map((m) => m.timestamp);
    expect([...ts].sort()).toEqual(ts);
  });

  it('points replies at the message replied to and at their chain root', () => {
    const replies = plan.messages.filter((m) => m.subtype === 'Reply');
    for (const r of replies) {
      const src = raw.messages.find((x) => x.id === r.platformMessageId)!;
      expect(r.replyToId).toBe(src.reference!.messageId);
      expect(r.threadTs).toBe(expectedRoot(r.replyToId!));
    }
    const chained = replies.filter((r) => r.threadTs !== r.replyToId);
    expect(chained.length).toBeGreaterThan(0);
    const outside = plan.messages.find((m) => m.replyToId === '1332690239591940096')!;
    expect(outside.threadTs).toBe('1332690239591940096');
    const forwards = plan.messages.filter((m) => m.subtype === null);
    expect(forwards.every((m) => m.replyToId === null && m.threadTs === null)).toBe(true);
  });

  it('maps authors, mentions, reactions and attachments', () => {
    const m = plan.messages.find((x) => x.platformMessageId === '1326918837471412235')!;
    expect(m.author).toEqual({ id: '389910152414756864', name: '0xUlascan', isBot: false });
    expect(m.mentions).toEqual([{ id: '789135170237628436', name: 'Pascal | ETHGlobal' }]);
    expect(m.reactions).toEqual([{ emoji: '🎉', count: 2, users: ['nopsl3d', '0xhirugohan'] }]);
    expect(plan.messages.filter((x) => x.reactions.length > 0)).toHaveLength(183);
    const banner = plan.messages.find((x) => x.platformMessageId === '1322667734953099307')!;
    expect(banner.attachments[0]).toMatchObject({
      id: '1322667734823211038',
      name: 'Agentic_Ethereum_Banner.png',
      size: 1502807,
      mimeType: null,
      mediaType: 'image',
    });
    const all = plan.messages.flatMap((x) => x.attachments);
    expect(all).toHaveLength(23);
    expect(all.filter((a) => a.mediaType === 'image')).toHaveLength(19);
    expect(all.filter((a) => a.mediaType === null)).toHaveLength(4);
    expect(plan.messages.every((x) => !x.author.isBot)).toBe(true);
  });

  it('is deterministic across runs', async () => {
    const again = await planImport(DIR);
    expect(again.messages.map((m) => [m.messageId, m.contentHash])).toEqual(
      plan.messages.map((m) => [m.messageId, m.contentHash]),
    );
  });
});

describe('DiscordChatExporter JSON: synthetic cases', () => {
  const author = (id: string, name: string, isBot = false) => ({ id, name, nickname: null, isBot });
  const msg = (id: string, type: string, extra: Record<string, unknown> = {}) => ({
    id,
    type,
    timestamp: `2025-01-01T1${id.slice(-1)}:00:00+02:00`,
    timestampEdited: null,
    content: `message ${id}`,
    author: author('900000000000000001', 'helperbot', type === 'Default'),
    attachments: [],
    reactions: [],
    mentions: [],
    ...extra,
  });
  const ref = (messageId: string) => ({ reference: { messageId, channelId: '10', guildId: '0' } });

  it('flags bots, follows chains, normalises offsets, merges partitions and handles DMs', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'atlas-dce-'));
    const head = {
      guild: { id: '0', name: 'Direct Messages' },
      channel: { id: '10', type: 'DirectTextChat', name: 'dm' },
    };
    const part1 = {
      ...head,
      messages: [msg('1', 'Default'), msg('2', 'Reply', ref('1')), msg('3', 'Reply', ref('2'))],
    };
    const part2 = {
      ...head,
      messages: [msg('3', 'Reply', ref('2')), msg('4', 'Reply', ref('99')), msg('5', 'RecipientAdd'), msg('6', '20')],
    };
    writeFileSync(path.join(dir, 'dm [10].json'), JSON.stringify(part1));
    writeFileSync(path.join(dir, 'dm [10] [part 2].json'), JSON.stringify(part2));
    const plan = await planImport(dir);
    expect(plan.filesRead).toBe(2);
    expect(plan.messages.map((m) => [m.platformMessageId, m.replyToId, m.threadTs, m.subtype])).toEqual([
      ['1', null, null, null],
      ['2', '1', '1', 'Reply'],
      ['3', '2', '1', 'Reply'],
      ['4', '99', '99', 'Reply'],
      ['6', null, null, 'ChatInputCommand'],
    ]);
    expect(plan.skipped).toEqual({ duplicate_id: 1, 'type:RecipientAdd': 1 });
    expect(plan.messages[0]!.author).toEqual({ id: '900000000000000001', name: 'helperbot', isBot: true });
    expect(plan.messages[0]!.timestamp).toBe('2025-01-01T09:00:00.000Z');
    expect(plan.messages[0]!.permalink).toBe('https://discord.com/channels/@me/10/1');
    expect(plan.channels[0]!.isPrivate).toBe(true);
  });
});
