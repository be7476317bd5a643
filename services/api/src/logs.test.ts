import { loadConfig } from '@atlas/core';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiPorts, openRuntime, type Runtime } from '../../cli/src/runtime.js';
import { buildApp } from './app.js';
import { apiLoggerOptions } from './telemetry.js';

const SECRET = 'xoxb-111-222-SECRETsecretSECRET';

/**
 * The API's logs (issue 10): Fastify's pino logger with the options `atlas start` / `atlas run api` use, writing
 * JSON lines; each request's lines carry its request id (the x-request-id answered), and a credential sent to the
 * API or logged by code under a credential field never appears in a line.
 */
describe('structured logs', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  const lines: string[] = [];
  beforeAll(async () => {
    rt = await openRuntime(
      loadConfig({
        ATLAS_DATA_DIR: 'memory://',
        EMBEDDING_PROVIDER: 'none',
        PLATFORM_A_API_URL: 'http://127.0.0.1:9/api/', // nothing listens: credential checks fail as a network error
      }),
    );
    app = await buildApp(apiPorts(rt), {
      logger: apiLoggerOptions('info', { write: (line: string) => void lines.push(line) }),
    });
  });
  afterAll(async () => {
    await app?.close();
    await rt?.close();
  });

  it('every line is JSON; a request logs its start and end under its request id', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/stats', headers: { 'x-request-id': 'req-logs-1' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe('req-logs-1');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const mine = parsed.filter((l) => l.reqId === 'req-logs-1');
    expect(mine.map((l) => l.msg)).toEqual(['incoming request', 'request completed']);
    expect(mine[0]).toMatchObject({ level: 30, req: { method: 'GET', url: '/api/stats' } });
    expect(mine[1]).toMatchObject({ res: { statusCode: 200 } });
    expect(typeof mine[1]!.responseTime).toBe('number');
    const other = await app.inject({ method: 'GET', url: '/api/stats' });
    const id = other.headers['x-request-id'] as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines.map((l) => JSON.parse(l)).filter((l) => l.reqId === id)).toHaveLength(2);
  });

  it('never writes a credential: neither one sent to the API nor one logged under a credential field', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/connections',
      headers: { authorization: `Bearer ${SECRET}` },
      payload: { platform: 'platform_a', name: 'acme', credentials: { bot_token: SECRET, signing_secret: SECRET } },
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400); // the platform cannot be reached
    app.log.info({ connection: { bot_token: SECRET, api_key: SECRET }, credentials: { bot_token: SECRET } }, 'x');
    app.log.info({ req: { headers: { authorization: `Bearer ${SECRET}` } } }, 'y');
    expect(lines.length).toBeGreaterThan(4);
    for (const l of lines) expect(l).not.toContain('SECRETsecret');
    const x = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'x');
    expect(x).toMatchObject({
      connection: { bot_token: '[Redacted]', api_key: '[Redacted]' },
      credentials: '[Redacted]',
    });
  });
});
