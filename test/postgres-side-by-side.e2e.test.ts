import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './free-port.test-support.js';
import { stopChild } from './stop-child.test-support.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const OLAKE = path.resolve(ROOT, '../shared/data/slack-olake/export');
const url = process.env.ATLAS_TEST_POSTGRES_URL;

// Runs when .ci/run lists a PostgreSQL server; an unreachable listed server fails here.
describe.runIf(Boolean(url))('atlas import beside atlas start, both on PostgreSQL (DATABASE_URL)', () => {
  const schema = `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const databaseUrl = `${url}?options=${encodeURIComponent(`-c search_path=${schema},public`)}`;
  const env = { ...process.env, DATABASE_URL: databaseUrl, ATLAS_DATA_DIR: path.join(ROOT, '.atlas-test', schema) };
  let port = 0; // a free one, drawn when the test starts
  let server: ChildProcess | undefined;

  afterAll(async () => {
    await stopChild(server);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`drop schema if exists "${schema}" cascade`);
    await c.end();
  });

  it('imports while the server runs, and the server serves the imported facts', async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`create schema "${schema}"`);
    await c.end();
    port = await freePort();
    server = spawn(process.execPath, [path.join(ROOT, 'bin/atlas.mjs'), 'start', '--port', String(port)], {
      cwd: ROOT,
      env,
      stdio: 'ignore',
    });
    const t0 = Date.now();
    while (Date.now() - t0 < 30_000) {
      // Health answers while the server starts too (with `starting`); the API serves once that is gone.
      const health = await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => undefined);
      if (health?.ok && !('starting' in ((await health.json()) as object))) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const imported = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'bin/atlas.mjs'), 'import', OLAKE, '--no-progress'], {
        cwd: ROOT,
        env,
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('close', (code) => resolve({ code, out }));
    });
    expect(imported.out).toMatch(/5 channels, 302 messages \(302 new or changed/);
    expect(imported.code).toBe(0);
    const channels = (await (await fetch(`http://127.0.0.1:${port}/api/channels`)).json()) as {
      message_count: number;
      fact_count: number;
    }[];
    expect(channels).toHaveLength(5);
    expect(channels.reduce((s, ch) => s + ch.message_count, 0)).toBe(302);
    expect(channels.reduce((s, ch) => s + ch.fact_count, 0)).toBeGreaterThan(0);
  }, 120_000);
});
