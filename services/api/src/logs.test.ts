import { loadConfig } from '@atlas/core';
import { apiPorts, openRuntime, type Runtime } from '@atlas/runtime';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';
import { apiLoggerOptions, prettyLogs } from './telemetry.js';

const SECRET = 'xoxb-111-222-SECRETsecretSECRET';

/**
 * The API's logs (issue 10; issue 21 point 3 "logs in a terminal are readable lines, JSON when not a terminal; one line
 * per request only at debug"): Fastify's pino logger with the options `atlas start` / `atlas run api` use. Not on a
 * terminal: JSON lines, a request's lines carry its request id (the x-request-id answered); at info a request logs
 * nothing (it logged two info lines before issue 21), at debug one line. A credential sent to the API or logged by
 * code under a credential field never appears in a line.
 */
describe('structured logs', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let debugApp: FastifyInstance;
  const lines: string[] = [];
  const debugLines: string[] = [];
  beforeAll(async () => {
    rt = await openRuntime(
      loadConfig({
        ATLAS_DATA_DIR: 'memory://',
        EMBEDDING_PROVIDER: 'none',
        PLATFORM_A_API_URL: 'http://127.0.0.1:9/api/', // nothing listens: credential checks fail as a network error
      }),
    );
    app = await buildApp(apiPorts(rt), {
      logger: apiLoggerOptions('info', { isTTY: false, stream: { write: (line: string) => void lines.push(line) } }),
    });
    debugApp = await buildApp(apiPorts(rt), {
      logger: apiLoggerOptions('debug', { isTTY: false, stream: { write: (l: string) => void debugLines.push(l) } }),
    });
  });
  afterAll(async () => {
    await app?.close();
    await debugApp?.close();
    await rt?.close();
  });

  it('issue 21: at info a request logs nothing; at debug one JSON line under its request id', async () => {
    const before = lines.length;
    const res = await app.inject({ method: 'GET', url: '/api/stats', headers: { 'x-request-id': 'req-logs-1' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe('req-logs-1');
    const notFound = await app.inject({ method: 'GET', url: '/api/nope' });
    expect(notFound.statusCode).toBe(404);
    expect(lines.slice(before)).toEqual([]);

    const ok = await debugApp.inject({ method: 'GET', url: '/api/stats', headers: { 'x-request-id': 'req-logs-2' } });
    expect(ok.statusCode).toBe(200);
    const mine = debugLines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.reqId === 'req-logs-2');
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      level: 20,
      msg: 'request completed',
      req: { method: 'GET', url: '/api/stats' },
      res: { statusCode: 200 },
    });
    expect(typeof mine[0]!.responseTime).toBe('number');
    const other = await debugApp.inject({ method: 'GET', url: '/api/stats' });
    const id = other.headers['x-request-id'] as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(debugLines.map((l) => JSON.parse(l)).filter((l) => l.reqId === id)).toHaveLength(1);
  });

  it('issue 21: a terminal gets readable lines (pino-pretty), not JSON; LOG_FORMAT forces either', async () => {
    expect(prettyLogs({ isTTY: true })).toBe(true);
    expect(prettyLogs({ isTTY: false })).toBe(false);
    expect(prettyLogs({ format: 'json', isTTY: true })).toBe(false);
    expect(prettyLogs({ format: 'pretty', isTTY: false })).toBe(true);
    const out: string[] = [];
    const tty = await buildApp(apiPorts(rt), {
      logger: apiLoggerOptions('debug', { isTTY: true, stream: { write: (l: string) => void out.push(l) } }),
    });
    try {
      await tty.inject({ method: 'GET', url: '/api/stats', headers: { 'x-request-id': 'req-pretty-1' } });
      tty.log.info({ connection: { bot_token: SECRET } }, 'pretty and redacted');
      const text = out.join('');
      expect(() => JSON.parse(out[0]!)).toThrow();
      // `[HH:MM:ss.l] LEVEL: message {fields}` on one line each.
      const request = text.split('\n').find((l) => l.includes('req-pretty-1'))!;
      expect(request).toMatch(/\[\d{2}:\d{2}:\d{2}\.\d{3}\] .*DEBUG.*: .*request completed/);
      expect(text).toMatch(/INFO.*: .*pretty and redacted/);
      expect(text).not.toContain(SECRET);
      expect(text).toContain('[Redacted]');
    } finally {
      await tty.close();
    }
  });

  it('never writes a credential: neither one sent to the API nor one logged under a credential field', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/connections',
      headers: { authorization: `Bearer ${SECRET}` },
      payload: { platform: 'platform_a', name: 'acme', credentials: { bot_token: SECRET, signing_secret: SECRET } },
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400); // the platform cannot be reached
    const failed = await debugApp.inject({
      method: 'POST',
      url: '/api/connections',
      headers: { authorization: `Bearer ${SECRET}` },
      payload: { platform: 'platform_a', name: 'acme', credentials: { bot_token: SECRET, signing_secret: SECRET } },
    });
    expect(failed.statusCode).toBeGreaterThanOrEqual(400);
    app.log.info({ connection: { bot_token: SECRET, api_key: SECRET }, credentials: { bot_token: SECRET } }, 'x');
    app.log.info({ req: { headers: { authorization: `Bearer ${SECRET}` } } }, 'y');
    expect(lines.length + debugLines.length).toBeGreaterThan(4);
    for (const l of [...lines, ...debugLines]) expect(l).not.toContain('SECRETsecret');
    const x = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'x');
    expect(x).toMatchObject({
      connection: { bot_token: '[Redacted]', api_key: '[Redacted]' },
      credentials: '[Redacted]',
    });
  });
});
