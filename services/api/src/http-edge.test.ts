import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { AtlasError, loadConfig } from '@atlas/core';
import { openDatabase } from '@atlas/db';
import { LlmChain, OpenAiLlmProvider } from '@atlas/providers';
import { type FakeOpenAiServer, ok, startFakeOpenAiServer } from '@atlas/providers/testing';
import type { AskEvent } from '@atlas/query';
import { askLlmOf, parseAskStream, readAskStream } from '@atlas/query';
import { apiPorts, openRuntime, type Runtime } from '@atlas/runtime';
import { KyselyDocumentStore } from '@atlas/stores';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';
import { httpServerOptions } from './http-server.js';
import { apiLoggerOptions } from './telemetry.js';

/** The shared error body, exactly: `{error: {code, message, details?}}` with a non-empty message. */
const expectErrorBody = (body: unknown, code: string) => {
  expect(body).toEqual({
    error: {
      code,
      message: expect.stringMatching(/\S/),
      ...((body as { error?: { details?: unknown } })?.error?.details ? { details: expect.any(Object) } : {}),
    },
  });
};
const expectJsonError = (res: LightMyRequestResponse, status: number, code: string) => {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expectErrorBody(res.json(), code);
};
/** An ask stream refused before it started: `status`, text/event-stream, one error event with `code`. */
const expectStreamError = (res: { status: number; type: string | null; events: AskEvent[] }, status: number) => {
  expect(res.status).toBe(status);
  expect(res.type).toMatch(/^text\/event-stream/);
  expect(res.events).toEqual([
    expect.objectContaining({ type: 'error', code: status >= 500 ? 'INTERNAL_ERROR' : 'INVALID_REQUEST' }),
  ]);
};

/** `store` (a real adapter) with one method replaced, the others bound to it (class instances keep private state). */
const withMethod = <T extends object>(store: T, name: keyof T, fn: (...args: never[]) => Promise<unknown>): T =>
  new Proxy(store, {
    get(target, prop) {
      if (prop === name) return fn;
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });

/** A raw HTTP exchange: writes `chunks`, then reads until the server closes (or `giveUpMs`). */
const rawExchange = (port: number, chunks: string[], giveUpMs = 10_000) =>
  new Promise<{ text: string; closedAfterMs: number }>((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open for ${giveUpMs} ms: ${JSON.stringify(text)}`));
    }, giveUpMs);
    socket.on('connect', () => {
      for (const c of chunks) socket.write(c);
    });
    socket.on('data', (d) => {
      text += d.toString('utf8');
    });
    socket.on('error', () => undefined); // a reset after the answer: the close below still fires
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closedAfterMs: Date.now() - started });
    });
  });
const parseRaw = (text: string) => {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : null };
};

/**
 * Issue 21, point 2 (inputs that still hurt) at the HTTP edge, on the embedded profile (PGlite in memory, a
 * listening server with short timeouts): bodies that never finish, NUL characters, the framework's own errors and
 * 5xx bodies.
 */
describe('issue 21: the HTTP edge', () => {
  let rt: Runtime;
  let app: FastifyInstance; // default timeouts
  let base: string;
  let short: FastifyInstance; // short timeouts, a slow model behind ask
  let port: number;
  let llm: FakeOpenAiServer;
  const lines: Record<string, unknown>[] = [];
  const logger = () =>
    apiLoggerOptions('info', { format: 'json', stream: { write: (l: string) => void lines.push(JSON.parse(l)) } });
  const TIMEOUTS = { requestMs: 800, headersMs: 400, keepAliveMs: 500 };

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none' }));
    app = await buildApp(apiPorts(rt), { logger: logger() });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    llm = await startFakeOpenAiServer();
    const ports = apiPorts(rt);
    const quality = new LlmChain({
      tier: 'quality',
      providers: [new OpenAiLlmProvider({ baseURL: llm.baseURL, model: 'slow', timeoutMs: 10_000 })],
      breaker: { failureThreshold: 3, streakMs: 60_000, resetMs: 60_000 },
    });
    short = await buildApp(
      { ...ports, ask: { ...ports.ask!, llm: { quality: askLlmOf(quality), fast: null } } },
      { logger: logger(), ...httpServerOptions(TIMEOUTS) },
    );
    await short.listen({ port: 0, host: '127.0.0.1' });
    port = (short.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await short?.close();
    await app?.close();
    await llm?.close();
    await rt?.close();
  });

  describe('timeouts (issue 21 point 2: "a request whose body never finishes keeps its connection open for ever")', () => {
    it('a body that stops after 10 of 1000 bytes: 408 REQUEST_TIMEOUT with the error body, closed within the timeout', async () => {
      const { text, closedAfterMs } = await rawExchange(port, [
        'POST /api/search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
        '{"query":"',
      ]);
      const res = parseRaw(text);
      expect(res.status).toBe(408);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.connection).toBe('close');
      expectErrorBody(res.body, 'REQUEST_TIMEOUT');
      expect(res.body.error.message).toContain('HTTP_REQUEST_TIMEOUT_MS');
      // The request had arrived as far as its headers: the 408 carries its id, as header and in details.
      expect(res.body.error.details.request_id).toBe(res.headers['x-request-id']);
      expect(closedAfterMs).toBeGreaterThanOrEqual(TIMEOUTS.requestMs - 50);
      expect(closedAfterMs).toBeLessThan(TIMEOUTS.requestMs + 1000);
    });

    it('headers that never finish, and a connection that sends nothing: 408 after the headers timeout', async () => {
      for (const chunks of [['GET /api/health HTTP/1.1\r\nHost: localhost\r\n'], []]) {
        const { text, closedAfterMs } = await rawExchange(port, chunks);
        const res = parseRaw(text);
        expect(res.status).toBe(408);
        expectErrorBody(res.body, 'REQUEST_TIMEOUT');
        expect(res.body.error.message).toContain('HTTP_HEADERS_TIMEOUT_MS');
        expect(closedAfterMs).toBeLessThan(TIMEOUTS.headersMs + 1000);
      }
    });

    it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
      const { text, closedAfterMs } = await rawExchange(port, ['GET /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n']);
      expect(text).toMatch(/^HTTP\/1\.1 200/);
      expect(closedAfterMs).toBeGreaterThanOrEqual(TIMEOUTS.keepAliveMs - 50);
      expect(closedAfterMs).toBeLessThan(TIMEOUTS.keepAliveMs + 2000);
    });

    it('headers over the size limit (431) and a malformed request (400) carry the error body too', async () => {
      const big = parseRaw(
        (
          await rawExchange(port, [
            `GET /api/health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
          ])
        ).text,
      );
      expect(big.status).toBe(431);
      expectErrorBody(big.body, 'REQUEST_HEADERS_TOO_LARGE');
      const garbage = parseRaw((await rawExchange(port, ['NOT HTTP AT ALL\r\n\r\n'])).text);
      expect(garbage.status).toBe(400);
      expectErrorBody(garbage.body, 'INVALID_REQUEST');
    });

    it('a request that arrives in time is answered however long its answer streams (the ask stream, 3x the timeout)', async () => {
      llm.reply(ok('Nothing in the facts says so.', { delayMs: 3 * TIMEOUTS.requestMs }));
      const started = Date.now();
      const res = await fetch(`http://127.0.0.1:${port}/api/ask`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        // The runtime holds no facts: without the attached file ask would abstain without calling the model.
        body: JSON.stringify({
          question: 'What does the retry policy say?',
          mode: 'quick',
          attachments: [
            { name: 'policy.txt', content_type: 'text/plain', data: Buffer.from('Retry 3 times.').toString('base64') },
          ],
        }),
      });
      expect(res.status).toBe(200);
      const { events } = await readAskStream(res);
      expect(Date.now() - started).toBeGreaterThan(3 * TIMEOUTS.requestMs);
      expect(events.at(-1)).toMatchObject({ type: 'done' });
      expect(events.some((e) => e.type === 'token' && e.content.includes('Nothing'))).toBe(true);
    });
  });

  describe('the framework\'s own errors carry the shared body (issue 21 point 2: "including those the framework produces itself")', () => {
    const post = (url: string, payload: string | Buffer, contentType: string) =>
      app.inject({ method: 'POST', url, payload, headers: { 'content-type': contentType } });

    it('malformed JSON and an empty JSON body: 400 INVALID_REQUEST', async () => {
      const bad = await post('/api/search', '{"query": "kafka",', 'application/json');
      expectJsonError(bad, 400, 'INVALID_REQUEST');
      expect(bad.json().error.message).toMatch(/^the body is not valid JSON/);
      expectJsonError(await post('/api/search', '', 'application/json'), 400, 'INVALID_REQUEST');
    });

    it('a content type the route does not take: 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const res = await post('/api/search', '<query>kafka</query>', 'application/xml');
      expectJsonError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(res.json().error.message).toContain('application/xml');
    });

    it('a body over the limit: 413 PAYLOAD_TOO_LARGE', async () => {
      const res = await post(
        '/api/search',
        JSON.stringify({ query: 'x'.repeat(13 * 1024 * 1024) }),
        'application/json',
      );
      expectJsonError(res, 413, 'PAYLOAD_TOO_LARGE');
      expect(res.json().error.message).toContain(String(12 * 1024 * 1024));
    });

    it('a malformed percent-encoding and a path parameter over 100 characters: 400 INVALID_REQUEST', async () => {
      const bad = await app.inject({ method: 'GET', url: '/api/channels/%E0%A4%A' });
      expectJsonError(bad, 400, 'INVALID_REQUEST');
      expect(bad.headers['x-request-id']).toBeTruthy();
      expectJsonError(
        await app.inject({ method: 'GET', url: `/api/channels/${'c'.repeat(101)}` }),
        400,
        'INVALID_REQUEST',
      );
    });

    it('an unknown route: 404 NOT_FOUND; a known path with another method: 405 METHOD_NOT_ALLOWED with Allow', async () => {
      expectJsonError(await app.inject({ method: 'GET', url: '/api/nothing-here' }), 404, 'NOT_FOUND');
      const wrong = await app.inject({ method: 'DELETE', url: '/api/health' });
      expectJsonError(wrong, 405, 'METHOD_NOT_ALLOWED');
      expect(String(wrong.headers.allow).split(', ')).toContain('GET');
      const search = await app.inject({ method: 'GET', url: '/api/search' });
      expectJsonError(search, 405, 'METHOD_NOT_ALLOWED');
      expect(search.headers.allow).toBe('POST');
      expect(search.headers['x-request-id']).toBeTruthy();
    });

    it('multipart: not multipart (415), no file (400), two files, too many fields, a field over 16 KB or a file over 10 MB (413)', async () => {
      const upload = async (form: FormData | string) => {
        const res = await fetch(`${base}/api/ask/upload`, {
          method: 'POST',
          ...(typeof form === 'string'
            ? { body: form, headers: { 'content-type': 'application/json' } }
            : { body: form }),
        });
        return { status: res.status, type: res.headers.get('content-type'), ...(await readAskStream(res)) };
      };
      const file = (data: Buffer = Buffer.from('hello')) => new Blob([data], { type: 'text/plain' });
      expectStreamError(await upload(JSON.stringify({ question: 'x' })), 415);
      const noFile = new FormData();
      noFile.append('question', 'x');
      expectStreamError(await upload(noFile), 400);
      const twoFiles = new FormData();
      twoFiles.append('question', 'x');
      twoFiles.append('file', file(), 'a.txt');
      twoFiles.append('file2', file(), 'b.txt');
      const two = await upload(twoFiles);
      expectStreamError(two, 413);
      expect((two.events[0] as { error: string }).error).toMatch(/more files/);
      const manyFields = new FormData();
      for (let i = 0; i < 12; i++) manyFields.append(`f${i}`, 'x');
      const many = await upload(manyFields);
      expectStreamError(many, 413);
      expect((many.events[0] as { error: string }).error).toMatch(/more fields/);
      const longField = new FormData();
      longField.append('question', 'x'.repeat(20_000));
      longField.append('file', file(), 'a.txt');
      const long = await upload(longField);
      expectStreamError(long, 413);
      expect((long.events[0] as { error: string }).error).toMatch(/field question is over the limit/);
      const big = new FormData();
      big.append('question', 'x');
      big.append('file', file(Buffer.alloc(10 * 1024 * 1024 + 1, 97)), 'big.txt');
      expectStreamError(await upload(big), 413);
    });

    it('the ask stream refuses malformed JSON as a 400 stream of one error event, like any invalid ask body', async () => {
      const res = await fetch(`${base}/api/ask`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"question": ',
      });
      expectStreamError(
        { status: res.status, type: res.headers.get('content-type'), ...(await readAskStream(res)) },
        400,
      );
    });
  });

  describe('NUL characters are 400 INVALID_REQUEST, never 500 (issue 21 point 2)', () => {
    const issuePath = (res: LightMyRequestResponse) => res.json().error.details.issues[0].path;

    it('in a search query, a channel id, a memory id and a query parameter', async () => {
      const search = await app.inject({
        method: 'POST',
        url: '/api/search',
        payload: { query: 'kafka\u0000connector', channel_id: null }, // 500 before issue 21
      });
      expectJsonError(search, 400, 'INVALID_REQUEST');
      expect(issuePath(search)).toBe('body.query');
      const memSearch = await app.inject({
        method: 'POST',
        url: '/api/memories/search',
        payload: { query: 'kafka', channel_id: 'C1\u0000' },
      });
      expectJsonError(memSearch, 400, 'INVALID_REQUEST');
      const channel = await app.inject({ method: 'GET', url: '/api/channels/C1%00' });
      expectJsonError(channel, 400, 'INVALID_REQUEST');
      expect(issuePath(channel)).toBe('params.channel_id');
      const messages = await app.inject({ method: 'GET', url: '/api/channels/%00/messages' });
      expectJsonError(messages, 400, 'INVALID_REQUEST');
      const memory = await app.inject({ method: 'GET', url: '/api/memories/f%00' });
      expectJsonError(memory, 400, 'INVALID_REQUEST');
      expect(issuePath(memory)).toBe('params.memory_id');
      const query = await app.inject({ method: 'GET', url: '/api/memories?channel_id=C1%00' });
      expectJsonError(query, 400, 'INVALID_REQUEST');
      expect(issuePath(query)).toBe('querystring.channel_id');
      const graph = await app.inject({ method: 'GET', url: '/api/graph/entities?channel_id=C1%00' });
      expectJsonError(graph, 400, 'INVALID_REQUEST');
      const entity = await app.inject({ method: 'GET', url: '/api/graph/entities/e%00/neighbors' });
      expectJsonError(entity, 400, 'INVALID_REQUEST');
      const session = await app.inject({ method: 'GET', url: '/api/ask/sessions/s%00' });
      expectJsonError(session, 400, 'INVALID_REQUEST');
    });

    it('in an ask question (JSON and multipart): a 400 stream of one INVALID_REQUEST event, no database text', async () => {
      const res = await fetch(`${base}/api/ask`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: 'who decided\u0000 on Kafka?' }),
      });
      const text = await res.text();
      const events = parseAskStream([text]);
      expectStreamError({ status: res.status, type: res.headers.get('content-type'), events }, 400);
      expect(text).toContain('body.question');
      expect(text).not.toMatch(/0x00|byte sequence|UTF8/i);
      const form = new FormData();
      form.append('question', 'who\u0000?');
      form.append('file', new Blob([Buffer.from('notes')], { type: 'text/plain' }), 'n.txt');
      const up = await fetch(`${base}/api/ask/upload`, { method: 'POST', body: form });
      expectStreamError({ status: up.status, type: up.headers.get('content-type'), ...(await readAskStream(up)) }, 400);
    });
  });

  describe('a 5xx body carries no internals, the log has them under the request id (issue 21 point 2)', () => {
    const URL_AND_SQL = 'postgres://atlas:s3cret@db.internal:5432/atlas';
    const SQL = 'select "id", "name" from "channels" where "id" = $1';
    /** The messages (with their causes) of the errors logged under a request id. */
    const loggedErrors = (reqId: string) =>
      lines
        .filter((l) => l.reqId === reqId)
        .map((l) => (l.err as { message?: string } | undefined)?.message ?? '')
        .join('\n');

    it('a store error carrying a connection URL and SQL: 503 with a fixed message and details.request_id', async () => {
      const ports = apiPorts(rt);
      const failing = await buildApp(
        {
          ...ports,
          documents: withMethod(ports.documents, 'getChannel', async () => {
            throw new AtlasError(
              'STORE_UNAVAILABLE',
              `document store unavailable: connect ECONNREFUSED ${URL_AND_SQL}`,
              {
                retriable: true,
                cause: new Error(`query failed: ${SQL}`),
              },
            );
          }),
        },
        { logger: logger() },
      );
      try {
        const res = await failing.inject({
          method: 'GET',
          url: '/api/channels/C1',
          headers: { 'x-request-id': 'req-5xx-1' },
        });
        expectJsonError(res, 503, 'STORE_UNAVAILABLE');
        expect(res.json().error.details).toEqual({ request_id: 'req-5xx-1' });
        expect(res.headers['x-request-id']).toBe('req-5xx-1');
        for (const leak of ['postgres://', 's3cret', 'db.internal', 'select', 'ECONNREFUSED'])
          expect(res.body).not.toContain(leak);
        const logged = loggedErrors('req-5xx-1');
        expect(logged).toContain(URL_AND_SQL);
        expect(logged).toContain(SQL);
        expect(lines.find((l) => l.reqId === 'req-5xx-1')).toMatchObject({ level: 50, code: 'STORE_UNAVAILABLE' });
      } finally {
        await failing.close();
      }
    });

    it('a real PostgreSQL driver that cannot connect: 500 without its address; the log line under the id has it', async () => {
      // The document store over the pg driver, pointed at a port where nothing listens (connection refused).
      const database = await openDatabase({ url: 'postgres://atlas:s3cret@127.0.0.1:9/atlas', poolSize: 1 });
      const failing = await buildApp(
        { ...apiPorts(rt), documents: new KyselyDocumentStore(database.db) },
        { logger: logger() },
      );
      try {
        const res = await failing.inject({
          method: 'GET',
          url: '/api/channels',
          headers: { 'x-request-id': 'req-5xx-2' },
        });
        expect(res.json()).toEqual({
          error: { code: 'INTERNAL_ERROR', message: 'internal server error', details: { request_id: 'req-5xx-2' } },
        });
        expect(res.statusCode).toBe(500);
        expect(loggedErrors('req-5xx-2')).toContain('ECONNREFUSED 127.0.0.1:9');
        for (const leak of ['ECONNREFUSED', '127.0.0.1:9', 's3cret']) expect(res.body).not.toContain(leak);
      } finally {
        await failing.close();
        await database.close();
      }
    });

    it('the ask stream: a failure mid-answer is an INTERNAL_ERROR event with the request id, not the error text', async () => {
      const ports = apiPorts(rt);
      const failing = await buildApp(
        {
          ...ports,
          keyword: withMethod(ports.keyword, 'search', async () => {
            throw new Error(`relation "facts" does not exist: ${SQL} (${URL_AND_SQL})`);
          }),
        },
        { logger: logger() },
      );
      try {
        const res = await failing.inject({
          method: 'POST',
          url: '/api/ask',
          payload: { question: 'Who decided on Kafka?' },
          headers: { 'x-request-id': 'req-5xx-3' },
        });
        const events = parseAskStream([res.body]);
        expect(events.at(-1)).toEqual({
          type: 'error',
          code: 'INTERNAL_ERROR',
          error: expect.any(String),
          details: { request_id: 'req-5xx-3' },
        });
        for (const leak of ['postgres://', 's3cret', 'select', 'relation']) expect(res.body).not.toContain(leak);
        expect(loggedErrors('req-5xx-3')).toContain(SQL);
      } finally {
        await failing.close();
      }
    });
  });
});
