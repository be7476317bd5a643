import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CredentialCipher, loadConfig } from '@atlas/core';
import { CredentialKeyring, MASTER_KEY_FILE } from '@atlas/runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireLock } from '../lock.js';
import { isRotationRefusal, rotateCredentialsCommand, rotationReport } from './credentials.js';

const run = promisify(execFile);
const BIN = path.resolve(__dirname, '../../../../bin/atlas.mjs');
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'atlas-rotate-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const cfgOf = (dir: string, env: Record<string, string> = {}) =>
  loadConfig({ ATLAS_DATA_DIR: dir, EMBEDDING_PROVIDER: 'none', ...env });

describe('atlas credentials rotate', () => {
  it('refuses (a refusal: exit 2) while another process holds the data dir', async () => {
    const dir = tempDir();
    const release = acquireLock(dir, { command: 'start', port: 8000 });
    try {
      const err = await rotateCredentialsCommand(cfgOf(dir)).catch((e: unknown) => e);
      expect(isRotationRefusal(err)).toBe(true);
      expect(String(err)).toMatch(/in use by 'atlas start'/);
    } finally {
      release();
    }
  });

  it('env key: refuses a wrong CREDENTIAL_MASTER_KEY (nothing changed), rotates with CREDENTIAL_MASTER_KEY_NEW', async () => {
    const dir = tempDir();
    const a = 'a1'.repeat(32);
    const b = 'b2'.repeat(32);
    await rotateCredentialsCommand(cfgOf(dir, { CREDENTIAL_MASTER_KEY: a, CREDENTIAL_MASTER_KEY_NEW: b })).then((r) =>
      expect(r.dataKeys).toBe(0),
    );
    // The keyring is now under b. Add a key under b, then try rotating with a (wrong): refused.
    CredentialKeyring.open(dir, new CredentialCipher(b)).create('c1');
    const err = await rotateCredentialsCommand(
      cfgOf(dir, { CREDENTIAL_MASTER_KEY: a, CREDENTIAL_MASTER_KEY_NEW: 'c3'.repeat(32) }),
    ).catch((e: unknown) => e);
    expect(isRotationRefusal(err)).toBe(true);
    expect(String(err)).toMatch(/another master key/);
    const ok = await rotateCredentialsCommand(cfgOf(dir, { CREDENTIAL_MASTER_KEY: b, CREDENTIAL_MASTER_KEY_NEW: a }));
    expect(ok.dataKeys).toBe(1);
    expect(rotationReport(ok).join('\n')).toMatch(
      /set CREDENTIAL_MASTER_KEY to the value of CREDENTIAL_MASTER_KEY_NEW/,
    );
  });

  it('the CLI: rotates the data dir key file; exits 2 with a message while the data dir is held', async () => {
    const dir = tempDir();
    const env = { ...process.env, ATLAS_DATA_DIR: dir, EMBEDDING_PROVIDER: 'none', CREDENTIAL_MASTER_KEY: '' };
    const first = await run(process.execPath, [BIN, 'credentials', 'rotate'], { env });
    expect(first.stdout).toMatch(/re-wrapped 0 connection data keys/);
    const key = readFileSync(path.join(dir, MASTER_KEY_FILE), 'utf8');
    const release = acquireLock(dir, { command: 'start', port: 8000 });
    try {
      const err = (await run(process.execPath, [BIN, 'credentials', 'rotate'], { env }).catch((e: unknown) => e)) as {
        code: number;
        stderr: string;
      };
      expect(err.code).toBe(2);
      expect(err.stderr).toMatch(/DATA_DIR_LOCKED/);
    } finally {
      release();
    }
    expect(readFileSync(path.join(dir, MASTER_KEY_FILE), 'utf8')).toBe(key);
  });
});
