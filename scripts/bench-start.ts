/**
 * `npm run bench:start`: how soon `atlas` answers, side by side for one or more checkouts (docs/cli.md "Bench").
 *
 * For each checkout (BENCH_ATLAS=/path/a,/path/b; default this one; an entry that is not a folder is run as a command,
 * e.g. `node /x/bin/atlas.mjs`), measured in turns (a, b, a, b, ...) so that a load change hits both alike:
 * - `atlas --help`: wall time from spawn to exit (BENCH_RUNS times, median);
 * - `atlas start` on an empty data dir: time from spawn to the first 200 of GET /api/health (BENCH_RUNS times);
 * - `atlas start` on a backlog: the Clojurians export appended without projection (`atlas import … --no-project`, once
 *   per checkout, copied for each run): time to the first 200 of /api/health and of GET /api/channels, then for the
 *   first BENCH_WINDOW_S seconds (default 60) after the spawn, one reader in a closed loop (100 ms apart) cycling
 *   GET /api/health, GET /api/channels, GET /api/memories?channel_id=<#clojure>, POST /api/search: the latency of each
 *   answer (p50 / p95 / max of the 200s), the count of 200s, of other statuses (503 while starting) and of requests
 *   refused or timed out (BENCH_TIMEOUT_MS, default 10000), and the messages and facts the channels held at the end
 *   of the window (projection progress under reads). BENCH_BACKLOG_RUNS (default 1) runs.
 * Prints one table, a column per checkout and, with two, their ratio (second / first). Timings on a loaded machine say
 * where time goes, not what a quiet one gives: run it on a quiet machine for figures.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const EXPORT = path.resolve(ROOT, '../shared/data/slack-clojurians-2018-02/export');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BACKLOG_RUNS = Number(process.env.BENCH_BACKLOG_RUNS ?? 1);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_S ?? 60) * 1000;
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 10_000);
const CHECKOUTS = (process.env.BENCH_ATLAS ?? ROOT).split(',').map((s) => s.trim());
const CLOJURE = (
  JSON.parse(readFileSync(path.join(EXPORT, 'channels.json'), 'utf8')) as { id: string; name: string }[]
).find((c) => c.name === 'clojure')!.id;

/** The command line of a checkout (its bin/atlas.mjs under this node) or of a given command. */
const commandOf = (entry: string): string[] =>
  existsSync(entry) && statSync(entry).isDirectory()
    ? [process.execPath, path.join(entry, 'bin/atlas.mjs')]
    : entry.split(/\s+/);

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

const atlas = (entry: string, args: string[], env: Record<string, string> = {}): ChildProcess => {
  const [cmd, ...pre] = commandOf(entry);
  return spawn(cmd!, [...pre, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
};

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

/** SIGTERM, then SIGKILL after 15 s (a process whose event loop is starved may not hear the first). */
const stop = async (child: ChildProcess) => {
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited(child);
  clearTimeout(timer);
};

const request = async (port: number, method: string, url: string, body?: unknown) => {
  const t = performance.now();
  try {
    const res = await fetch(`http://127.0.0.1:${port}${url}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await res.text();
    return { status: res.status, ms: performance.now() - t, text };
  } catch {
    return { status: 0, ms: performance.now() - t, text: '' }; // refused or timed out
  }
};

const median = (xs: number[]) => quantile(xs, 0.5);
const quantile = (xs: number[], p: number) =>
  xs.length === 0 ? Number.NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

const helpMs = async (entry: string) => {
  const t = performance.now();
  const code = await exited(atlas(entry, ['--help']));
  if (code !== 0) throw new Error(`${entry}: atlas --help exited ${code}`);
  return performance.now() - t;
};

/** Spawns `atlas start`; resolves with the time to the first 200 of /api/health, leaves the process running. */
const startUntilHealthy = async (entry: string, dataDir: string) => {
  const port = await freePort();
  const t0 = performance.now();
  const child = atlas(entry, ['start', '--port', String(port), '--data-dir', dataDir], { LOG_LEVEL: 'warn' });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr = (stderr + d).slice(-2000);
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${entry}: atlas start exited ${child.exitCode}: ${stderr}`);
    if (performance.now() - t0 > 600_000) throw new Error(`${entry}: no health in 10 minutes`);
    const r = await request(port, 'GET', '/api/health');
    if (r.status === 200) return { child, port, t0, healthMs: performance.now() - t0 };
    await new Promise((r) => setTimeout(r, 50));
  }
};

const READS = [
  ['GET', '/api/health'],
  ['GET', '/api/channels'],
  ['GET', `/api/memories?channel_id=${CLOJURE}`],
  ['POST', '/api/search', { query: 'core.async channel', channel_id: null, limit: 10 }],
] as const;

const backlogRun = async (entry: string, template: string) => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'atlas-bench-start-'));
  cpSync(template, dataDir, { recursive: true });
  const port = await freePort();
  const t0 = performance.now();
  const child = atlas(entry, ['start', '--port', String(port), '--data-dir', dataDir], { LOG_LEVEL: 'warn' });
  try {
    // The first 200 of /api/health, polled every 50 ms (beyond the window if need be, at most 10 minutes).
    const health = (async () => {
      while (child.exitCode === null && performance.now() - t0 < 600_000) {
        if ((await request(port, 'GET', '/api/health')).status === 200) return performance.now() - t0;
        await new Promise((r) => setTimeout(r, 50));
      }
      return Number.NaN;
    })();
    const ok: number[] = [];
    let other = 0;
    let failed = 0;
    let apiMs = Number.NaN;
    let held = { messages: 0, facts: 0 };
    for (let i = 0; performance.now() - t0 < WINDOW_MS && child.exitCode === null; i++) {
      const [method, url, body] = READS[i % READS.length]!;
      const r = await request(port, method, url, body);
      if (r.status === 200) {
        ok.push(r.ms);
        if (url === '/api/channels') {
          if (Number.isNaN(apiMs)) apiMs = performance.now() - t0;
          const channels = JSON.parse(r.text) as { message_count: number; fact_count: number }[];
          held = {
            messages: channels.reduce((s, c) => s + c.message_count, 0),
            facts: channels.reduce((s, c) => s + c.fact_count, 0),
          };
        }
      } else if (r.status === 0) failed++;
      else other++;
      await new Promise((r) => setTimeout(r, 100));
    }
    const healthMs = await health;
    return { healthMs, apiMs, ok, other, failed, held };
  } finally {
    await stop(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
};

const main = async () => {
  const work = mkdtempSync(path.join(os.tmpdir(), 'atlas-bench-start-'));
  const results = CHECKOUTS.map(() => ({
    help: [] as number[],
    empty: [] as number[],
    backlog: [] as Awaited<ReturnType<typeof backlogRun>>[],
  }));
  try {
    for (let r = 0; r < RUNS; r++) {
      for (const [i, entry] of CHECKOUTS.entries()) results[i]!.help.push(await helpMs(entry));
      for (const [i, entry] of CHECKOUTS.entries()) {
        const dataDir = mkdtempSync(path.join(work, 'empty-'));
        const s = await startUntilHealthy(entry, dataDir);
        await stop(s.child);
        results[i]!.empty.push(s.healthMs);
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
    const templates: string[] = [];
    for (const [i, entry] of CHECKOUTS.entries()) {
      const dir = path.join(work, `backlog-${i}`);
      const child = atlas(entry, ['import', EXPORT, '--no-project', '--no-progress', '--data-dir', dir]);
      if ((await exited(child)) !== 0) throw new Error(`${entry}: atlas import --no-project failed`);
      templates.push(dir);
    }
    for (let r = 0; r < BACKLOG_RUNS; r++)
      for (const [i, entry] of CHECKOUTS.entries()) results[i]!.backlog.push(await backlogRun(entry, templates[i]!));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  const ms = (x: number) => (Number.isNaN(x) ? '-' : `${Math.round(x)} ms`);
  const rows: [string, number[], (x: number) => string][] = [];
  const all = (f: (b: Awaited<ReturnType<typeof backlogRun>>) => number[]) => results.map((x) => x.backlog.flatMap(f));
  rows.push(['atlas --help (median)', results.map((x) => median(x.help)), ms]);
  rows.push(['/api/health first 200, empty data dir (median)', results.map((x) => median(x.empty)), ms]);
  rows.push(['/api/health first 200, Clojurians backlog', all((b) => [b.healthMs]).map(median), ms]);
  rows.push(['GET /api/channels first 200, backlog', all((b) => [b.apiMs]).map(median), ms]);
  const ok = all((b) => b.ok);
  rows.push([`reads in the first ${WINDOW_MS / 1000} s: p50 of 200s`, ok.map((x) => quantile(x, 0.5)), ms]);
  rows.push(['reads: p95 of 200s', ok.map((x) => quantile(x, 0.95)), ms]);
  rows.push(['reads: max of 200s', ok.map((x) => quantile(x, 1)), ms]);
  const count = (x: number) => (Number.isNaN(x) ? '-' : String(Math.round(x)));
  rows.push(['reads answered 200', ok.map((x) => x.length), count]);
  rows.push(['reads answered 503 or other', all((b) => [b.other]).map((x) => x.reduce((s, v) => s + v, 0)), count]);
  rows.push([
    `reads refused or timed out (${TIMEOUT_MS} ms)`,
    all((b) => [b.failed]).map((x) => x.reduce((s, v) => s + v, 0)),
    count,
  ]);
  rows.push(['messages held at the end of the window', all((b) => [b.held.messages]).map(median), count]);
  rows.push(['facts held at the end of the window', all((b) => [b.held.facts]).map(median), count]);
  const head = ['measure', ...CHECKOUTS.map((c) => path.basename(c)), ...(CHECKOUTS.length === 2 ? ['ratio'] : [])];
  const body = rows.map(([name, xs, f]) => [
    name,
    ...xs.map(f),
    ...(CHECKOUTS.length === 2 ? [xs[0]! > 0 && !Number.isNaN(xs[1]!) ? `${(xs[1]! / xs[0]!).toFixed(2)}x` : '-'] : []),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(
    `bench:start, ${RUNS} runs (empty), ${BACKLOG_RUNS} backlog run(s), load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log([line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n'));
};

await main();
