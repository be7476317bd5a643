/**
 * Minimal export readers for tests and scripts of this package only (not exported from index.ts): they map
 * Slack export day files and DiscordChatExporter JSON to MessageIngested plus the ThreadContext the facts
 * projector would keep. The real importers live in packages/platforms.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { type MessageIngested, messageUuid, type Person, PLATFORM_A_SYSTEM_SUBTYPES } from '@atlas/core';
import { answeredQuestion, type FlowMessage } from './facts/answers.js';
import type { ExtractionInput, ThreadContext } from './facts/port.js';
import { preprocess } from './facts/preprocess.js';

/** Shared data sets, resolved from this file (packages/pipeline/src → /work/shared/data). */
export const DATA_DIR = path.resolve(import.meta.dirname, '../../../../shared/data');
export const CLOJURIANS = path.join(DATA_DIR, 'slack-clojurians-2018-02/export');
export const OLAKE = path.join(DATA_DIR, 'slack-olake/export');
export const ETHGLOBAL = path.join(
  DATA_DIR,
  'discord-ethglobal/ETHGlobal - agentic-ethereum-chat [1319401418532065280].json',
);

interface SlackUser {
  id: string;
  name?: string;
  real_name?: string;
  profile?: { display_name?: string; real_name?: string };
}
interface SlackMessage {
  ts: string;
  text?: string;
  user?: string;
  bot_id?: string;
  username?: string;
  subtype?: string;
  thread_ts?: string;
  user_profile?: { display_name?: string; real_name?: string };
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** A Slack export directory: user names and channel ids, read once. */
export class SlackExport {
  private readonly users: Map<string, string>;
  private readonly channels: Map<string, string>;

  constructor(
    readonly dir: string,
    readonly workspace: string,
  ) {
    const users = readJson<SlackUser[]>(path.join(dir, 'users.json'));
    this.users = new Map(
      users.map((u) => [u.id, u.profile?.display_name || u.profile?.real_name || u.real_name || u.name || u.id]),
    );
    const channels = readJson<Array<{ id: string; name: string }>>(path.join(dir, 'channels.json'));
    this.channels = new Map(channels.map((c) => [c.name, c.id]));
  }

  /** Channel folder names, sorted. */
  channelNames(): string[] {
    return readdirSync(this.dir)
      .filter((d) => statSync(path.join(this.dir, d)).isDirectory())
      .sort();
  }

  /** Day files (`YYYY-MM-DD`) of a channel, sorted. */
  days(channel: string): string[] {
    return readdirSync(path.join(this.dir, channel))
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -5))
      .sort();
  }

  /**
   * Extraction inputs of one channel (all days unless `days` is given), with thread roots seen so far and, for a
   * top-level message, the question it answers (as the facts projector finds them: answeredQuestion).
   */
  inputs(channel: string, days: readonly string[] = this.days(channel)): ExtractionInput[] {
    const roots = new Map<string, ThreadContext>();
    const out: ExtractionInput[] = [];
    let before: FlowMessage | undefined;
    for (const day of days) {
      for (const raw of readJson<SlackMessage[]>(path.join(this.dir, channel, `${day}.json`))) {
        const message = this.toMessage(channel, raw);
        const isReply = raw.thread_ts !== undefined && raw.thread_ts !== raw.ts;
        const thread = isReply ? (roots.get(raw.thread_ts!) ?? null) : null;
        out.push({ message, thread, answers: thread ? null : answeredQuestion(message, before) });
        if (!isReply && message.text.trim() && !(message.subtype && PLATFORM_A_SYSTEM_SUBTYPES.has(message.subtype))) {
          before = flowMessage(message);
        }
        if (!isReply) {
          roots.set(raw.ts, {
            rootText: preprocess(message).text,
            rootAuthorName: message.author.name,
            rootId: raw.ts,
          });
        }
      }
    }
    return out;
  }

  private toMessage(channel: string, m: SlackMessage): MessageIngested {
    const channelId = this.channels.get(channel) ?? channel;
    const text = m.text ?? '';
    const mentions: Person[] = [
      ...new Set([...text.matchAll(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g)].map((x) => x[1]!)),
    ].map((id) => ({ id, name: this.users.get(id) ?? id }));
    const userId = m.user ?? m.bot_id ?? 'unknown';
    const name = (m.user && this.users.get(m.user)) || m.user_profile?.display_name || m.username || userId;
    return {
      messageId: messageUuid('platform_a', channelId, m.ts),
      platform: 'platform_a',
      workspaceId: this.workspace,
      channelId,
      channelName: channel,
      platformMessageId: m.ts,
      text,
      author: { id: userId, name, isBot: m.bot_id !== undefined || m.subtype === 'bot_message' },
      timestamp: new Date(Number(m.ts) * 1000).toISOString(),
      threadTs: m.thread_ts ?? null,
      replyToId: null,
      subtype: m.subtype ?? null,
      reactions: [],
      attachments: [],
      mentions,
      editedAt: null,
      permalink: `https://${this.workspace}.slack.com/archives/${channelId}/p${m.ts.replace('.', '')}`,
      contentHash: sha256(text),
      source: 'import',
    };
  }
}

interface DceMessage {
  id: string;
  type: string;
  timestamp: string;
  content: string;
  author: { id: string; name: string; nickname?: string; isBot: boolean };
  mentions: Array<{ id: string; name: string; nickname?: string }>;
  reference?: { messageId: string };
}

/** A member's nickname without a ` | Org` suffix, else the user name. */
const displayName = (p: { name: string; nickname?: string }): string => p.nickname?.split(' | ')[0]?.trim() || p.name;

/** A message as the facts projector keeps it in the channel flow (preprocessed text, at most 400 characters). */
export const flowMessage = (m: MessageIngested): FlowMessage => ({
  messageId: m.platformMessageId,
  messageTs: m.timestamp,
  text: preprocess(m).text.slice(0, 400),
  authorName: m.author.name,
});

/**
 * Extraction inputs of a DiscordChatExporter JSON file; a reply's context is the message it replies to, another
 * message's the question it answers (answeredQuestion).
 */
export const discordInputs = (file: string): ExtractionInput[] => {
  const dce = readJson<{ guild: { id: string }; channel: { id: string; name: string }; messages: DceMessage[] }>(file);
  const byId = new Map<string, { message: MessageIngested; root: string }>();
  let before: FlowMessage | undefined;
  return dce.messages.map((m) => {
    const parent = m.reference ? byId.get(m.reference.messageId) : undefined;
    const message: MessageIngested = {
      messageId: messageUuid('platform_b', dce.channel.id, m.id),
      platform: 'platform_b',
      workspaceId: dce.guild.id,
      channelId: dce.channel.id,
      channelName: dce.channel.name,
      platformMessageId: m.id,
      text: m.content,
      author: { id: m.author.id, name: displayName(m.author), isBot: m.author.isBot },
      timestamp: new Date(m.timestamp).toISOString(),
      threadTs: m.reference ? (parent?.root ?? m.reference.messageId) : null,
      replyToId: m.reference?.messageId ?? null,
      subtype: m.type === 'Default' || m.type === 'Reply' ? null : m.type,
      reactions: [],
      attachments: [],
      mentions: m.mentions.map((p) => ({ id: p.id, name: displayName(p) })),
      editedAt: null,
      permalink: `https://discord.com/channels/${dce.guild.id}/${dce.channel.id}/${m.id}`,
      contentHash: sha256(m.content),
      source: 'import',
    };
    byId.set(m.id, { message, root: parent?.root ?? m.reference?.messageId ?? m.id });
    const thread: ThreadContext | null = parent
      ? {
          rootText: preprocess(parent.message).text,
          rootAuthorName: parent.message.author.name,
          rootId: m.reference!.messageId,
        }
      : null;
    const answers = thread ? null : answeredQuestion(message, before);
    if (message.threadTs === null && message.text.trim()) before = flowMessage(message);
    return { message, thread, answers };
  });
};
