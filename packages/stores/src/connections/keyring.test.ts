import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CredentialCipher, CredentialDecryptionError } from '@atlas/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CredentialKeyring,
  KEYRING_FILE,
  loadMasterKey,
  MASTER_KEY_FILE,
  rotateMasterKey,
  writeFileAtomic,
} from './keyring.js';

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(path.join(tmpdir(), 'atlas-keyring-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const readdir = (dir: string): string[] => readdirSync(dir).sort();
const mode = (file: string): number => statSync(file).mode & 0o777;
const KEY = 'c3'.repeat(32);

describe('loadMasterKey', () => {
  it('generates a random owner-only key file (at once with create: atlas start), reads it later', () => {
    const dir = path.join(tempDir(), 'data');
    const said: string[] = [];
    const first = loadMasterKey({ ATLAS_DATA_DIR: dir }, { create: true, onGenerated: (p) => said.push(p) });
    expect(said).toEqual([path.join(dir, MASTER_KEY_FILE)]);
    expect(first).toMatchObject({ source: 'file', generated: true, path: path.join(dir, MASTER_KEY_FILE) });
    expect(mode(first.path!)).toBe(0o600);
    expect(readFileSync(first.path!, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    const again = loadMasterKey({ ATLAS_DATA_DIR: dir }, { create: true, onGenerated: (p) => said.push(p) });
    expect(again.generated).toBe(false);
    expect(said).toHaveLength(1); // said once
    expect(again.cipher.keyId).toBe(first.cipher.keyId);
    // No temporary file is left behind.
    expect(readdir(dir)).toEqual([MASTER_KEY_FILE]);
    // Another data dir gets another key.
    expect(loadMasterKey({ ATLAS_DATA_DIR: tempDir() }).cipher.keyId).not.toBe(first.cipher.keyId);
  });

  it('without create, the key file is written on first use only (a command that stores no credential writes none)', () => {
    const dir = tempDir();
    const said: string[] = [];
    const key = loadMasterKey({ ATLAS_DATA_DIR: dir }, { onGenerated: (p) => said.push(p) });
    expect(existsSync(path.join(dir, MASTER_KEY_FILE))).toBe(false);
    const ring = CredentialKeyring.open(dir, key);
    expect(ring.entries()).toEqual([]);
    expect(existsSync(path.join(dir, MASTER_KEY_FILE))).toBe(false);
    ring.create('c');
    expect(key.generated).toBe(true);
    expect(said).toHaveLength(1);
    expect(loadMasterKey({ ATLAS_DATA_DIR: dir }).cipher.keyId).toBe(key.cipher.keyId);
  });

  it('CREDENTIAL_MASTER_KEY wins and writes nothing; memory:// keeps a random key of the process', () => {
    const dir = tempDir();
    const env = loadMasterKey({ ATLAS_DATA_DIR: dir, CREDENTIAL_MASTER_KEY: KEY });
    expect(env).toMatchObject({ source: 'env', generated: false, path: null });
    expect(env.cipher.keyId).toBe(new CredentialCipher(KEY).keyId);
    expect(existsSync(path.join(dir, MASTER_KEY_FILE))).toBe(false);
    const a = loadMasterKey({ ATLAS_DATA_DIR: 'memory://' });
    const b = loadMasterKey({ ATLAS_DATA_DIR: 'memory://' });
    expect(a.source).toBe('memory');
    expect(a.cipher.keyId).not.toBe(b.cipher.keyId);
  });

  it('refuses a key file that is not a key', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, MASTER_KEY_FILE), 'not a key');
    expect(() => loadMasterKey({ ATLAS_DATA_DIR: dir })).toThrow(/not a credential master key/);
  });
});

describe('CredentialKeyring', () => {
  it('keeps data keys wrapped in an owner-only file; drops make them unrecoverable', () => {
    const dir = tempDir();
    const master = loadMasterKey({ ATLAS_DATA_DIR: dir }).cipher;
    const ring = CredentialKeyring.open(dir, master);
    const a = ring.create('conn-a');
    const env = a.encrypt('token-a', 'conn-a');
    const file = path.join(dir, KEYRING_FILE);
    expect(mode(file)).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain(`"${a.keyId}"`);
    expect(text).toContain(`"master_key_id": "${master.keyId}"`);
    // Another process's view (a fresh keyring on the same file) unwraps the same key.
    const other = CredentialKeyring.open(dir, master);
    expect(other.cipher(a.keyId, 'conn-a')!.decrypt(env, 'conn-a')).toBe('token-a');
    expect(other.cipher(a.keyId, 'conn-b')).toBeNull(); // bound to its connection
    // A second key of the connection, then the first dropped.
    const b = ring.create('conn-a');
    expect(ring.dropConnection('conn-a', b.keyId)).toBe(1);
    expect(other.cipher(a.keyId, 'conn-a')).toBeNull();
    expect(ring.entries().map((e) => e.dekId)).toEqual([b.keyId]);
    expect(readFileSync(file, 'utf8')).not.toContain(a.keyId);
    expect(ring.drop([b.keyId])).toBe(true);
    expect(ring.entries()).toEqual([]);
    expect(readdir(dir)).toEqual([KEYRING_FILE, MASTER_KEY_FILE]); // no temporary files left
  });

  it('refuses to unwrap or add under another master key', () => {
    const dir = tempDir();
    const ring = CredentialKeyring.open(dir, new CredentialCipher(KEY));
    const a = ring.create('c');
    const wrong = CredentialKeyring.open(dir, new CredentialCipher('d4'.repeat(32)));
    expect(() => wrong.cipher(a.keyId, 'c')).toThrow(CredentialDecryptionError);
    expect(() => wrong.create('d')).toThrow(/another master key/);
    expect(() => wrong.rewrap(new CredentialCipher('e5'.repeat(32)))).toThrow(CredentialDecryptionError);
    expect(ring.cipher(a.keyId, 'c')).not.toBeNull(); // nothing changed
  });

  it('in memory (null or memory://): no file', () => {
    const ring = CredentialKeyring.open('memory://', new CredentialCipher(KEY));
    const a = ring.create('c');
    expect(ring.path).toBeNull();
    expect(ring.cipher(a.keyId, 'c')!.decrypt(a.encrypt('x', 'c'), 'c')).toBe('x');
  });
});

describe('rotateMasterKey', () => {
  it('key file: a new key replaces the file, every data key re-wrapped; the old key opens nothing', () => {
    const dir = tempDir();
    const master = loadMasterKey({ ATLAS_DATA_DIR: dir });
    const old = master.cipher;
    const ring = CredentialKeyring.open(dir, old);
    const a = ring.create('c');
    const env = a.encrypt('secret', 'c');
    const r = rotateMasterKey(master, ring, dir);
    expect(r).toMatchObject({ dataKeys: 1, oldKeyId: old.keyId, source: 'file' });
    expect(r.newKeyId).not.toBe(old.keyId);
    const reloaded = loadMasterKey({ ATLAS_DATA_DIR: dir });
    expect(reloaded.cipher.keyId).toBe(r.newKeyId);
    expect(mode(reloaded.path!)).toBe(0o600);
    expect(CredentialKeyring.open(dir, reloaded.cipher).cipher(a.keyId, 'c')!.decrypt(env, 'c')).toBe('secret');
    expect(() => CredentialKeyring.open(dir, old).cipher(a.keyId, 'c')).toThrow(CredentialDecryptionError);
    expect(readdir(dir)).toEqual([KEYRING_FILE, MASTER_KEY_FILE]);
  });

  it('env key: takes CREDENTIAL_MASTER_KEY_NEW, refuses without it or with the same key', () => {
    const dir = tempDir();
    const master = loadMasterKey({ ATLAS_DATA_DIR: dir, CREDENTIAL_MASTER_KEY: KEY });
    const ring = CredentialKeyring.open(dir, master.cipher);
    const a = ring.create('c');
    expect(() => rotateMasterKey(master, ring, dir)).toThrow(/CREDENTIAL_MASTER_KEY_NEW/);
    expect(() => rotateMasterKey(master, ring, dir, KEY)).toThrow(/same key/);
    const next = 'f6'.repeat(32);
    expect(rotateMasterKey(master, ring, dir, next).dataKeys).toBe(1);
    expect(CredentialKeyring.open(dir, new CredentialCipher(next)).cipher(a.keyId, 'c')).not.toBeNull();
    expect(existsSync(path.join(dir, MASTER_KEY_FILE))).toBe(false);
  });

  it('a rotation interrupted after the keyring was rewritten is finished by the next load; before, undone', () => {
    const dir = tempDir();
    const master = loadMasterKey({ ATLAS_DATA_DIR: dir });
    const ring = CredentialKeyring.open(dir, master.cipher);
    const a = ring.create('c');
    // Crash after the keyring: the pending key is the key.
    const next = 'a7'.repeat(32);
    ring.rewrap(new CredentialCipher(next));
    writeFileAtomic(path.join(dir, `${MASTER_KEY_FILE}.new`), `${next}\n`);
    const finished = loadMasterKey({ ATLAS_DATA_DIR: dir });
    expect(finished.cipher.keyId).toBe(new CredentialCipher(next).keyId);
    expect(CredentialKeyring.open(dir, finished.cipher).cipher(a.keyId, 'c')).not.toBeNull();
    // Crash before the keyring: the pending key is dropped.
    writeFileAtomic(path.join(dir, `${MASTER_KEY_FILE}.new`), `${'b8'.repeat(32)}\n`);
    expect(loadMasterKey({ ATLAS_DATA_DIR: dir }).cipher.keyId).toBe(finished.cipher.keyId);
    expect(readdir(dir)).toEqual([KEYRING_FILE, MASTER_KEY_FILE]);
  });

  it('refuses a memory:// data dir', () => {
    const master = loadMasterKey({ ATLAS_DATA_DIR: 'memory://' });
    expect(() => rotateMasterKey(master, CredentialKeyring.open(null, master.cipher), 'memory://')).toThrow(
      /memory:\/\//,
    );
  });
});
