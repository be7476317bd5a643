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
 * The key id is a 16-hex-character fingerprint of the key (SHA-256 over a label and the key: it reveals nothing of
 * the key) so a ciphertext read under another key is refused with a clear error instead of a bare tag failure. The
 * version and key id (and an optional caller context, e.g. the connection id) are authenticated as additional data:
 * changing any of them, or any byte of IV, tag or ciphertext, fails decryption.
 */

/** Envelope version written by this module; the only one it reads. */
export const CREDENTIAL_ENVELOPE_VERSION = 'v1';

/**
 * The development key used when CREDENTIAL_MASTER_KEY is unset outside production: SHA-256 of a fixed public label,
 * so it is the same on every machine and protects nothing (anyone can derive it). Ciphertexts written under it carry
 * its key id (DEVELOPMENT_CREDENTIAL_KEY_ID) and are refused once a real key is configured.
 */
export const DEVELOPMENT_CREDENTIAL_KEY_HEX = createHash('sha256')
  .update('atlas development credential key: NOT SECRET, never use in production')
  .digest('hex');

const KEY_HEX = /^[0-9a-fA-F]{64}$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The 16-hex-character fingerprint of a 32-byte key (the envelope's key id). */
const fingerprint = (key: Buffer): string =>
  createHash('sha256').update('atlas-credential-key-id:').update(key).digest('hex').slice(0, 16);

/** Key id of DEVELOPMENT_CREDENTIAL_KEY_HEX: an envelope carrying it was written under the development key. */
export const DEVELOPMENT_CREDENTIAL_KEY_ID = fingerprint(Buffer.from(DEVELOPMENT_CREDENTIAL_KEY_HEX, 'hex'));

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
  /** True when this is the public development key (CREDENTIAL_MASTER_KEY unset outside production). */
  readonly development: boolean;
  readonly #onDevelopmentKeyUse: ((msg: string) => void) | undefined;

  /**
   * `onDevelopmentKeyUse` is told once per process, on the first `encrypt` under the development key, that real
   * credentials are being stored under a public key (the runtime passes process.emitWarning): commands that never
   * store a credential (import, search) stay quiet.
   */
  constructor(keyHex: string, onDevelopmentKeyUse?: (msg: string) => void) {
    if (!KEY_HEX.test(keyHex))
      throw new AtlasError('INVALID_REQUEST', 'CREDENTIAL_MASTER_KEY must be 64 hexadecimal characters (32 bytes)');
    this.#key = Buffer.from(keyHex, 'hex');
    this.keyId = fingerprint(this.#key);
    this.development = this.keyId === DEVELOPMENT_CREDENTIAL_KEY_ID;
    this.#onDevelopmentKeyUse = onDevelopmentKeyUse;
  }

  /**
   * The cipher configuration asks for: CREDENTIAL_MASTER_KEY when set, else the development key (loadConfig has
   * already refused an unset key under NODE_ENV=production and a key that is not 64 hex characters).
   */
  static fromConfig(
    cfg: { CREDENTIAL_MASTER_KEY?: string | undefined },
    onDevelopmentKeyUse?: (msg: string) => void,
  ): CredentialCipher {
    return new CredentialCipher(cfg.CREDENTIAL_MASTER_KEY ?? DEVELOPMENT_CREDENTIAL_KEY_HEX, onDevelopmentKeyUse);
  }

  /**
   * Encrypts `plaintext` (UTF-8) under a fresh random 12-byte IV into a `v1:` envelope. `context` (e.g. the row's
   * id) is authenticated, not stored: decrypt must be given the same context, so an envelope copied to another row
   * fails as `tampered`.
   */
  encrypt(plaintext: string, context = ''): string {
    if (this.#onDevelopmentKeyUse) warnDevelopmentCredentialKey(this, this.#onDevelopmentKeyUse);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(this.keyId, context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [CREDENTIAL_ENVELOPE_VERSION, this.keyId, iv, tag, ciphertext]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64')))
      .join(':');
  }

  /**
   * The plaintext of an envelope written by `encrypt` with the same key and `context`.
   * Throws CredentialDecryptionError: `malformed`, `unsupported_version`, `wrong_key` (another key's id; the message
   * says when it is the development key's), `tampered` (auth tag mismatch: a changed byte or another context).
   */
  decrypt(envelope: string, context = ''): string {
    const parts = envelope.split(':');
    if (parts.length !== 5) throw new CredentialDecryptionError('malformed', 'stored credentials are not an envelope');
    const [version, keyId, ivB64, tagB64, ctB64] = parts as [string, string, string, string, string];
    if (version !== CREDENTIAL_ENVELOPE_VERSION)
      throw new CredentialDecryptionError(
        'unsupported_version',
        `stored credentials use envelope version '${version.slice(0, 8)}' (this build reads ${CREDENTIAL_ENVELOPE_VERSION})`,
      );
    if (keyId !== this.keyId) {
      const which =
        keyId === DEVELOPMENT_CREDENTIAL_KEY_ID
          ? 'the development key (CREDENTIAL_MASTER_KEY was unset)'
          : 'another key';
      throw new CredentialDecryptionError(
        'wrong_key',
        `stored credentials were encrypted under ${which} (key id ${keyId}), not the configured CREDENTIAL_MASTER_KEY (key id ${this.keyId}): restore that key or re-enter the credentials`,
        { stored_key_id: keyId, key_id: this.keyId },
      );
    }
    const iv = Buffer.from(ivB64, 'base64');
    const tag = Buffer.from(tagB64, 'base64');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES)
      throw new CredentialDecryptionError('malformed', 'stored credentials have a bad IV or tag length');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(aad(keyId, context));
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
  toJSON(): { keyId: string; development: boolean } {
    return { keyId: this.keyId, development: this.development };
  }
}

const aad = (keyId: string, context: string): Buffer =>
  Buffer.from(`${CREDENTIAL_ENVELOPE_VERSION}:${keyId}:${context}`, 'utf8');

let warned = false;

/**
 * Warns once per process (through `warn`) that credentials are encrypted under the public development key, when
 * `cipher.development`; returns whether it warned now. Called by `encrypt` when the cipher was given a warn function.
 */
export const warnDevelopmentCredentialKey = (cipher: CredentialCipher, warn: (msg: string) => void): boolean => {
  if (!cipher.development || warned) return false;
  warned = true;
  warn(
    'CREDENTIAL_MASTER_KEY is unset: connection credentials are encrypted under the public development key ' +
      '(anyone can decrypt them). Set a 64-hex-character key (openssl rand -hex 32) before storing real credentials; ' +
      'NODE_ENV=production refuses to start without one.',
  );
  return true;
};
