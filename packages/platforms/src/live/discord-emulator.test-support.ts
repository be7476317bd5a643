import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { arr, type JsonObject, nonEmpty, num, obj, str } from '../json.js';
import { openSource, readJson } from '../source.js';
import { DISCORD_TYPE_NAMES, reactionEmojiKey } from './discord-shape.js';
import {
  close,
  type Fault,
  FaultQueue,
  type LoggedRequest,
  listen,
  readBody,
  sendJson,
} from './emulator-http.test-support.js';

const VIEW_CHANNEL = 1n << 10n;
const SEND_MESSAGES = 1n << 11n;
const READ_MESSAGE_HISTORY = 1n << 16n;
/** @everyone's and the bot role's default permissions: view, send, read history. */
export const DISCORD_DEFAULT_PERMISSIONS = VIEW_CHANNEL | SEND_MESSAGES | READ_MESSAGE_HISTORY;
/** Application flags (GET /applications/@me): GATEWAY_GUILD_MEMBERS_LIMITED, GATEWAY_MESSAGE_CONTENT_LIMITED. */
const GUILD_MEMBERS_LIMITED = 1 << 15;
const MESSAGE_CONTENT_LIMITED = 1 << 19;
const DISCORD_EPOCH = 1420070400000n;
const TYPE_NUMBERS = new Map([...DISCORD_TYPE_NAMES].map(([n, name]) => [name, n]));

/** DCE's channel type names → API channel types (research note §8). */
const CHANNEL_TYPES: Record<string, number> = {
  GuildTextChat: 0,
  GuildVoiceChat: 2,
  GuildCategory: 4,
  GuildNews: 5,
  GuildForum: 15,
};

/** A DCE timestamp as the API writes it: `2025-01-09T14:21:43.813000+00:00`. */
const apiTime = (t: string): string => new Date(t).toISOString().replace(/Z$/, '000+00:00');

/** A DCE user as an API user object (`global_name` = the DCE nickname when it differs from the username). */
const apiUser = (u: unknown): JsonObject => {
  const name = str(u, 'name') ?? 'unknown';
  const nick = nonEmpty(u, 'nickname');
  return {
    id: str(u, 'id'),
    username: name,
    global_name: nick !== undefined && nick !== name ? nick : null,
    discriminator: '0',
    avatar: null,
    ...((u as JsonObject | undefined)?.isBot === true ? { bot: true } : {}),
  };
};

/**
 * A Discord REST v10 emulator (test support) serving a DiscordChatExporter JSON export over node:http
 * on 127.0.0.1: GET /users/@me, /applications/@me, /guilds/{id} (`with_counts`), /guilds/{id}/members (list) and /members/{user},
 * /guilds/{id}/channels, /channels/{id}, /channels/{id}/messages (before/after/around, limit 1..100, newest first),
 * /channels/{id}/messages/{id}, /channels/{id}/messages/{id}/reactions/{emoji}. Errors carry real statuses and JSON codes (401/0, 403/50001,
 * 404/10003/10004/10008, 429 with `retry_after` and X-RateLimit headers; research note §7, §10). Messages are the
 * export's converted back to API objects (DCE renames reversed, note §12). Faults, the token, the bot's permissions,
 * new/edited/deleted messages, guild roles and members, channel permission overwrites and the Server Members Intent
 * (setMembersIntent) are scriptable after start.
 */
export class DiscordEmulator {
  /** Base for `new REST({ api })`: `http://127.0.0.1:PORT/api` (no version, no trailing slash). */
  readonly url: string;
  token = 'emulator.discord.bot-token-secret';
  readonly requests: LoggedRequest[] = [];
  readonly bot = {
    id: '1300000000000000001',
    username: 'atlas-bot',
    global_name: null,
    discriminator: '0',
    avatar: null,
    bot: true,
  };
  readonly botRoleId = '1300000000000000002';
  everyonePermissions = DISCORD_DEFAULT_PERMISSIONS;
  botPermissions = DISCORD_DEFAULT_PERMISSIONS;
  /** Guild roles besides @everyone and the bot's (addRole). */
  readonly roles: { id: string; name: string; permissions: string; position: number }[] = [];
  /** Guild members besides the bot (GET /guilds/{id}/members): the export's message authors at start, addMember. */
  readonly members = new Map<string, { user: JsonObject; roles: string[] }>();
  /** The guild owner's user id (has every permission). */
  ownerId = '1';
  /** The application's id (GET /applications/@me). */
  readonly applicationId = '1300000000000000003';
  /** Whether the application has the Server Members Intent (setMembersIntent); on by default. */
  membersIntent = true;
  private readonly faults = new FaultQueue();
  private seq = 0n;

  private constructor(
    private readonly server: Server,
    origin: string,
    readonly guild: { id: string; name: string },
    readonly channels: JsonObject[],
    /** channel id → message id → API message. */
    readonly messages: Map<string, Map<string, JsonObject>>,
    /** message id → emoji key → API users. */
    readonly reactionUsers: Map<string, Map<string, JsonObject[]>>,
  ) {
    this.url = `${origin}/api`;
  }

  /** Loads a DCE `.json` file (or a directory of them) and starts listening. */
  static async start(path: string): Promise<DiscordEmulator> {
    const src = await openSource(path);
    const files = src.kind === 'file' ? src.files : src.files.filter((f) => !f.includes('/') && f.endsWith('.json'));
    let guild = { id: '0', name: '' };
    const channels: JsonObject[] = [];
    const messages = new Map<string, Map<string, JsonObject>>();
    const reactionUsers = new Map<string, Map<string, JsonObject[]>>();
    for (const f of files) {
      const data = (await readJson(src, f)) as JsonObject;
      guild = { id: str(data.guild, 'id') ?? '0', name: str(data.guild, 'name') ?? '' };
      const ch = obj(data, 'channel') ?? {};
      const channelId = str(ch, 'id')!;
      channels.push({
        id: channelId,
        type: CHANNEL_TYPES[str(ch, 'type') ?? ''] ?? 0,
        guild_id: guild.id,
        name: str(ch, 'name'),
        topic: str(ch, 'topic') ?? null,
        position: channels.length,
        parent_id: str(ch, 'categoryId') ?? null,
        nsfw: false,
        permission_overwrites: [],
      });
      const byId = messages.get(channelId) ?? new Map<string, JsonObject>();
      for (const m of arr(data, 'messages') as JsonObject[]) {
        if (byId.has(m.id as string)) continue;
        byId.set(m.id as string, apiMessage(m, channelId, guild.id));
        const users = new Map<string, JsonObject[]>();
        for (const r of arr(m, 'reactions')) {
          users.set(
            reactionEmojiKey({ id: nonEmpty(obj(r, 'emoji'), 'id') ?? null, name: str(obj(r, 'emoji'), 'name') }),
            arr(r, 'users').map(apiUser),
          );
        }
        if (users.size) reactionUsers.set(m.id as string, users);
      }
      messages.set(channelId, byId);
    }
    let emu: DiscordEmulator | undefined;
    const { server, origin } = await listen((req, res) => emu!.handle(req, res));
    emu = new DiscordEmulator(server, origin, guild, channels, messages, reactionUsers);
    for (const byId of messages.values())
      for (const m of byId.values()) {
        const id = str(m.author, 'id');
        if (id && id !== emu.bot.id && !emu.members.has(id))
          emu.members.set(id, { user: m.author as JsonObject, roles: [] });
      }
    return emu;
  }

  close(): Promise<void> {
    return close(this.server);
  }

  /** Scripts a fault (see Fault; `match` applies to the path after `/api/v10`). */
  fault(f: Fault): void {
    this.faults.add(f);
  }

  /** Denies VIEW_CHANNEL to @everyone in a channel (it then lists as private; the bot keeps its role's access). */
  setPrivate(channelId: string): void {
    const c = this.channels.find((x) => x.id === channelId);
    if (c) this.setOverwrite(channelId, { id: this.guild.id, type: 0, allow: 0n, deny: VIEW_CHANNEL });
  }

  /**
   * Switches the application's privileged Server Members Intent: off, GET /applications/@me `flags` lacks
   * GATEWAY_GUILD_MEMBERS_LIMITED and GET /guilds/{id}/members (the list) is 403 Missing Access (50001), as on Discord.
   */
  setMembersIntent(on: boolean): void {
    this.membersIntent = on;
  }

  /** Adds a guild role (`permissions` a bit set; default none) and returns its id. */
  addRole(name: string, permissions = 0n): string {
    this.seq += 1n;
    const id = String(1300000000000000100n + this.seq);
    this.roles.push({ id, name, permissions: String(permissions), position: this.roles.length + 2 });
    return id;
  }

  /** Adds a guild member (or replaces its roles). */
  addMember(user: { id: string; username: string }, roles: string[] = []): void {
    this.members.set(user.id, {
      user: { discriminator: '0', avatar: null, global_name: null, ...user },
      roles: [...roles],
    });
  }

  /** Removes a member from the guild. */
  removeMember(userId: string): void {
    this.members.delete(userId);
  }

  /**
   * A member overwrite on a channel: `true` allows them VIEW_CHANNEL (they see a private channel), `false` denies it
   * (they no longer see it, whatever their roles allow).
   */
  setChannelMember(channelId: string, userId: string, member: boolean): void {
    this.setOverwrite(channelId, {
      id: userId,
      type: 1,
      allow: member ? VIEW_CHANNEL : 0n,
      deny: member ? 0n : VIEW_CHANNEL,
    });
  }

  /** A role overwrite on a channel allowing (`true`) or denying (`false`) VIEW_CHANNEL to the role's members. */
  setChannelRole(channelId: string, roleId: string, view: boolean): void {
    this.setOverwrite(channelId, {
      id: roleId,
      type: 0,
      allow: view ? VIEW_CHANNEL : 0n,
      deny: view ? 0n : VIEW_CHANNEL,
    });
  }

  private setOverwrite(channelId: string, o: { id: string; type: number; allow: bigint; deny: bigint }): void {
    const c = this.channels.find((x) => x.id === channelId);
    if (!c) throw new Error(`no channel ${channelId}`);
    const rest = arr(c, 'permission_overwrites').filter((x) => str(x, 'id') !== o.id);
    c.permission_overwrites = [...rest, { id: o.id, type: o.type, allow: String(o.allow), deny: String(o.deny) }];
  }

  /** Posts a message now (a snowflake after every existing one); `replyTo` makes it a REPLY (type 19). Returns its id. */
  postMessage(
    channelId: string,
    m: { author: { id: string; username: string; global_name?: string | null }; content: string; replyTo?: string },
  ): string {
    const byId = this.channelMessages(channelId);
    const max = [...byId.keys()].reduce((a, b) => (BigInt(b) > a ? BigInt(b) : a), 0n);
    this.seq += 1n;
    const fromNow = ((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) + this.seq;
    const id = String(fromNow > max ? fromNow : max + (1n << 22n));
    byId.set(id, {
      ...baseMessage(id, channelId),
      type: m.replyTo ? 19 : 0,
      content: m.content,
      author: { discriminator: '0', avatar: null, global_name: null, ...m.author },
      timestamp: new Date().toISOString().replace(/Z$/, '000+00:00'),
      ...(m.replyTo
        ? { message_reference: { type: 0, message_id: m.replyTo, channel_id: channelId, guild_id: this.guild.id } }
        : {}),
    });
    return id;
  }

  /** Edits a message's content (sets `edited_timestamp`). */
  editMessage(channelId: string, id: string, content: string): void {
    const m = this.channelMessages(channelId).get(id);
    if (!m) throw new Error(`no message ${id}`);
    Object.assign(m, { content, edited_timestamp: new Date().toISOString().replace(/Z$/, '000+00:00') });
  }

  deleteMessage(channelId: string, id: string): void {
    this.channelMessages(channelId).delete(id);
  }

  private channelMessages(channelId: string): Map<string, JsonObject> {
    const byId = this.messages.get(channelId);
    if (!byId) throw new Error(`no channel ${channelId}`);
    return byId;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname.replace(/^\/api\/v10/, '');
    const entry: LoggedRequest = {
      method: req.method ?? 'GET',
      url: url.pathname + url.search,
      call: path,
      params: Object.fromEntries(url.searchParams),
      status: 200,
    };
    this.requests.push(entry);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      entry.status = status;
      sendJson(res, status, body, headers);
    };
    const fault = this.faults.take(path);
    if (fault) {
      entry.fault = fault.kind;
      if (fault.kind === 'drop') return void res.socket?.destroy();
      if (fault.kind === 'ratelimit') {
        const after = fault.retryAfter ?? 1;
        return send(
          429,
          { message: 'You are being rate limited.', retry_after: after, global: false },
          {
            'retry-after': String(after),
            'x-ratelimit-limit': '5',
            'x-ratelimit-remaining': '0',
            'x-ratelimit-reset-after': String(after),
            'x-ratelimit-reset': String(Date.now() / 1000 + after),
            'x-ratelimit-bucket': 'emulator',
            'x-ratelimit-scope': 'user',
          },
        );
      }
      const status = fault.status ?? 502;
      return send(
        status,
        status === 403 ? { message: 'Missing Access', code: 50001 } : { message: `${status}: Server Error`, code: 0 },
      );
    }
    if (req.headers.authorization !== `Bot ${this.token}`) return send(401, { message: '401: Unauthorized', code: 0 });
    const posted = path.match(/^\/channels\/(\d+)\/messages$/);
    if (req.method === 'POST' && posted) {
      // POST /channels/{id}/messages: the bot's message, content at most 2,000 characters (Discord's limit).
      const body = JSON.parse((await readBody(req)) || '{}') as JsonObject;
      entry.params = {
        content: String(body.content ?? ''),
        allowed_mentions: JSON.stringify(body.allowed_mentions ?? null),
      };
      if (!this.messages.has(posted[1]!)) return send(404, { message: 'Unknown Channel', code: 10003 });
      const content = str(body, 'content') ?? '';
      if (content.length === 0 || content.length > 2_000)
        return send(400, { message: 'Invalid Form Body', code: 50035 });
      const id = this.postMessage(posted[1]!, { author: this.bot, content });
      return send(200, this.channelMessages(posted[1]!).get(id));
    }
    if (req.method !== 'GET') return send(405, { message: '405: Method Not Allowed', code: 0 });
    const [status, body] = this.route(path, url.searchParams);
    return send(status, body);
  }

  private route(path: string, q: URLSearchParams): [number, unknown] {
    const seg = path.split('/').filter(Boolean);
    if (path === '/users/@me') return [200, this.bot];
    if (path === '/applications/@me') return [200, this.application()];
    if (seg[0] === 'guilds') {
      if (seg[1] !== this.guild.id) return [404, { message: 'Unknown Guild', code: 10004 }];
      if (seg.length === 2) return [200, this.guildObject(q.get('with_counts') === 'true')];
      if (seg[2] === 'channels' && seg.length === 3) return [200, this.channels];
      if (seg[2] === 'members' && seg.length === 3)
        return this.membersIntent ? this.memberList(q) : [403, { message: 'Missing Access', code: 50001 }];
      if (seg[2] === 'members' && seg.length === 4) {
        const m = this.members.get(seg[3]!);
        if (m) return [200, { ...memberObject(m.user, m.roles) }];
        if (seg[3] !== this.bot.id) return [404, { message: 'Unknown Member', code: 10007 }];
        return [
          200,
          {
            user: this.bot,
            nick: null,
            roles: [this.botRoleId],
            joined_at: '2025-01-01T00:00:00.000000+00:00',
            deaf: false,
            mute: false,
            flags: 0,
          },
        ];
      }
    }
    if (seg[0] === 'channels' && seg[1] !== undefined) {
      const channel = this.channels.find((c) => c.id === seg[1]);
      if (!channel) return [404, { message: 'Unknown Channel', code: 10003 }];
      if (seg.length === 2) return [200, channel];
      const perms = this.everyonePermissions | this.botPermissions;
      if (seg[2] === 'messages') {
        if ((perms & VIEW_CHANNEL) === 0n) return [403, { message: 'Missing Access', code: 50001 }];
        if (seg.length === 3) return (perms & READ_MESSAGE_HISTORY) === 0n ? [200, []] : this.list(seg[1]!, q);
        const msg = this.channelMessages(seg[1]!).get(seg[3]!);
        if (!msg || (perms & READ_MESSAGE_HISTORY) === 0n) return [404, { message: 'Unknown Message', code: 10008 }];
        if (seg.length === 4) return [200, this.serve(seg[1]!, msg)];
        if (seg[4] === 'reactions' && seg.length === 6) return this.reactions(seg[3]!, decodeURIComponent(seg[5]!), q);
      }
    }
    return [404, { message: '404: Not Found', code: 0 }];
  }

  /** GET /applications/@me: the bot's application; `flags` has the Server Members and Message Content intents (Limited). */
  private application(): JsonObject {
    const flags = MESSAGE_CONTENT_LIMITED | (this.membersIntent ? GUILD_MEMBERS_LIMITED : 0);
    return {
      id: this.applicationId,
      name: this.bot.username,
      icon: null,
      description: '',
      bot_public: false,
      bot_require_code_grant: false,
      verify_key: '0'.repeat(64),
      flags,
      bot: this.bot,
    };
  }

  /** GET /guilds/{id}/members: limit 1..1000 (default 1), `after` a user id; by user id ascending; the bot included. */
  private memberList(q: URLSearchParams): [number, unknown] {
    const limit = q.has('limit') ? Number(q.get('limit')) : 1;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      return [400, { message: 'Invalid Form Body', code: 50035 }];
    const after = BigInt(q.get('after') ?? '0');
    const all = [
      memberObject(this.bot, [this.botRoleId]),
      ...[...this.members.values()].map((m) => memberObject(m.user, m.roles)),
    ].sort((a, b) => (BigInt(str(a.user, 'id')!) < BigInt(str(b.user, 'id')!) ? -1 : 1));
    return [200, all.filter((m) => BigInt(str(m.user, 'id')!) > after).slice(0, limit)];
  }

  private guildObject(withCounts: boolean): JsonObject {
    const authors = new Set<string>();
    for (const byId of this.messages.values()) for (const m of byId.values()) authors.add(str(m.author, 'id') ?? '');
    return {
      id: this.guild.id,
      name: this.guild.name,
      icon: null,
      owner_id: this.ownerId,
      features: [],
      emojis: [],
      roles: [
        { id: this.guild.id, name: '@everyone', permissions: String(this.everyonePermissions), position: 0 },
        { id: this.botRoleId, name: 'Atlas', permissions: String(this.botPermissions), position: 1 },
        ...this.roles,
      ],
      ...(withCounts ? { approximate_member_count: authors.size, approximate_presence_count: 0 } : {}),
    };
  }

  /** GET messages: before / after / around (exclusive), limit 1..100 (default 50), newest first. */
  private list(channelId: string, q: URLSearchParams): [number, unknown] {
    const limit = q.has('limit') ? Number(q.get('limit')) : 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      return [400, { message: 'Invalid Form Body', code: 50035 }];
    }
    const all = [...this.channelMessages(channelId).values()].sort((a, b) =>
      BigInt(a.id as string) < BigInt(b.id as string) ? -1 : 1,
    );
    const after = q.get('after');
    const before = q.get('before');
    let page: JsonObject[];
    if (after !== null) page = all.filter((m) => BigInt(m.id as string) > BigInt(after)).slice(0, limit);
    else if (before !== null) page = all.filter((m) => BigInt(m.id as string) < BigInt(before)).slice(-limit);
    else page = all.slice(-limit);
    return [200, page.reverse().map((m) => this.serve(channelId, m))];
  }

  /** A stored message as served: a REPLY carries the replied-to message (null when deleted), one level deep. */
  private serve(channelId: string, m: JsonObject): JsonObject {
    if (m.type !== 19) return m;
    const target = this.channelMessages(channelId).get(str(m.message_reference, 'message_id') ?? '');
    return { ...m, referenced_message: target ? target : null };
  }

  private reactions(messageId: string, emoji: string, q: URLSearchParams): [number, unknown] {
    const users = this.reactionUsers.get(messageId)?.get(emoji);
    if (!users) return [404, { message: 'Unknown Emoji', code: 10014 }];
    const limit = Math.min(100, Math.max(1, Number(q.get('limit') ?? 25)));
    const after = q.get('after');
    const sorted = [...users].sort((a, b) => (BigInt(a.id as string) < BigInt(b.id as string) ? -1 : 1));
    return [200, sorted.filter((u) => after === null || BigInt(u.id as string) > BigInt(after)).slice(0, limit)];
  }
}

/** A guild member object as the API returns it. */
const memberObject = (user: unknown, roles: readonly string[]): JsonObject => ({
  user,
  nick: null,
  roles: [...roles],
  joined_at: '2025-01-01T00:00:00.000000+00:00',
  deaf: false,
  mute: false,
  flags: 0,
});

const baseMessage = (id: string, channelId: string): JsonObject => ({
  id,
  channel_id: channelId,
  edited_timestamp: null,
  tts: false,
  mention_everyone: false,
  mentions: [],
  mention_roles: [],
  attachments: [],
  embeds: [],
  pinned: false,
  flags: 0,
  components: [],
});

/** One DCE message as an API message object (`referenced_message` is added when served). */
function apiMessage(m: JsonObject, channelId: string, guildId: string): JsonObject {
  const typeName = str(m, 'type') ?? 'Default';
  const ref = obj(m, 'reference');
  const edited = nonEmpty(m, 'timestampEdited');
  return {
    ...baseMessage(m.id as string, channelId),
    type: TYPE_NUMBERS.get(typeName) ?? (Number(typeName) || 0),
    content: str(m, 'content') ?? '',
    author: apiUser(m.author),
    timestamp: apiTime(str(m, 'timestamp')!),
    edited_timestamp: edited ? apiTime(edited) : null,
    pinned: m.isPinned === true,
    mentions: arr(m, 'mentions').map(apiUser),
    attachments: arr(m, 'attachments').map((a) => ({
      id: str(a, 'id'),
      filename: str(a, 'fileName'),
      size: num(a, 'fileSizeBytes') ?? 0,
      url: str(a, 'url'),
      proxy_url: str(a, 'url'),
    })),
    ...(arr(m, 'reactions').length
      ? {
          reactions: arr(m, 'reactions').map((r) => ({
            count: num(r, 'count') ?? 0,
            count_details: { burst: 0, normal: num(r, 'count') ?? 0 },
            me: false,
            me_burst: false,
            emoji: { id: nonEmpty(obj(r, 'emoji'), 'id') ?? null, name: str(obj(r, 'emoji'), 'name') ?? null },
            burst_colors: [],
          })),
        }
      : {}),
    ...(ref
      ? {
          message_reference: {
            type: 0,
            ...(str(ref, 'messageId') ? { message_id: str(ref, 'messageId') } : {}),
            channel_id: str(ref, 'channelId') ?? channelId,
            guild_id: str(ref, 'guildId') ?? guildId,
          },
        }
      : {}),
  };
}
