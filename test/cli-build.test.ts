import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { planImport } from '@atlas/platforms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledCli } from '../bin/build-state.mjs';
import { buildCli } from '../scripts/build-cli.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Runs `node <args>` in `cwd`; resolves with its exit code and output (no terminal: stdout and stderr are pipes). */
const node = (args: string[], cwd = ROOT) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, args, { cwd, env: { ...process.env, NODE_OPTIONS: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

describe('the compiled CLI (issue 21: atlas used to compile its TypeScript at every start)', () => {
  it('npm ci built it (the root package.json prepare script)', () => {
    expect(existsSync(path.join(ROOT, 'dist/cli/main.mjs'))).toBe(true);
    expect(existsSync(path.join(ROOT, 'dist/cli/build.json'))).toBe(true);
  });

  describe('a build of these sources', () => {
    // Inside the checkout, as dist/cli is: its dependencies resolve from node_modules as the real build's do.
    mkdirSync(path.join(ROOT, 'dist'), { recursive: true });
    const out = mkdtempSync(path.join(ROOT, 'dist', 'test-build-'));
    const loads = path.join(out, 'loads.log');
    beforeAll(async () => {
      await buildCli({ outdir: path.join(out, 'cli') });
      // Every module the CLI resolves, one URL a line (a module hook, registered before the CLI loads).
      writeFileSync(
        path.join(out, 'hooks.mjs'),
        `import { appendFileSync } from 'node:fs';\nexport async function resolve(s, c, next) {\n  const r = await next(s, c);\n  appendFileSync(${JSON.stringify(loads)}, r.url + '\\n');\n  return r;\n}\n`,
      );
      writeFileSync(
        path.join(out, 'register.mjs'),
        `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(path.join(out, 'hooks.mjs')).href)});\n`,
      );
    }, 240_000);
    afterAll(() => rmSync(out, { recursive: true, force: true }));

    const cli = (...args: string[]) =>
      node(['--import', path.join(out, 'register.mjs'), path.join(out, 'cli/main.mjs'), ...args]);
    const loaded = () => (existsSync(loads) ? readFileSync(loads, 'utf8') : '');

    it('answers --help with every command, loading neither the database, the encoder nor the runtime', async () => {
      rmSync(loads, { force: true });
      const r = await cli('--help');
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      for (const command of ['start', 'import', 'search', 'run', 'replay', 'lag'])
        expect(r.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
      expect(r.stdout.replace(/\s+/g, ' ')).toContain('sync-worker, scheduler, bot');
      const modules = loaded();
      expect(modules).toContain('/commander/'); // the hook saw the loads
      for (const heavy of ['@electric-sql/pglite', '@energetic-ai', '@tensorflow', 'fastify', 'kysely', 'compromise'])
        expect(modules, heavy).not.toContain(heavy);
    });

    it('refuses a path that does not exist with the importer`s own message, exit code 2, before loading the importer', async () => {
      rmSync(loads, { force: true });
      const r = await cli('import', '/nope/not-here');
      const expected = (await planImport('/nope/not-here').then(
        () => null,
        (e: unknown) => e,
      )) as { code: string; message: string } | null;
      expect(expected).not.toBeNull();
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`atlas: ${expected!.code}: ${expected!.message}\n`);
      expect(loaded()).not.toContain('@electric-sql/pglite');
    });

    it('refuses an unknown service with exit code 1', async () => {
      const r = await cli('run', 'nope');
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^atlas: INVALID_REQUEST: unknown service 'nope' \(one of: api, documents, /);
    });
  });

  describe('bin/atlas.mjs', () => {
    // A checkout of its own: the bin, a "build" that says 'compiled', a "source" that says 'source' (TypeScript),
    // node_modules.
    const root = mkdtempSync(path.join(os.tmpdir(), 'atlas-bin-'));
    const source = path.join(root, 'services/cli/src/main.ts');
    beforeAll(() => {
      mkdirSync(path.join(root, 'bin'));
      for (const f of ['atlas.mjs', 'build-state.mjs'])
        copyFileSync(path.join(ROOT, 'bin', f), path.join(root, 'bin', f));
      symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
      writeFileSync(path.join(root, 'package.json'), JSON.stringify({ type: 'module' })); // as the root's
      mkdirSync(path.dirname(source), { recursive: true });
      writeFileSync(source, "const from: string = 'source';\nconsole.log(from);\n");
      mkdirSync(path.join(root, 'dist/cli'), { recursive: true });
      writeFileSync(path.join(root, 'dist/cli/main.mjs'), "console.log('compiled');\n");
      const past = new Date(Date.now() - 60_000);
      utimesSync(source, past, past);
      writeFileSync(
        path.join(root, 'dist/cli/build.json'),
        JSON.stringify({ entry: 'main.mjs', builtAt: Date.now() - 30_000, inputs: ['services/cli/src/main.ts'] }),
      );
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it('runs the build while it is current, and the sources through tsx once one changed or went away', async () => {
      expect(compiledCli(root)).toEqual({ current: true, entry: path.join(root, 'dist/cli/main.mjs') });
      const current = await node([path.join(root, 'bin/atlas.mjs')], root);
      expect(current).toMatchObject({ code: 0, stdout: 'compiled\n', stderr: '' });

      const now = new Date();
      utimesSync(source, now, now); // edited after the build
      expect(compiledCli(root)).toEqual({ current: false, reason: 'services/cli/src/main.ts changed since the build' });
      const stale = await node([path.join(root, 'bin/atlas.mjs')], root);
      expect(stale).toMatchObject({ code: 0, stdout: 'source\n', stderr: '' }); // no terminal: no notice on stderr

      rmSync(path.join(root, 'dist/cli/build.json'));
      expect(compiledCli(root)).toEqual({ current: false, reason: 'not built' });
      expect((await node([path.join(root, 'bin/atlas.mjs')], root)).stdout).toBe('source\n');
    }, 120_000);
  });
});
