import { open, readdir, readFile, stat } from 'node:fs/promises';
import nodePath from 'node:path';
import { AtlasError } from '@atlas/core';
import { DEFAULT_ZIP_LIMITS, openZipArchive, type ZipLimits } from './zip.js';

/**
 * The error every importer throws on bad input: `IMPORT_FAILED` with message `<file>: <problem>`,
 * `file` being the path relative to the import root (or the root's own name for root-level problems).
 */
export const importFailed = (
  file: string,
  problem: string,
  extra: Record<string, unknown> = {},
  cause?: unknown,
): AtlasError =>
  new AtlasError('IMPORT_FAILED', `${file}: ${problem}`, { details: { file, problem, ...extra }, cause });

/** A read-only view of an export: a directory, a zip of one, or a single file. */
export interface ExportSource {
  /** The path as given by the caller. */
  readonly path: string;
  readonly kind: 'dir' | 'zip' | 'file';
  /** Base name of the path without `.zip` / `.json` (used as a fallback workspace name). */
  readonly name: string;
  /** Posix paths relative to the root (at most two levels deep), sorted. */
  readonly files: readonly string[];
  readText(rel: string): Promise<string>;
  /** The first `bytes` bytes of a file as text, for format sniffing. */
  head(rel: string, bytes?: number): Promise<string>;
  /** Releases what the source holds open (a zip's file descriptor); reads fail afterwards. */
  close(): Promise<void>;
}

/** Options of openSource. */
export interface SourceOptions {
  /** Bounds of a zipped export (default: DEFAULT_ZIP_LIMITS, the default configuration's). */
  zipLimits?: ZipLimits;
}

const decoder = new TextDecoder('utf-8');
const stripBom = (s: string): string => (s.charCodeAt(0) === 0xfeff ? s.slice(1) : s);
const HEAD_BYTES = 64 * 1024;

/**
 * Opens `path` as an ExportSource (close it when done). Throws IMPORT_FAILED when it does not exist, is an unreadable
 * zip, or is a zip beyond `opts.zipLimits` (entry count, per-file and total uncompressed size, compression ratio:
 * openZipArchive). Reading a file fails with IMPORT_FAILED too (unreadable, too long for one string, a zip bomb).
 */
export async function openSource(path: string, opts: SourceOptions = {}): Promise<ExportSource> {
  const base = nodePath.basename(path);
  const info = await stat(path).catch((err: unknown) => {
    throw importFailed(base, `cannot read the import path (${(err as Error).message})`, { path }, err);
  });
  if (info.isDirectory()) return openDir(path);
  if (base.toLowerCase().endsWith('.zip')) return openZip(path, opts.zipLimits ?? DEFAULT_ZIP_LIMITS);
  return {
    path,
    kind: 'file',
    name: base.replace(/\.json$/i, ''),
    files: [base],
    readText: () => readTextFile(path, base),
    head: (_rel, bytes = HEAD_BYTES) => readHead(path, bytes),
    close: async () => undefined,
  };
}

/** A whole file as text; a file V8 cannot hold as one string (over ~512 MiB) or cannot read is IMPORT_FAILED. */
async function readTextFile(file: string, rel: string): Promise<string> {
  try {
    return stripBom(await readFile(file, 'utf8'));
  } catch (err) {
    throw importFailed(rel, `cannot read: ${(err as Error).message}`, {}, err);
  }
}

async function readHead(file: string, bytes: number): Promise<string> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return stripBom(buf.subarray(0, bytesRead).toString('utf8'));
  } finally {
    await fh.close();
  }
}

async function openDir(root: string): Promise<ExportSource> {
  const files: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (entry.isFile()) files.push(entry.name);
    else if (entry.isDirectory()) {
      for (const sub of await readdir(nodePath.join(root, entry.name), { withFileTypes: true })) {
        if (sub.isFile()) files.push(`${entry.name}/${sub.name}`);
      }
    }
  }
  files.sort();
  const abs = (rel: string): string => nodePath.join(root, ...rel.split('/'));
  return {
    path: root,
    kind: 'dir',
    name: nodePath.basename(nodePath.resolve(root)),
    files,
    readText: (rel) => readTextFile(abs(rel), rel),
    head: (rel, bytes = HEAD_BYTES) => readHead(abs(rel), bytes),
    close: async () => undefined,
  };
}

/** A zip of an export, read through openZipArchive: bounded, and only the files read are inflated. */
async function openZip(zipPath: string, limits: ZipLimits): Promise<ExportSource> {
  const zip = await openZipArchive(zipPath, limits, importFailed);
  return {
    path: zipPath,
    kind: 'zip',
    name: nodePath.basename(zipPath).replace(/\.zip$/i, ''),
    files: zip.files,
    readText: async (rel) => stripBom(decoder.decode(await zip.read(rel))),
    head: async (rel, bytes = HEAD_BYTES) => stripBom(decoder.decode(await zip.head(rel, bytes))),
    close: zip.close,
  };
}

/** Reads and parses one JSON file; invalid JSON throws IMPORT_FAILED with the parser's message (and position). */
export async function readJson(src: ExportSource, rel: string): Promise<unknown> {
  return parseJsonText(rel, await src.readText(rel));
}

/** Parses JSON text read from `rel`; throws IMPORT_FAILED naming `rel` and the parser's message. */
export function parseJsonText(rel: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    throw importFailed(rel, `invalid JSON: ${message}`, { parserMessage: message, bytes: text.length }, err);
  }
}
