import type { MessageIngested } from '@atlas/core';
import { type Logger, LogLevel, WebClient } from '@slack/web-api';
import { isObj, type JsonObject, nonEmpty, num, str } from '../json.js';
import { parseUsers, type SlackContext } from '../slack-context.js';
import { compareTs, mapSlackMessage, slackSkipReason } from '../slack-message.js';
import { type RetrySettings, retrySettings, withRetry } from './retry.js';
import { slackPlatformError, slackValidationFailure } from './slack-errors.js';
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

/**
 * Bot scopes the Slack client needs: conversations.list/info (`channels:read`, `groups:read` for private channels),
 * conversations.history/replies (`channels:history`, `groups:history`), users.list (`users:read`). The spec's list
 * ("Connections": also `files:read`, `links:read:write`) names scopes no call here uses, so they are not required.
 */
export const SLACK_REQUIRED_SCOPES: readonly string[] = [
  'channels:history',
  'channels:read',
  'groups:history',
  'groups:read',
  'users:read',
];

const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  setLevel: () => {},
  getLevel: () => LogLevel.ERROR,
  setName: () => {},
};

type Page = { messages?: unknown[]; channels?: unknown[]; members?: unknown[]; next: string };

/** A channel's top-level messages (ts > `after`), ascending, read once and served page by page. */
interface HistoryWindow {
  after: string;
  asc: JsonObject[];
}

/**
 * Slack (platform_a) over @slack/web-api: auth.test, conversations.list/info/history/replies, users.list.
 * The SDK's own retries are off (`retries: 0`, `rejectRateLimitedCalls`); withRetry retries instead.
 * Messages map through the importer's `mapSlackMessage` with a context from auth.test (team id, workspace URL)
 * and users.list, so a message gives the same MessageIngested as in an export (only `source` is `sync`).
 * History is newest first on Slack: the first page of a sync reads the window (after, now] backwards once and keeps
 * it in memory, then serves it oldest first page by page (`cursor` = ts of the page's last top-level message).
 */
export class SlackClient implements PlatformClient {
  readonly platform = 'platform_a' as const;
  private readonly web: WebClient;
  private readonly retry: RetrySettings;
  private ctx: Promise<SlackContext> | undefined;
  private readonly channelNames = new Map<string, string>();
  private readonly windows = new Map<string, HistoryWindow>();

  constructor(
    private readonly credentials: { bot_token: string; signing_secret: string },
    opts: PlatformClientOptions = {},
  ) {
    this.retry = retrySettings(opts);
    this.web = new WebClient(credentials.bot_token, {
      ...(opts.slackApiUrl ? { slackApiUrl: opts.slackApiUrl } : {}),
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      timeout: opts.timeoutMs ?? 30_000,
      logger: silentLogger,
    });
  }

  /** auth.test, then granted scopes (`x-oauth-scopes`) against SLACK_REQUIRED_SCOPES. Never throws. */
  async validate(): Promise<ValidationResult> {
    if (!this.credentials.bot_token.trim()) return invalid('bot_token is empty');
    if (!this.credentials.signing_secret.trim()) return invalid('signing_secret is empty');
    try {
      const r = (await this.web.auth.test()) as unknown as JsonObject & { response_metadata?: { scopes?: string[] } };
      const scopes = r.response_metadata?.scopes ?? [];
      const missing = SLACK_REQUIRED_SCOPES.filter((s) => !scopes.includes(s));
      if (missing.length > 0) {
        return {
          valid: false,
          error: {
            code: 'INSUFFICIENT_PERMISSIONS',
            message: `the Slack app lacks scopes: ${missing.join(', ')}`,
            required_scopes: missing,
          },
        };
      }
      return {
        valid: true,
        workspace: { id: str(r, 'team_id') ?? '', name: str(r, 'team') ?? '' },
        bot: { id: str(r, 'user_id') ?? '', name: str(r, 'user') ?? '' },
        scopes,
      };
    } catch (err) {
      return slackValidationFailure(err, SLACK_REQUIRED_SCOPES);
    }
  }

  /** conversations.list (public and private, not archived), every page. Throws PlatformError. */
  async listChannels(): Promise<ConnectionChannel[]> {
    const out: ConnectionChannel[] = [];
    let cursor = '';
    do {
      const page = await this.call('conversations.list', {
        types: 'public_channel,private_channel',
        exclude_archived: true,
        limit: 200,
        ...(cursor ? { cursor } : {}),
      });
      for (const c of page.channels ?? []) {
        const id = str(c, 'id');
        if (id === undefined) continue;
        const name = str(c, 'name') ?? id;
        this.channelNames.set(id, name);
        out.push({
          id,
          name,
          is_private: isObj(c) && (c.is_private === true || c.is_group === true),
          member_count: num(c, 'num_members') ?? 0,
          topic: nonEmpty(isObj(c) ? c.topic : undefined, 'value') ?? null,
          created_at: createdAt(num(c, 'created')),
        });
      }
      cursor = page.next;
    } while (cursor);
    return out;
  }

  /** See PlatformClient.fetchMessages; `limit` is clamped to 1..999. Throws PlatformError. */
  async fetchMessages(channelId: string, opts: FetchOptions): Promise<MessagePage> {
    const limit = Math.min(999, Math.max(1, Math.floor(opts.limit)));
    const after = opts.after ?? '0';
    let win = this.windows.get(channelId);
    // Continue a window read by an earlier page when `after` is one of its messages; otherwise read a fresh one.
    let start = win ? win.asc.findIndex((m) => m.ts === after) + 1 : 0;
    if (!win || start === 0) {
      win = { after, asc: await this.readWindow(channelId, after, limit, opts.signal) };
      this.windows.set(channelId, win);
      start = 0;
    }
    const top = win.asc.slice(start, start + limit);
    const hasMore = start + top.length < win.asc.length;
    if (!hasMore) this.windows.delete(channelId);
    const seen = new Set(top.map((m) => m.ts as string));
    const raw = [...top];
    for (const m of top) {
      if (m.thread_ts !== m.ts || (num(m, 'reply_count') ?? 1) === 0) continue;
      for (const r of await this.readReplies(channelId, m.ts as string, null, 200, opts.signal)) {
        // A thread_broadcast reply is also in the channel history: it comes with its own page, not its root's.
        if (!seen.has(r.ts as string) && r.subtype !== 'thread_broadcast') {
          seen.add(r.ts as string);
          raw.push(r);
        }
      }
    }
    const messages = await this.mapKept(channelId, raw, opts.signal);
    const last = top.at(-1);
    return { messages, cursor: last ? (last.ts as string) : (opts.after ?? null), hasMore };
  }

  /** See PlatformClient.fetchReplies; `limit` is the page size of conversations.replies (1..1000). */
  async fetchReplies(channelId: string, threadTs: string, opts: FetchOptions): Promise<MessageIngested[]> {
    const limit = Math.min(1000, Math.max(1, Math.floor(opts.limit)));
    let replies: JsonObject[];
    try {
      replies = await this.readReplies(channelId, threadTs, opts.after ?? null, limit, opts.signal);
    } catch (err) {
      if ((err as { opts?: { platformCode?: string } }).opts?.platformCode === 'thread_not_found') return [];
      throw err;
    }
    return this.mapKept(channelId, replies, opts.signal);
  }

  /**
   * See PlatformClient.listMembers: conversations.info (private = `is_private` or `is_group`), then for a private
   * channel conversations.members (200 a page, every page). Throws PlatformError.
   */
  async listMembers(channelId: string, opts: { signal?: AbortSignal } = {}): Promise<ChannelMembers> {
    const info = (await this.call('conversations.info', { channel: channelId }, opts.signal)) as unknown as JsonObject;
    const c = isObj(info.channel) ? info.channel : {};
    const isPrivate = c.is_private === true || c.is_group === true;
    if (!isPrivate) return { channel_id: channelId, is_private: false, members: null };
    const members = new Set<string>();
    let cursor = '';
    do {
      const page = await this.call(
        'conversations.members',
        { channel: channelId, limit: 200, ...(cursor ? { cursor } : {}) },
        opts.signal,
      );
      for (const m of page.members ?? []) if (typeof m === 'string' && m) members.add(m);
      cursor = page.next;
    } while (cursor);
    return { channel_id: channelId, is_private: true, members: [...members].sort() };
  }

  /** Every top-level message with ts > `after`, read newest first through the cursor, returned ascending. */
  /** See PlatformClient.postMessage: chat.postMessage, once (no retry). */
  async postMessage(
    channelId: string,
    text: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<{ message_id: string }> {
    if (opts.signal?.aborted) throw opts.signal.reason;
    let r: JsonObject;
    try {
      r = (await this.web.apiCall('chat.postMessage', {
        channel: channelId,
        text,
        unfurl_links: false,
        unfurl_media: false,
      })) as unknown as JsonObject;
    } catch (err) {
      throw slackPlatformError(err, 'chat.postMessage');
    }
    const ts = str(r, 'ts');
    if (!ts) throw new PlatformError('PLATFORM_ERROR', 'chat.postMessage answered no message ts', { retriable: true });
    return { message_id: ts };
  }

  private async readWindow(channelId: string, after: string, limit: number, signal?: AbortSignal) {
    const byTs = new Map<string, JsonObject>();
    let cursor = '';
    do {
      const page = await this.call(
        'conversations.history',
        { channel: channelId, oldest: after, limit: Math.max(limit, 200), ...(cursor ? { cursor } : {}) },
        signal,
      );
      for (const m of page.messages ?? []) {
        const ts = str(m, 'ts');
        if (isObj(m) && ts !== undefined && compareTs(ts, after) > 0 && !byTs.has(ts)) byTs.set(ts, m);
      }
      cursor = page.next;
    } while (cursor);
    return [...byTs.values()].sort((a, b) => compareTs(a.ts as string, b.ts as string));
  }

  /** Replies of a thread (root excluded) with ts > `after`, ascending, every page. */
  private async readReplies(
    channelId: string,
    threadTs: string,
    after: string | null,
    limit: number,
    signal?: AbortSignal,
  ): Promise<JsonObject[]> {
    const out: JsonObject[] = [];
    let cursor = '';
    do {
      const page = await this.call(
        'conversations.replies',
        { channel: channelId, ts: threadTs, limit, ...(after ? { oldest: after } : {}), ...(cursor ? { cursor } : {}) },
        signal,
      );
      for (const m of page.messages ?? []) {
        const ts = str(m, 'ts');
        if (!isObj(m) || ts === undefined || ts === threadTs) continue;
        if (after === null || compareTs(ts, after) > 0) out.push(m);
      }
      cursor = page.next;
    } while (cursor);
    return out.sort((a, b) => compareTs(a.ts as string, b.ts as string));
  }

  /** Applies the importer's skip rule, maps with the workspace context, sorts by ts. */
  private async mapKept(channelId: string, raw: JsonObject[], signal?: AbortSignal): Promise<MessageIngested[]> {
    const kept = raw.filter((m) => slackSkipReason(m) === null);
    if (kept.length === 0) return [];
    const ctx = await this.context(signal);
    const channel = { id: channelId, name: await this.channelName(channelId, signal) };
    return kept
      .sort((a, b) => compareTs(a.ts as string, b.ts as string))
      .map((m) => ({ ...mapSlackMessage(m, channel, ctx), source: 'sync' as const }));
  }

  private async channelName(channelId: string, signal?: AbortSignal): Promise<string> {
    const known = this.channelNames.get(channelId);
    if (known !== undefined) return known;
    const r = await this.call('conversations.info', { channel: channelId }, signal);
    const name = nonEmpty((r as JsonObject).channel, 'name') ?? channelId;
    this.channelNames.set(channelId, name);
    return name;
  }

  /** Team id and workspace URL (auth.test), users (users.list, every page): read once per client. */
  private context(signal?: AbortSignal): Promise<SlackContext> {
    this.ctx ??= (async () => {
      const auth = (await this.call('auth.test', {}, signal)) as unknown as JsonObject;
      const rawUsers: unknown[] = [];
      let cursor = '';
      do {
        const page = await this.call('users.list', { limit: 200, ...(cursor ? { cursor } : {}) }, signal);
        rawUsers.push(...(page.members ?? []));
        cursor = page.next;
      } while (cursor);
      const url = (str(auth, 'url') ?? 'https://slack.com/').replace(/\/+$/, '');
      return {
        workspaceId: str(auth, 'team_id') ?? '',
        workspaceName: str(auth, 'team') ?? '',
        baseUrl: url,
        users: parseUsers('users.list', rawUsers),
      };
    })();
    this.ctx.catch(() => {
      this.ctx = undefined;
    });
    return this.ctx;
  }

  /** One Web API call with retries; returns the body plus `next` (the next cursor, '' at the end). */
  private async call(method: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<Page> {
    const r = await withRetry(
      'platform_a',
      method,
      () => this.web.apiCall(method, args),
      (err) => slackPlatformError(err, method),
      this.retry,
      signal,
    );
    const body = r as unknown as JsonObject & Page;
    return { ...body, next: str((body as JsonObject).response_metadata, 'next_cursor') ?? '' };
  }
}

/** Slack `created` (epoch seconds, 0 or absent when unknown) as ISO 8601, as the importer maps it. */
const createdAt = (created: number | undefined): string | null =>
  created !== undefined && created > 0 ? new Date(created * 1000).toISOString() : null;

const invalid = (message: string): ValidationResult => ({
  valid: false,
  error: { code: 'INVALID_CREDENTIALS', message },
});
