// Whether the compiled CLI (dist/cli, written by scripts/build-cli.mjs at install) is current. No dependencies, so the
// `atlas` command can ask before it loads anything else.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** The build's stamp beside its output. */
export const STAMP = 'build.json';

/**
 * The compiled CLI under `<root>/dist/cli`, if it was built from the sources as they are now: every input the
 * build recorded in its stamp (the bundled sources, the package.json files and the build script) still exists and
 * was last modified before the build started. A file edited since, deleted or renamed makes the build stale; a new
 * file only matters once an input imports it, and that input then changed too.
 * Cost: one stat per input (~250 files, a few ms).
 *
 * @param {string} root the checkout's root folder (absolute)
 * @param {string} [dir] the build's folder (default `<root>/dist/cli`)
 * @returns {{ current: true, entry: string } | { current: false, reason: string }} the entry file to import (absolute
 *   path) when current, else why not ('not built', '<file> changed since the build', '<file> is gone')
 */
export const compiledCli = (root, dir = path.join(root, 'dist', 'cli')) => {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(path.join(dir, STAMP), 'utf8'));
  } catch {
    return { current: false, reason: 'not built' };
  }
  for (const input of stamp.inputs) {
    let mtime;
    try {
      mtime = statSync(path.join(root, input)).mtimeMs;
    } catch {
      return { current: false, reason: `${input} is gone` };
    }
    if (mtime > stamp.builtAt) return { current: false, reason: `${input} changed since the build` };
  }
  return { current: true, entry: path.join(dir, stamp.entry) };
};
