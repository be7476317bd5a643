import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PLATFORM_A_SYSTEM_SUBTYPES } from '@atlas/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './free-port.test-support.js';
import { stopChild } from './stop-child.test-support.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const DATA = path.resolve(ROOT, '../shared/data');

/** Runs the real `atlas` binary; resolves with its exit code and output. */
const atlas = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/atlas.mjs'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

/** Kept messages per channel id, counted straight from a Slack export's files by the documented subtype rule. */
const slackCountsFromFiles = (dir: string): Map<string, number> => {
  const channels = JSON.parse(readFileSync(path.join(dir, 'channels.json'), 'utf8')) as { id: string; name: string }[];
  const out = new Map<string, number>();
  for (const c of channels) {
    let n = 0;
    const folder = path.join(dir, c.name);
    for (const f of readdirSync(folder).filter((x) => x.endsWith('.json'))) {
      for (const m of JSON.parse(readFileSync(path.join(folder, f), 'utf8')) as { subtype?: string }[]) {
        if (!m.subtype || !PLATFORM_A_SYSTEM_SUBTYPES.has(m.subtype)) n++;
      }
    }
    out.set(c.id, n);
  }
  return out;
};

describe('atlas CLI end to end (real exports)', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'atlas-e2e-'));
  let port = 0; // a free one, drawn before the imports
  let server: ChildProcess | undefined;
  afterAll(async () => {
    await stopChild(server);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const imports: { name: string; path: string }[] = [
    { name: 'slack-olake', path: path.join(DATA, 'slack-olake/export') },
    { name: 'discord-ethglobal', path: path.join(DATA, 'discord-ethglobal') },
    { name: 'slack-clojurians', path: path.join(DATA, 'slack-clojurians-2018-02/export') },
  ];
  const summaries = new Map<string, string>();
  beforeAll(async () => {
    port = await freePort();
    for (const i of imports) {
      const r = await atlas(['import', i.path, '--data-dir', dataDir, '--no-progress']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      summaries.set(i.name, r.stdout);
    }
  }, 1_500_000); // three real exports through every projector, the local encoder included: ~5.5 min alone on 2 cores,
  // more than twice that beside the other suites in CI

  it('prints channels, messages, facts and seconds for each import', () => {
    expect(summaries.get('slack-olake')).toMatch(
      /5 channels, 302 messages \(302 new or changed, 0 unchanged\), \d+ facts, [\d.]+ s/,
    );
    expect(summaries.get('discord-ethglobal')).toMatch(/1 channels, 518 messages \(518 new or changed/);
    expect(summaries.get('slack-clojurians')).toMatch(/82 channels, 7896 messages \(7896 new or changed/);
  });

  it('a second import adds nothing', async () => {
    const r = await atlas(['import', path.join(DATA, 'slack-olake/export'), '--data-dir', dataDir, '--no-progress']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/302 messages \(0 new or changed, 302 unchanged\)/);
  });

  it('rejects bad input naming the file, exits non-zero, and applies nothing', async () => {
    const bad = mkdtempSync(path.join(os.tmpdir(), 'atlas-bad-'));
    writeFileSync(path.join(bad, 'channels.json'), JSON.stringify([{ id: 'CBAD', name: 'bad' }]));
    rmSync(path.join(bad, 'bad'), { recursive: true, force: true });
    const day = path.join(bad, 'bad');
    await import('node:fs').then((fs) => fs.mkdirSync(day));
    writeFileSync(
      path.join(day, '2024-01-01.json'),
      JSON.stringify([{ type: 'message', ts: '1704067200.000100', user: 'U1', text: 'fine' }]),
    );
    writeFileSync(path.join(day, '2024-01-02.json'), '[{"type": "message", "ts": "1704153600.0001", "te');
    const r = await atlas(['import', bad, '--data-dir', dataDir, '--no-progress']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/IMPORT_FAILED: .*2024-01-02\.json/);
    const unknown = await atlas(['import', path.join(DATA, 'locomo/locomo-dev.json'), '--data-dir', dataDir]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/IMPORT_FAILED/);
    rmSync(bad, { recursive: true, force: true });
  });

  // How soon health answers is measured (printed), not asserted: beside the other suites in CI a start takes several
  // times what it takes alone (a few seconds).
  it('serves /api/health once started, and the channels hold the counts the files hold', async () => {
    const t0 = Date.now();
    server = spawn(
      process.execPath,
      [path.join(ROOT, 'bin/atlas.mjs'), 'start', '--port', String(port), '--data-dir', dataDir],
      {
        cwd: ROOT,
        stdio: 'ignore',
      },
    );
    // Health answers from the first moment (`starting` while the runtime opens, other routes 503 meanwhile); the API
    // serves once a health answer has no `starting`.
    let health: { ok: boolean; body: Record<string, unknown> } | undefined;
    let firstHealth: number | undefined;
    while (Date.now() - t0 < 90_000) {
      health = await fetch(`http://127.0.0.1:${port}/api/health`)
        .then(async (r) => ({ ok: r.ok, body: (await r.json()) as Record<string, unknown> }))
        .catch(() => undefined);
      if (health?.ok) firstHealth ??= Date.now() - t0;
      if (health?.ok && !('starting' in health.body)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(health?.ok && !('starting' in health.body), 'the API serving within 90 s').toBe(true);
    console.log(
      `atlas start: /api/health answered ${firstHealth} ms after the process started, the API served after ${Date.now() - t0} ms`,
    );
    const channels = (await (await fetch(`http://127.0.0.1:${port}/api/channels`)).json()) as {
      id: string;
      message_count: number;
    }[];
    for (const dir of [path.join(DATA, 'slack-olake/export'), path.join(DATA, 'slack-clojurians-2018-02/export')]) {
      for (const [id, n] of slackCountsFromFiles(dir))
        expect(channels.find((c) => c.id === id)?.message_count, id).toBe(n);
    }
    const dce = JSON.parse(
      readFileSync(
        path.join(
          DATA,
          'discord-ethglobal',
          readdirSync(path.join(DATA, 'discord-ethglobal')).find((f) => f.endsWith('.json'))!,
        ),
        'utf8',
      ),
    );
    const dceKept = (dce.messages as { type: string }[]).filter(
      (m) => m.type === 'Default' || m.type === 'Reply',
    ).length;
    expect(channels.find((c) => c.id === dce.channel.id)?.message_count).toBe(dceKept);
  }, 120_000);

  it('while the server runs: import says why it cannot and what to do; search goes through the server', async () => {
    const r = await atlas(['import', path.join(DATA, 'slack-olake/export'), '--data-dir', dataDir, '--no-progress']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/in use by 'atlas start'.*stop that process.*DATABASE_URL/s);
    const s = await atlas(['search', 'core.async channel', '--data-dir', dataDir, '--json', '--limit', '5']);
    expect(s.code).toBe(0);
    const body = JSON.parse(s.stdout) as { results: { memory: { id: string }; highlights: string[] }[] };
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.results[0]!.highlights.join(' ')).toMatch(/<mark>/);
    const detail = (await (
      await fetch(`http://127.0.0.1:${port}/api/memories/${body.results[0]!.memory.id}`)
    ).json()) as {
      channel_id: string;
      source_message_id: string;
      message_ts: string;
    };
    const after = new Date(Date.parse(detail.message_ts) - 1).toISOString();
    const msgs = (await (
      await fetch(`http://127.0.0.1:${port}/api/channels/${detail.channel_id}/messages?after=${after}&limit=200`)
    ).json()) as {
      messages: { id: string }[];
    };
    expect(msgs.messages.map((m) => m.id)).toContain(detail.source_message_id);
  }, 60_000);
});
