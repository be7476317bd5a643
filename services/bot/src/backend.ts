import { type Freshness, freshnessText } from '@atlas/core';
import { createParser } from 'eventsource-parser';
import { type BotReply, ephemeral, type ReplySource } from './reply.js';

/** The header that carries BRIDGE_API_KEY from the bot to the backend (spec "Authentication" 3). */
export const BRIDGE_KEY_HEADER = 'x-atlas-bridge-key';
/** The header naming the platform user the bot acts for (`<platform>:<user id>`; docs/access.md "The bridge"). */
export const BRIDGE_USER_HEADER = 'x-atlas-platform-user';

/** The platform user who invoked a command: the backend answers with what that user may see. */
export interface Asker {
  platform: 'platform_a' | 'platform_b';
  user_id: string;
}

export interface BackendOptions {
  /** The backend's base address (ATLAS_API_URL), e.g. http://127.0.0.1:8000; paths start with /api. */
  apiUrl: string;
  /** BRIDGE_API_KEY, sent as `x-atlas-bridge-key`; null: no header. */
  bridgeKey: string | null;
  /** The public API address for links (PUBLIC_URL); default apiUrl. */
  publicUrl?: string;
  /** Per-request timeouts, ms: an ask streams for longer (LLM answers) than a sync start or a wiki read. */
  askTimeoutMs?: number;
  requestTimeoutMs?: number;
}

/** An ask citation as the stream sends it (spec "Ask stream": citation event). */
interface AskCitation {
  id: string;
  author?: string;
  channel?: string;
  timestamp?: string;
  permalink?: string | null;
}

type AskEvent =
  | { type: 'token'; content: string }
  | { type: 'citation'; citation: AskCitation }
  | { type: 'done'; citations_count: number; freshness?: Freshness }
  | { type: 'error'; error: string; code?: string; retry_after?: number; details?: { reason?: string } };

/**
 * The freshness mark under an answer (issue 27 point 3; docs/bot.md): a blank line and "(current to 14:02 UTC, 3
 * messages still being read)" in the shared wording, in UTC; nothing when the response carries no mark.
 */
export const freshnessLine = (f: Freshness | undefined | null): string =>
  f ? `\n\n(${freshnessText(f, { timeZone: 'UTC', zoneLabel: 'UTC' })})` : '';

/**
 * A digest (the body of GET /api/channels/{channel_id}/digest, docs/digests.md) as the bot shows it: its Markdown text
 * without its own "Sources" block, the citations as sources (`[n]`, author and date, permalink), in the channel when
 * it has activity (a quiet period is shown to the asker only). The reply of `/atlas digest` and the posted digest.
 */
export const digestReply = (body: Record<string, unknown>): BotReply => {
  const citations = Array.isArray(body.citations)
    ? (body.citations as { id: number; author: string; timestamp: string; permalink: string }[])
    : [];
  // The text's own "Sources" block is left out: the platform renders the sources as links.
  const text = String(body.text ?? '').split('\n\n*Sources*')[0] ?? '';
  return {
    text,
    sources: citations.map((c) => ({
      id: `[${c.id}]`,
      label: `${c.author}, ${c.timestamp.slice(0, 10)}`,
      url: c.permalink || null,
    })),
    visibility: body.has_activity ? 'in_channel' : 'ephemeral',
  };
};

/** The reply when the backend cannot be reached or answers 5xx. */
export const BACKEND_UNREACHABLE_TEXT =
  'Atlas cannot be reached right now, so this command could not run. Please try again in a minute.';
const BRIDGE_REFUSED_TEXT =
  'Atlas refused this bot (its bridge key does not match): an admin needs to set the same BRIDGE_API_KEY on the bot and on Atlas.';

/**
 * The bot's client of the backend API (spec "Authentication" 3: the bot reaches the backend at its configured address
 * with the shared bridge key). Every method answers a BotReply and never throws for the backend's failures: a
 * network error, a timeout or a 5xx becomes BACKEND_UNREACHABLE_TEXT, a 401 a text about the bridge key, and the
 * backend's error bodies (`{error: {code, message, details}}`) are turned into sentences.
 */
export class BackendClient {
  private readonly publicUrl: string;

  constructor(private readonly opts: BackendOptions) {
    this.publicUrl = (opts.publicUrl ?? opts.apiUrl).replace(/\/+$/, '');
  }

  /**
   * `/atlas ask`: POST /api/ask {question} (spec "Ask"), the SSE stream collected into one reply: the concatenated
   * tokens, and the citations as sources (`[n]`, author, #channel, date, permalink). Visible in the channel. An error
   * event becomes an ephemeral text (RATE_LIMIT_EXCEEDED with its retry_after in seconds). The answer cites only the
   * channels `asker` may see (the API bounds the bridge's ask to them, docs/access.md "What a caller sees").
   */
  async ask(question: string, asker: Asker | null = null): Promise<BotReply> {
    const res = await this.request('POST', '/api/ask', { question }, this.opts.askTimeoutMs ?? 120_000, asker);
    if ('reply' in res) return res.reply;
    const events = await collectSse(res.response);
    const failure = events.find((e): e is Extract<AskEvent, { type: 'error' }> => e.type === 'error');
    if (failure) {
      if (failure.code === 'RATE_LIMIT_EXCEEDED')
        return ephemeral(`Atlas is answering many questions right now: try again in ${failure.retry_after ?? 60} s.`);
      return ephemeral(`Atlas could not answer: ${failure.error}`);
    }
    const done = events.find((e): e is Extract<AskEvent, { type: 'done' }> => e.type === 'done');
    if (!done) return ephemeral(BACKEND_UNREACHABLE_TEXT);
    const text = events
      .flatMap((e) => (e.type === 'token' ? [e.content] : []))
      .join('')
      .trim();
    const sources: ReplySource[] = events.flatMap((e) => (e.type === 'citation' ? [sourceOf(e.citation)] : []));
    const answer = text || 'Atlas found nothing to answer this with.';
    return { text: answer + freshnessLine(done.freshness), sources, visibility: 'in_channel' };
  }

  /**
   * `/atlas sync`: POST /api/sync {channel_id} (spec "Sync"); the platform's channel id is Atlas's channel id (the
   * importers and the sync worker keep platform ids). Answers the job id and estimate, or why it could not start
   * (not in Atlas / not connected 404-400, already running 409 with the open job).
   */
  async sync(channelId: string, channelName?: string | null, asker: Asker | null = null): Promise<BotReply> {
    const res = await this.request('POST', '/api/sync', { channel_id: channelId }, this.opts.requestTimeoutMs, asker);
    if ('reply' in res) return res.reply;
    const body = (await res.response.json()) as Record<string, unknown>;
    const name = channelName ? `#${channelName}` : 'this channel';
    if (res.response.ok)
      return ephemeral(
        `Sync of ${name} started (job ${String(body.job_id)}, about ${Number(body.estimated_messages ?? 0)} messages). ` +
          'New facts become searchable as each batch is processed.',
      );
    const err = errorOf(body);
    if (res.response.status === 404)
      return ephemeral(`${name} is not in Atlas yet: connect its workspace and select the channel, then sync again.`);
    if (err.code === 'CONFLICT')
      return ephemeral(`A sync of ${name} is already running (job ${String(err.details?.job_id ?? 'unknown')}).`);
    return ephemeral(`The sync could not start: ${err.message}`);
  }

  /**
   * `/atlas wiki`: GET /api/wiki/{channel_id} (spec "Wiki"); answers the link `<PUBLIC_URL>/wiki/<channel_id>` (the
   * readable HTML wiki the API serves, services/api/src/routes/wiki-html.ts) with the channel's name, topic count and
   * generation time, or, before a first generation (404), how to get one.
   */
  async wiki(channelId: string, asker: Asker | null = null): Promise<BotReply> {
    const path = `/api/wiki/${encodeURIComponent(channelId)}`;
    const res = await this.request('GET', path, undefined, this.opts.requestTimeoutMs, asker);
    if ('reply' in res) return res.reply;
    const body = (await res.response.json()) as Record<string, unknown>;
    if (res.response.status === 404)
      return ephemeral(
        'This channel has no wiki yet: it is generated once the channel has facts (an admin can start it with POST /api/wiki/refresh).',
      );
    if (!res.response.ok) return ephemeral(`The wiki could not be read: ${errorOf(body).message}`);
    const pages = Array.isArray(body.pages) ? body.pages.length : 0;
    const stale = body.is_stale ? ' (an update is pending)' : '';
    const fresh = freshnessLine(body.freshness as Freshness | undefined);
    return {
      text: `Wiki of #${String(body.channel_name ?? channelId)}: ${pages} sections, generated ${String(body.generated_at ?? '')}${stale}.${fresh}`,
      sources: [
        {
          id: 'wiki',
          label: `#${String(body.channel_name ?? channelId)} wiki`,
          url: `${this.publicUrl}/wiki/${encodeURIComponent(channelId)}`,
        },
      ],
      visibility: 'ephemeral',
    };
  }

  /**
   * `/atlas digest`: GET /api/channels/{channel_id}/digest (docs/digests.md), the 7 days up to now: its Markdown text
   * in the channel with its citations as sources (`[n]`, author and date, permalink); a quiet week says so; a channel
   * not in Atlas (404) says how to bring it in.
   */
  async digest(channelId: string, asker: Asker | null = null): Promise<BotReply> {
    const path = `/api/channels/${encodeURIComponent(channelId)}/digest?days=7`;
    const res = await this.request('GET', path, undefined, this.opts.requestTimeoutMs, asker);
    if ('reply' in res) return res.reply;
    const body = (await res.response.json()) as Record<string, unknown>;
    if (res.response.status === 404)
      return ephemeral('This channel is not in Atlas yet: connect its workspace and sync it, then ask for its digest.');
    if (!res.response.ok) return ephemeral(`The digest could not be made: ${errorOf(body).message}`);
    return digestReply(body);
  }

  /** GET /api/health within `timeoutMs`: true when the backend answers 2xx (its own health says healthy or degraded). */
  async reachable(timeoutMs = 2_000): Promise<boolean> {
    const res = await this.request('GET', '/api/health', undefined, timeoutMs);
    return !('reply' in res) && res.response.ok;
  }

  private async request(
    method: 'GET' | 'POST',
    path: string,
    body: object | undefined,
    timeoutMs = 10_000,
    asker: Asker | null = null,
  ): Promise<{ response: Response } | { reply: BotReply }> {
    let response: Response;
    try {
      response = await fetch(`${this.opts.apiUrl.replace(/\/+$/, '')}${path}`, {
        method,
        headers: {
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...(this.opts.bridgeKey ? { [BRIDGE_KEY_HEADER]: this.opts.bridgeKey } : {}),
          ...(asker ? { [BRIDGE_USER_HEADER]: `${asker.platform}:${asker.user_id}` } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch {
      return { reply: ephemeral(BACKEND_UNREACHABLE_TEXT) };
    }
    if (response.status === 401) {
      await response.body?.cancel();
      return { reply: ephemeral(BRIDGE_REFUSED_TEXT) };
    }
    if (response.status >= 500 && response.status !== 503) {
      await response.body?.cancel();
      return { reply: ephemeral(BACKEND_UNREACHABLE_TEXT) };
    }
    if (response.status === 503 && !(response.headers.get('content-type') ?? '').includes('json')) {
      await response.body?.cancel();
      return { reply: ephemeral(BACKEND_UNREACHABLE_TEXT) };
    }
    return { response };
  }
}

/** Reads a whole SSE response into its `data:` events (JSON), in order. A broken stream ends the list early. */
const collectSse = async (response: Response): Promise<AskEvent[]> => {
  const events: AskEvent[] = [];
  const parser = createParser({
    onEvent: (e) => {
      try {
        events.push(JSON.parse(e.data) as AskEvent);
      } catch {
        // not JSON: not an ask event
      }
    },
  });
  try {
    const decoder = new TextDecoder();
    for await (const chunk of response.body ?? []) parser.feed(decoder.decode(chunk, { stream: true }));
  } catch {
    // a cut stream: the events so far (without `done`, the caller answers that Atlas is unreachable)
  }
  return events;
};

const sourceOf = (c: AskCitation): ReplySource => {
  const date = c.timestamp ? c.timestamp.slice(0, 10) : null;
  const label = [c.author, c.channel ? `#${c.channel}` : null, date].filter(Boolean).join(', ');
  return { id: c.id, label: label || 'source', url: c.permalink || null };
};

const errorOf = (
  body: Record<string, unknown>,
): { code: string; message: string; details?: Record<string, unknown> } => {
  const e = body.error as { code?: string; message?: string; details?: Record<string, unknown> } | undefined;
  return {
    code: e?.code ?? 'UNKNOWN',
    message: e?.message ?? 'unknown error',
    ...(e?.details ? { details: e.details } : {}),
  };
};
