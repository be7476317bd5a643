import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { AtlasError } from './errors.js';

/**
 * Encryption of platform credentials at rest (spec "Authentication" items 1-2: credentials are stored under the
 * master key `CREDENTIAL_MASTER_KEY`, 64 hexadecimal characters = 32 bytes, required in production; credentials are
 * never returned nor logged).
 *
 * AES-256-GCM (node:crypto), a random 12-byte IV per encryption, a 16-byte auth tag checked on decryption. The
 * envelope is one ASCII string:
 *
 *   `v1:<key id>:<iv base64>:<tag base64>:<ciphertext base64>`
 *
 * `v1` is written under the master key (legacy connection rows, and the wrapped data keys of the keyring); `v2` under a
 * connection's own random data key (packages/stores/src/connections/keyring.ts: crypto-shredding, dropping the data key makes every copy
 * of the envelope unreadable). The key id is a 16-hex-character fingerprint of the key (SHA-256 over a label and the
 * key: it reveals nothing of the key) so a ciphertext read under another key is refused with a clear error instead of a bare tag failure. The
 * version and key id (and an optional caller context, e.g. the connection id) are authenticated as additional data:
 * changing any of them, or any byte of IV, tag or ciphertext, fails decryption.
 */

/** Envelope version of a credential encrypted directly under the master key (legacy rows; wrapped data keys). */
export const CREDENTIAL_ENVELOPE_VERSION = 'v1';
/** Envelope version of a credential encrypted under its own data key (packages/stores/src/connections/keyring.ts). */
export const DATA_KEY_ENVELOPE_VERSION = 'v2';
/** The envelope versions this module reads and writes. */
export type CredentialEnvelopeVersion = typeof CREDENTIAL_ENVELOPE_VERSION | typeof DATA_KEY_ENVELOPE_VERSION;

/**
 * One envelope in any text or bytes: version, 16-hex key id, base64 IV (16 characters), base64 tag (24), base64
 * ciphertext. Global: for scanning (tests look for every envelope left in a data dir's files).
 */
export const CREDENTIAL_ENVELOPE_PATTERN =
  /v[12]:[0-9a-f]{16}:[A-Za-z0-9+/]{16}:[A-Za-z0-9+/]{22}==:[A-Za-z0-9+/]*={0,2}/g;

const KEY_HEX = /^[0-9a-fA-F]{64}$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The 16-hex-character fingerprint of a 32-byte key (the envelope's key id). */
export const credentialKeyId = (key: Buffer): string =>
  createHash('sha256').update('atlas-credential-key-id:').update(key).digest('hex').slice(0, 16);
const fingerprint = credentialKeyId;

/** Why an envelope could not be decrypted. */
export type CredentialFailure = 'malformed' | 'unsupported_version' | 'wrong_key' | 'tampered';

/**
 * A stored credential envelope that cannot be decrypted: `reason` says why (`wrong_key`: written under another
 * CREDENTIAL_MASTER_KEY, details carry both key ids; `tampered`: the auth tag did not match; `malformed` /
 * `unsupported_version`: not an envelope of this module). AtlasError INTERNAL_ERROR (500, not retriable): a server
 * misconfiguration or corrupted row, never the caller's fault. The message never contains plaintext or key bytes.
 */
export class CredentialDecryptionError extends AtlasError {
  constructor(
    readonly reason: CredentialFailure,
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super('INTERNAL_ERROR', message, { details: { reason, ...details }, expose: true }); // says which key, never its bytes
    this.name = 'CredentialDecryptionError';
  }
}

/**
 * Encrypts and decrypts credential strings under one 32-byte master key (AES-256-GCM, envelope above).
 * The key bytes live in a private field: they are not enumerable, not serialised by JSON.stringify, not printed by
 * console.log. Throws AtlasError INVALID_REQUEST at construction when `keyHex` is not 64 hexadecimal characters.
 */
export class CredentialCipher {
  readonly #key: Buffer;
  /** Fingerprint of the key (16 hex characters), stored in every envelope. */
  readonly keyId: string;
  /** The envelope version this cipher writes and reads: `v1` (a master key) or `v2` (a connection's data key). */
  readonly version: CredentialEnvelopeVersion;

  /**
   * `key`: 64 hexadecimal characters or 32 bytes. `version`: `v1` for the master key (default), `v2` for a data key.
   * Throws AtlasError INVALID_REQUEST when the key is not 32 bytes.
   */
  constructor(key: string | Buffer, version: CredentialEnvelopeVersion = CREDENTIAL_ENVELOPE_VERSION) {
    if (typeof key === 'string' ? !KEY_HEX.test(key) : key.length !== 32)
      throw new AtlasError('INVALID_REQUEST', 'CREDENTIAL_MASTER_KEY must be 64 hexadecimal characters (32 bytes)');
    this.#key = typeof key === 'string' ? Buffer.from(key, 'hex') : Buffer.from(key);
    this.keyId = fingerprint(this.#key);
    this.version = version;
  }

  /**
   * Encrypts `plaintext` (UTF-8) under a fresh random 12-byte IV into a `v1:` envelope. `context` (e.g. the row's
   * id) is authenticated, not stored: decrypt must be given the same context, so an envelope copied to another row
   * fails as `tampered`.
   */
  encrypt(plaintext: string, context = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(this.version, this.keyId, context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [this.version, this.keyId, iv, tag, ciphertext]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64')))
      .join(':');
  }

  /**
   * The plaintext of an envelope written by `encrypt` with the same key and `context`.
   * Throws CredentialDecryptionError: `malformed`, `unsupported_version`, `wrong_key` (another key's id), `tampered` (auth tag mismatch: a changed byte or another context).
   */
  decrypt(envelope: string, context = ''): string {
    const parts = envelope.split(':');
    if (parts.length !== 5) throw new CredentialDecryptionError('malformed', 'stored credentials are not an envelope');
    const [version, keyId, ivB64, tagB64, ctB64] = parts as [string, string, string, string, string];
    if (version !== this.version)
      throw new CredentialDecryptionError(
        'unsupported_version',
        `stored credentials use envelope version '${version.slice(0, 8)}' (this key reads ${this.version})`,
      );
    if (keyId !== this.keyId) {
      const which = version === DATA_KEY_ENVELOPE_VERSION ? 'data key' : 'CREDENTIAL_MASTER_KEY';
      throw new CredentialDecryptionError(
        'wrong_key',
        `stored credentials were encrypted under another key (key id ${keyId}), not the ${which} (key id ${this.keyId}): restore that key or re-enter the credentials`,
        { stored_key_id: keyId, key_id: this.keyId },
      );
    }
    const iv = Buffer.from(ivB64, 'base64');
    const tag = Buffer.from(tagB64, 'base64');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES)
      throw new CredentialDecryptionError('malformed', 'stored credentials have a bad IV or tag length');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(aad(version, keyId, context));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(Buffer.from(ctB64, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new CredentialDecryptionError(
        'tampered',
        'stored credentials failed authentication (altered, or read for another record)',
      );
    }
  }

  /** encrypt(JSON.stringify(value), context). */
  encryptJson(value: unknown, context = ''): string {
    return this.encrypt(JSON.stringify(value), context);
  }

  /** JSON.parse(decrypt(envelope, context)); same errors as decrypt. */
  decryptJson<T>(envelope: string, context = ''): T {
    return JSON.parse(this.decrypt(envelope, context)) as T;
  }

  /** Never prints the key. */
  toJSON(): { keyId: string; version: CredentialEnvelopeVersion } {
    return { keyId: this.keyId, version: this.version };
  }
}

const aad = (version: string, keyId: string, context: string): Buffer =>
  Buffer.from(`${version}:${keyId}:${context}`, 'utf8');

/** The version of an envelope (`v1`, `v2`, or whatever precedes its first colon). */
export const envelopeVersion = (envelope: string): string => envelope.slice(0, Math.max(0, envelope.indexOf(':')));

/** The key id of an envelope (its second field; '' when malformed). */
export const envelopeKeyId = (envelope: string): string => envelope.split(':')[1] ?? '';
