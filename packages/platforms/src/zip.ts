import { constants as bufferConstants } from 'node:buffer';
import nodePath from 'node:path';
import type { Readable } from 'node:stream';
import { AtlasError, type Config, ConfigSchema } from '@atlas/core';
import pLimit from 'p-limit';
import yauzl from 'yauzl';

/**
 * Bounds of a zipped export (docs/import.md "Archive bounds"). Checked twice: on the sizes the central directory
 * declares, before anything is inflated, and on the real bytes while an entry is inflated (declared sizes can lie).
 */
export interface ZipLimits {
  /** Entries of the archive in all (directories, __MACOSX companions and files the import never reads count). */
  maxEntries: number;
  /** Uncompressed bytes of one file the import reads; at most V8's longest string (a file is read as one string). */
  maxEntryBytes: number;
  /** Uncompressed bytes of all the JSON files the import may read (up to two levels deep), summed. */
  maxTotalBytes: number;
  /** Highest uncompressed:compressed ratio of a file of more than RATIO_FLOOR_BYTES. */
  maxRatio: number;
}

/** The ratio bound applies to files above this many uncompressed bytes (a small file of spaces harms no one). */
export const RATIO_FLOOR_BYTES = 2 ** 20;

/** The longest string V8 makes (`buffer.constants.MAX_STRING_LENGTH`): no file longer can be read as text. */
const MAX_TEXT_BYTES = bufferConstants.MAX_STRING_LENGTH;

/** Files inflated at the same time: each holds a zlib stream and its chunks until it is read whole. */
const INFLATE_CONCURRENCY = 4;

const MIB = 2 ** 20;

/** The archive bounds of a configuration (IMPORT_ZIP_MAX_*; MiB to bytes; the per-file bound capped at V8's). */
export const zipLimitsOf = (
  cfg: Pick<
    Config,
    'IMPORT_ZIP_MAX_ENTRIES' | 'IMPORT_ZIP_MAX_ENTRY_MB' | 'IMPORT_ZIP_MAX_TOTAL_MB' | 'IMPORT_ZIP_MAX_RATIO'
  >,
): ZipLimits => ({
  maxEntries: cfg.IMPORT_ZIP_MAX_ENTRIES,
  maxEntryBytes: Math.min(Math.floor(cfg.IMPORT_ZIP_MAX_ENTRY_MB * MIB), MAX_TEXT_BYTES),
  maxTotalBytes: Math.floor(cfg.IMPORT_ZIP_MAX_TOTAL_MB * MIB),
  maxRatio: cfg.IMPORT_ZIP_MAX_RATIO,
});

/** The bounds of the default configuration (what planImport uses when given none). */
export const DEFAULT_ZIP_LIMITS: ZipLimits = zipLimitsOf(ConfigSchema.parse({}));

/** `1.5 MiB`, `2.0 GiB`, `312 B`. */
export const formatBytes = (n: number): string =>
  n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(1)} GiB` : n >= MIB ? `${(n / MIB).toFixed(1)} MiB` : `${n} B`;

/** One file of the archive the import may read, with what its central directory declares. */
interface ZipFileEntry {
  entry: yauzl.Entry;
  /** Path relative to the export root (the common top folder stripped). */
  rel: string;
}

/** The listing of an opened zip and its reader. `close()` releases the file descriptor. */
export interface OpenedZip {
  /** Files at most two levels below the export root (no directories, no __MACOSX), sorted. */
  files: string[];
  /** Inflates one whole file (bounded, see ZipLimits); throws IMPORT_FAILED naming the file and the bound. */
  read(rel: string): Promise<Uint8Array>;
  /** Inflates the first `bytes` bytes of a file (for format sniffing), under the same bounds. */
  head(rel: string, bytes: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

type Fail = (file: string, problem: string, extra?: Record<string, unknown>, cause?: unknown) => AtlasError;

const isJson = (name: string): boolean => /\.json$/i.test(name);

/**
 * Opens a zipped export through yauzl (random access, central directory first) and checks its bounds before
 * inflating anything: the entry count (from the end of central directory record, before a single entry is parsed),
 * then for each JSON file at most two levels below the export root its declared uncompressed size, its declared
 * ratio (above RATIO_FLOOR_BYTES) and the sum of them all. `read` and `head` then inflate one file at a time
 * (INFLATE_CONCURRENCY at once) counting the real bytes: more than declared (yauzl's check), more than a bound or a
 * ratio above the bound stops the stream and refuses the archive. Memory: the listing, plus at most the bytes of the
 * files being read. Errors: `fail(file, problem)` (IMPORT_FAILED) naming the entry (path relative to the export
 * root) or the archive, the bound and its setting; an unreadable archive is `invalid zip archive: …`.
 */
export async function openZipArchive(zipPath: string, limits: ZipLimits, fail: Fail): Promise<OpenedZip> {
  const base = nodePath.basename(zipPath);
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(zipPath, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: true,
      validateEntrySizes: true,
    });
  } catch (err) {
    throw fail(base, `invalid zip archive: ${(err as Error).message}`, {}, err);
  }
  const close = async (): Promise<void> => {
    if (zip.isOpen) zip.close();
  };
  try {
    if (zip.entryCount > limits.maxEntries)
      throw fail(
        base,
        `${zip.entryCount} entries, more than the ${limits.maxEntries} an import admits (IMPORT_ZIP_MAX_ENTRIES): refused as a possible zip bomb`,
        { entries: zip.entryCount, bound: limits.maxEntries },
      );
    const listed = await listEntries(zip, base, fail);
    const byRel = new Map(listed.map((f) => [f.rel, f]));
    checkDeclared(
      listed.filter((f) => isJson(f.rel)),
      base,
      limits,
      fail,
    );
    const limit = pLimit(INFLATE_CONCURRENCY);
    const counter = { total: 0 };
    const get = (rel: string): ZipFileEntry => {
      const f = byRel.get(rel);
      if (!f) throw fail(rel, 'missing from the zip archive');
      return f;
    };
    return {
      files: [...byRel.keys()].sort(),
      read: (rel) => limit(() => inflate(zip, get(rel), limits, counter, fail, Number.POSITIVE_INFINITY)),
      head: (rel, bytes) => limit(() => inflate(zip, get(rel), limits, counter, fail, bytes)),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The files of the central directory that an import may read: not directories, not under __MACOSX/, at most two
 * levels below the export root (a zipped folder's common top folder is stripped). Only those keep their entry.
 */
async function listEntries(zip: yauzl.ZipFile, base: string, fail: Fail): Promise<ZipFileEntry[]> {
  const kept: yauzl.Entry[] = [];
  let top: string | null | undefined; // undefined: no file yet; null: files under different top folders
  try {
    for await (const entry of zip.eachEntry()) {
      const name = entry.fileName;
      if (name.endsWith('/') || name.startsWith('__MACOSX/')) continue;
      const first = name.includes('/') ? `${name.split('/')[0]}/` : null;
      top = top === undefined ? first : top === first ? top : null;
      if (name.split('/').length <= 3) kept.push(entry); // two levels below a possible top folder
    }
  } catch (err) {
    throw fail(base, `invalid zip archive: ${(err as Error).message}`, {}, err);
  }
  const prefix = top ?? '';
  return kept
    .map((entry) => ({ entry, rel: entry.fileName.slice(prefix.length) }))
    .filter((f) => f.rel.split('/').length <= 2);
}

/** The checks on declared sizes, before inflating: each file's size and ratio, then the sum. */
function checkDeclared(files: readonly ZipFileEntry[], base: string, limits: ZipLimits, fail: Fail): void {
  let total = 0;
  for (const { entry, rel } of files) {
    const size = entry.uncompressedSize;
    if (size > limits.maxEntryBytes)
      throw fail(
        rel,
        `declares ${formatBytes(size)} uncompressed, more than the ${formatBytes(limits.maxEntryBytes)} per file an import admits (IMPORT_ZIP_MAX_ENTRY_MB): refused as a possible zip bomb`,
        { declaredBytes: size, bound: limits.maxEntryBytes },
      );
    const ratio = size / Math.max(entry.compressedSize, 1);
    if (size > RATIO_FLOOR_BYTES && ratio > limits.maxRatio)
      throw fail(
        rel,
        `declares a compression ratio of ${Math.round(ratio)}:1 (${formatBytes(size)} from ${formatBytes(entry.compressedSize)}), above the ${limits.maxRatio}:1 an import admits (IMPORT_ZIP_MAX_RATIO): refused as a possible zip bomb`,
        { declaredBytes: size, compressedBytes: entry.compressedSize, bound: limits.maxRatio },
      );
    total += size;
  }
  if (total > limits.maxTotalBytes)
    throw fail(
      base,
      `its JSON files declare ${formatBytes(total)} uncompressed in all, more than the ${formatBytes(limits.maxTotalBytes)} an import admits (IMPORT_ZIP_MAX_TOTAL_MB)`,
      { declaredBytes: total, bound: limits.maxTotalBytes },
    );
}

/**
 * Inflates one file up to `upTo` bytes (Infinity: all of it), counting the real bytes against its declared size
 * (yauzl), the per-file and total bounds and the ratio bound. A bound crossed destroys the stream at once.
 */
async function inflate(
  zip: yauzl.ZipFile,
  { entry, rel }: ZipFileEntry,
  limits: ZipLimits,
  counter: { total: number },
  fail: Fail,
  upTo: number,
): Promise<Uint8Array> {
  let stream: Readable;
  try {
    stream = await zip.openReadStreamPromise(entry);
  } catch (err) {
    throw fail(rel, `cannot inflate: ${(err as Error).message}`, {}, err);
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  const compressed = Math.max(entry.compressedSize, 1);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      counter.total += chunk.length;
      if (bytes > limits.maxEntryBytes)
        throw fail(
          rel,
          `inflates to more than the ${formatBytes(limits.maxEntryBytes)} per file an import admits (IMPORT_ZIP_MAX_ENTRY_MB): refused as a possible zip bomb`,
          { bound: limits.maxEntryBytes },
        );
      if (bytes > RATIO_FLOOR_BYTES && bytes / compressed > limits.maxRatio)
        throw fail(
          rel,
          `inflates at a ratio above the ${limits.maxRatio}:1 an import admits (IMPORT_ZIP_MAX_RATIO; ${formatBytes(bytes)} from ${formatBytes(entry.compressedSize)} so far): refused as a possible zip bomb`,
          { compressedBytes: entry.compressedSize, bound: limits.maxRatio },
        );
      if (counter.total > limits.maxTotalBytes)
        throw fail(
          rel,
          `the files read so far inflate to more than the ${formatBytes(limits.maxTotalBytes)} an import admits (IMPORT_ZIP_MAX_TOTAL_MB): refused as a possible zip bomb`,
          { bound: limits.maxTotalBytes },
        );
      chunks.push(chunk);
      if (bytes >= upTo) break; // a head: the rest is never inflated
    }
  } catch (err) {
    stream.destroy();
    if (err instanceof AtlasError) throw err;
    const message = (err as Error).message;
    if (/too many bytes in the stream/.test(message))
      throw fail(
        rel,
        `inflates to more than the ${formatBytes(entry.uncompressedSize)} its central directory declares: the archive lies about its sizes (refused as a zip bomb)`,
        { declaredBytes: entry.uncompressedSize },
        err,
      );
    throw fail(rel, `cannot inflate: ${message}`, {}, err);
  }
  const all = Buffer.concat(chunks);
  return upTo < all.length ? all.subarray(0, upTo) : all;
}
