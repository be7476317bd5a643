import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { LagRow } from '@atlas/eventlog';
import type { FastifyInstance } from 'fastify';
import pinoPretty from 'pino-pretty';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Request latency of /api routes: a running mean for GET /api/stats/metrics, a histogram for Prometheus. */
export interface Telemetry {
  registry: Registry;
  avgQueryLatencyMs(): number;
  /** /api requests answered since the app started (the mean's count). */
  requestCount(): number;
}

/** A circuit breaker as the breaker gauge reports it. */
export interface BreakerSample {
  /** The breaker's name, e.g. `llm:fast:api.openai.com`. */
  name: string;
  /** The dependency it guards (`llm_provider`, `vector_store`, ...). */
  dependency: string;
  state: 'CLOSED' | 'HALF_OPEN' | 'OPEN';
}

/**
 * What /metrics reads at scrape time besides the request histogram and the consumer lag (each optional):
 * - `registries`: other registries of this process to append (the projectors' and LLM counters, RuntimeMetrics);
 * - `breakers`: every circuit breaker of the process with its state;
 * - `deadLetters`: the dead-letter depth per consumer group and topic (not re-driven; the stats store's count);
 * - `deadLetterQueue`: the dead-letter queue by status (`pending` is its depth: not re-driven yet; `redriven`,
 *   `needs_inspection`), from the dead-letters store;
 * - `writeIntents`: write intents per state (spec "Write intent": pending, applied, failed, abandoned, ...); absent
 *   until write intents exist, and then the gauge has no series.
 */
export interface TelemetrySources {
  registries?: readonly Registry[];
  breakers?: () => readonly BreakerSample[];
  deadLetters?: () => Promise<readonly { group: string; topic: string; count: number }[]>;
  deadLetterQueue?: () => Promise<readonly { status: string; count: number }[]>;
  writeIntents?: () => Promise<readonly { state: string; count: number }[]>;
}

/** What registerTelemetry reads: the event log's consumer lag and, optionally, the other sources of /metrics. */
export interface TelemetryDeps {
  eventLog: { lag(): Promise<LagRow[]> };
  sources?: TelemetrySources | undefined;
}

/** Breaker states as gauge values: CLOSED 0, HALF_OPEN 1, OPEN 2. */
export const BREAKER_GAUGE_VALUE = { CLOSED: 0, HALF_OPEN: 1, OPEN: 2 } as const;

/**
 * Registers the Prometheus metrics of one app (its own registry, so several apps in one process stay apart) and
 * `GET /metrics` (text exposition format):
 * - process defaults (`atlas_process_*`, `atlas_nodejs_*`);
 * - `atlas_http_request_duration_seconds{method, route, status}`: /api requests by route pattern (unmatched URLs are
 *   `route="unmatched"`, so the label set stays bounded);
 * - `atlas_consumer_lag`, `atlas_consumer_committed_offset`, `atlas_topic_end_offset{group, topic, partition}`, read
 *   from the event log at scrape time (lag 0 everywhere: every projector has caught up);
 * - `atlas_circuit_breaker_state{breaker, dependency}` (BREAKER_GAUGE_VALUE), `atlas_dead_letters{group, topic}`,
 *   `atlas_dead_letter_queue{status}` and `atlas_write_intents{state}`, from `deps.sources` (TelemetrySources) at
 *   scrape time;
 * - `atlas_metrics_collect_errors_total{source}`: a source that failed during a scrape (its series are left out);
 * - the registries of `deps.sources.registries` appended (projector events and LLM calls, tokens and cost).
 * Also gives every response an `x-request-id` header: the request's id (Fastify's, which the logger puts on each
 * request's log lines as `reqId`), and logs each request in one line at debug (`request completed`: method, url,
 * status, responseTime in ms).
 */
export const registerTelemetry = (app: FastifyInstance, deps: TelemetryDeps): Telemetry => {
  const registry = new Registry();
  const sources = deps.sources ?? {};
  collectDefaultMetrics({ register: registry, prefix: 'atlas_' });
  const duration = new Histogram({
    name: 'atlas_http_request_duration_seconds',
    help: 'Duration of /api requests',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2, 5],
    registers: [registry],
  });
  const collectErrors = new Counter({
    name: 'atlas_metrics_collect_errors_total',
    help: 'Scrapes during which a metrics source failed (its series were left out)',
    labelNames: ['source'],
    registers: [registry],
  });
  const guarded = async (source: string, fn: () => Promise<void> | void) => {
    try {
      await fn();
    } catch (err) {
      collectErrors.inc({ source });
      app.log.warn({ err, source }, 'metrics source failed');
    }
  };
  const labels = ['group', 'topic', 'partition'] as const;
  // The three lag gauges are filled by one read of the event log per scrape: prom-client collects metrics in
  // parallel, so each gauge's collect awaits the same refresh (a gauge read before it finished would be stale).
  let refreshing: Promise<void> | null = null;
  const refreshLag = (): Promise<void> => {
    refreshing ??= guarded('event_log', async () => {
      const rows = await deps.eventLog.lag();
      lag.reset();
      committed.reset();
      end.reset();
      for (const r of rows) {
        const l = { group: r.group, topic: r.topic, partition: String(r.partition) };
        lag.set(l, r.lag);
        end.set(l, r.endOffset);
        if (r.committedOffset !== null) committed.set(l, r.committedOffset);
      }
    }).finally(() => {
      refreshing = null;
    });
    return refreshing;
  };
  const lag: Gauge<(typeof labels)[number]> = new Gauge({
    name: 'atlas_consumer_lag',
    help: 'End offset minus committed offset',
    labelNames: labels,
    registers: [registry],
    collect: refreshLag,
  });
  const committed: Gauge<(typeof labels)[number]> = new Gauge({
    name: 'atlas_consumer_committed_offset',
    help: 'Committed offset',
    labelNames: labels,
    registers: [registry],
    collect: refreshLag,
  });
  const end: Gauge<(typeof labels)[number]> = new Gauge({
    name: 'atlas_topic_end_offset',
    help: 'End offset (high watermark) of a partition',
    labelNames: labels,
    registers: [registry],
    collect: refreshLag,
  });
  const breakers = new Gauge({
    name: 'atlas_circuit_breaker_state',
    help: 'Circuit breaker state per dependency: 0 closed, 1 half-open, 2 open',
    labelNames: ['breaker', 'dependency'],
    registers: [registry],
    collect() {
      breakers.reset();
      if (!sources.breakers) return;
      for (const b of sources.breakers())
        breakers.set({ breaker: b.name, dependency: b.dependency }, BREAKER_GAUGE_VALUE[b.state]);
    },
  });
  const deadLetters = new Gauge({
    name: 'atlas_dead_letters',
    help: 'Dead-lettered events per consumer group and topic',
    labelNames: ['group', 'topic'],
    registers: [registry],
    async collect() {
      deadLetters.reset();
      const source = sources.deadLetters;
      if (source)
        await guarded('dead_letters', async () => {
          for (const d of await source()) deadLetters.set({ group: d.group, topic: d.topic }, d.count);
        });
    },
  });
  const queue = new Gauge({
    name: 'atlas_dead_letter_queue',
    help: 'Dead letters by status: pending (the depth), redriven, needs_inspection',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      queue.reset();
      const source = sources.deadLetterQueue;
      if (source)
        await guarded('dead_letter_queue', async () => {
          for (const d of await source()) queue.set({ status: d.status }, d.count);
        });
    },
  });
  const intents = new Gauge({
    name: 'atlas_write_intents',
    help: 'Write intents per state',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      intents.reset();
      const source = sources.writeIntents;
      if (source)
        await guarded('write_intents', async () => {
          for (const i of await source()) intents.set({ state: i.state }, i.count);
        });
    },
  });
  let count = 0;
  let totalMs = 0;
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    // The request's one log line, at debug (buildApp turns Fastify's two info lines per request off).
    request.log.debug(
      {
        req: { method: request.method, url: request.url },
        res: { statusCode: reply.statusCode },
        responseTime: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request completed',
    );
    if (!request.url.startsWith('/api/')) return;
    const ms = reply.elapsedTime;
    count++;
    totalMs += ms;
    duration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      ms / 1000,
    );
  });
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', registry.contentType);
    const parts = [await registry.metrics()];
    for (const r of sources.registries ?? []) parts.push(await r.metrics());
    return parts.join('\n');
  });
  return {
    registry,
    avgQueryLatencyMs: () => (count === 0 ? 0 : Math.round((totalMs / count) * 100) / 100),
    requestCount: () => count,
  };
};

/**
 * Fastify options for request ids: an incoming `x-request-id` (at most 128 characters of `[A-Za-z0-9._:-]`) is kept,
 * else a random UUID; the logger writes it as `reqId` on every line of the request.
 */
export const requestIdOptions = {
  requestIdHeader: false as const, // genReqId reads and checks the header itself
  genReqId: (req: { headers: Record<string, string | string[] | undefined> }): string => {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : randomUUID();
  },
};

/**
 * Paths pino removes from every log line (`[Redacted]`): request headers that carry credentials and any field that
 * could hold one, at any depth of one level under the logged object (spec "Authentication": credentials are never
 * logged).
 */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'credentials',
  '*.credentials',
  '*.bot_token',
  '*.signing_secret',
  '*.apiKey',
  '*.api_key',
  '*.password',
  '*.token',
] as const;

/** How the logger writes (LOG_FORMAT): `auto` readable lines on a terminal, JSON lines otherwise. */
export type LogFormat = 'auto' | 'pretty' | 'json';

/** What apiLoggerOptions decides by: the format, whether stdout is a terminal, and where lines go. */
export interface LoggerChoice {
  /** Default `auto`. */
  format?: LogFormat;
  /** Whether the output is a terminal; default `process.stdout.isTTY`. */
  isTTY?: boolean;
  /** Where lines go (tests); default stdout. */
  stream?: { write(line: string): void };
}

/** Whether a logger writes readable lines (pino-pretty) rather than JSON: `pretty`, or `auto` on a terminal. */
export const prettyLogs = (choice: LoggerChoice = {}): boolean =>
  choice.format === 'pretty' ||
  ((choice.format ?? 'auto') === 'auto' && (choice.isTTY ?? process.stdout.isTTY === true));

/**
 * The API's logger (Fastify's own pino) at `level` (LOG_LEVEL), credentials redacted (LOG_REDACT_PATHS) in either
 * form (docs/http.md "Logs"):
 * - on a terminal (or LOG_FORMAT=pretty) readable lines, one per entry (pino-pretty: `[HH:MM:ss.l] LEVEL: message
 *   {fields}`, colours on a terminal, no pid or hostname);
 * - otherwise (or LOG_FORMAT=json) JSON lines (pino's: level number, time in ms, msg, reqId on a request's lines).
 * Requests are logged by registerTelemetry: one line per request at debug, none at info.
 */
export const apiLoggerOptions = (level: string, choice: LoggerChoice = {}) => {
  const base = { level, redact: { paths: [...LOG_REDACT_PATHS], censor: '[Redacted]' } };
  if (!prettyLogs(choice)) return { ...base, ...(choice.stream ? { stream: choice.stream } : {}) };
  const colour = choice.isTTY ?? process.stdout.isTTY === true;
  const sink = choice.stream;
  return {
    ...base,
    stream: pinoPretty({
      colorize: colour,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      destination: sink
        ? new Writable({
            write: (chunk, _enc, done) => {
              sink.write(String(chunk));
              done();
            },
          })
        : 1,
      sync: true,
    }),
  };
};
