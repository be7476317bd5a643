import { createParser } from 'eventsource-parser';
import type { AskEvent } from './types.js';

/**
 * Parses a Server-Sent Events body (as received, in any chunking) into the ask stream's events with a real SSE
 * parser (eventsource-parser): each event's data is one JSON object. Throws on data that is not JSON.
 */
export function parseAskStream(chunks: Iterable<string>): AskEvent[] {
  const events: AskEvent[] = [];
  const parser = createParser({ onEvent: (e) => events.push(JSON.parse(e.data) as AskEvent) });
  for (const c of chunks) parser.feed(c);
  return events;
}

/** Reads a fetch Response's SSE body to the end and parses it (parseAskStream); also the time to the first token. */
export async function readAskStream(res: Response): Promise<{ events: AskEvent[]; firstTokenMs: number | null }> {
  const started = performance.now();
  const events: AskEvent[] = [];
  let firstTokenMs: number | null = null;
  const parser = createParser({
    onEvent: (e) => {
      const ev = JSON.parse(e.data) as AskEvent;
      if (ev.type === 'token' && firstTokenMs === null) firstTokenMs = performance.now() - started;
      events.push(ev);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
    parser.feed(decoder.decode(chunk, { stream: true }));
  return { events, firstTokenMs };
}

/**
 * The spec's four rules of the ask stream ("Events → Ask stream"), checked on a complete stream: returns what is
 * violated (empty: all hold).
 * 1. Tokens, in order, concatenate to the answer (`answer`, when given: e.g. the stored message) and the stream ends
 *    with exactly one `done`, after every token and citation.
 * 2. One citation event per source reference: done.citations_count equals the number of citation events, and no
 *    citation id repeats.
 * 3. Citation ids have the form `[n]` and match the references in the answer text: every citation's id occurs in
 *    the text and every `[n]` in the text has its citation event.
 * 4. done carries the session_id for follow-ups (a non-empty string) and the message_id of the tokens.
 * Also checks the citation objects' fields (text_excerpt at most 100 characters).
 */
export function askStreamViolations(events: readonly AskEvent[], answer?: string): string[] {
  const out: string[] = [];
  const doneAt = events.findIndex((e) => e.type === 'done');
  const done = events[doneAt];
  if (done?.type !== 'done') return ['no done event'];
  if (doneAt !== events.length - 1) out.push('events after done');
  if (events.filter((e) => e.type === 'done').length !== 1) out.push('more than one done event');
  const tokens = events.filter((e) => e.type === 'token');
  const text = tokens.map((t) => t.content).join('');
  if (answer !== undefined && text !== answer) out.push('tokens do not concatenate to the answer');
  if (tokens.some((t) => t.message_id !== done.message_id)) out.push('a token carries another message_id');
  const citations = events.flatMap((e) => (e.type === 'citation' ? [e.citation] : []));
  if (done.citations_count !== citations.length)
    out.push(`citations_count ${done.citations_count} but ${citations.length} citation events`);
  const ids = citations.map((c) => c.id);
  if (new Set(ids).size !== ids.length) out.push('a citation id repeats');
  for (const id of ids) {
    if (!/^\[\d+\]$/.test(id)) out.push(`citation id ${id} is not of the form [n]`);
    if (!text.includes(id)) out.push(`citation ${id} is not referenced in the answer`);
  }
  for (const ref of new Set(text.match(/\[\d+\]/g) ?? []))
    if (!ids.includes(ref)) out.push(`reference ${ref} has no citation event`);
  for (const c of citations) {
    if ([...c.text_excerpt].length > 100) out.push(`citation ${c.id} text_excerpt over 100 characters`);
    for (const k of ['author', 'channel', 'timestamp', 'permalink'] as const)
      if (typeof c[k] !== 'string') out.push(`citation ${c.id} lacks ${k}`);
  }
  if (typeof done.session_id !== 'string' || done.session_id.length === 0) out.push('done lacks session_id');
  if (!Number.isInteger(done.tokens_used)) out.push('tokens_used is not an integer');
  return out;
}
