import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MessageIngested, messageUuid } from '@atlas/core';
import { describe, expect, it } from 'vitest';
import { detectFormat, type ImportPlan, parseSlackExport, planImport } from './index.js';

const DATA = path.resolve(import.meta.dirname, '../../../../shared/data');
const CLOJURIANS = path.join(DATA, 'slack-clojurians-2018-02/export');
const OLAKE = path.join(DATA, 'slack-olake/export');

type Raw = Record<string, unknown> & { ts: string; subtype?: string; hidden?: boolean; text?: string };

/** Raw messages of one channel folder, read independently of the importer. */
const rawChannel = (root: string, name: string): Raw[] =>
  readdirSync(path.join(root, name))
    .filter((f) => f.endsWith('.json'))
    .flatMap((f) => JSON.parse(readFileSync(path.join(root, name, f), 'utf8')) as Raw[]);

/** The documented rule, written out again: plain + five content subtypes kept, everything else here skipped. */
const KEEP = ['bot_message', 'file_share', 'thread_broadcast', 'me_message', 'file_comment'];
const keptByRule = (msgs: Raw[]): Raw[] => msgs.filter((m) => m.subtype === undefined || KEEP.includes(m.subtype));

const users = (root: string): Map<string, string> => {
  const list = JSON.parse(readFileSync(path.join(root, 'users.json'), 'utf8')) as {
    id: string;
    name: string;
    real_name?: string;
    profile?: { display_name?: string; real_name?: string };
  }[];
  return new Map(
    list.map((u) => [u.id, u.profile?.display_name || u.profile?.real_name || u.real_name || u.name || u.id]),
  );
};

const byChannelName = (plan: ImportPlan, name: string) => {
  const ch = plan.channels.find((c) => c.name === name)!;
  return plan.messages.filter((m) => m.channelId === ch.channelId);
};

describe('Slack export: clojurians (82 channels, 8,860 messages)', async () => {
  const started = performance.now();
  const plan = await planImport(CLOJURIANS);
  const elapsedMs = performance.now() - started;

  it('detects the format and plans well under 2 s', async () => {
    expect(await detectFormat(CLOJURIANS)).toBe('platform_a_export');
    expect(plan.format).toBe('platform_a_export');
    expect(plan.source).toBe(CLOJURIANS);
    expect(elapsedMs).toBeLessThan(2000);
    expect(plan.filesRead).toBe(446 + 2);
  });

  it('keeps 7,896 messages by the subtype rule and counts the skipped ones', () => {
    expect(plan.channels).toHaveLength(82);
    expect(plan.messages).toHaveLength(7896);
    const bySubtype: Record<string, number> = {};
    for (const m of plan.messages) bySubtype[m.subtype ?? 'plain'] = (bySubtype[m.subtype ?? 'plain'] ?? 0) + 1;
    expect(bySubtype).toEqual({
      plain: 7737,
      bot_message: 65,
      file_share: 59,
      thread_broadcast: 15,
      me_message: 11,
      file_comment: 9,
    });
    expect(plan.skipped).toEqual({
      'subtype:channel_join': 873,
      'subtype:channel_leave': 87,
      'subtype:channel_topic': 2,
      'subtype:pinned_item': 1,
      'subtype:tombstone': 1,
    });
    const totals = Object.values(plan.perChannel).reduce((a, c) => [a[0]! + c.kept, a[1]! + c.skipped], [0, 0]);
    expect(totals).toEqual([7896, 964]);
  });

  it.each(['beginners', 'clojurescript', 'datomic', 'off-topic'])('channel %s matches an independent count', (name) => {
    const raw = rawChannel(CLOJURIANS, name);
    const kept = keptByRule(raw);
    const ch = plan.channels.find((c) => c.name === name)!;
    expect(plan.perChannel[ch.channelId]).toEqual({ name, kept: kept.length, skipped: raw.length - kept.length });
    const ours = byChannelName(plan, name);
    expect(ours.map((m) => m.platformMessageId)).toEqual(kept.map((m) => m.ts).sort((a, b) => Number(a) - Number(b)));
  });

  it('validates every message and orders them oldest first within a channel', () => {
    let prev: MessageIngested | undefined;
    for (const m of plan.messages) {
      expect(() => MessageIngested.parse(m)).not.toThrow();
      if (prev?.channelId === m.channelId) expect(m.timestamp >= prev.timestamp).toBe(true);
      prev = m;
    }
    const first = plan.messages[0]!;
    expect(first.messageId).toBe(messageUuid('platform_a', first.channelId, first.platformMessageId));
    expect(first.workspaceId).toBe('T03RZGPFR');
    expect(plan.channels[0]!.workspaceName).toBe('clojurians');
  });

  it('carries thread_ts on replies and puts it into their permalinks', () => {
    const replies = plan.messages.filter((m) => m.threadTs !== null && m.threadTs !== m.platformMessageId);
    const rawReplies = plan.channels.flatMap((c) =>
      keptByRule(rawChannel(CLOJURIANS, c.name)).filter((m) => m.thread_ts && m.thread_ts !== m.ts),
    );
    expect(replies.length).toBe(rawReplies.length);
    expect(replies.length).toBeGreaterThan(600);
    for (const r of replies) {
      expect(r.permalink).toBe(
        `https://clojurians.slack.com/archives/${r.channelId}/p${r.platformMessageId.replace('.', '')}?thread_ts=${r.threadTs}&cid=${r.channelId}`,
      );
    }
    const parent = plan.messages.find((m) => m.threadTs === m.platformMessageId)!;
    expect(parent.permalink).not.toContain('thread_ts');
  });

  it('resolves <@U…> mentions to users.json names', () => {
    const names = users(CLOJURIANS);
    let checked = 0;
    for (const m of plan.messages) {
      const ids = [...new Set([...m.text.matchAll(/<@([A-Z0-9]+)(?:\|[^>]*)?>/g)].map((x) => x[1]))];
      expect(m.mentions.map((p) => p.id)).toEqual(ids);
      for (const p of m.mentions) {
        if (names.has(p.id)) {
          expect(p.name).toBe(names.get(p.id));
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    const thanks = plan.messages.find((m) => m.platformMessageId === '1517886345.000172')!;
    expect(thanks.mentions).toEqual([{ id: 'U662GKS3F', name: 'nenadalm' }]);
  });

  it('flags bot messages and maps old-style files', () => {
    const bots = plan.messages.filter((m) => m.subtype === 'bot_message');
    expect(bots).toHaveLength(65);
    expect(bots.every((m) => m.author.isBot)).toBe(true);
    expect(bots.some((m) => m.author.name === 'clojurebot')).toBe(true);
    expect(plan.messages.filter((m) => m.author.isBot)).toHaveLength(65);
    const shares = plan.messages.filter((m) => m.subtype === 'file_share' || m.subtype === 'file_comment');
    expect(shares.every((m) => m.attachments.some((a) => a.id.startsWith('F') && a.mediaType !== 'link'))).toBe(true);
    const comment = plan.messages.find((m) => m.subtype === 'file_comment')!;
    expect(comment.author.id).toMatch(/^U/);
  });

  it('is deterministic: a re-run gives identical ids and hashes', async () => {
    const again = await parseSlackExport(CLOJURIANS);
    expect(again.messages.map((m) => [m.messageId, m.contentHash])).toEqual(
      plan.messages.map((m) => [m.messageId, m.contentHash]),
    );
    expect(again).toEqual(plan);
  });
});

describe('Slack export: olake (native slackdump)', async () => {
  const plan = await planImport(OLAKE);

  it('keeps 302 of 304 messages (bot_add and bot_remove are system messages)', () => {
    expect(plan.channels.map((c) => c.name).sort()).toEqual([
      'announcements',
      'contributing-to-olake',
      'discussions',
      'general',
      'help',
    ]);
    expect(plan.messages).toHaveLength(302);
    expect(plan.skipped).toEqual({ 'subtype:bot_add': 1, 'subtype:bot_remove': 1 });
    const help = plan.channels.find((c) => c.name === 'help')!;
    const raw = rawChannel(OLAKE, 'help');
    expect(plan.perChannel[help.channelId]!.kept + plan.perChannel[help.channelId]!.skipped).toBe(raw.length);
    expect(help.memberCount).toBe(648);
    expect(help.workspaceName).toBe('getolake');
    expect(help.workspaceId).toBe('T0820LGJGRF');
  });

  it('maps reactions with names, counts and emoji', () => {
    const withReactions = plan.messages.filter((m) => m.reactions.length > 0);
    expect(withReactions).toHaveLength(94);
    const release = plan.messages.find((m) => m.platformMessageId === '1778852517.139209')!;
    const names = users(OLAKE);
    const ids = ['U0A7G7AK6BC', 'U0B2X1AMED9', 'U0A9LUUNP43', 'U0820LSJZRP', 'U0817E9CGRM'];
    expect(release.reactions).toEqual([{ emoji: '+1', count: 5, users: ids.map((id) => names.get(id)) }]);
    expect(release.reactions[0]!.users[0]).toBe('saptarshi-datazip');
  });

  it('maps files, link unfurls and edits', () => {
    expect(plan.messages.filter((m) => m.attachments.some((a) => a.mediaType !== 'link'))).toHaveLength(42);
    const img = plan.messages.find((m) => m.platformMessageId === '1779109572.586619')!;
    expect(img.text).toBe('');
    expect(img.attachments[0]).toMatchObject({ id: 'F0B4FD14X4N', name: 'image.png', mediaType: 'image' });
    expect(img.attachments[0]!.url).toMatch(/^https:\/\/files\.slack\.com\//);
    const links = plan.messages.find((m) => m.platformMessageId === '1783631450.060949')!;
    expect(links.attachments.map((a) => a.mediaType)).toEqual(['link', 'link']);
    expect(links.attachments[0]!.url).toBe(
      'https://olake.io/docs/connectors/postgres/setup/local/#4-create-postgres-source-in-olake-ui',
    );
    const edited = plan.messages.find((m) => m.platformMessageId === '1782113699.204549')!;
    expect(edited.editedAt).toBe('2026-06-23T09:22:11.000Z');
    expect(plan.messages.filter((m) => m.editedAt !== null)).toHaveLength(49);
  });

  it('threads: replies link to their parent with thread_ts', () => {
    const replies = plan.messages.filter((m) => m.threadTs !== null && m.threadTs !== m.platformMessageId);
    expect(replies.length).toBe(236);
    const r = replies[0]!;
    expect(r.permalink).toContain(`https://getolake.slack.com/archives/${r.channelId}/p`);
    expect(r.permalink).toContain(`?thread_ts=${r.threadTs}&cid=${r.channelId}`);
  });

  it('flags app messages (bot_id / bot_profile) as bots', () => {
    const poll = plan.messages.find((m) => m.platformMessageId === '1785236357.845639')!;
    expect(poll.author).toEqual({ id: 'U0BM3Q9KG9W', name: 'Simple Poll', isBot: true });
  });

  it('uses opts.workspaceUrl for permalinks when given', async () => {
    const other = await parseSlackExport(OLAKE, { workspaceUrl: 'https://acme.slack.com/' });
    expect(other.messages[0]!.permalink).toMatch(/^https:\/\/acme\.slack\.com\/archives\//);
    expect(other.channels[0]!.workspaceName).toBe('acme');
  });
});
