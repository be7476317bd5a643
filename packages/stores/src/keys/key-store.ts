import { createHash, randomBytes } from 'node:crypto';
import type { KeyScope, PlatformIdentity, Role } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import type { Kysely } from 'kysely';
import type { ApiKeyTables } from './tables.js';

/** Every generated key starts with this (secret scanners and people can tell an Atlas key). */
export const API_KEY_PREFIX = 'atlas_';
/** Random bytes in a generated key: 32 bytes = 256 bits (base64url, 43 characters after the prefix). */
export const API_KEY_BYTES = 32;

/** An API key as the store shows it: never the key itself, never its hash. Times ISO 8601 UTC or null. */
export interface ApiKeyRecord {
  key_id: string;
  name: string;
  role: Role;
  /** The key's first 12 characters (`atlas_` and 6 more): enough to tell keys apart, far too few to guess one. */
  prefix: string;
  scope: KeyScope | null;
  identity: PlatformIdentity | null;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

/** What a key is created with. */
export interface NewApiKey {
  name: string;
  role: Role;
  scope?: KeyScope | null;
  identity?: PlatformIdentity | null;
  /** ISO 8601; after it the key is refused (401). Null or absent: it does not expire. */
  expires_at?: string | null;
}

/** The result of checking a presented key: the record, or why it is refused. */
export type KeyCheck =
  | { ok: true; key: ApiKeyRecord }
  | { ok: false; reason: 'unknown' | 'revoked' | 'expired'; key_id: string | null };

/** SHA-256 (hex) of a presented key: what the store keeps and looks keys up by. */
export const hashApiKey = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex');

/** A new random key: `atlas_` + 256 random bits in base64url. */
export const generateApiKey = (): string => API_KEY_PREFIX + randomBytes(API_KEY_BYTES).toString('base64url');

const iso = (v: unknown): string | null => (v == null ? null : new Date(v as string | Date).toISOString());
const json = <T>(v: unknown): T | null => (v == null ? null : ((typeof v === 'string' ? JSON.parse(v) : v) as T));

type Row = ApiKeyTables['api_keys'];
const toRecord = (r: Row): ApiKeyRecord => ({
  key_id: r.key_id,
  name: r.name,
  role: r.role,
  prefix: r.prefix,
  scope: json<KeyScope>(r.scope),
  identity: json<PlatformIdentity>(r.identity),
  created_at: iso(r.created_at)!,
  last_used_at: iso(r.last_used_at),
  expires_at: iso(r.expires_at),
  revoked_at: iso(r.revoked_at),
});

const COLUMNS = [
  'key_id',
  'name',
  'role',
  'key_hash',
  'prefix',
  'scope',
  'identity',
  'created_at',
  'last_used_at',
  'expires_at',
  'revoked_at',
] as const;

/**
 * API keys (docs/access.md "API keys"): created with a role, an optional scope, platform identity and expiry; shown
 * once (the secret is returned by `create` only); kept as their SHA-256 hash (a 256-bit random key needs no slow hash:
 * nothing can be guessed from its digest); revoked, never deleted, so the audit trail keeps naming them.
 */
export class ApiKeyStore {
  private readonly db: Kysely<ApiKeyTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<ApiKeyTables>();
  }

  /**
   * Creates a key; returns its record and the key itself (`secret`, the only time it exists outside the caller).
   * `secret` may be given (the bootstrap key, tests); a generated one is 256 random bits.
   */
  async create(
    k: NewApiKey,
    now = new Date(),
    secret = generateApiKey(),
  ): Promise<{ key: ApiKeyRecord; secret: string }> {
    const row: Row = {
      key_id: `key_${randomBytes(8).toString('hex')}`,
      name: k.name,
      role: k.role,
      key_hash: hashApiKey(secret),
      prefix: secret.slice(0, 12),
      scope: k.scope ? JSON.stringify(k.scope) : null,
      identity: k.identity ? JSON.stringify(k.identity) : null,
      created_at: now.toISOString(),
      last_used_at: null,
      expires_at: k.expires_at ?? null,
      revoked_at: null,
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return { key: toRecord(row), secret };
  }

  /** Every key, newest first; revoked ones only with `includeRevoked`. */
  async list(opts: { includeRevoked?: boolean } = {}): Promise<ApiKeyRecord[]> {
    let q = this.db.selectFrom('api_keys').select(COLUMNS).orderBy('created_at', 'desc').orderBy('key_id');
    if (!opts.includeRevoked) q = q.where('revoked_at', 'is', null);
    return (await q.execute()).map(toRecord);
  }

  /** One key's record, or null. */
  async get(keyId: string): Promise<ApiKeyRecord | null> {
    const r = await this.db.selectFrom('api_keys').select(COLUMNS).where('key_id', '=', keyId).executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  /** Revokes a key (idempotent: a revoked key keeps its first revocation time); its record, or null when unknown. */
  async revoke(keyId: string, now = new Date()): Promise<ApiKeyRecord | null> {
    await this.db
      .updateTable('api_keys')
      .set({ revoked_at: now.toISOString() })
      .where('key_id', '=', keyId)
      .where('revoked_at', 'is', null)
      .execute();
    return this.get(keyId);
  }

  /** Looks a presented key up by its hash: the record when usable at `now`, else why not (unknown, revoked, expired). */
  async check(secret: string, now = new Date()): Promise<KeyCheck> {
    const r = await this.db
      .selectFrom('api_keys')
      .select(COLUMNS)
      .where('key_hash', '=', hashApiKey(secret))
      .executeTakeFirst();
    if (!r) return { ok: false, reason: 'unknown', key_id: null };
    const key = toRecord(r);
    if (key.revoked_at !== null) return { ok: false, reason: 'revoked', key_id: key.key_id };
    if (key.expires_at !== null && Date.parse(key.expires_at) <= now.getTime())
      return { ok: false, reason: 'expired', key_id: key.key_id };
    return { ok: true, key };
  }

  /** Sets last_used_at (the caller throttles: the auth hook writes at most once a minute per key). */
  async touch(keyId: string, at = new Date()): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at.toISOString() }).where('key_id', '=', keyId).execute();
  }

  /** How many keys are usable at `now` (not revoked, not expired): zero means no key is configured. */
  async countUsable(now = new Date()): Promise<number> {
    const r = await this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now.toISOString())]))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
