import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { JsonObject } from '../json.js';
import { nonEmpty, str } from '../json.js';
import { buildSlackContext } from '../slack-context.js';
import { compareTs } from '../slack-message.js';
import { openSource, readJson } from '../source.js';
import {
  close,
  type Fault,
  FaultQueue,
  type LoggedRequest,
  listen,
  readBody,
  sendJson,
} from './emulator-http.test-support.js';

/** Every scope the emulator's default token holds. */
export const SLACK_ALL_SCOPES = [
  'channels:history',
  'channels:read',
  'chat:write',
  'groups:history',
  'groups:read',
  'users:read',
];

/** State of a token: `ok`, or the error every call with it gets. */
export type SlackTokenState = 'ok' | 'invalid_auth' | 'token_revoked' | 'token_expired' | 'account_inactive';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

/**
 * A Slack Web API emulator (test support) serving a Slack export (`channels.json`, `users.json`,
 * `<channel>/<day>.json`) over node:http on 127.0.0.1: auth.test (with `x-oauth-scopes`), conversations.list/info/
 * history/replies/members (the channel's `members`, offset-cursor pages), users.list/info; POST form or JSON bodies
 * and GET queries; errors as `{ok:false,error}` with HTTP 200 (research note §1–§4). Team id and workspace URL are the ones the importer infers from the export, so permalinks
 * match. Faults, token states, scopes, membership and new/edited/deleted messages are scriptable after start.
 */
export class SlackEmulator {
  /** Base URL for `WebClient({ slackApiUrl })`: `http://127.0.0.1:PORT/api/`. */
  readonly url: string;
  /** Token accepted with every scope. */
  readonly token = 'xoxb-emulator-0000000000-secret';
  readonly requests: LoggedRequest[] = [];
  /** When true, conversations.history/replies allow 1 call a minute and 15 messages a page (research note §4). */
  nonMarketplace = false;
  private readonly faults = new FaultQueue();
  private readonly tokens = new Map<string, { scopes: string[]; state: SlackTokenState }>();
  private readonly notMember = new Set<string>();
  private readonly lastCall = new Map<string, number>();
  private seq = 0;

  private constructor(
    private readonly server: Server,
    origin: string,
    readonly team: { id: string; name: string; url: string },
    readonly channels: JsonObject[],
    readonly users: JsonObject[],
    /** channel id → ts → raw message. */
    readonly messages: Map<string, Map<string, JsonObject>>,
  ) {
    this.url = `${origin}/api/`;
    this.tokens.set(this.token, { scopes: [...SLACK_ALL_SCOPES], state: 'ok' });
  }

  /** Loads the export at `path` and starts listening. */
  static async start(path: string): Promise<SlackEmulator> {
    const src = await openSource(path);
    const channels = (await readJson(src, 'channels.json')) as JsonObject[];
    const users = src.files.includes('users.json') ? ((await readJson(src, 'users.json')) as JsonObject[]) : [];
    const messages = new Map<string, Map<string, JsonObject>>();
    const all: JsonObject[] = [];
    for (const c of channels) {
      const byTs = new Map<string, JsonObject>();
      const files = src.files.filter((f) => f.startsWith(`${c.name}/`) && f.endsWith('.json'));
      const raw: JsonObject[] = [];
      for (const f of files) raw.push(...((await readJson(src, f)) as JsonObject[]));
      raw.sort((a, b) => compareTs(a.ts as string, b.ts as string));
      for (const m of raw) if (!byTs.has(m.ts as string) && m.hidden !== true) byTs.set(m.ts as string, m);
      messages.set(c.id as string, byTs);
      all.push(...raw);
    }
    const ctx = buildSlackContext({
      messages: all,
      users: new Map(),
      fallbackTeam: nonEmpty(users[0], 'team_id'),
      folderName: src.name,
      workspaceUrl: undefined,
    });
    const team = { id: ctx.workspaceId, name: ctx.workspaceName, url: `${ctx.baseUrl}/` };
    let emu: SlackEmulator | undefined;
    const { server, origin } = await listen((req, res) => emu!.handle(req, res));
    emu = new SlackEmulator(server, origin, team, channels, users, messages);
    return emu;
  }

  close(): Promise<void> {
    return close(this.server);
  }

  /** Scripts a fault (see Fault). */
  fault(f: Fault): void {
    this.faults.add(f);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  /** Adds a token (default: every scope) or changes its scopes / state. */
  setToken(token: string, opts: { scopes?: string[]; state?: SlackTokenState } = {}): void {
    const cur = this.tokens.get(token) ?? { scopes: [...SLACK_ALL_SCOPES], state: 'ok' as const };
    this.tokens.set(token, { scopes: opts.scopes ?? cur.scopes, state: opts.state ?? cur.state });
  }

  /** Makes the bot a member of the channel or not (history/replies then fail with `not_in_channel`). */
  setMember(channelId: string, member: boolean): void {
    if (member) this.notMember.delete(channelId);
    else this.notMember.add(channelId);
  }

  /** Makes a channel private (`is_private`, listed as a private_channel) or public again; `members` replaces its list. */
  setPrivate(channelId: string, isPrivate = true, members?: string[]): void {
    const c = this.channel(channelId);
    if (!c) throw new Error(`no channel ${channelId}`);
    c.is_private = isPrivate;
    if (members) c.members = [...members];
  }

  /** Adds a user to a channel's `members` (conversations.members) or removes them (a kick or a leave). */
  setChannelMember(channelId: string, userId: string, member: boolean): void {
    const c = this.channel(channelId);
    if (!c) throw new Error(`no channel ${channelId}`);
    const cur = Array.isArray(c.members) ? (c.members as string[]) : [];
    c.members = member ? [...new Set([...cur, userId])] : cur.filter((u) => u !== userId);
  }

  /**
   * Posts a message now (ts after every existing one); with `thread_ts` it is a reply and the root gets `thread_ts`,
   * `reply_count`, `reply_users`, `latest_reply`. Returns the new ts.
   */
  postMessage(channelId: string, m: { user: string; text: string; thread_ts?: string } & JsonObject): string {
    const byTs = this.channelMessages(channelId);
    const last = [...byTs.keys()].sort(compareTs).at(-1) ?? '0';
    const now = Math.max(Math.floor(Date.now() / 1000), Number(last.split('.')[0]) + 1);
    this.seq += 1;
    const ts = `${now}.${String(this.seq).padStart(6, '0')}`;
    const msg: JsonObject = { type: 'message', ...m, ts, team: this.team.id };
    if (m.thread_ts) {
      const root = byTs.get(m.thread_ts);
      if (!root) throw new Error(`no thread root ${m.thread_ts}`);
      msg.parent_user_id = root.user;
      const users = new Set<string>(Array.isArray(root.reply_users) ? (root.reply_users as string[]) : []);
      users.add(m.user);
      Object.assign(root, {
        thread_ts: root.ts,
        reply_count: (Number(root.reply_count) || 0) + 1,
        reply_users: [...users],
        reply_users_count: users.size,
        latest_reply: ts,
      });
    }
    byTs.set(ts, msg);
    return ts;
  }

  /** Edits a message's text (sets `edited{user, ts}`). */
  editMessage(channelId: string, ts: string, text: string): void {
    const m = this.channelMessages(channelId).get(ts);
    if (!m) throw new Error(`no message ${ts}`);
    Object.assign(m, { text, edited: { user: m.user, ts: `${Math.floor(Date.now() / 1000)}.000000` } });
  }

  /** Deletes a message (it disappears from history and replies). */
  deleteMessage(channelId: string, ts: string): void {
    this.channelMessages(channelId).delete(ts);
  }

  private channelMessages(channelId: string): Map<string, JsonObject> {
    const byTs = this.messages.get(channelId);
    if (!byTs) throw new Error(`no channel ${channelId}`);
    return byTs;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const method = url.pathname.replace(/^\/api\//, '');
    const params: Record<string, string> = Object.fromEntries(url.searchParams);
    if (req.method === 'POST') {
      const body = await readBody(req);
      if ((req.headers['content-type'] ?? '').includes('application/json')) {
        const json = body ? (JSON.parse(body) as Record<string, unknown>) : {};
        for (const [k, v] of Object.entries(json)) params[k] = typeof v === 'string' ? v : JSON.stringify(v);
      } else Object.assign(params, Object.fromEntries(new URLSearchParams(body)));
    }
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : params.token;
    delete params.token;
    url.searchParams.delete('token');
    const entry: LoggedRequest = {
      method: req.method ?? 'GET',
      url: url.pathname + url.search,
      call: method,
      params,
      status: 200,
    };
    this.requests.push(entry);
    const fault = this.faults.take(method) ?? this.marketplaceLimit(method);
    if (fault) {
      entry.fault = fault.kind;
      return this.sendFault(res, fault, entry);
    }
    const state = token ? this.tokens.get(token) : undefined;
    if (!token) return this.reply(res, { ok: false, error: 'not_authed' });
    if (!state) return this.reply(res, { ok: false, error: 'invalid_auth' });
    if (state.state !== 'ok') return this.reply(res, { ok: false, error: state.state });
    const headers = { 'x-oauth-scopes': state.scopes.join(','), 'x-accepted-oauth-scopes': '' };
    const body = this.route(method, params, state.scopes);
    return this.reply(res, body, headers);
  }

  private reply(res: ServerResponse, body: JsonObject, headers: Record<string, string> = {}): void {
    sendJson(res, 200, body, headers);
  }

  private sendFault(res: ServerResponse, f: Fault, entry: LoggedRequest): void {
    if (f.kind === 'drop') {
      res.socket?.destroy();
      return;
    }
    if (f.kind === 'ratelimit') {
      entry.status = 429;
      sendJson(res, 429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(f.retryAfter ?? 1) });
      return;
    }
    if (f.kind === 'error') {
      this.reply(res, { ok: false, error: f.error ?? 'internal_error' });
      return;
    }
    entry.status = f.status ?? 503;
    res.writeHead(entry.status, { 'content-type': 'text/plain' });
    res.end('upstream unavailable');
  }

  /** Non-Marketplace mode: a second history/replies call within 60 s gets a 429. */
  private marketplaceLimit(method: string): Fault | undefined {
    if (!this.nonMarketplace || !/^conversations\.(history|replies)$/.test(method)) return undefined;
    const now = Date.now();
    const last = this.lastCall.get(method);
    if (last !== undefined && now - last < 60_000) {
      return { kind: 'ratelimit', retryAfter: Math.ceil((60_000 - (now - last)) / 1000) };
    }
    this.lastCall.set(method, now);
    return undefined;
  }

  private route(method: string, p: Record<string, string>, scopes: string[]): JsonObject {
    const need = (...s: string[]): JsonObject | null => {
      const missing = s.filter((x) => !scopes.includes(x));
      return missing.length
        ? { ok: false, error: 'missing_scope', needed: missing.join(','), provided: scopes.join(',') }
        : null;
    };
    switch (method) {
      case 'auth.test':
        return {
          ok: true,
          url: this.team.url,
          team: this.team.name,
          user: 'atlas',
          team_id: this.team.id,
          user_id: 'U0ATLASBOT',
          bot_id: 'B0ATLASBOT',
          is_enterprise_install: false,
        };
      case 'conversations.list':
        return this.list(p, need);
      case 'chat.postMessage': {
        // The bot's message (scope chat:write); the bot must be in the channel.
        const missing = need('chat:write');
        if (missing) return missing;
        const c = this.channel(p.channel ?? '');
        if (!c) return { ok: false, error: 'channel_not_found' };
        if (this.notMember.has(c.id as string)) return { ok: false, error: 'not_in_channel' };
        if (!p.text) return { ok: false, error: 'no_text' };
        const ts = this.postMessage(c.id as string, { user: 'U0ATLASBOT', bot_id: 'B0ATLASBOT', text: p.text });
        return { ok: true, channel: c.id, ts, message: this.channelMessages(c.id as string).get(ts)! };
      }
      case 'conversations.info': {
        const c = this.channel(p.channel);
        if (!c) return { ok: false, error: 'channel_not_found' };
        return need(c.is_private ? 'groups:read' : 'channels:read') ?? { ok: true, channel: this.channelObject(c) };
      }
      case 'conversations.history':
      case 'conversations.replies': {
        const c = this.channel(p.channel);
        if (!c) return { ok: false, error: 'channel_not_found' };
        const denied = need(c.is_private ? 'groups:history' : 'channels:history');
        if (denied) return denied;
        if (this.notMember.has(c.id as string)) return { ok: false, error: 'not_in_channel' };
        return method === 'conversations.history' ? this.history(c.id as string, p) : this.replies(c.id as string, p);
      }
      case 'conversations.members': {
        const c = this.channel(p.channel);
        if (!c) return { ok: false, error: 'channel_not_found' };
        const denied = need(c.is_private ? 'groups:read' : 'channels:read');
        if (denied) return denied;
        const members = Array.isArray(c.members) ? (c.members as string[]) : [];
        return { ok: true, ...offsetPage(members, p, 100, (u) => u, 'members') };
      }
      case 'users.list':
        return need('users:read') ?? this.usersList(p);
      case 'users.info': {
        const u = this.users.find((x) => x.id === p.user);
        return need('users:read') ?? (u ? { ok: true, user: u } : { ok: false, error: 'user_not_found' });
      }
      default:
        return { ok: false, error: 'unknown_method' };
    }
  }

  private channel(id: string | undefined): JsonObject | undefined {
    return this.channels.find((c) => c.id === id);
  }

  private channelObject(c: JsonObject): JsonObject {
    const { members, ...rest } = c;
    return {
      ...rest,
      num_members: Array.isArray(members) ? members.length : (c.num_members ?? 0),
      is_member: !this.notMember.has(c.id as string),
    };
  }

  private list(p: Record<string, string>, need: (...s: string[]) => JsonObject | null): JsonObject {
    const types = (p.types ?? 'public_channel').split(',');
    const denied = need(
      ...(types.includes('public_channel') ? ['channels:read'] : []),
      ...(types.includes('private_channel') ? ['groups:read'] : []),
    );
    if (denied) return denied;
    const all = this.channels.filter(
      (c) =>
        (c.is_private ? types.includes('private_channel') : types.includes('public_channel')) &&
        !(p.exclude_archived === 'true' && c.is_archived === true),
    );
    return { ok: true, ...offsetPage(all, p, 100, (c) => this.channelObject(c), 'channels') };
  }

  private usersList(p: Record<string, string>): JsonObject {
    return {
      ok: true,
      cache_ts: Math.floor(Date.now() / 1000),
      ...offsetPage(this.users, p, 100, (u) => u, 'members'),
    };
  }

  private history(channelId: string, p: Record<string, string>): JsonObject {
    const inclusive = p.inclusive === 'true' || p.inclusive === '1';
    const oldest = p.oldest ?? '0';
    const latest = p.latest;
    const limit = this.pageLimit(p.limit, 100, 999);
    const before = p.cursor ? unb64(p.cursor).replace(/^next_ts:/, '') : undefined;
    const top = [...this.channelMessages(channelId).values()]
      .filter((m) => !isReply(m))
      .filter((m) => inWindow(m.ts as string, oldest, latest, inclusive))
      .filter((m) => before === undefined || compareTs(m.ts as string, before) < 0)
      .sort((a, b) => compareTs(b.ts as string, a.ts as string));
    const page = top.slice(0, limit);
    const hasMore = top.length > limit;
    return {
      ok: true,
      messages: page,
      has_more: hasMore,
      pin_count: 0,
      ...(latest !== undefined ? { latest } : {}),
      response_metadata: { next_cursor: hasMore ? b64(`next_ts:${page.at(-1)!.ts}`) : '' },
    };
  }

  private replies(channelId: string, p: Record<string, string>): JsonObject {
    const byTs = this.channelMessages(channelId);
    const asked = p.ts ? byTs.get(p.ts) : undefined;
    const rootTs = asked ? (nonEmpty(asked, 'thread_ts') ?? (asked.ts as string)) : undefined;
    const root = rootTs ? byTs.get(rootTs) : undefined;
    if (!root) return { ok: false, error: 'thread_not_found' };
    const inclusive = p.inclusive === 'true' || p.inclusive === '1';
    const limit = this.pageLimit(p.limit, 1000, 1000);
    const after = p.cursor ? unb64(p.cursor).replace(/^next_ts:/, '') : undefined;
    const replies = [...byTs.values()]
      .filter((m) => m !== root && str(m, 'thread_ts') === rootTs)
      .filter((m) => inWindow(m.ts as string, p.oldest ?? '0', p.latest, inclusive))
      .filter((m) => after === undefined || compareTs(m.ts as string, after) > 0)
      .sort((a, b) => compareTs(a.ts as string, b.ts as string));
    const page = replies.slice(0, Math.max(1, limit - 1));
    const hasMore = replies.length > page.length;
    return {
      ok: true,
      messages: [root, ...page],
      has_more: hasMore,
      response_metadata: { next_cursor: hasMore ? b64(`next_ts:${page.at(-1)!.ts}`) : '' },
    };
  }

  private pageLimit(raw: string | undefined, dflt: number, max: number): number {
    const n = raw === undefined ? dflt : Number(raw);
    const limit = Number.isFinite(n) && n >= 1 ? Math.min(Math.floor(n), max) : dflt;
    return this.nonMarketplace ? Math.min(limit, 15) : limit;
  }
}

/** A reply that history does not show: `thread_ts` names another message, unless it is broadcast to the channel. */
const isReply = (m: JsonObject): boolean =>
  typeof m.thread_ts === 'string' && m.thread_ts !== m.ts && m.subtype !== 'thread_broadcast';

function inWindow(ts: string, oldest: string, latest: string | undefined, inclusive: boolean): boolean {
  const lo = compareTs(ts, oldest);
  if (inclusive ? lo < 0 : lo <= 0) return false;
  if (latest === undefined) return true;
  const hi = compareTs(ts, latest);
  return inclusive ? hi <= 0 : hi < 0;
}

/** Offset-cursor pagination (`offset:<n>` base64) for list methods. */
function offsetPage<T>(
  all: T[],
  p: Record<string, string>,
  dflt: number,
  map: (t: T) => unknown,
  key: string,
): JsonObject {
  const limit = p.limit !== undefined && Number(p.limit) >= 1 ? Math.min(Number(p.limit), 1000) : dflt;
  const offset = p.cursor ? Number(unb64(p.cursor).replace(/^offset:/, '')) || 0 : 0;
  const page = all.slice(offset, offset + limit);
  const next = offset + limit < all.length ? b64(`offset:${offset + limit}`) : '';
  return { [key]: page.map(map), response_metadata: { next_cursor: next } };
}
