import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CREDENTIAL_ENVELOPE_PATTERN, type CredentialCipher, loadConfig } from '@atlas/core';
import { CredentialKeyring, KEYRING_FILE, loadMasterKey, MASTER_KEY_FILE } from '@atlas/stores';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateCredentialMasterKey } from './credentials.js';
import { openRuntime } from './open.js';
import type { Runtime } from './runtime.js';

/**
 * Issue 23 point 7: a replaced or deleted platform token cannot be recovered from the data dir with the data dir's
 * own keys. A real embedded data dir (PGlite files, the generated master key, the keyring) is read byte by byte after
 * the runtime closes; every credential envelope found is tried under the master key and every data key of the keyring.
 */

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : e.isFile() ? [p] : [];
  });

/** Every envelope in every file under `dir` (bytes read as latin1: the envelope is ASCII). */
const envelopesIn = (dir: string): string[] => {
  const found = new Set<string>();
  for (const f of files(dir))
    for (const m of readFileSync(f).toString('latin1').matchAll(CREDENTIAL_ENVELOPE_PATTERN)) found.add(m[0]);
  return [...found];
};

/** The files under `dir` whose bytes contain `needle` (UTF-8, and UTF-16LE in case some engine stores it so). */
const filesContaining = (dir: string, needle: string): string[] =>
  files(dir).filter((f) => {
    const b = readFileSync(f);
    return b.includes(Buffer.from(needle, 'utf8')) || b.includes(Buffer.from(needle, 'utf16le'));
  });

/** Every plaintext `keys` can get out of `envelopes`, for each context in `contexts`. */
const decryptAll = (envelopes: string[], keys: CredentialCipher[], contexts: string[]): string[] => {
  const out: string[] = [];
  for (const env of envelopes)
    for (const k of keys)
      for (const ctx of contexts) {
        try {
          out.push(k.decrypt(env, ctx));
        } catch {
          /* not this key or context */
        }
      }
  return out;
};

describe('credentials at rest on an embedded data dir', () => {
  let dataDir: string;
  const cfg = () => loadConfig({ ATLAS_DATA_DIR: dataDir, EMBEDDING_PROVIDER: 'none' });
  const tag = randomBytes(6).toString('hex');
  const TOKEN_A = `xoxb-token-A-${tag}`;
  const TOKEN_B = `xoxb-token-B-${tag}`;
  const TOKEN_C = `xoxb-token-C-${tag}`;
  let replaced: string;
  let deleted: string;

  /** What the data dir's own keys recover from its files: master key, keyring data keys, every connection id. */
  const recoverable = (): { plain: string[]; envelopes: string[] } => {
    const master = loadMasterKey({ ATLAS_DATA_DIR: dataDir }).cipher;
    const deks = CredentialKeyring.open(dataDir, master).ciphers();
    const envelopes = envelopesIn(dataDir);
    return { plain: decryptAll(envelopes, [master, ...deks], ['', replaced, deleted]), envelopes };
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'atlas-cred-'));
    const rt = await openRuntime(cfg(), {}, { createCredentialKey: true }); // as `atlas start` does
    try {
      expect(rt.credentialMasterKey).toMatchObject({ source: 'file', generated: true });
      const a = await rt.connections.create({
        name: 'replaced',
        platform: 'platform_a',
        credentials: { bot_token: TOKEN_A },
      });
      replaced = a.id;
      await rt.connections.update(a.id, { credentials: { bot_token: TOKEN_B } });
      const c = await rt.connections.create({
        name: 'deleted',
        platform: 'platform_b',
        credentials: { bot_token: TOKEN_C, guild_id: 'g1' },
      });
      deleted = c.id;
      expect(await rt.connections.delete(c.id)).toBe(true);
    } finally {
      await rt.close();
    }
  });

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('the master key and keyring are owner-only files of the data dir', () => {
    for (const f of [MASTER_KEY_FILE, KEYRING_FILE])
      expect(statSync(path.join(dataDir, f)).mode & 0o777, f).toBe(0o600);
    expect(files(path.join(dataDir, 'pglite')).length).toBeGreaterThan(10); // a real embedded database
  });

  it('a replaced or deleted token comes out of no file under any of the data dir keys; the current one does', async () => {
    expect(filesContaining(dataDir, TOKEN_A)).toEqual([]);
    expect(filesContaining(dataDir, TOKEN_C)).toEqual([]);
    expect(filesContaining(dataDir, TOKEN_B)).toEqual([]); // only ever encrypted
    const { plain, envelopes } = recoverable();
    expect(envelopes.length).toBeGreaterThan(0);
    // (On PGlite the old envelopes of A and C are typically still in the files, WAL included: their data keys are gone.)
    expect(plain.some((p) => p.includes(TOKEN_B))).toBe(true); // the scan does find what is there
    expect(plain.filter((p) => p.includes(TOKEN_A) || p.includes(TOKEN_C))).toEqual([]);
    const rt = await openRuntime(cfg());
    try {
      expect(rt.credentialMasterKey).toMatchObject({ source: 'file', generated: false });
      expect(await rt.connections.credentials(replaced)).toEqual({
        platform: 'platform_a',
        credentials: { bot_token: TOKEN_B },
      });
      expect(await rt.connections.credentials(deleted)).toBeNull();
    } finally {
      await rt.close();
    }
  });

  it('rotation: the old master key decrypts nothing afterwards; the store still reads B under the new one', async () => {
    const oldMaster = loadMasterKey({ ATLAS_DATA_DIR: dataDir }).cipher;
    let rt: Runtime = await openRuntime(cfg());
    try {
      const r = rotateCredentialMasterKey(rt);
      expect(r).toMatchObject({ source: 'file', dataKeys: 1, oldKeyId: oldMaster.keyId });
    } finally {
      await rt.close();
    }
    const newMaster = loadMasterKey({ ATLAS_DATA_DIR: dataDir }).cipher;
    expect(newMaster.keyId).not.toBe(oldMaster.keyId);
    // The old key unwraps no data key and opens no envelope in any file.
    expect(() => CredentialKeyring.open(dataDir, oldMaster).ciphers()).toThrow();
    expect(decryptAll(envelopesIn(dataDir), [oldMaster], ['', replaced, deleted])).toEqual([]);
    const { plain } = recoverable();
    expect(plain.some((p) => p.includes(TOKEN_B))).toBe(true);
    expect(plain.filter((p) => p.includes(TOKEN_A) || p.includes(TOKEN_C))).toEqual([]);
    rt = await openRuntime(cfg());
    try {
      expect((await rt.connections.credentials(replaced))?.credentials).toEqual({ bot_token: TOKEN_B });
    } finally {
      await rt.close();
    }
  });
});
