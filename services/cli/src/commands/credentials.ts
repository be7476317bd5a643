import { AtlasError, type Config, CredentialDecryptionError } from '@atlas/core';
import { type RotationResult, rotateCredentialMasterKey } from '@atlas/runtime';
import { acquireLock } from '../lock.js';
import { withRuntime } from './ops.js';

/**
 * `atlas credentials rotate`: re-wraps every connection's data key under a new master key (docs/credentials.md).
 * Holds the data dir's lock throughout (with DATABASE_URL too: the keyring lives in the data dir), so it refuses
 * while `atlas start` or another command holds it (AtlasError DATA_DIR_LOCKED). Other errors: see
 * rotateCredentialMasterKey (wrong key: CredentialDecryptionError).
 */
export const rotateCredentialsCommand = async (cfg: Config): Promise<RotationResult> => {
  const memory = cfg.ATLAS_DATA_DIR.startsWith('memory://');
  if (memory) throw new AtlasError('INVALID_REQUEST', 'a memory:// data dir has no stored credential key to rotate');
  // withRuntime locks the embedded database's data dir; with a server database it does not, so lock here.
  const release = cfg.DATABASE_URL ? acquireLock(cfg.ATLAS_DATA_DIR, { command: 'credentials rotate' }) : () => {};
  try {
    return await withRuntime(cfg, 'credentials rotate', async (rt) => rotateCredentialMasterKey(rt));
  } finally {
    release();
  }
};

/** True for the refusals `atlas credentials rotate` exits 2 on: the data dir is held, or the key is wrong. */
export const isRotationRefusal = (err: unknown): boolean =>
  err instanceof CredentialDecryptionError || (err instanceof AtlasError && err.code === 'DATA_DIR_LOCKED');

/** The lines `atlas credentials rotate` prints after a rotation. */
export const rotationReport = (r: RotationResult): string[] => [
  `re-wrapped ${r.dataKeys} connection data keys under a new master key (key id ${r.oldKeyId} → ${r.newKeyId})`,
  r.source === 'file'
    ? `the new key replaced ${r.path} (owner-only); back it up with the data dir: the old key decrypts nothing now`
    : 'now set CREDENTIAL_MASTER_KEY to the value of CREDENTIAL_MASTER_KEY_NEW and unset CREDENTIAL_MASTER_KEY_NEW ' +
      'before the next start: the old key decrypts nothing now',
];
