import type { Freshness } from '@atlas/core/freshness';
import { createParser } from 'eventsource-parser';
import { ApiError, errorOf } from './client';
import { readKey } from './key';

/** An ask citation (spec "Ask session and messages"). */
export interface AskCitation {
  id: string;
  author: string;
  channel: string;
  timestamp: string;
  text_excerpt: string;
  permalink: string;
  source_message_id: string;
  media_type: string | null;
  media_name: string | null;
}

/** One event of the ask stream (spec "Events / Ask stream"). */
export type AskEvent =
  | { type: 'token'; content: string; message_id: string; is_complete?: boolean }
  | { type: 'citation'; citation: AskCitation }
  | {
      type: 'done';
      message_id: string;
      session_id: string;
      tokens_used: number;
      citations_count: number;
      duration_ms?: number;
      abstained?: boolean;
      /** Atlas's addition (docs/ask.md "Freshness"): how current the answer is. */
      freshness?: Freshness;
      [extra: string]: unknown;
    }
  | { type: 'error'; error: string; code?: string; retry_after?: number };

/**
 * What an ask sends: the question, the session to continue, the mode, the instant to answer as of; in a channel when
 * `channelId` is set.
 */
export interface AskRequest {
  question: string;
  session_id?: string;
  mode?: 'quick' | 'deep' | 'summarize';
  max_results?: number;
  /** Answer as the knowledge base stood at this ISO 8601 UTC instant (docs/ask.md "As of a date"). */
  as_of?: string;
  channelId?: string;
}

/**
 * A refusal sent as a stream (docs/ask.md: an invalid body is a 400 stream, too many asks a 429 stream, each with one
 * `error` event): its code, message and retry_after as an ApiError; the shared error body otherwise.
 */
const streamErrorOf = async (res: Response): Promise<ApiError> => {
  const text = await res.text();
  for (const line of text.split('\n'))
    if (line.startsWith('data:'))
      try {
        const e = JSON.parse(line.slice(5)) as Partial<Extract<AskEvent, { type: 'error' }>>;
        if (e.type === 'error')
          return new ApiError(
            res.status,
            e.code ?? 'HTTP_ERROR',
            e.error ?? res.statusText,
            null,
            e.retry_after ?? null,
          );
      } catch {
        /* not an event: fall through */
      }
  return new ApiError(res.status, 'HTTP_ERROR', `${res.status} ${res.statusText}`, null, null);
};

/**
 * Asks and calls `onEvent` for each event as it arrives (POST /api/ask, or /api/channels/{id}/ask), until `done`,
 * `error`, the end of the stream or `signal` aborts (stop). A refusal before the stream (4xx: the shared error body)
 * throws an ApiError with its status, code and Retry-After.
 */
export const askStream = async (
  req: AskRequest,
  onEvent: (e: AskEvent) => void,
  signal: AbortSignal,
): Promise<void> => {
  const { channelId, ...body } = req;
  const key = readKey();
  const res = await fetch(channelId ? `/api/channels/${encodeURIComponent(channelId)}/ask` : '/api/ask', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body: JSON.stringify({ include_citations: true, ...body }),
    signal,
  });
  if (!res.ok && res.headers.get('content-type')?.startsWith('text/event-stream')) throw await streamErrorOf(res);
  if (!res.ok || !res.body) throw await errorOf(res);
  const parser = createParser({
    onEvent(ev) {
      try {
        onEvent(JSON.parse(ev.data) as AskEvent);
      } catch {
        /* a malformed data line is skipped: the stream's rules say each is one JSON object */
      }
    },
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    parser.feed(value);
  }
};
