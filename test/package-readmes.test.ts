import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Each workspace's README is a true map of its sources: it names every
 * folder under its `src/` (as `name/` or by its path from `src/`) and every source file over BIG_FILE_LINES lines (by
 * its file name), so a newcomer who opens the README finds every room and every big file. Tests, test support and
 * fixtures are left out of the file rule; their folders are not (a folder holds sources).
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const BIG_FILE_LINES = 300;
const WORKSPACES = ['packages', 'services'].flatMap((floor) =>
  readdirSync(path.join(ROOT, floor))
    .map((name) => path.join(floor, name))
    .filter((dir) => statSync(path.join(ROOT, dir)).isDirectory()),
);

const isTestFile = (name: string) => /\.(test|test-support|contract)\.ts$|\.test\.ts$/.test(name);

/** Folders under `src/` (paths relative to it, with `/`) and big source files (paths relative to it). */
const roomsOf = (srcDir: string): { folders: string[]; bigFiles: string[] } => {
  const folders: string[] = [];
  const bigFiles: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const rel = path.relative(srcDir, full).split(path.sep).join('/');
      if (entry.isDirectory()) {
        if (entry.name === 'node_modules' || entry.name === 'fixtures') continue;
        folders.push(rel);
        walk(full);
      } else if (/\.(ts|mts|mjs)$/.test(entry.name) && !isTestFile(entry.name)) {
        const lines = readFileSync(full, 'utf8').split('\n').length;
        if (lines > BIG_FILE_LINES) bigFiles.push(rel);
      }
    }
  };
  walk(srcDir);
  return { folders, bigFiles };
};

describe('package READMEs map their sources', () => {
  it('finds the workspaces', () => {
    expect(WORKSPACES.length).toBeGreaterThan(8);
  });

  for (const ws of WORKSPACES) {
    it(`${ws}/README.md names every folder of src/ and every file over ${BIG_FILE_LINES} lines`, () => {
      const readme = readFileSync(path.join(ROOT, ws, 'README.md'), 'utf8');
      const { folders, bigFiles } = roomsOf(path.join(ROOT, ws, 'src'));
      const unnamedFolders = folders.filter(
        (f) => !readme.includes(`${f}/`) && !readme.includes(`${path.posix.basename(f)}/`),
      );
      const unnamedFiles = bigFiles.filter((f) => !readme.includes(path.posix.basename(f)));
      expect({ unnamedFolders, unnamedFiles }).toEqual({ unnamedFolders: [], unnamedFiles: [] });
    });
  }
});
