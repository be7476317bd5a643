#!/usr/bin/env node
// The `atlas` command. It runs the compiled CLI (dist/cli, bundled by `npm run build`, which `npm ci` runs as the
// root package's `prepare`) when that build is current; when a source changed since (or nothing was built), it runs
// the TypeScript sources through tsx instead, which is slower (seconds of compiling at each start) but never old code,
// and says so on a terminal. docs/cli.md.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { compiledCli } from './build-state.mjs';

const root = path.resolve(import.meta.dirname, '..');
const build = compiledCli(root);
if (build.current) {
  await import(pathToFileURL(build.entry).href);
} else {
  if (process.stderr.isTTY) {
    console.error(`atlas: running the sources through tsx (slower): ${build.reason}; 'npm run build' compiles them.`);
  }
  const { register } = await import('tsx/esm/api');
  register();
  await import('../services/cli/src/main.ts');
}
