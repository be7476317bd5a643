import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './free-port.test-support.js';
import { stopChild } from './stop-child.test-support.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const DATA = path.resolve(ROOT, '../shared/data');
const OLAKE = path.join(DATA, 'slack-olake/export');
const ETHGLOBAL = path.join(DATA, 'discord-ethglobal');

const atlas = (args: string[]) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/atlas.mjs'), ...args], { cwd: ROOT });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });

/**
 * `atlas start` on a data dir with a backlog (events appended, not projected): the port answers /api/health from the
 * start (a `starting` step while the runtime opens), and reads are answered while the backlog is projected (the
 * projectors do not hold the event loop).
 * No timing is asserted (a busy CI machine is many times slower); request timeouts are generous.
 */
describe('atlas start on a backlog', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'atlas-backlog-'));
  let port = 0; // a free one, drawn before the imports
  const base = () => `http://127.0.0.1:${port}`;
  let server: ChildProcess | undefined;
  afterAll(async () => {
    await stopChild(server);
    rmSync(dataDir, { recursive: true, force: true });
  });

  beforeAll(async () => {
    port = await freePort();
    for (const source of [OLAKE, ETHGLOBAL]) {
      const r = await atlas(['import', source, '--data-dir', dataDir, '--no-project', '--no-progress']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
  }, 600_000);

  const get = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(`${base()}${url}`, { ...init, signal: AbortSignal.timeout(30_000) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('answers /api/health while it opens, then reads while the backlog is projected', async () => {
    server = spawn(
      process.execPath,
      [path.join(ROOT, 'bin/atlas.mjs'), 'start', '--port', String(port), '--data-dir', dataDir],
      {
        cwd: ROOT,
        stdio: 'ignore',
        env: { ...process.env, LOG_LEVEL: 'warn' },
      },
    );
    const first = await (async () => {
      for (;;) {
        const r = await get('/api/health').catch(() => null); // refused until the port is open
        if (r?.status === 200) return r.body;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    // Answered before the runtime was open: the start step it was in.
    expect(first).toMatchObject({ status: 'degraded', dependencies: {} });
    expect(typeof first.starting).toBe('string');

    const lag = async () =>
      ((await get('/api/stats/metrics')).body as unknown as { event_log: { total_lag: number } }).event_log.total_lag;
    for (;;) {
      const r = await get('/api/channels');
      if (r.status === 200) break;
      expect(r.status).toBe(503); // while starting: STORE_UNAVAILABLE with Retry-After
      await new Promise((r) => setTimeout(r, 100));
    }
    const olakeChannel = (JSON.parse(readFileSync(path.join(OLAKE, 'channels.json'), 'utf8')) as { id: string }[])[0]!
      .id;
    let readsWhileProjecting = 0;
    while ((await lag()) > 0) {
      const channels = await get('/api/channels');
      // A channel is known once its first event is projected (docs/conventions.md "Unknown channel"): until then
      // its routes answer 404 NOT_FOUND; from then on, 200.
      const known = (channels.body as unknown as { channel_id: string }[]).some((c) => c.channel_id === olakeChannel);
      const reads = await Promise.all([
        get(`/api/memories?channel_id=${olakeChannel}`),
        get('/api/search', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'kafka connector', channel_id: null, limit: 5 }),
        }),
      ]);
      expect([channels, ...reads].map((r) => r.status)).toEqual([200, known ? 200 : reads[0]!.status, 200]);
      if (!known) expect([200, 404]).toContain(reads[0]!.status);
      readsWhileProjecting++;
    }
    expect(readsWhileProjecting).toBeGreaterThan(0);
    // All projected in the end: every kept message is in its channel.
    const channels = (await get('/api/channels')).body as unknown as { message_count: number }[];
    expect(channels.reduce((s, c) => s + c.message_count, 0)).toBe(302 + 518);
  }, 900_000);
});
