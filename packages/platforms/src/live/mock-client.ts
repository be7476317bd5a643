import type { MessageIngested } from '@atlas/core';
import seedrandom from 'seedrandom';
import { mapDiscordMessage } from '../discord.js';
import type { JsonObject } from '../json.js';
import type { SlackContext } from '../slack-context.js';
import { compareTs, mapSlackMessage } from '../slack-message.js';
import { DISCORD_REQUIRED_PERMISSIONS } from './discord-errors.js';
import { CAST_SIZE, type ChannelKind, generateConversation } from './mock-conversations.js';
import { SLACK_REQUIRED_SCOPES } from './slack-client.js';
import {
  type ChannelMembers,
  type ConnectionChannel,
  type FetchOptions,
  type MessagePage,
  type PlatformClient,
  type PlatformCredentials,
  PlatformError,
  type PlatformId,
  type ValidationResult,
} from './types.js';

/** The bot token the mock refuses (INVALID_CREDENTIALS), to try the error path; any other credentials validate. */
export const MOCK_INVALID_TOKEN = 'invalid';
/** Days of history the mock platform shows (older conversations are gone, as on a plan with limited history). */
export const MOCK_HISTORY_DAYS = 14;
/** Conversations start in slots of this length (ms), at most one per slot, on a fixed UTC grid. */
const SLOT_MS = 3 * 3_600_000;
const MINUTE = 60_000;
const DISCORD_EPOCH = 1_420_070_400_000n;

interface MockUser {
  id: string;
  /** Slack display name / Discord username. */
  name: string;
  /** Full name (Slack real_name, Discord nickname). */
  real: string;
}
interface MockChannel {
  id: string;
  name: string;
  kind: ChannelKind;
  topic: string;
  created_at: string;
  is_private: boolean;
}
interface MockWorkspace {
  id: string;
  name: string;
  bot: { id: string; name: string };
  users: MockUser[];
  channels: MockChannel[];
}

const PEOPLE: readonly [string, string][] = [
  ['maya', 'Maya Chen'],
  ['luis', 'Luis Ortega'],
  ['priya', 'Priya Nair'],
  ['tom', 'Tom Becker'],
  ['aisha', 'Aisha Bello'],
  ['kenji', 'Kenji Sato'],
  ['sofia', 'Sofia Rossi'],
  ['daniel', 'Daniel Kim'],
];

/** A Discord-style snowflake of a time (ms) and a per-time sequence number (< 2^22). */
const snowflake = (ms: number, seq: number): string => String(((BigInt(ms) - DISCORD_EPOCH) << 22n) + BigInt(seq));

/** The two mock workspaces: a Slack-like company workspace and a Discord-like community guild. Fixed ids. */
const WORKSPACES: Record<PlatformId, MockWorkspace> = {
  platform_a: {
    id: 'T0MOCKNSL',
    name: 'northstar-labs',
    bot: { id: 'U0MOCKBOT', name: 'atlas' },
    users: PEOPLE.map(([name, real], i) => ({ id: `U0MOCK${String(i + 1).padStart(3, '0')}`, name, real })),
    channels: [
      mockChannel('C0MOCKENG', 'engineering', 'engineering', 'Architecture, deploys and incidents'),
      mockChannel('C0MOCKPRD', 'product', 'product', 'Roadmap, customer feedback and product decisions'),
      mockChannel('C0MOCKSUP', 'support', 'support', 'Customer tickets and the on-call rotation'),
    ],
  },
  platform_b: {
    id: snowflake(Date.UTC(2024, 0, 15), 1),
    name: 'Northstar Community',
    bot: { id: snowflake(Date.UTC(2024, 0, 15), 2), name: 'atlas' },
    users: PEOPLE.map(([name, real], i) => ({ id: snowflake(Date.UTC(2024, 1, 1 + i), 3), name, real })),
    channels: [
      mockChannel(snowflake(Date.UTC(2024, 0, 16), 1), 'general', 'social', 'Say hi and hang out'),
      mockChannel(snowflake(Date.UTC(2024, 0, 16), 2), 'help', 'support', 'Ask the community for help'),
      mockChannel(snowflake(Date.UTC(2024, 0, 16), 3), 'dev', 'engineering', 'Development of the open-source SDK'),
      mockChannel(snowflake(Date.UTC(2024, 0, 16), 4), 'announcements', 'announcements', 'Releases and roadmap'),
    ],
  },
};

function mockChannel(id: string, name: string, kind: ChannelKind, topic: string): MockChannel {
  return { id, name, kind, topic, created_at: '2024-01-16T09:00:00.000Z', is_private: false };
}

/** One generated message: platform id, time, author, text with mentions rendered, thread root, reactions. */
interface MockMessage {
  id: string;
  ms: number;
  author: MockUser;
  text: string;
  mentions: MockUser[];
  /** The root's platform id for a reply, else null. */
  root: string | null;
  reactions: { emoji: string; users: MockUser[] }[];
}

/**
 * A channel's conversations whose root is in the history window (now − MOCK_HISTORY_DAYS, now], with the messages
 * already posted by `now` (later replies appear as time passes: late thread replies), oldest first. Each slot's
 * conversation is a function of (platform, channel, slot) through seedrandom, so every call agrees.
 */
const channelMessages = (platform: PlatformId, ws: MockWorkspace, ch: MockChannel, now: number): MockMessage[] => {
  const out: MockMessage[] = [];
  const first = Math.floor((now - MOCK_HISTORY_DAYS * 86_400_000) / SLOT_MS) + 1;
  for (let slot = first; slot * SLOT_MS <= now; slot++) {
    const rng = seedrandom(`${platform}:${ch.id}:${slot}`);
    const start = new Date(slot * SLOT_MS);
    const busy = start.getUTCDay() % 6 !== 0 && start.getUTCHours() >= 7 && start.getUTCHours() < 19;
    if (rng() >= (busy ? 0.8 : 0.12)) continue;
    const cast = castOf(ws.users, rng);
    let ms = slot * SLOT_MS + Math.floor(rng() * 90) * MINUTE + Math.floor(rng() * 59_000);
    let root: string | null = null;
    generateConversation(ch.kind, rng).forEach((turn, i) => {
      ms += turn.after * MINUTE + (i > 0 ? Math.floor(rng() * 50_000) : 0);
      const mentions: MockUser[] = [];
      const text = turn.text.replace(/\{@(\d)\}/g, (_, n: string) => {
        const u = cast[Number(n)]!;
        mentions.push(u);
        return platform === 'platform_a' ? `<@${u.id}>` : `@${u.real}`;
      });
      const id = platform === 'platform_a' ? slackTs(ms, slot, i) : snowflake(ms, (slot % 4096) * 64 + i);
      const reactions = (turn.reactions ?? [])
        .map((emoji) => ({
          emoji,
          users: cast.filter((u, k) => u !== cast[turn.by] && (k + i) % 2 === 0).slice(0, 1 + Math.floor(rng() * 3)),
        }))
        .filter((r) => r.users.length > 0);
      if (ms <= now)
        out.push({ id, ms, author: cast[turn.by]!, text, mentions, root: turn.reply ? root : null, reactions });
      if (i === 0) root = id;
    });
  }
  return out.sort((a, b) => a.ms - b.ms);
};

/** CAST_SIZE distinct users, drawn by rng. */
const castOf = (users: readonly MockUser[], rng: () => number): MockUser[] => {
  const pool = [...users];
  const cast: MockUser[] = [];
  while (cast.length < CAST_SIZE) cast.push(pool.splice(Math.floor(rng() * pool.length), 1)[0]!);
  return cast;
};

/** A Slack ts (`<epoch s>.<6 digits>`), unique per (slot, turn). */
const slackTs = (ms: number, slot: number, turn: number): string =>
  `${Math.floor(ms / 1000)}.${String(((slot % 9000) + 1000) * 100 + turn).padStart(6, '0')}`;

/** Platform ids in time order: Slack ts by compareTs, Discord snowflakes by length then text. */
const newer = (platform: PlatformId, a: string, b: string | null | undefined): boolean =>
  b === null || b === undefined
    ? true
    : platform === 'platform_a'
      ? compareTs(a, b) > 0
      : a.length > b.length || (a.length === b.length && a > b);

/** A message posted to the mock platform (postMessage), newest last: what a user of the mock would see appear. */
export interface MockPostedMessage {
  platform: PlatformId;
  channel_id: string;
  message_id: string;
  text: string;
  posted_at: string;
}

const posted: MockPostedMessage[] = [];

/** The messages posted to the mock platform in this process (oldest first), optionally of one channel. */
export const mockPostedMessages = (channelId?: string): MockPostedMessage[] =>
  posted.filter((m) => channelId === undefined || m.channel_id === channelId);

/** Options of the mock client. */
export interface MockClientOptions {
  /** The clock (tests); default `Date.now`. Messages posted after it are not there yet. */
  now?: () => number;
}

/**
 * The mock platform (ADAPTER_MOCK=true, docs/mock-platform.md): a generated Slack-like workspace (platform_a,
 * `northstar-labs`: #engineering, #product, #support) or Discord-like guild (platform_b, `Northstar Community`:
 * #general, #help, #dev, #announcements) with eight people talking, so a new user can try connections and sync with no
 * credentials. Any credentials validate except a bot_token of `invalid` (INVALID_CREDENTIALS). History: the last
 * MOCK_HISTORY_DAYS days on a fixed UTC grid of 3-hour slots (busier on weekdays 07-19 UTC), new conversations and
 * thread replies appearing as time passes; deterministic (seedrandom per channel and slot). Messages are raw Slack /
 * DiscordChatExporter shapes mapped by the importer's own mappers (`source: 'sync'`), so they take the sync worker's
 * ordinary path. Unknown channel: PlatformError CHANNEL_NOT_FOUND. No network.
 */
export class MockPlatformClient implements PlatformClient {
  readonly platform: PlatformId;
  private readonly ws: MockWorkspace;
  private readonly now: () => number;

  constructor(
    private readonly credentials: PlatformCredentials,
    opts: MockClientOptions = {},
  ) {
    this.platform = credentials.platform;
    this.ws = WORKSPACES[credentials.platform];
    this.now = opts.now ?? Date.now;
  }

  /** Valid for any non-empty credentials except bot_token `invalid`; the required scopes / permissions granted. */
  async validate(): Promise<ValidationResult> {
    const token = this.credentials.bot_token.trim();
    if (!token || token === MOCK_INVALID_TOKEN)
      return {
        valid: false,
        error: { code: 'INVALID_CREDENTIALS', message: 'the mock platform refuses this bot token (ADAPTER_MOCK)' },
      };
    return {
      valid: true,
      workspace: { id: this.ws.id, name: this.ws.name },
      bot: this.ws.bot,
      scopes: [...(this.platform === 'platform_a' ? SLACK_REQUIRED_SCOPES : DISCORD_REQUIRED_PERMISSIONS)],
    };
  }

  /** The workspace's channels; member_count = its eight people. */
  async listChannels(): Promise<ConnectionChannel[]> {
    return this.ws.channels.map((c) => ({
      id: c.id,
      name: c.name,
      is_private: c.is_private,
      member_count: this.ws.users.length,
      topic: c.topic,
      created_at: c.created_at,
    }));
  }

  /** See PlatformClient.listMembers: a private channel's members are the workspace's people; public: null. */
  async listMembers(channelId: string): Promise<ChannelMembers> {
    const c = this.ws.channels.find((x) => x.id === channelId);
    if (!c) throw new PlatformError('CHANNEL_NOT_FOUND', `channel '${channelId}' does not exist`, { retriable: false });
    return {
      channel_id: channelId,
      is_private: c.is_private,
      members: c.is_private ? this.ws.users.map((u) => u.id).sort() : null,
    };
  }

  /**
   * See PlatformClient.postMessage: kept in this process (mockPostedMessages), not added to the generated history.
   * Unknown channel: CHANNEL_NOT_FOUND. The id: a Slack ts or a Discord snowflake of the clock's time.
   */
  async postMessage(channelId: string, text: string): Promise<{ message_id: string }> {
    if (!this.ws.channels.some((x) => x.id === channelId))
      throw new PlatformError('CHANNEL_NOT_FOUND', `channel '${channelId}' does not exist`, { retriable: false });
    const ms = this.now();
    const n = posted.length;
    const message_id =
      this.platform === 'platform_a'
        ? `${Math.floor(ms / 1000)}.${String(n % 1_000_000).padStart(6, '0')}`
        : ((BigInt(ms - 1_420_070_400_000) << 22n) | BigInt(n % 4096)).toString();
    posted.push({
      platform: this.platform,
      channel_id: channelId,
      message_id,
      text,
      posted_at: new Date(ms).toISOString(),
    });
    return { message_id };
  }

  /** See PlatformClient.fetchMessages: top-level messages after `after`, oldest first (platform_a: with threads). */
  async fetchMessages(channelId: string, opts: FetchOptions): Promise<MessagePage> {
    const all = this.messagesOf(channelId, opts.signal);
    const limit = Math.max(1, Math.floor(opts.limit));
    const top = all.filter(
      (m) => (this.platform === 'platform_b' || m.root === null) && newer(this.platform, m.id, opts.after),
    );
    const page = top.slice(0, limit);
    const roots = new Set(page.map((m) => m.id));
    const replies = this.platform === 'platform_a' ? all.filter((m) => m.root !== null && roots.has(m.root)) : [];
    return {
      messages: this.mapped(
        channelId,
        [...page, ...replies].sort((a, b) => a.ms - b.ms),
      ),
      cursor: page.at(-1)?.id ?? opts.after ?? null,
      hasMore: top.length > page.length,
    };
  }

  /** See PlatformClient.fetchReplies: a platform_a thread's replies after `after`; platform_b: []. */
  async fetchReplies(channelId: string, threadTs: string, opts: FetchOptions): Promise<MessageIngested[]> {
    if (this.platform === 'platform_b') return [];
    const replies = this.messagesOf(channelId, opts.signal).filter(
      (m) => m.root === threadTs && newer(this.platform, m.id, opts.after),
    );
    return this.mapped(channelId, replies.slice(0, Math.max(1, Math.floor(opts.limit))));
  }

  private messagesOf(channelId: string, signal?: AbortSignal): MockMessage[] {
    if (signal?.aborted) throw signal.reason;
    const ch = this.ws.channels.find((c) => c.id === channelId);
    if (!ch)
      throw new PlatformError('CHANNEL_NOT_FOUND', `channel '${channelId}' does not exist on the mock platform`, {
        retriable: false,
      });
    return channelMessages(this.platform, this.ws, ch, this.now());
  }

  /** Raw platform shapes through the importer's mappers, `source: 'sync'`. */
  private mapped(channelId: string, messages: MockMessage[]): MessageIngested[] {
    const ch = this.ws.channels.find((c) => c.id === channelId)!;
    if (this.platform === 'platform_a') {
      const ctx: SlackContext = {
        workspaceId: this.ws.id,
        workspaceName: this.ws.name,
        baseUrl: `https://${this.ws.name}.slack.com`,
        users: new Map(this.ws.users.map((u) => [u.id, { name: u.real, isBot: false }])),
      };
      return messages.map((m) => ({ ...mapSlackMessage(slackShape(m), ch, ctx), source: 'sync' as const }));
    }
    const shaped = messages.map(discordShape);
    const byId = new Map(shaped.map((m) => [m.id as string, m]));
    return shaped.map((m) => ({
      ...mapDiscordMessage(m, { guildId: this.ws.id, id: ch.id, name: ch.name }, byId),
      source: 'sync' as const,
    }));
  }
}

/** A Slack conversations.history / replies message. */
const slackShape = (m: MockMessage): JsonObject => ({
  type: 'message',
  ts: m.id,
  user: m.author.id,
  text: m.text,
  ...(m.root ? { thread_ts: m.root } : {}),
  ...(m.reactions.length
    ? { reactions: m.reactions.map((r) => ({ name: r.emoji, users: r.users.map((u) => u.id), count: r.users.length })) }
    : {}),
});

const exportUser = (u: MockUser): JsonObject => ({ id: u.id, name: u.name, nickname: u.real, isBot: false });
const EMOJI: Record<string, string> = {
  '+1': '👍',
  white_check_mark: '✅',
  eyes: '👀',
  pray: '🙏',
  tada: '🎉',
  rocket: '🚀',
  raised_hands: '🙌',
  chart_with_upwards_trend: '📈',
  wave: '👋',
};

/** A DiscordChatExporter-shaped message (what mapDiscordMessage reads); a reply references its root. */
const discordShape = (m: MockMessage): JsonObject => ({
  id: m.id,
  type: m.root ? 'Reply' : 'Default',
  timestamp: new Date(m.ms).toISOString(),
  timestampEdited: null,
  content: m.text,
  author: exportUser(m.author),
  attachments: [],
  reactions: m.reactions.map((r) => ({
    emoji: { id: '', name: EMOJI[r.emoji] ?? r.emoji },
    count: r.users.length,
    users: r.users.map(exportUser),
  })),
  mentions: m.mentions.map(exportUser),
  ...(m.root ? { reference: { messageId: m.root, channelId: null, guildId: null } } : {}),
});
