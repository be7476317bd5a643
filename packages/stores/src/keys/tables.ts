type Time = Date | string;

/**
 * The API key store's table (key-store.ts; migrateApiKeys creates it). `key_hash` is the SHA-256 of the whole key
 * (hex): the key itself is never stored. `scope` and `identity` JSON text on write, parsed on read.
 */
export type ApiKeyTables = {
  api_keys: {
    key_id: string;
    name: string;
    role: 'admin' | 'member' | 'reader';
    key_hash: string;
    prefix: string;
    scope: unknown;
    identity: unknown;
    created_at: Time;
    last_used_at: Time | null;
    expires_at: Time | null;
    revoked_at: Time | null;
  };
};
