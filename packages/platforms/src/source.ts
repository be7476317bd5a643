import { open, readdir, readFile, stat } from 'node:fs/promises';
import nodePath from 'node:path';
import { AtlasError } from '@atlas/core';
import { unzipSync } from 'fflate';

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
}

const decoder = new TextDecoder('utf-8');
const stripBom = (s: string): string => (s.charCodeAt(0) === 0xfeff ? s.slice(1) : s);
const HEAD_BYTES = 64 * 1024;

/** Opens `path` as an ExportSource; throws IMPORT_FAILED when it does not exist or is an unreadable zip. */
export async function openSource(path: string): Promise<ExportSource> {
  const base = nodePath.basename(path);
  const info = await stat(path).catch((err: unknown) => {
    throw importFailed(base, `cannot read the import path (${(err as Error).message})`, { path }, err);
  });
  if (info.isDirectory()) return openDir(path);
  if (base.toLowerCase().endsWith('.zip')) return openZip(path);
  return {
    path,
    kind: 'file',
    name: base.replace(/\.json$/i, ''),
    files: [base],
    readText: async () => stripBom(await readFile(path, 'utf8')),
    head: (_rel, bytes = HEAD_BYTES) => readHead(path, bytes),
  };
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
    readText: async (rel) => stripBom(await readFile(abs(rel), 'utf8')),
    head: (rel, bytes = HEAD_BYTES) => readHead(abs(rel), bytes),
  };
}

async function openZip(zipPath: string): Promise<ExportSource> {
  const base = nodePath.basename(zipPath);
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(await readFile(zipPath), {
      filter: (f) => !f.name.endsWith('/') && !f.name.startsWith('__MACOSX/'),
    });
  } catch (err) {
    throw importFailed(base, `invalid zip archive: ${(err as Error).message}`, {}, err);
  }
  const names = Object.keys(entries);
  const prefix = commonTopDir(names);
  const byRel = new Map<string, Uint8Array>();
  for (const n of names) {
    const rel = n.slice(prefix.length);
    if (rel.split('/').length <= 2) byRel.set(rel, entries[n]!);
  }
  const get = (rel: string): Uint8Array => {
    const data = byRel.get(rel);
    if (!data) throw importFailed(rel, 'missing from the zip archive');
    return data;
  };
  return {
    path: zipPath,
    kind: 'zip',
    name: base.replace(/\.zip$/i, ''),
    files: [...byRel.keys()].sort(),
    readText: async (rel) => stripBom(decoder.decode(get(rel))),
    head: async (rel, bytes = HEAD_BYTES) => stripBom(decoder.decode(get(rel).subarray(0, bytes))),
  };
}

/** `dir/` when every entry lives under the same top-level folder (a zipped folder), else ''. */
function commonTopDir(names: readonly string[]): string {
  const first = names[0];
  if (first === undefined || !first.includes('/')) return '';
  const top = `${first.split('/')[0]}/`;
  return names.every((n) => n.startsWith(top)) ? top : '';
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
