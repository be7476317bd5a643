import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { deflatedEntry, deflatedZeros, dirEntries, type RawZipEntry, zipArchive } from '@atlas/platforms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMPORT_PHASES } from './import-progress.js';

// Issue 21, points 2 and 3: `atlas import` refuses zip bombs with IMPORT_FAILED (exit 2) in bounded memory, still
// imports a real zipped export, and shows one progress display in messages (plain lines when not on a terminal).

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const DATA = path.resolve(ROOT, '../shared/data');
const OLAKE = path.join(DATA, 'slack-olake/export');
const MIB = 2 ** 20;
/** Peak memory a refused bomb may cost: the CLI itself plus a little (the unbounded reader took 2.3 GB). */
const RSS_BOUND_MB = 400;

const tmp = mkdtempSync(path.join(os.tmpdir(), 'atlas-import-cli-'));
const dataDir = path.join(tmp, 'data');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Reports the process's peak resident memory on stderr as it exits (process.exit included). */
const PRELOAD = path.join(tmp, 'maxrss.mjs');
writeFileSync(
  PRELOAD,
  "import { writeSync } from 'node:fs';\n" +
    "process.on('exit', () => writeSync(2, '\\nmaxrss_kb=' + process.resourceUsage().maxRSS + '\\n'));\n",
);

/** `atlas import <zip>` as a child process (stderr a pipe: not a terminal); exit code, output and peak RSS (MB). */
const atlasImport = (zip: string, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string; maxRssMb: number }>((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', pathToFileURL(PRELOAD).href, path.join(ROOT, 'bin/atlas.mjs'), 'import', zip, '--data-dir', dataDir],
      { cwd: ROOT, env: { ...process.env, EMBEDDING_PROVIDER: 'none', ...env } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => {
      const kb = Number(/maxrss_kb=(\d+)/.exec(stderr)?.[1] ?? Number.NaN);
      resolve({ code, stdout, stderr: stderr.replace(/\n?maxrss_kb=\d+\n/, ''), maxRssMb: kb / 1024 });
    });
  });

/** A valid one-channel Slack export, to which each bomb adds a day file. */
const exportEntries = (): RawZipEntry[] => [
  deflatedEntry('export/channels.json', JSON.stringify([{ id: 'CBOMB', name: 'general' }])),
  deflatedEntry(
    'export/general/2024-01-01.json',
    JSON.stringify([{ type: 'message', ts: '1704067200.000100', user: 'U1', text: 'hello' }]),
  ),
];

const writeZip = (name: string, entries: readonly RawZipEntry[]): string => {
  const file = path.join(tmp, name);
  writeFileSync(file, zipArchive(entries));
  return file;
};

/** Every file under the data dir with its size and modification time. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const n of readdirSync(path.join(dir, rel))) {
      const r = path.join(rel, n);
      const s = statSync(path.join(dir, r));
      if (s.isDirectory()) walk(r);
      else out[r] = `${s.size}:${s.mtimeMs}`;
    }
  };
  walk('');
  return out;
};

describe('atlas import of zipped exports (issue 21, points 2 and 3)', () => {
  const bombs: Record<string, string> = {};
  let olake: Awaited<ReturnType<typeof atlasImport>>;

  beforeAll(async () => {
    mkdirSync(dataDir);
    // The real OLake export, zipped here (never committed), imported end to end with progress lines every second.
    olake = await atlasImport(writeZip('olake.zip', dirEntries(OLAKE, 'export/')), { IMPORT_PROGRESS_INTERVAL_S: '1' });
    const zeros = await deflatedZeros('export/general/2024-01-02.json', 2 * 1024 * MIB);
    // (a) honest: one file declaring its 2 GiB of zeros, ~2 MB zipped.
    bombs.honest = writeZip('honest-bomb.zip', [...exportEntries(), zeros]);
    // (b) lying: the same data, its central directory declaring 1 MiB (a ratio of 0.5:1).
    bombs.lying = writeZip('lying-bomb.zip', [...exportEntries(), { ...zeros, declaredSize: MIB }]);
    // (c) one entry more than the default 500,000 (zip64 end records).
    const pad = Array.from(
      { length: 500_001 - 2 },
      (_, i): RawZipEntry => ({ name: `export/pad/${i}`, method: 0, data: Buffer.alloc(0), crc: 0, size: 0 }),
    );
    bombs.entries = writeZip('many-entries.zip', [...exportEntries(), ...pad]);
    // (d) high ratio: 256 MiB of zeros (under the 512 MiB per-file bound) at ~1030:1.
    bombs.ratio = writeZip('ratio-bomb.zip', [
      ...exportEntries(),
      await deflatedZeros('export/general/2024-01-02.json', 256 * MIB),
    ]);
  }, 900_000);

  it('imports the zipped OLake export end to end', () => {
    expect(olake.code, olake.stderr).toBe(0);
    expect(olake.stdout).toMatch(/5 channels, 302 messages \(302 new or changed, 0 unchanged\), [1-9]\d* facts/);
  });

  it('prints one progress display as plain lines: phases in order, a stable total in messages, no NaN', () => {
    const lines = olake.stderr.trim().split('\n');
    expect(olake.stderr).not.toMatch(/NaN|Infinity|undefined/);
    const LINE =
      /^import \[(\d)\/8\] ([a-z ]+): (\d+)\/(\d+) (files|messages) \((\d+)%\), (?:done in \d+ (?:s|min \d\d s)|\d+ (?:s|min \d\d s), ETA (?:estimating|\d+ (?:s|min \d\d s)|\d+ h \d\d min))$/;
    const parsed = lines.map((l) => {
      const m = LINE.exec(l);
      expect(m, l).not.toBeNull();
      return {
        step: Number(m![1]),
        phase: m![2]!,
        done: Number(m![3]),
        total: Number(m![4]),
        unit: m![5]!,
        end: l.includes('done in'),
      };
    });
    // Every phase ends once, in order, each named as IMPORT_PHASES names it.
    expect(parsed.filter((p) => p.end).map((p) => p.phase)).toEqual(IMPORT_PHASES.map((p) => p.name));
    for (let i = 1; i < parsed.length; i++) {
      expect(parsed[i]!.step).toBeGreaterThanOrEqual(parsed[i - 1]!.step);
      if (parsed[i]!.step === parsed[i - 1]!.step) expect(parsed[i]!.done).toBeGreaterThanOrEqual(parsed[i - 1]!.done);
    }
    for (const p of parsed) {
      expect(p.done).toBeLessThanOrEqual(p.total);
      if (p.unit === 'messages') expect(p.total).toBe(302);
      if (p.end) expect(p.done).toBe(p.total);
    }
    // Files read: channels.json, groups.json, users.json and the day files of the channels channels.json lists.
    const channels = JSON.parse(readFileSync(path.join(OLAKE, 'channels.json'), 'utf8')) as { name: string }[];
    const dayFiles = channels.flatMap((c) => readdirSync(path.join(OLAKE, c.name)).filter((f) => f.endsWith('.json')));
    expect(parsed.find((p) => p.phase === 'reading files')?.total).toBe(3 + dayFiles.length);
  });

  const cases = [
    [
      'honest',
      /IMPORT_FAILED: general\/2024-01-02\.json: declares 2\.0 GiB uncompressed, more than the 512\.0 MiB per file/,
    ],
    [
      'lying',
      /IMPORT_FAILED: general\/2024-01-02\.json: inflates to more than the 1\.0 MiB its central directory declares/,
    ],
    ['entries', /IMPORT_FAILED: many-entries\.zip: 500001 entries, more than the 500000 an import admits/],
    ['ratio', /IMPORT_FAILED: general\/2024-01-02\.json: declares a compression ratio of 10\d\d:1 \(256\.0 MiB from/],
  ] as const;
  it.each(cases)(
    'refuses the %s bomb: exit 2, IMPORT_FAILED naming the entry and the bound, bounded memory, store untouched',
    async (name, message) => {
      const before = snapshot(dataDir);
      const r = await atlasImport(bombs[name]!);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/refused as a (possible )?zip bomb/);
      expect(r.maxRssMb).toBeLessThan(RSS_BOUND_MB);
      console.log(`${name} bomb: refused with peak RSS ${Math.round(r.maxRssMb)} MB`);
      expect(snapshot(dataDir)).toEqual(before);
    },
    300_000,
  );
});
