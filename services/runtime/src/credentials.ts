import { type RotationResult, rotateMasterKey } from '@atlas/stores';

export {
  CredentialKeyring,
  KEYRING_FILE,
  loadMasterKey,
  MASTER_KEY_FILE,
  type MasterKey,
  type RotationResult,
} from '@atlas/stores';

import type { Runtime } from './runtime.js';

/**
 * `atlas credentials rotate` (docs/credentials.md): re-wraps every data key of the keyring under a new master key.
 * The runtime was opened first, so legacy `v1` envelopes (directly under the old master key) have already been moved
 * to data keys. Key in the data dir: a new random key replaces `credential-master.key`; CREDENTIAL_MASTER_KEY: the new
 * key is CREDENTIAL_MASTER_KEY_NEW (the operator swaps the variables afterwards). Throws AtlasError INVALID_REQUEST
 * (memory:// data dir, CREDENTIAL_MASTER_KEY_NEW missing or equal), CredentialDecryptionError `wrong_key` (the
 * keyring is wrapped under another key; nothing changed).
 */
export const rotateCredentialMasterKey = (rt: Runtime): RotationResult =>
  rotateMasterKey(
    rt.credentialMasterKey,
    rt.connections.keyring,
    rt.cfg.ATLAS_DATA_DIR,
    rt.cfg.CREDENTIAL_MASTER_KEY_NEW,
  );
