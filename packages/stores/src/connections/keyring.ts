import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import {
  AtlasError,
  CredentialCipher,
  CredentialDecryptionError,
  credentialKeyId,
  DATA_KEY_ENVELOPE_VERSION,
} from '@atlas/core';

/**
 * Keys of stored credentials (docs/credentials.md): the master key and the keyring of per-connection data keys.
 *
 * - The master key is CREDENTIAL_MASTER_KEY when set; else `<ATLAS_DATA_DIR>/credential-master.key` (64 hex
 *   characters, owner-only, generated at random on first use); with a `memory://` data dir, a random key of this
 *   process.
 * - Each connection's credentials are encrypted under their own random 32-byte data key (DEK, `v2` envelopes). The
 *   DEKs are kept wrapped (a `v1` envelope under the master key, the connection id and DEK id as context) in
 *   `<ATLAS_DATA_DIR>/credential-keyring.json` (owner-only, rewritten atomically: temporary file, fsync, rename), never
 *   in the database. Dropping a DEK from the keyring makes every copy of its envelopes unreadable (crypto-shredding):
 *   dead tuples, write-ahead log, a server's backups.
 */

/** The master key's file name inside ATLAS_DATA_DIR. */
export const MASTER_KEY_FILE = 'credential-master.key';
/** The keyring's file name inside ATLAS_DATA_DIR. */
export const KEYRING_FILE = 'credential-keyring.json';

/** Where the master key came from: the variable, the data dir's key file, or this process (memory:// data dir). */
export type MasterKeySource = 'env' | 'file' | 'memory';

/** The master key in use. */
export interface MasterKey {
  cipher: CredentialCipher;
  source: MasterKeySource;
  /** The key file (source `file`), else null. */
  path: string | null;
  /** True when this call generated the key file (the caller says so once). */
  generated: boolean;
}

const KEY_FILE_TEXT = /^\s*([0-9a-fA-F]{64})\s*$/;

/** Best-effort fsync of a directory (makes a rename durable; not every platform allows opening a directory). */
const fsyncDir = (dir: string): void => {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* not supported here */
  }
};

/** Writes `data` to a new owner-only temporary file next to `file`, fsynced; returns its path. */
const writeTemp = (file: string, data: string): string => {
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return tmp;
};

/**
 * Replaces `file` with `data` atomically (temporary file with mode 0600, fsync, rename, fsync of the directory): a
 * reader sees the old or the new content, never a mix; a crash leaves one of them.
 */
export const writeFileAtomic = (file: string, data: string): void => {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = writeTemp(file, data);
  try {
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  fsyncDir(path.dirname(file));
};

const readKeyFile = (file: string): CredentialCipher => {
  const m = KEY_FILE_TEXT.exec(readFileSync(file, 'utf8'));
  if (!m) throw new AtlasError('INVALID_REQUEST', `${file} is not a credential master key (64 hexadecimal characters)`);
  return new CredentialCipher(m[1]!);
};

/** Reads the data dir's key file, or creates it (random 32 bytes, 0600, linked into place: two processes agree). */
const readOrCreateKeyFile = (dataDir: string, file: string): { cipher: CredentialCipher; generated: boolean } => {
  if (existsSync(file)) return { cipher: readKeyFile(file), generated: false };
  mkdirSync(dataDir, { recursive: true });
  const tmp = writeTemp(file, `${randomBytes(32).toString('hex')}\n`);
  let generated = true;
  try {
    linkSync(tmp, file); // fails when another process created the file meanwhile: then its key is the key
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    generated = false;
  } finally {
    rmSync(tmp, { force: true });
  }
  fsyncDir(dataDir);
  return { cipher: readKeyFile(file), generated };
};

/**
 * The master key configuration asks for: CREDENTIAL_MASTER_KEY when set; with a `memory://` data dir a random key of
 * this process; else the data dir's key file. A missing key file is created at once with `create` (`atlas start`),
 * else on first use of `cipher` (the first credential stored, a rotation): a command that never touches credentials
 * (`atlas import`) writes no key. `onGenerated(path)` hears that this process created the file. Finishes a rotation
 * that was interrupted between writing the keyring and replacing the key file (rotateMasterKey). Throws AtlasError
 * INVALID_REQUEST when the key file holds something else than a key (at once, or on first use of `cipher`).
 */
export const loadMasterKey = (
  cfg: { CREDENTIAL_MASTER_KEY?: string | undefined; ATLAS_DATA_DIR: string },
  opts: { create?: boolean; onGenerated?: (path: string) => void } = {},
): MasterKey => {
  if (cfg.CREDENTIAL_MASTER_KEY)
    return { cipher: new CredentialCipher(cfg.CREDENTIAL_MASTER_KEY), source: 'env', path: null, generated: false };
  if (cfg.ATLAS_DATA_DIR.startsWith('memory://'))
    return { cipher: new CredentialCipher(randomBytes(32)), source: 'memory', path: null, generated: false };
  const dataDir = cfg.ATLAS_DATA_DIR;
  const file = path.join(dataDir, MASTER_KEY_FILE);
  if (existsSync(dataDir)) finishRotation(dataDir);
  let cipher: CredentialCipher | null = null;
  const key: MasterKey = {
    source: 'file',
    path: file,
    generated: false,
    get cipher(): CredentialCipher {
      if (!cipher) {
        const r = readOrCreateKeyFile(dataDir, file);
        cipher = r.cipher;
        if (r.generated) {
          key.generated = true;
          opts.onGenerated?.(file);
        }
      }
      return cipher;
    },
    set cipher(c: CredentialCipher) {
      cipher = c;
    },
  };
  if (opts.create || existsSync(file)) void key.cipher;
  return key;
};

/** The keyring file's content. */
interface KeyringFile {
  version: 1;
  /** Key id of the master key every entry is wrapped under. */
  master_key_id: string;
  /** By DEK id (the DEK's fingerprint). */
  keys: Record<string, KeyringEntry>;
}

interface KeyringEntry {
  connection_id: string;
  /** ISO 8601. */
  created_at: string;
  /** The DEK (64 hex characters) as a v1 envelope under the master key, context `dek:<connection id>:<dek id>`. */
  wrapped: string;
}

const wrapContext = (connectionId: string, dekId: string) => `dek:${connectionId}:${dekId}`;

/**
 * The keyring of per-connection data keys (module comment). One file in the data dir (`dir`), or only in memory
 * (`dir` null: a memory:// data dir, or a store given a bare cipher). Every change re-reads the file, applies itself
 * and rewrites the file atomically, and a lookup that misses re-reads it: processes sharing the data dir (server
 * PostgreSQL, `atlas run` services) see each other's keys. Key bytes never leave the process except wrapped.
 */
export class CredentialKeyring {
  #masterOf: () => CredentialCipher;
  #entries = new Map<string, KeyringEntry>();
  #masterKeyId: string;
  /** The keyring file, or null when it lives only in memory. */
  readonly path: string | null;

  private constructor(master: CredentialCipher | MasterKey, file: string | null) {
    this.#masterOf = master instanceof CredentialCipher ? () => master : () => master.cipher;
    this.#masterKeyId = '';
    this.path = file;
    this.#reload();
  }

  /** The master key, resolved on first use (a lazily created key file: loadMasterKey). */
  get #master(): CredentialCipher {
    return this.#masterOf();
  }

  /**
   * The keyring of data dir `dataDir` (null or `memory://…`: in memory only) under `master` (a cipher, or the
   * MasterKey of loadMasterKey, read on first use).
   */
  static open(dataDir: string | null, master: CredentialCipher | MasterKey): CredentialKeyring {
    const inMemory = dataDir === null || dataDir.startsWith('memory://');
    return new CredentialKeyring(master, inMemory ? null : path.join(dataDir, KEYRING_FILE));
  }

  /** Key id of the master key this keyring unwraps with. */
  get masterKeyId(): string {
    return this.#master.keyId;
  }

  /** Key id of the master key the stored entries are wrapped under ('' when none; differs from masterKeyId: wrong key). */
  get storedMasterKeyId(): string {
    return this.#masterKeyId;
  }

  /** The file's identity when last read (inode, size, mtime): a lookup re-reads a file another process replaced. */
  #seen = '';

  #stamp(): string {
    if (!this.path) return '';
    try {
      const st = statSync(this.path);
      return `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return 'absent';
    }
  }

  #reload(): void {
    if (!this.path) return;
    this.#seen = this.#stamp();
    if (this.#seen === 'absent') {
      this.#entries = new Map();
      return;
    }
    const f = JSON.parse(readFileSync(this.path, 'utf8')) as KeyringFile;
    this.#entries = new Map(Object.entries(f.keys ?? {}));
    this.#masterKeyId = f.master_key_id;
  }

  #save(): void {
    if (!this.path) return;
    const f: KeyringFile = { version: 1, master_key_id: this.#masterKeyId, keys: Object.fromEntries(this.#entries) };
    writeFileAtomic(this.path, `${JSON.stringify(f, null, 1)}\n`);
    chmodSync(this.path, 0o600);
    this.#seen = this.#stamp();
  }

  /** Applies `change` to the freshly read keyring and saves it. */
  #mutate(change: () => void): void {
    this.#reload();
    change();
    this.#save();
  }

  /**
   * A new random data key for `connectionId` (v2 cipher), saved wrapped before it is returned. The connection's other
   * data keys stay until dropped (the store drops them once the new envelope is written). Throws
   * CredentialDecryptionError `wrong_key` when the keyring's entries are wrapped under another master key.
   */
  create(connectionId: string, now: Date = new Date()): CredentialCipher {
    const dek = randomBytes(32);
    const dekId = credentialKeyId(dek);
    this.#mutate(() => {
      this.#checkMaster();
      this.#entries.set(dekId, {
        connection_id: connectionId,
        created_at: now.toISOString(),
        wrapped: this.#master.encrypt(dek.toString('hex'), wrapContext(connectionId, dekId)),
      });
    });
    return new CredentialCipher(dek, DATA_KEY_ENVELOPE_VERSION);
  }

  /**
   * The data key `dekId` of `connectionId` (re-reading the file when another process replaced it), or null when the
   * keyring does not hold it (dropped: its envelopes are unreadable for good). Throws CredentialDecryptionError when
   * it cannot be unwrapped (another master key, an altered entry).
   */
  cipher(dekId: string, connectionId: string): CredentialCipher | null {
    if (this.path && this.#stamp() !== this.#seen) this.#reload();
    const e = this.#entries.get(dekId);
    if (!e || e.connection_id !== connectionId) return null;
    return this.#unwrap(dekId, e, this.#master);
  }

  #unwrap(dekId: string, e: KeyringEntry, master: CredentialCipher): CredentialCipher {
    const hex = master.decrypt(e.wrapped, wrapContext(e.connection_id, dekId));
    return new CredentialCipher(hex, DATA_KEY_ENVELOPE_VERSION);
  }

  #checkMaster(): void {
    if (this.#entries.size > 0 && this.#masterKeyId !== this.#master.keyId)
      throw new CredentialDecryptionError(
        'wrong_key',
        `the credential keyring is wrapped under another master key (key id ${this.#masterKeyId}), not the configured one (key id ${this.#master.keyId})`,
        { stored_key_id: this.#masterKeyId, key_id: this.#master.keyId },
      );
    this.#masterKeyId = this.#master.keyId;
  }

  /** Drops data keys by id (unknown ids are ignored); true when one was dropped. */
  drop(dekIds: readonly string[]): boolean {
    let dropped = false;
    this.#mutate(() => {
      for (const id of dekIds) dropped = this.#entries.delete(id) || dropped;
    });
    return dropped;
  }

  /** Drops every data key of `connectionId` but `keep` (a DEK id); returns how many were dropped. */
  dropConnection(connectionId: string, keep?: string): number {
    let n = 0;
    this.#mutate(() => {
      for (const [id, e] of [...this.#entries])
        if (e.connection_id === connectionId && id !== keep) {
          this.#entries.delete(id);
          n++;
        }
    });
    return n;
  }

  /** Every data key entry: DEK id, connection id, created_at (no key bytes). */
  entries(): { dekId: string; connectionId: string; createdAt: string }[] {
    this.#reload();
    return [...this.#entries].map(([dekId, e]) => ({ dekId, connectionId: e.connection_id, createdAt: e.created_at }));
  }

  /**
   * Every data key, unwrapped (tests and rotation). Throws CredentialDecryptionError when an entry does not unwrap
   * under the master key.
   */
  ciphers(): CredentialCipher[] {
    this.#reload();
    return [...this.#entries].map(([id, e]) => this.#unwrap(id, e, this.#master));
  }

  /**
   * Re-wraps every data key under `next` and saves the keyring; from then on this keyring uses `next`. Every entry is
   * unwrapped first: throws CredentialDecryptionError `wrong_key` (nothing written) when the current master key is
   * not the one the keyring is wrapped under. Returns the number of data keys.
   */
  rewrap(next: CredentialCipher): number {
    this.#reload();
    this.#checkMaster();
    const rewrapped = new Map<string, KeyringEntry>();
    for (const [id, e] of this.#entries) {
      const hex = this.#master.decrypt(e.wrapped, wrapContext(e.connection_id, id)); // wrong_key, tampered
      rewrapped.set(id, { ...e, wrapped: next.encrypt(hex, wrapContext(e.connection_id, id)) });
    }
    this.#entries = rewrapped;
    this.#masterOf = () => next;
    this.#masterKeyId = next.keyId;
    this.#save();
    return rewrapped.size;
  }
}

const pendingKeyFile = (dataDir: string) => path.join(dataDir, `${MASTER_KEY_FILE}.new`);

/**
 * Finishes or abandons a rotation of the key file interrupted by a crash: when `credential-master.key.new` exists and
 * the keyring is already wrapped under it, it replaces the key file; otherwise the keyring is still under the old key
 * and the pending file is removed.
 */
const finishRotation = (dataDir: string): void => {
  const pending = pendingKeyFile(dataDir);
  if (!existsSync(pending)) return;
  const keyring = path.join(dataDir, KEYRING_FILE);
  const wrappedUnder = existsSync(keyring)
    ? (JSON.parse(readFileSync(keyring, 'utf8')) as KeyringFile).master_key_id
    : null;
  let next: CredentialCipher | null = null;
  try {
    next = readKeyFile(pending);
  } catch {
    next = null;
  }
  if (next && wrappedUnder === next.keyId) renameSync(pending, path.join(dataDir, MASTER_KEY_FILE));
  else rmSync(pending, { force: true });
  fsyncDir(dataDir);
};

/** What rotateMasterKey did. */
export interface RotationResult {
  /** Data keys re-wrapped. */
  dataKeys: number;
  oldKeyId: string;
  newKeyId: string;
  source: 'env' | 'file';
  /** The key file replaced (source `file`). */
  path: string | null;
}

/**
 * Re-wraps every data key of `keyring` under a new master key (`atlas credentials rotate`):
 * - key in the data dir (source `file`): a new random key is written to `credential-master.key.new` (0600, fsync),
 *   the keyring is rewritten under it, then the new file replaces the key file (a crash in between is finished or
 *   undone by the next loadMasterKey);
 * - CREDENTIAL_MASTER_KEY (source `env`): the new key is `newKeyHex` (CREDENTIAL_MASTER_KEY_NEW); the caller then
 *   swaps the variables.
 * Throws AtlasError INVALID_REQUEST for a memory:// data dir, a missing or equal CREDENTIAL_MASTER_KEY_NEW;
 * CredentialDecryptionError `wrong_key` when the keyring is not wrapped under the current master key (nothing is
 * changed then).
 */
export const rotateMasterKey = (
  master: MasterKey,
  keyring: CredentialKeyring,
  dataDir: string,
  newKeyHex?: string,
): RotationResult => {
  if (master.source === 'memory')
    throw new AtlasError('INVALID_REQUEST', 'a memory:// data dir has no stored credential key to rotate');
  const oldKeyId = master.cipher.keyId;
  if (master.source === 'env') {
    if (!newKeyHex)
      throw new AtlasError(
        'INVALID_REQUEST',
        'CREDENTIAL_MASTER_KEY is set: put the new key in CREDENTIAL_MASTER_KEY_NEW (openssl rand -hex 32) and run this again',
      );
    const next = new CredentialCipher(newKeyHex);
    if (next.keyId === oldKeyId)
      throw new AtlasError('INVALID_REQUEST', 'CREDENTIAL_MASTER_KEY_NEW is the same key as CREDENTIAL_MASTER_KEY');
    const dataKeys = keyring.rewrap(next);
    return { dataKeys, oldKeyId, newKeyId: next.keyId, source: 'env', path: null };
  }
  const hex = randomBytes(32).toString('hex');
  const next = new CredentialCipher(hex);
  const pending = pendingKeyFile(dataDir);
  writeFileAtomic(pending, `${hex}\n`);
  let dataKeys: number;
  try {
    dataKeys = keyring.rewrap(next); // checks every entry under the current key before writing
  } catch (e) {
    rmSync(pending, { force: true });
    throw e;
  }
  const file = path.join(dataDir, MASTER_KEY_FILE);
  renameSync(pending, file);
  fsyncDir(dataDir);
  master.cipher = next;
  return { dataKeys, oldKeyId, newKeyId: next.keyId, source: 'file', path: file };
};
