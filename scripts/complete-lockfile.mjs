#!/usr/bin/env node
/**
 * Completes package-lock.json with the platform-specific optional packages that this machine's
 * registry does not serve (it answers 404 for other platforms' binaries, e.g. @biomejs/cli-darwin-arm64),
 * so npm leaves them out of the lock and `npm ci` then refuses the lock as out of sync.
 * Each missing optional dependency gets an entry with its version, `optional: true`, and the os/cpu/libc
 * read from its name, so npm skips it on other platforms and fetches it by version where it fits.
 * Run after every `npm install` that changes the lock: `node scripts/complete-lockfile.mjs`.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openbsd', 'netbsd', 'sunos', 'aix', 'openharmony'];
const CPU = ['x64', 'arm64', 'arm', 'ia32', 'riscv64', 'ppc64', 's390x', 'loong64', 'mips64el', 'wasm32'];

const platformOf = (name) => {
  const parts = name.split('/').pop().split('-');
  const os = OS.find((o) => parts.includes(o));
  const cpu = CPU.find((c) => parts.includes(c));
  const libc = parts.includes('musl')
    ? 'musl'
    : parts.includes('gnu') || parts.includes('gnueabihf')
      ? 'glibc'
      : undefined;
  return { ...(os ? { os: [os] } : {}), ...(cpu ? { cpu: [cpu] } : {}), ...(libc ? { libc: [libc] } : {}) };
};

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const pk = lock.packages;
const added = [];
for (const [loc, meta] of Object.entries(pk)) {
  for (const [name, range] of Object.entries(meta.optionalDependencies ?? {})) {
    const nested = loc ? `${loc}/node_modules/${name}` : `node_modules/${name}`;
    if (pk[nested] || pk[`node_modules/${name}`]) continue;
    const platform = platformOf(name);
    if (!platform.os && !platform.cpu) continue; // not a platform binary: leave it to npm
    pk[`node_modules/${name}`] = { version: String(range).replace(/^[\^~=]/, ''), optional: true, ...platform };
    added.push(name);
  }
}
lock.packages = Object.fromEntries(
  Object.entries(pk).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added.length} platform entries${added.length ? `: ${added.join(', ')}` : ''}`);
