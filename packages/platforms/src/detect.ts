import type { ImportFormat } from './plan.js';
import { type ExportSource, importFailed, openSource } from './source.js';

const DAY_FILE = /^[^/]+\/\d{4}-\d{2}-\d{2}\.json$/;

/** True when the first bytes of a file look like a DiscordChatExporter JSON export (an object starting with guild). */
export function looksLikeDiscordExport(head: string): boolean {
  return /^\s*\{/.test(head) && /"guild"\s*:/.test(head) && /"channel"\s*:|"messages"\s*:/.test(head);
}

/** Top-level `.json` files of a source (the file itself for a single-file source). */
const topLevelJson = (src: ExportSource): string[] => src.files.filter((f) => !f.includes('/') && /\.json$/i.test(f));

/** A one-line description of what a source holds, for the "unknown format" error. */
function describe(src: ExportSource, heads: Map<string, string>): string {
  if (src.kind === 'file') {
    const head = (heads.get(src.files[0] ?? '') ?? '').slice(0, 60).replace(/\s+/g, ' ');
    return `a file that is neither a .zip nor a DiscordChatExporter JSON (starts with ${JSON.stringify(head)})`;
  }
  const shown = src.files.slice(0, 8).join(', ');
  const more = src.files.length > 8 ? `, ... (${src.files.length} files)` : '';
  const what = src.kind === 'zip' ? 'a zip' : 'a directory';
  return `${what} with ${src.files.length === 0 ? 'no files' : `${shown}${more}`}; no channels.json, no <channel>/<YYYY-MM-DD>.json, no DiscordChatExporter JSON`;
}

/** Detects the format of an opened source; throws IMPORT_FAILED 'unknown format' saying what it found. */
export async function detectSourceFormat(src: ExportSource): Promise<ImportFormat> {
  if (src.files.includes('channels.json')) return 'platform_a_export';
  const heads = new Map<string, string>();
  for (const f of topLevelJson(src)) {
    const head = await src.head(f);
    heads.set(f, head);
    if (looksLikeDiscordExport(head)) return 'platform_b_export';
  }
  if (src.files.includes('users.json') || src.files.some((f) => DAY_FILE.test(f))) return 'platform_a_export';
  if (src.kind === 'file' && !heads.has(src.files[0] ?? ''))
    heads.set(src.files[0] ?? '', await src.head(src.files[0] ?? '', 256));
  const dayLike = [...heads.values()].some((h) => /^\s*\[/.test(h) && /"ts"\s*:/.test(h));
  const hint = dayLike ? '; it looks like Slack day files: pass the export root (the folder with channels.json)' : '';
  const found = describe(src, heads) + hint;
  throw importFailed(src.kind === 'file' ? (src.files[0] ?? src.name) : src.name, `unknown format: found ${found}`, {
    found: src.files.slice(0, 50),
  });
}

/**
 * Detects the export format at `path` (a directory, a `.zip`, or a `.json` file) without parsing it:
 * `platform_a_export` for a Slack export layout (channels.json, users.json or `<channel>/<YYYY-MM-DD>.json`),
 * `platform_b_export` for DiscordChatExporter JSON (sniffed from the first 64 KiB of top-level .json files).
 * Throws AtlasError IMPORT_FAILED `unknown format: found ...` (details.found lists the files) otherwise,
 * or when the path cannot be read.
 */
export async function detectFormat(path: string): Promise<ImportFormat> {
  const src = await openSource(path);
  try {
    return await detectSourceFormat(src);
  } finally {
    await src.close();
  }
}
