import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Atlas has one version: the root package.json's. Every workspace's package.json carries the same `version`, so a
 * workspace that shows it (the home page, GET /, reads services/api's) shows Atlas's without reading a file outside
 * its own folder.
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const versionOf = (dir: string): string =>
  (JSON.parse(readFileSync(path.join(ROOT, dir, 'package.json'), 'utf8')) as { version: string }).version;
const WORKSPACES = ['packages', 'services'].flatMap((floor) =>
  readdirSync(path.join(ROOT, floor))
    .map((name) => path.join(floor, name))
    .filter((dir) => statSync(path.join(ROOT, dir)).isDirectory()),
);

describe('one version', () => {
  it('every workspace has the root package.json version', () => {
    expect(WORKSPACES).toContain(path.join('services', 'api'));
    const root = versionOf('.');
    expect(root).toMatch(/^\d+\.\d+\.\d+/);
    expect(Object.fromEntries(WORKSPACES.map((w) => [w, versionOf(w)]))).toEqual(
      Object.fromEntries(WORKSPACES.map((w) => [w, root])),
    );
  });
});
