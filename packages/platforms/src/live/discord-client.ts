import type { MessageIngested } from '@atlas/core';
import { REST } from '@discordjs/rest';
import { ApplicationFlags, PermissionFlagsBits } from 'discord-api-types/v10';
import { DISCORD_KEPT_TYPES, mapDiscordMessage, snowflakeTime } from '../discord.js';
import { arr, isObj, type JsonObject, num, str } from '../json.js';
import {
  DISCORD_MEMBERS_INTENT_SCOPE,
  DISCORD_REQUIRED_PERMISSIONS,
  discordPlatformError,
  discordValidationFailure,
} from './discord-errors.js';
import { basePermissions, channelPermissions, everyoneDenied } from './discord-permissions.js';
import { reactionEmojiKey, toExportShape } from './discord-shape.js';
import { type RetrySettings, retrySettings, withRetry } from './retry.js';
import {
  type ChannelMembers,
  type ConnectionChannel,
  type FetchOptions,
  type MessagePage,
  type PlatformClient,
  type PlatformClientOptions,
  PlatformError,
  type ValidationResult,
} from './types.js';

type Route = `/${string}`;

/** Guild channel types with a message history the client reads: text (0) and announcement (5). */
const TEXT_CHANNEL_TYPES = new Set([0, 5]);
/** Permission names reported as `scopes` by validate. */
const PERMISSION_NAMES: [string, bigint][] = [
  ['ADMINISTRATOR', PermissionFlagsBits.Administrator],
  ['VIEW_CHANNEL', PermissionFlagsBits.ViewChannel],
  ['READ_MESSAGE_HISTORY', PermissionFlagsBits.ReadMessageHistory],
  ['SEND_MESSAGES', PermissionFlagsBits.SendMessages],
];
/**
 * Application flags of the Server Members Intent: `GatewayGuildMembers` (verified bots, 100+ servers) or
 * `GatewayGuildMembersLimited` (the Developer Portal toggle, under 100 servers). Either lets the bot list guild members.
 */
const MEMBERS_INTENT_FLAGS = ApplicationFlags.GatewayGuildMembers | ApplicationFlags.GatewayGuildMembersLimited;

/** True when the application object (GET /applications/@me) has the Server Members Intent; a missing `flags` is not. */
export const hasMembersIntent = (application: unknown): boolean =>
  ((num(application, 'flags') ?? 0) & MEMBERS_INTENT_FLAGS) !== 0;

/** Reply chains are followed at most this many fetched links deep (the importer follows them within the export). */
const MAX_CHAIN_FETCHES = 50;

/**
 * Discord (platform_b) over @discordjs/rest v10: GET /users/@me, /guilds/{id}, /guilds/{id}/members/{bot},
 * /guilds/{id}/channels, /channels/{id}, /channels/{id}/messages, the reactions route for reaction users, and
 * single messages for reply chains. The REST client's own retries are off (`retries: 0`, `rejectOnRateLimit`);
 * withRetry retries. Messages are converted to the DiscordChatExporter shape and mapped by the importer's
 * `mapDiscordMessage`, so a message gives the same MessageIngested as in an export (only `source` is `sync`).
 */
export class DiscordClient implements PlatformClient {
  readonly platform = 'platform_b' as const;
  private readonly rest: REST;
  private readonly retry: RetrySettings;
  private readonly channels = new Map<string, { name: string; guildId: string }>();
  /** Per channel, the reply link of every message seen (`{type, reference}` only: reply chains are followed through them). */
  private readonly seen = new Map<string, Map<string, JsonObject>>();
  private guild: Promise<JsonObject> | undefined;

  constructor(
    private readonly credentials: { bot_token: string; guild_id: string },
    opts: PlatformClientOptions = {},
  ) {
    this.retry = retrySettings(opts);
    this.rest = new REST({
      api: (opts.discordApiUrl ?? 'https://discord.com/api').replace(/\/+$/, ''),
      version: '10',
      retries: 0,
      timeout: opts.timeoutMs ?? 30_000,
      rejectOnRateLimit: ['/'],
      offset: 0, // retryAfter as Discord said it: withRetry does the waiting
    });
  }

  /**
   * GET /users/@me (the bot), GET /guilds/{guild_id}, the bot member's roles, then GET /applications/@me: the
   * guild-level permissions must include VIEW_CHANNEL and READ_MESSAGE_HISTORY (or ADMINISTRATOR), and the application
   * must have the privileged Server Members Intent (its `flags`: hasMembersIntent), without which the members of a
   * private channel cannot be read (listMembers; docs/access.md "Channel access"). Anything missing is
   * INSUFFICIENT_PERMISSIONS with `required_scopes` naming it (the permission names, `guild.members` for the intent):
   * the spec's validate answer has no warnings. Never throws (see discordValidationFailure).
   */
  async validate(): Promise<ValidationResult> {
    const { bot_token, guild_id } = this.credentials;
    if (!bot_token.trim())
      return { valid: false, error: { code: 'INVALID_CREDENTIALS', message: 'bot_token is empty' } };
    if (!/^\d{15,20}$/.test(guild_id.trim())) {
      return { valid: false, error: { code: 'INVALID_CREDENTIALS', message: 'guild_id is not a Discord id' } };
    }
    try {
      const me = await this.get('/users/@me');
      const guild = await this.get(`/guilds/${guild_id}`);
      const member = await this.get(`/guilds/${guild_id}/members/${str(me, 'id')}`);
      const perms = basePermissions(guild, member, guild_id);
      const granted = PERMISSION_NAMES.filter(([, bit]) => (perms & bit) === bit).map(([name]) => name);
      const missing = granted.includes('ADMINISTRATOR')
        ? []
        : DISCORD_REQUIRED_PERMISSIONS.filter((p) => !granted.includes(p));
      const intent = hasMembersIntent(await this.get('/applications/@me'));
      if (missing.length > 0 || !intent) {
        const problems = [
          ...(missing.length > 0 ? [`the bot's roles lack ${missing.join(', ')}`] : []),
          ...(intent
            ? []
            : [
                'the application lacks the Server Members Intent (Developer Portal, Bot, Privileged Gateway Intents): ' +
                  'without it the members of private channels cannot be read and private channels stay hidden',
              ]),
        ];
        return {
          valid: false,
          error: {
            code: 'INSUFFICIENT_PERMISSIONS',
            message: problems.join('; '),
            required_scopes: [...missing, ...(intent ? [] : [DISCORD_MEMBERS_INTENT_SCOPE])],
          },
        };
      }
      return {
        valid: true,
        workspace: { id: str(guild, 'id') ?? guild_id, name: str(guild, 'name') ?? '' },
        bot: { id: str(me, 'id') ?? '', name: str(me, 'username') ?? '' },
        scopes: granted,
      };
    } catch (err) {
      return discordValidationFailure(err);
    }
  }

  /** Text and announcement channels of the guild; private = @everyone denied VIEW_CHANNEL. Throws PlatformError. */
  async listChannels(): Promise<ConnectionChannel[]> {
    const { guild_id } = this.credentials;
    const guild = await this.guildWithCounts();
    const members = num(guild, 'approximate_member_count') ?? 0;
    const list = await this.call(`/guilds/${guild_id}/channels`);
    const out: ConnectionChannel[] = [];
    for (const c of Array.isArray(list) ? list : []) {
      const id = str(c, 'id');
      if (id === undefined || !TEXT_CHANNEL_TYPES.has(num(c, 'type') ?? -1)) continue;
      const name = str(c, 'name') ?? id;
      this.channels.set(id, { name, guildId: guild_id });
      out.push({
        id,
        name,
        is_private: everyoneDenied(c, guild_id),
        member_count: members,
        topic: str(c, 'topic') || null,
        created_at: snowflakeTime(id),
      });
    }
    return out;
  }

  /** See PlatformClient.fetchMessages: GET …/messages?after=&limit= (1..100), reversed to oldest first. */
  async fetchMessages(channelId: string, opts: FetchOptions): Promise<MessagePage> {
    const limit = Math.min(100, Math.max(1, Math.floor(opts.limit)));
    const channel = await this.channel(channelId, opts.signal);
    const query = new URLSearchParams({ after: opts.after ?? '0', limit: String(limit) });
    const page = await this.call(`/channels/${channelId}/messages`, query, opts.signal);
    const raw = (Array.isArray(page) ? page : []).filter(isObj).reverse();
    const seen = this.seenIn(channelId);
    const shaped: JsonObject[] = [];
    for (const m of raw) {
      const ref = m.referenced_message;
      if (isObj(ref) && !seen.has(str(ref, 'id') ?? '')) seen.set(str(ref, 'id')!, replyLink(toExportShape(ref)));
      const e = toExportShape(m, await this.reactionUsers(channelId, m, opts.signal));
      seen.set(str(m, 'id')!, replyLink(e));
      shaped.push(e);
    }
    const kept = shaped.filter((e) => DISCORD_KEPT_TYPES.has(str(e, 'type') ?? 'Default'));
    for (const e of kept) await this.resolveChain(channelId, e, opts.signal);
    const messages = kept.map((e) => ({
      ...mapDiscordMessage(e, { guildId: channel.guildId, id: channelId, name: channel.name }, seen),
      source: 'sync' as const,
    }));
    const last = raw.at(-1);
    return {
      messages,
      cursor: last ? (str(last, 'id') ?? null) : (opts.after ?? null),
      hasMore: raw.length === limit,
    };
  }

  /** Discord replies are ordinary channel messages, fetched by fetchMessages: always []. */
  async fetchReplies(): Promise<MessageIngested[]> {
    return [];
  }

  /**
   * See PlatformClient.listMembers: GET /channels/{id} (its permission_overwrites), GET /guilds/{id} (roles, owner);
   * private = @everyone cannot VIEW_CHANNEL in the channel. For a private channel every guild member (GET
   * /guilds/{id}/members, 1000 a page, `after` the last user id) whose channel permissions (channelPermissions)
   * include VIEW_CHANNEL. Throws PlatformError: a 403 on the member list (the application lacks the Server Members
   * Intent) is PLATFORM_ERROR, not retriable, saying so.
   */
  async listMembers(channelId: string, opts: { signal?: AbortSignal } = {}): Promise<ChannelMembers> {
    const { guild_id } = this.credentials;
    const channel = await this.call(`/channels/${channelId}`, undefined, opts.signal);
    const guild = await this.guildWithCounts();
    const everyone = channelPermissions(guild, channel, guild_id, { id: '', roles: [] });
    if ((everyone & PermissionFlagsBits.ViewChannel) !== 0n)
      return { channel_id: channelId, is_private: false, members: null };
    const members: string[] = [];
    for (let after = '0'; ; ) {
      const q = new URLSearchParams({ limit: '1000', after });
      const page = await this.call(`/guilds/${guild_id}/members`, q, opts.signal).catch((err: unknown) => {
        if (!(err instanceof PlatformError) || err.opts.status !== 403) throw err;
        throw new PlatformError(
          'PLATFORM_ERROR',
          `Discord /guilds/:id/members: ${err.opts.platformCode ?? '403'} Missing Access: the application lacks the ` +
            'Server Members Intent, so the members of a private channel cannot be read',
          { ...err.opts, retriable: false },
        );
      });
      const list = (Array.isArray(page) ? page : []).filter(isObj);
      for (const m of list) {
        const id = str(m.user, 'id');
        if (id === undefined) continue;
        const roles = arr(m, 'roles').map(String);
        const perms = channelPermissions(guild, channel, guild_id, { id, roles });
        if ((perms & PermissionFlagsBits.ViewChannel) !== 0n) members.push(id);
      }
      const last = str(list.at(-1)?.user, 'id');
      if (list.length < 1000 || last === undefined) break;
      after = last;
    }
    return { channel_id: channelId, is_private: true, members: [...new Set(members)].sort() };
  }

  /** Users of every reaction of `m` (the reactions route, 100 a page), keyed by reactionEmojiKey. */
  /** See PlatformClient.postMessage: POST /channels/{id}/messages, once (no retry); mentions never ping. */
  async postMessage(
    channelId: string,
    text: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<{ message_id: string }> {
    if (opts.signal?.aborted) throw opts.signal.reason;
    this.rest.setToken(this.credentials.bot_token);
    let r: unknown;
    try {
      r = await this.rest.post(`/channels/${channelId}/messages`, {
        body: { content: text.slice(0, 2_000), allowed_mentions: { parse: [] } },
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } catch (err) {
      throw discordPlatformError(err, 'POST /channels/:id/messages');
    }
    const id = isObj(r) ? str(r, 'id') : undefined;
    if (!id) throw new PlatformError('PLATFORM_ERROR', 'Discord answered no message id', { retriable: true });
    return { message_id: id };
  }

  private async reactionUsers(channelId: string, m: JsonObject, signal?: AbortSignal) {
    const out = new Map<string, unknown[]>();
    for (const r of arr(m, 'reactions')) {
      const key = reactionEmojiKey((r as JsonObject).emoji);
      const users: unknown[] = [];
      for (let after = ''; ; ) {
        const q = new URLSearchParams({ limit: '100', ...(after ? { after } : {}) });
        const route: Route = `/channels/${channelId}/messages/${str(m, 'id')}/reactions/${encodeURIComponent(key)}`;
        const page = await this.call(route, q, signal);
        const list = Array.isArray(page) ? page : [];
        users.push(...list);
        if (list.length < 100) break;
        after = str(list.at(-1), 'id') ?? '';
        if (!after) break;
      }
      out.set(key, users);
    }
    return out;
  }

  /** Makes sure every link of `e`'s reply chain is in `seen`, fetching unknown ones (a 404 ends the chain). */
  private async resolveChain(channelId: string, e: JsonObject, signal?: AbortSignal): Promise<void> {
    const seen = this.seenIn(channelId);
    let target = str(e, 'type') === 'Reply' ? (str(e.reference, 'messageId') ?? null) : null;
    for (let fetched = 0; target !== null && fetched < MAX_CHAIN_FETCHES; ) {
      let msg = seen.get(target);
      if (!msg) {
        fetched += 1;
        let api: unknown;
        try {
          api = await this.call(`/channels/${channelId}/messages/${target}`, undefined, signal);
        } catch (err) {
          if ((err as { opts?: { status?: number } }).opts?.status === 404) return;
          throw err;
        }
        if (!isObj(api)) return;
        msg = replyLink(toExportShape(api));
        seen.set(target, msg);
      }
      const next = str(msg, 'type') === 'Reply' ? (str(msg.reference, 'messageId') ?? null) : null;
      if (next === null || next === target) return;
      target = next;
    }
  }

  private seenIn(channelId: string): Map<string, JsonObject> {
    let m = this.seen.get(channelId);
    if (!m) {
      m = new Map();
      this.seen.set(channelId, m);
    }
    return m;
  }

  private async channel(channelId: string, signal?: AbortSignal): Promise<{ name: string; guildId: string }> {
    const known = this.channels.get(channelId);
    if (known) return known;
    const c = await this.call(`/channels/${channelId}`, undefined, signal);
    const info = { name: str(c, 'name') ?? channelId, guildId: str(c, 'guild_id') ?? '0' };
    this.channels.set(channelId, info);
    return info;
  }

  private guildWithCounts(): Promise<JsonObject> {
    this.guild ??= this.call(`/guilds/${this.credentials.guild_id}`, new URLSearchParams({ with_counts: 'true' })).then(
      (g) => (isObj(g) ? g : {}),
    );
    this.guild.catch(() => {
      this.guild = undefined;
    });
    return this.guild;
  }

  /** One GET without retries (validation): the token is set again each time (a 401 clears it, note §10). */
  private get(route: Route, query?: URLSearchParams, signal?: AbortSignal): Promise<unknown> {
    this.rest.setToken(this.credentials.bot_token);
    return this.rest.get(route, { ...(query ? { query } : {}), ...(signal ? { signal } : {}) });
  }

  /** One GET with retries, failures as PlatformError. */
  private call(route: Route, query?: URLSearchParams, signal?: AbortSignal): Promise<unknown> {
    const name = route.replace(/\d{15,20}/g, ':id');
    return withRetry(
      'platform_b',
      name,
      () => this.get(route, query, signal),
      (err) => discordPlatformError(err, name),
      this.retry,
      signal,
    );
  }
}

/** What chainRoot reads of a message: its type and reference (keeps the per-channel memory small). */
const replyLink = (e: JsonObject): JsonObject => ({ type: e.type, reference: e.reference });
