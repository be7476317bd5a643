import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import {
  CREDENTIAL_ENVELOPE_PATTERN,
  CredentialCipher,
  CredentialDecryptionError,
  DATA_KEY_ENVELOPE_VERSION,
} from './credentials.js';

const KEY = 'a1'.repeat(32);
const OTHER = 'b2'.repeat(32);
const SECRET = JSON.stringify({ bot_token: 'xoxb-123-secret', signing_secret: 's3cr3t' });

const failure = (fn: () => unknown): CredentialDecryptionError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CredentialDecryptionError);
    return err as CredentialDecryptionError;
  }
  throw new Error('expected a CredentialDecryptionError');
};

/** Flips one bit of the base64 field `i` of an envelope. */
const flip = (envelope: string, i: number, byte = 0): string => {
  const parts = envelope.split(':');
  const b = Buffer.from(parts[i]!, 'base64');
  b[byte] = b[byte]! ^ 0x01;
  parts[i] = b.toString('base64');
  return parts.join(':');
};

describe('CredentialCipher', () => {
  it('round trip: v1 envelope with the key id, decrypts to the plaintext (unicode too)', () => {
    const c = new CredentialCipher(KEY);
    const env = c.encrypt(SECRET);
    expect(env).toMatch(/^v1:[0-9a-f]{16}:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(env.split(':')[1]).toBe(c.keyId);
    expect(env).not.toContain('xoxb');
    expect(c.decrypt(env)).toBe(SECRET);
    expect(c.decrypt(c.encrypt('héllo ✓'))).toBe('héllo ✓');
    expect(c.decrypt(c.encrypt(''))).toBe('');
    expect(c.decryptJson(c.encryptJson({ a: 1 }, 'row-1'), 'row-1')).toEqual({ a: 1 });
    // Another instance of the same key reads it (a restarted process).
    expect(new CredentialCipher(KEY.toUpperCase()).decrypt(env)).toBe(SECRET);
  });

  it('a fresh random 12-byte IV per encryption: the same plaintext never gives the same envelope', () => {
    const c = new CredentialCipher(KEY);
    const envs = Array.from({ length: 200 }, () => c.encrypt(SECRET));
    const ivs = envs.map((e) => e.split(':')[2]!);
    expect(new Set(ivs).size).toBe(200);
    expect(new Set(envs).size).toBe(200);
    expect(Buffer.from(ivs[0]!, 'base64')).toHaveLength(12);
  });

  it('tamper detection: a flipped byte of ciphertext, tag or IV, or another context, fails as tampered', () => {
    const c = new CredentialCipher(KEY);
    const env = c.encrypt(SECRET, 'conn-1');
    expect(failure(() => c.decrypt(flip(env, 4), 'conn-1')).reason).toBe('tampered');
    expect(failure(() => c.decrypt(flip(env, 4, 20), 'conn-1')).reason).toBe('tampered');
    expect(failure(() => c.decrypt(flip(env, 3), 'conn-1')).reason).toBe('tampered');
    expect(failure(() => c.decrypt(flip(env, 2), 'conn-1')).reason).toBe('tampered');
    expect(failure(() => c.decrypt(env, 'conn-2')).reason).toBe('tampered');
    expect(c.decrypt(env, 'conn-1')).toBe(SECRET);
  });

  it('wrong key: refused with a clear error naming both key ids, never a bare tag failure', () => {
    const env = new CredentialCipher(KEY).encrypt(SECRET);
    const other = new CredentialCipher(OTHER);
    const err = failure(() => other.decrypt(env));
    expect(err.reason).toBe('wrong_key');
    expect(err.code).toBe('INTERNAL_ERROR');
    expect(err.message).toMatch(/another key .*CREDENTIAL_MASTER_KEY/);
    expect(err.details).toMatchObject({ stored_key_id: new CredentialCipher(KEY).keyId, key_id: other.keyId });
    expect(err.message).not.toContain(KEY);
    // A forged key id (the other key's) still fails: the key id is authenticated.
    const forged = env.replace(/^v1:[0-9a-f]{16}:/, `v1:${other.keyId}:`);
    expect(failure(() => other.decrypt(forged)).reason).toBe('tampered');
  });

  it('v2 (data key) envelopes: a version of their own, authenticated; found by the envelope pattern', () => {
    const dek = new CredentialCipher(randomBytes(32), DATA_KEY_ENVELOPE_VERSION);
    const env = dek.encrypt(SECRET, 'conn-1');
    expect(env.startsWith(`v2:${dek.keyId}:`)).toBe(true);
    expect(dek.decrypt(env, 'conn-1')).toBe(SECRET);
    expect(failure(() => dek.decrypt(env, 'conn-2')).reason).toBe('tampered');
    // The same key as a v1 cipher refuses a v2 envelope, and a v2 envelope relabelled v1 fails authentication.
    expect(failure(() => new CredentialCipher(KEY).decrypt(env, 'conn-1')).reason).toBe('unsupported_version');
    const v1 = new CredentialCipher(KEY).encrypt('x');
    const text = `junk${env}\u0000more ${v1}"`;
    expect(text.match(CREDENTIAL_ENVELOPE_PATTERN)).toEqual([env, v1]);
  });

  it('malformed and unknown-version envelopes are refused', () => {
    const c = new CredentialCipher(KEY);
    expect(failure(() => c.decrypt('plaintext-token')).reason).toBe('malformed');
    expect(failure(() => c.decrypt(c.encrypt('x').replace(/^v1:/, 'v9:'))).reason).toBe('unsupported_version');
    const env = c.encrypt('x').split(':');
    env[2] = randomBytes(8).toString('base64');
    expect(failure(() => c.decrypt(env.join(':'))).reason).toBe('malformed');
  });

  it('the key never shows in JSON, inspection or errors', () => {
    const c = new CredentialCipher(KEY);
    expect(JSON.stringify(c)).not.toContain(KEY.slice(0, 16));
    expect(inspect(c, { showHidden: true, depth: 5 })).not.toContain('a1a1a1');
    expect(() => new CredentialCipher('abc')).toThrow(/64 hexadecimal/);
  });
});

describe('config: CREDENTIAL_MASTER_KEY', () => {
  const issues = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (err) {
      return String(err instanceof Error ? err.message : err);
    }
    return '';
  };

  it('required under NODE_ENV=production: refused, naming the variable', () => {
    const msg = issues({ NODE_ENV: 'production' });
    expect(msg).toMatch(/CREDENTIAL_MASTER_KEY/);
    expect(msg).toMatch(/required when NODE_ENV=production/);
    expect(issues({ NODE_ENV: 'production', CREDENTIAL_MASTER_KEY: '' })).toMatch(/CREDENTIAL_MASTER_KEY/);
    expect(loadConfig({ NODE_ENV: 'production', CREDENTIAL_MASTER_KEY: KEY }).CREDENTIAL_MASTER_KEY).toBe(KEY);
  });

  it('not 64 hex characters: refused in every environment, without printing the value', () => {
    const bad = ['zz'.repeat(32), 'ab'.repeat(31), `${'ab'.repeat(32)}00`, 'my-secret-passphrase'];
    for (const env of ['production', 'development', 'test']) {
      for (const value of bad) {
        const msg = issues({ NODE_ENV: env, CREDENTIAL_MASTER_KEY: value });
        expect(msg, `${env} ${value}`).toMatch(/CREDENTIAL_MASTER_KEY must be 64 hexadecimal characters/);
        expect(msg).not.toContain(value);
      }
    }
  });

  it('unset outside production: accepted (the data dir key serves); platform API addresses default', () => {
    const cfg = loadConfig({ NODE_ENV: 'development' });
    expect(cfg.CREDENTIAL_MASTER_KEY).toBeUndefined();
    expect(loadConfig({}).NODE_ENV).toBe('development');
    expect(cfg.PLATFORM_A_API_URL).toBe('https://slack.com/api/');
    expect(cfg.PLATFORM_B_API_URL).toBe('https://discord.com/api');
    expect(issues({ PLATFORM_A_API_URL: 'not a url' })).toMatch(/PLATFORM_A_API_URL/);
  });
});
