import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { apiPorts, openRuntime, type Runtime } from '@atlas/runtime';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';

const ADMIN_KEY = 'web-test-admin-key-at-least-32-characters';

/** The web UI's serving (routes/web.ts) on an app that requires keys, with a build folder of two files. */
describe('web UI routes (routes/web.ts)', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'atlas-web-ui-'));
  const shell =
    '<!doctype html><html><body><div id="root"></div><script src="/assets/app-1a2b.js"></script></body></html>';
  let rt: Runtime;
  let app: FastifyInstance;
  let plain: FastifyInstance;
  beforeAll(async () => {
    writeFileSync(path.join(root, 'index.html'), shell);
    mkdirSync(path.join(root, 'assets'));
    writeFileSync(path.join(root, 'assets/app-1a2b.js'), 'console.log(1)');
    rt = await openRuntime(
      loadConfig({ ATLAS_DATA_DIR: 'memory://', ATLAS_ADMIN_API_KEY: ADMIN_KEY, EMBEDDING_PROVIDER: 'none' }),
    );
    app = await buildApp({ ...apiPorts(rt), webRoot: root });
    plain = await buildApp({ ...apiPorts(rt), webRoot: path.join(root, 'assets') }); // no index.html: no UI
  });
  afterAll(async () => {
    await app?.close();
    await plain?.close();
    await rt?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("serves the UI's shell without a key at / and at every page path, never cached", async () => {
    for (const url of ['/', '/ask', '/ask/s-1', '/search?q=x', '/channels/C1/wiki/overview', '/wiki/C1']) {
      const r = await app.inject({ method: 'GET', url });
      expect(r.statusCode, url).toBe(200);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.headers['cache-control']).toBe('no-cache');
      expect(r.body).toBe(shell);
    }
  });

  it('serves hashed assets for a year; a missing asset is 404', async () => {
    const r = await app.inject({ method: 'GET', url: '/assets/app-1a2b.js' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/javascript/);
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(r.body).toBe('console.log(1)');
    expect((await app.inject({ method: 'GET', url: '/assets/nope.js' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/assets/../index.html' })).body).not.toBe('console.log(1)');
  });

  it('leaves the API as it was: keys required, unknown /api paths the shared 404, other methods 404', async () => {
    const channels = await app.inject({ method: 'GET', url: '/api/channels' });
    expect(channels.statusCode).toBe(401);
    expect(channels.json().error.code).toBe('UNAUTHORIZED');
    for (const [method, url] of [
      ['GET', '/api/nope'],
      ['POST', '/api/nope'],
      ['GET', '/mcp/nope'],
      ['GET', '/metrics/x'],
      ['POST', '/ask'],
    ] as const) {
      const r = await app.inject({ method, url });
      expect(r.statusCode, `${method} ${url}`).toBe(404);
      expect(r.json().error.code).toBe('NOT_FOUND');
    }
  });

  it('GET /api/me names the caller: 401 without a key, the bootstrap admin with it', async () => {
    expect((await app.inject({ method: 'GET', url: '/api/me' })).statusCode).toBe(401);
    const me = await app.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(me.json()).toEqual({
      name: 'bootstrap',
      kind: 'bootstrap',
      role: 'admin',
      key_id: null,
      scope: null,
      identity: null,
    });
  });

  it('without a build (no index.html) / is the home page and /wiki the server-rendered wiki', async () => {
    const home = await plain.inject({ method: 'GET', url: '/', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain('Key API routes');
    expect((await plain.inject({ method: 'GET', url: '/ask' })).statusCode).toBe(404);
  });
});
