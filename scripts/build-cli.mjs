#!/usr/bin/env node
/**
 * `npm run build` (and the root package's `prepare`, which `npm ci` runs): bundles the CLI with esbuild into
 * dist/cli, so that `atlas` starts compiled JavaScript instead of compiling TypeScript at each start (docs/cli.md).
 *
 * - Entry: services/cli/src/main.ts → dist/cli/main.mjs. Each command's module is a lazy `import()` there, so
 *   esbuild splits it into chunks beside main.mjs (code splitting): `atlas --help` loads main.mjs and commander only.
 * - The workspaces (@atlas/*, whose package.json `exports` point at src/*.ts) are bundled from source; every other
 *   package stays an external `import` that Node resolves from node_modules at run time, except one that would resolve
 *   to another copy from dist/cli than from its importer (a version nested in a workspace's own node_modules): that
 *   one is bundled.
 * - `import.meta.url` / `dirname` / `filename` in a bundled source still name that source's location (rewritten
 *   relative to the output folder), so paths such as the Avro schemas folder and the encoder's worker file hold.
 * - The build is written to a sibling folder and swapped in whole; its stamp (dist/cli/build.json) lists the inputs
 *   and when the build started, which bin/build-state.mjs compares with the files' modification times.
 *
 * Errors: esbuild's (a syntax error in a source) fail the build with exit code 1 and leave the previous build as it was.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(import.meta.dirname, '..');
const BUILTINS = new Set(builtinModules);
const posix = (p) => p.split(path.sep).join('/');

/** Bare imports stay external when Node finds the same file from the output folder; workspaces are bundled. */
const externalDependencies = (outdir) => ({
  name: 'atlas-external-dependencies',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData?.atlasProbe) return undefined;
      const name = args.path.startsWith('node:') ? args.path : args.path.split('/')[0];
      if (name.startsWith('node:') || BUILTINS.has(name)) return { path: args.path, external: true };
      if (args.path.startsWith('@atlas/')) return undefined;
      const probe = { kind: args.kind, pluginData: { atlasProbe: true } };
      const here = await build.resolve(args.path, { ...probe, resolveDir: args.resolveDir });
      const there = await build.resolve(args.path, { ...probe, resolveDir: outdir });
      // Not found from its importer: esbuild reports it (the build fails). Found elsewhere from dist/cli: bundled.
      const same = here.errors.length === 0 && there.errors.length === 0 && here.path === there.path;
      return same ? { path: args.path, external: true } : undefined;
    });
  },
});

/** import.meta.{url,dirname,filename} of a bundled source, relative to the output folder (all outputs sit in it). */
const sourceLocations = (outdir) => ({
  name: 'atlas-source-locations',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?ts$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!/import\.meta\.(url|dirname|filename)/.test(text)) return undefined;
      const file = JSON.stringify(posix(path.relative(outdir, args.path)));
      const dir = JSON.stringify(posix(path.relative(outdir, path.dirname(args.path))) || '.');
      const head =
        "import { fileURLToPath as __atlasPath } from 'node:url'; " +
        'const __atlasAt = (rel) => new URL(rel, import.meta.url); '; // same line: source maps keep their lines
      const body = text
        .replaceAll('import.meta.url', `__atlasAt(${file}).href`)
        .replaceAll('import.meta.dirname', `__atlasPath(__atlasAt(${dir}))`)
        .replaceAll('import.meta.filename', `__atlasPath(__atlasAt(${file}))`);
      return { contents: head + body, loader: 'ts', resolveDir: path.dirname(args.path) };
    });
  },
});

/**
 * Bundles the CLI into `outdir` (default `<root>/dist/cli`), replacing what was there. Returns the output folder,
 * the number of inputs recorded in the stamp and the build time in ms. Throws when esbuild reports an error.
 */
export const buildCli = async ({ root = ROOT, outdir = path.join(root, 'dist', 'cli') } = {}) => {
  const builtAt = Date.now();
  const tmp = `${outdir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true }); // externalDependencies resolves from it: it must exist

  try {
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: { main: 'services/cli/src/main.ts' },
      outdir: tmp,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20.19',
      outExtension: { '.js': '.mjs' },
      chunkNames: '[name]-[hash]', // beside main.mjs: sourceLocations assumes one output folder
      keepNames: true, // class and function names as in the sources (errors, logs)
      sourcemap: 'linked',
      metafile: true,
      logLevel: 'warning',
      banner: {
        js: "import { createRequire as __atlasRequire } from 'node:module'; const require = __atlasRequire(import.meta.url);",
      },
      plugins: [externalDependencies(outdir), sourceLocations(outdir)],
    });
    const workspaces = ['packages', 'services'].flatMap((d) =>
      readdirSync(path.join(root, d)).map((w) => `${d}/${w}/package.json`),
    );
    const inputs = [
      ...Object.keys(result.metafile.inputs).filter((f) => !f.includes('node_modules/')),
      ...workspaces,
      'package.json',
      'scripts/build-cli.mjs',
    ];
    writeFileSync(path.join(tmp, 'build.json'), `${JSON.stringify({ entry: 'main.mjs', builtAt, inputs }, null, 1)}\n`);
    const old = `${outdir}.old-${process.pid}`;
    rmSync(old, { recursive: true, force: true });
    try {
      renameSync(outdir, old);
    } catch {
      // nothing built yet
    }
    renameSync(tmp, outdir);
    rmSync(old, { recursive: true, force: true });
    return { outdir, inputs: inputs.length, ms: Date.now() - builtAt };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    const r = await buildCli();
    console.log(
      `atlas: CLI built into ${path.relative(process.cwd(), r.outdir) || '.'} (${r.inputs} inputs, ${r.ms} ms)`,
    );
  } catch (err) {
    console.error(`atlas: the CLI build failed; bin/atlas.mjs runs the sources through tsx meanwhile.\n${err}`);
    process.exit(1);
  }
}
