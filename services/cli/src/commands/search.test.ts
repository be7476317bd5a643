import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { appendPlan, buildRuntimeApp, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Issue 21, point 3: `atlas search` without --data-dir silently searched an empty ./data while a server served
// another data dir. Now it uses the running server, or says which data dir it read and that it is empty.

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const OLAKE = path.resolve(ROOT, '../shared/data/slack-olake/export');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'atlas-search-cli-'));

/** `atlas search` as a child process in `cwd` (whose ./data is the default data dir), without ATLAS_* data dir. */
const atlasSearch = (args: string[], cwd: string, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const { ATLAS_DATA_DIR: _dir, ATLAS_API_URL: _url, DATABASE_URL: _db, ...base } = process.env;
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/atlas.mjs'), 'search', ...args], {
      cwd,
      env: { ...base, HOST: '127.0.0.1', EMBEDDING_PROVIDER: 'none', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

/** A fresh directory to run in: its ./data does not exist. */
const freshCwd = (): string => mkdtempSync(path.join(tmp, 'cwd-'));

/** A port nothing listens on (bound, then released). */
const closedPort = async (): Promise<number> => {
  const { createServer } = await import('node:net');
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
};

describe('atlas search: which store it searched (issue 21, point 3)', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let port: number;

  beforeAll(async () => {
    // The API in this process, on a port, over the OLake export (the data dir a server would serve).
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none' }));
    await appendPlan(rt, await planImport(OLAKE));
    await drainProjectors(rt);
    app = await buildRuntimeApp(rt);
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  }, 600_000);
  afterAll(async () => {
    await app?.close();
    await rt?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('without --data-dir, uses the server answering at HOST:PORT and says so', async () => {
    const r = await atlasSearch(['OLake', '--json', '--limit', '5'], freshCwd(), { PORT: String(port) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`atlas: searched the server at http://127.0.0.1:${port}\n`);
    const body = JSON.parse(r.stdout) as { total: number; results: { highlights: string[] }[] };
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.results[0]!.highlights.join(' ')).toMatch(/<mark>/);
  }, 120_000);

  it('a data dir held by a running server is searched through it', async () => {
    const dir = path.join(tmp, 'held');
    mkdirSync(dir);
    // The lock `atlas start` writes (lock.ts): this live process, serving the port.
    writeFileSync(
      path.join(dir, 'atlas.lock'),
      JSON.stringify({ pid: process.pid, command: 'start', port, startedAt: new Date().toISOString() }),
    );
    const r = await atlasSearch(['OLake', '--data-dir', dir], freshCwd(), { PORT: String(await closedPort()) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`atlas: searched the server at http://127.0.0.1:${port} (it holds ${dir})\n`);
    expect(r.stdout).toMatch(/^[1-9]\d* matching facts/);
  }, 120_000);

  it('no server and no data dir: says it searched nothing, which path, and what to do', async () => {
    const cwd = freshCwd();
    const closed = await closedPort();
    const r = await atlasSearch(['OLake'], cwd, { PORT: String(closed) });
    expect(r.code, r.stderr).toBe(0);
    const dir = path.join(cwd, 'data');
    expect(r.stderr).toContain(
      `atlas: searched nothing: there is no data dir at ${dir} (no server answered at http://127.0.0.1:${closed})\n`,
    );
    expect(r.stderr).toMatch(/atlas: no data dir at .*: import an export first \(atlas import <path>\)/);
    expect(r.stdout).toMatch(/^0 matching facts/);
  }, 120_000);

  it('an empty data dir given with --data-dir: says which one it read and that it holds no channels', async () => {
    const dir = path.join(tmp, 'empty');
    mkdirSync(dir);
    const r = await atlasSearch(['OLake', '--data-dir', dir], freshCwd(), { PORT: String(port) });
    expect(r.code, r.stderr).toBe(0);
    // An explicit data dir is read even though a server answers at HOST:PORT: it may serve another one.
    expect(r.stderr).toContain(`atlas: searched the data dir ${dir} (0 channels)\n`);
    expect(r.stderr).toContain(`atlas: the data dir ${dir} holds no channels: import an export first`);
  }, 300_000);

  it('ATLAS_API_URL that does not answer is an error naming it', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const r = await atlasSearch(['OLake'], freshCwd(), { ATLAS_API_URL: url });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`atlas: STORE_UNAVAILABLE: ATLAS_API_URL ${url} does not answer GET /api/health`);
  }, 120_000);
});
