import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AtlasError, loadConfig } from '@atlas/core';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_ZIP_LIMITS, planImport, type ZipLimits, zipLimitsOf } from './index.js';
import { openSource } from './source.js';
import { deflatedEntry, deflatedZeros, type RawZipEntry, zipArchive } from './zip-writer.test-support.js';

// docs/import.md "Archive bounds" (a zip bomb): every archive is bounded (entry count, per-file and total uncompressed
// size, compression ratio), before inflating (declared sizes) and while inflating (real bytes), refused with
// IMPORT_FAILED.

const MIB = 2 ** 20;
const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'atlas-zip-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));
let n = 0;
const write = (entries: readonly RawZipEntry[]): string => {
  const file = path.join(tmpRoot, `${n++}-export.zip`);
  writeFileSync(file, zipArchive(entries));
  return file;
};

/** A valid one-channel Slack export: channels.json and two day files. */
const exportEntries = (prefix = ''): RawZipEntry[] => [
  deflatedEntry(`${prefix}channels.json`, JSON.stringify([{ id: 'C1', name: 'general' }])),
  deflatedEntry(
    `${prefix}general/2024-01-01.json`,
    JSON.stringify([{ type: 'message', ts: '1704067200.000100', user: 'U1', text: 'hello' }]),
  ),
  deflatedEntry(
    `${prefix}general/2024-01-02.json`,
    JSON.stringify([{ type: 'message', ts: '1704153600.000100', user: 'U2', text: 'again' }]),
  ),
];

/** Bytes no inflater accepts: an entry made of them fails if anything tries to inflate it. */
const garbage = (name: string, declaredSize: number): RawZipEntry => ({
  name,
  method: 8,
  data: Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
  crc: 0,
  size: 8,
  declaredSize,
});

const limits = (over: Partial<ZipLimits> = {}): ZipLimits => ({ ...DEFAULT_ZIP_LIMITS, ...over });

async function failure(p: Promise<unknown>): Promise<AtlasError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AtlasError);
  expect((err as AtlasError).code).toBe('IMPORT_FAILED');
  return err as AtlasError;
}

describe('zip archive bounds: entry count, sizes and ratio, refused with IMPORT_FAILED', () => {
  it('the real export zipped still plans like before', async () => {
    const plan = await planImport(write(exportEntries('export/')));
    expect(plan.messages.map((m) => m.text)).toEqual(['hello', 'again']);
    expect(plan.filesRead).toBe(3);
  });

  it('a file declaring more than the per-file bound is refused before anything is inflated', async () => {
    const zip = write([...exportEntries(), garbage('general/2024-01-03.json', 3 * MIB)]);
    const err = await failure(planImport(zip, { zipLimits: limits({ maxEntryBytes: 2 * MIB }) }));
    // Inflating the garbage would have said "cannot inflate": the bound was checked first.
    expect(err.message).toBe(
      'general/2024-01-03.json: declares 3.0 MiB uncompressed, more than the 2.0 MiB per file an import admits (IMPORT_ZIP_MAX_ENTRY_MB): refused as a possible zip bomb',
    );
    expect(err.details).toMatchObject({ file: 'general/2024-01-03.json', declaredBytes: 3 * MIB, bound: 2 * MIB });
  });

  it('a file declaring a ratio above the bound is refused before anything is inflated', async () => {
    const zip = write([...exportEntries(), garbage('general/2024-01-03.json', 8 * 300 * MIB)]);
    const err = await failure(planImport(zip, { zipLimits: limits({ maxEntryBytes: 4096 * MIB }) }));
    expect(err.message).toMatch(
      /^general\/2024-01-03\.json: declares a compression ratio of 314572800:1 .*above the 200:1 an import admits \(IMPORT_ZIP_MAX_RATIO\)/,
    );
  });

  it('a high ratio is allowed for a file under 1 MiB (a small file of spaces harms no one)', async () => {
    const spaces = deflatedEntry('general/2024-01-03.json', `[${' '.repeat(MIB - 10)}]`);
    expect(spaces.size / spaces.data.length).toBeGreaterThan(200);
    const plan = await planImport(write([...exportEntries(), spaces]));
    expect(plan.messages).toHaveLength(2);
  });

  it('files whose declared sizes add up past the total bound are refused, naming the archive', async () => {
    const big = (name: string) => deflatedEntry(name, JSON.stringify([randomBytes(MIB).toString('base64')]));
    const zip = write([...exportEntries(), big('general/2024-01-03.json'), big('general/2024-01-04.json')]);
    const err = await failure(planImport(zip, { zipLimits: limits({ maxTotalBytes: 2 * MIB }) }));
    expect(err.message).toMatch(
      /^\d+-export\.zip: its JSON files declare 2\.7 MiB uncompressed in all, more than the 2\.0 MiB an import admits \(IMPORT_ZIP_MAX_TOTAL_MB\)$/,
    );
  });

  it('an archive with more entries than the bound is refused from its end record', async () => {
    const zip = write([...exportEntries(), deflatedEntry('general/2024-01-03.json', '[]')]);
    const err = await failure(planImport(zip, { zipLimits: limits({ maxEntries: 3 }) }));
    expect(err.message).toMatch(
      /^\d+-export\.zip: 4 entries, more than the 3 an import admits \(IMPORT_ZIP_MAX_ENTRIES\)/,
    );
  });

  it('a file that inflates past the size its central directory declares is cut off and refused (a lying bomb)', async () => {
    const zeros = await deflatedZeros('general/2024-01-03.json', 64 * MIB);
    const zip = write([...exportEntries(), { ...zeros, declaredSize: 64 * 1024 }]);
    const err = await failure(planImport(zip));
    expect(err.message).toBe(
      'general/2024-01-03.json: inflates to more than the 65536 B its central directory declares: the archive lies about its sizes (refused as a zip bomb)',
    );
  });

  it('while inflating, a file read outside the pre-checked JSON files is bounded too (size, then ratio)', async () => {
    const text = deflatedEntry(
      'notes.txt',
      randomBytes(3 * MIB)
        .toString('hex')
        .slice(0, 3 * MIB),
    );
    const zeros = await deflatedZeros('zeros.txt', 4 * MIB);
    const src = await openSource(write([...exportEntries(), text, zeros]), {
      zipLimits: limits({ maxEntryBytes: 2 * MIB }),
    });
    try {
      expect(src.files).toContain('notes.txt');
      const big = await failure(src.readText('notes.txt'));
      expect(big.message).toBe(
        'notes.txt: inflates to more than the 2.0 MiB per file an import admits (IMPORT_ZIP_MAX_ENTRY_MB): refused as a possible zip bomb',
      );
      const dense = await failure(src.readText('zeros.txt'));
      expect(dense.message).toMatch(/^zeros\.txt: inflates at a ratio above the 200:1 an import admits/);
      expect(JSON.parse(await src.readText('channels.json'))).toEqual([{ id: 'C1', name: 'general' }]);
    } finally {
      await src.close();
    }
  });

  it('directories, __MACOSX and files deeper than two levels are never listed, checked or inflated', async () => {
    const dir: RawZipEntry = { name: 'export/general/', method: 0, data: Buffer.alloc(0), crc: 0, size: 0 };
    const zip = write([
      dir,
      ...exportEntries('export/'),
      garbage('__MACOSX/export/._channels.json', 4096 * MIB),
      garbage('export/general/attachments/huge.json', 4096 * MIB),
    ]);
    const src = await openSource(zip);
    try {
      expect(src.files).toEqual(['channels.json', 'general/2024-01-01.json', 'general/2024-01-02.json']);
    } finally {
      await src.close();
    }
    expect((await planImport(zip)).messages).toHaveLength(2);
  });

  it('the defaults are the configuration defaults, the per-file bound within what V8 reads as one string', () => {
    expect(DEFAULT_ZIP_LIMITS).toEqual(zipLimitsOf(loadConfig({})));
    expect(DEFAULT_ZIP_LIMITS).toMatchObject({ maxEntries: 500_000, maxTotalBytes: 2048 * MIB, maxRatio: 200 });
    expect(DEFAULT_ZIP_LIMITS.maxEntryBytes).toBeLessThanOrEqual(512 * MIB);
    expect(DEFAULT_ZIP_LIMITS.maxEntryBytes).toBeGreaterThan(511 * MIB);
    expect(zipLimitsOf(loadConfig({ IMPORT_ZIP_MAX_ENTRY_MB: '4096' })).maxEntryBytes).toBe(
      DEFAULT_ZIP_LIMITS.maxEntryBytes,
    );
  });
});
