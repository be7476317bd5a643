import { createParser } from 'eventsource-parser';
import type { z } from 'zod';
import { AskStreamEventSchema } from './ask.js';
import { ErrorBodySchema, statusOfCode } from './errors.js';
import { additionContractOf, contractOf } from './routes.js';
import { STATS_EXPORT_COLUMNS, StatsExportSchema } from './stats.js';

/** An answered request as the validator reads it. */
export interface RawResponse {
  status: number;
  contentType: string | undefined;
  raw: string;
}

/** One event of an ask stream, parsed but not yet validated. */
export type RawEvent = { type?: unknown } & Record<string, unknown>;

/** What validateResponse found: the endpoints.txt route (null: not a spec route), success or not, and the issues. */
export interface Validation {
  route: string | null;
  success: boolean;
  issues: string[];
  /** The events of an event-stream answer, in order. */
  events?: RawEvent[];
}

/** The `data:` events of a Server-Sent Events body (spec "Events → Ask stream": each a JSON object). */
export const parseSse = (raw: string): { events: RawEvent[]; issues: string[] } => {
  const events: RawEvent[] = [];
  const issues: string[] = [];
  const parser = createParser({
    onEvent: (e) => {
      try {
        events.push(JSON.parse(e.data) as RawEvent);
      } catch {
        issues.push(`event data is not JSON: ${e.data.slice(0, 80)}`);
      }
    },
  });
  parser.feed(raw);
  return { events, issues };
};

const shown = (v: unknown): string => {
  const s = JSON.stringify(v);
  return s === undefined ? 'undefined' : s.length > 120 ? `${s.slice(0, 117)}...` : s;
};

/** A schema's issues, one line each: `path: message (value)`. */
export const schemaIssues = (schema: z.ZodType, value: unknown, prefix = ''): string[] => {
  const r = schema.safeParse(value);
  if (r.success) return [];
  return r.error.issues.map((i) => {
    const at = i.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], value);
    const keys = 'keys' in i && Array.isArray(i.keys) ? ` ${i.keys.join(', ')}` : '';
    return `${prefix}${i.path.join('.') || '(body)'}: ${i.message}${keys} (${shown(at)})`;
  });
};

const isJson = (ct: string | undefined) => !!ct && /^application\/json\b/.test(ct);
const isSse = (ct: string | undefined) => !!ct && /^text\/event-stream\b/.test(ct);

/** A failure: the shared error body with the status of its code, or (ask routes) a stream of one error event. */
const validateFailure = (res: RawResponse, sse: boolean): string[] => {
  if (sse && isSse(res.contentType)) {
    const { events, issues } = parseSse(res.raw);
    if (events.length !== 1 || events[0]?.type !== 'error')
      issues.push(`a failed ask stream holds one error event, got ${shown(events.map((e) => e.type))}`);
    return [...issues, ...events.flatMap((e, n) => schemaIssues(AskStreamEventSchema, e, `event ${n}: `))];
  }
  if (!isJson(res.contentType)) return [`error body is not JSON (content-type ${res.contentType})`];
  let body: unknown;
  try {
    body = JSON.parse(res.raw);
  } catch {
    return ['error body is not JSON'];
  }
  const issues = schemaIssues(ErrorBodySchema, body);
  const code = (body as { error?: { code?: unknown } })?.error?.code;
  if (typeof code === 'string' && statusOfCode(code) !== undefined && statusOfCode(code) !== res.status)
    issues.push(`status ${res.status} but code ${code} answers ${statusOfCode(code)}`);
  return issues;
};

const validateExport = (res: RawResponse): string[] => {
  if (res.contentType?.startsWith('text/csv')) {
    const [header, ...rows] = res.raw.trimEnd().split(/\r?\n/);
    const issues: string[] = [];
    if (header !== STATS_EXPORT_COLUMNS.join(',')) issues.push(`CSV header is ${shown(header)}`);
    return issues.concat(rows.length === 0 ? ['CSV export has no rows'] : []);
  }
  if (!isJson(res.contentType)) return [`export content-type ${res.contentType}`];
  return schemaIssues(StatsExportSchema, JSON.parse(res.raw));
};

/**
 * Validates an answer of `route` (Fastify's pattern, `GET /api/channels/:channel_id`; an endpoints.txt route or a
 * documented addition of ADDITION_RESPONSES) against the contract: a 2xx
 * against the route's response schema (status, content type, body), a 4xx or 5xx against the shared error body (with
 * the status of its code), or, on the ask routes, a stream of one valid error event.
 */
export const validateResponse = (route: string, res: RawResponse): Validation => {
  const found = contractOf(route) ?? additionContractOf(route);
  if (!found)
    return {
      route: null,
      success: false,
      issues: [`${route} is neither a route of endpoints.txt nor a documented addition with a schema`],
    };
  const { contract } = found;
  if (res.status >= 400)
    return { route: found.route, success: false, issues: validateFailure(res, contract.kind === 'sse') };
  const issues: string[] = [];
  const expected = contract.kind === 'sse' || contract.kind === 'export' ? 200 : contract.status;
  if (res.status !== expected) issues.push(`status ${res.status}, expected ${expected}`);
  switch (contract.kind) {
    case 'empty':
      if (res.raw !== '') issues.push(`body of a ${res.status} is not empty: ${shown(res.raw)}`);
      break;
    case 'export':
      issues.push(...validateExport(res));
      break;
    case 'sse': {
      if (!isSse(res.contentType)) issues.push(`content-type ${res.contentType}, expected text/event-stream`);
      const { events, issues: parsed } = parseSse(res.raw);
      issues.push(...parsed, ...events.flatMap((e, n) => schemaIssues(AskStreamEventSchema, e, `event ${n}: `)));
      const last = events.at(-1)?.type;
      if (last !== 'done' && last !== 'error') issues.push(`the stream ends with ${shown(last)}, not done or error`);
      return { route: found.route, success: true, issues, events };
    }
    case 'json':
      if (!isJson(res.contentType)) issues.push(`content-type ${res.contentType}, expected application/json`);
      try {
        issues.push(...schemaIssues(contract.schema, JSON.parse(res.raw)));
      } catch {
        issues.push('body is not JSON');
      }
  }
  return { route: found.route, success: true, issues };
};
