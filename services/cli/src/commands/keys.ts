import { AtlasError, type Config, parsePlatformIdentity, ROLES, type Role } from '@atlas/core';
import type { ApiKeyRecord } from '@atlas/runtime';
import { withRuntime } from './ops.js';

/** Options of `atlas keys create` (docs/access.md "API keys"). */
export interface CreateKeyOptions {
  name: string;
  role: string;
  /** Comma-separated channel ids the key may see (its scope); absent: every channel its role and identity allow. */
  channels?: string | undefined;
  /** Comma-separated connection ids the key may see. */
  connections?: string | undefined;
  /** `platform_a:U123`: the platform user whose channel membership decides what the key sees. */
  identity?: string | undefined;
  /** ISO 8601, or a duration in days (`30d`). */
  expires?: string | undefined;
}

const list = (v: string | undefined): string[] | null =>
  v === undefined
    ? null
    : v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);

/** `--expires 2027-01-01T00:00:00Z | 30d` as an ISO timestamp in the future. Throws AtlasError INVALID_REQUEST. */
export const parseExpiry = (v: string | undefined, now = new Date()): string | null => {
  if (v === undefined) return null;
  const days = /^(\d{1,5})d$/.exec(v);
  const ms = days ? now.getTime() + Number(days[1]) * 86_400_000 : Date.parse(v);
  if (Number.isNaN(ms) || ms <= now.getTime())
    throw new AtlasError(
      'INVALID_REQUEST',
      `--expires takes a future ISO 8601 time or a number of days (30d), not '${v}'`,
    );
  return new Date(ms).toISOString();
};

/**
 * `atlas keys create --name <n> --role <admin|member|reader> [--channels a,b] [--connections c] [--identity
 * platform_a:U1] [--expires 30d]`: creates a key in the data dir's store; returns the record and the key (printed
 * once). Throws AtlasError INVALID_REQUEST for a bad role, identity or expiry; DATA_DIR_LOCKED while `atlas start`
 * holds the data dir (then use POST /api/admin/keys).
 */
export const createKeyCommand = (cfg: Config, o: CreateKeyOptions): Promise<{ key: ApiKeyRecord; secret: string }> => {
  if (!(ROLES as readonly string[]).includes(o.role))
    throw new AtlasError('INVALID_REQUEST', `--role is one of ${ROLES.join(', ')}, not '${o.role}'`);
  const identity = o.identity === undefined ? null : parsePlatformIdentity(o.identity);
  if (o.identity !== undefined && !identity)
    throw new AtlasError('INVALID_REQUEST', `--identity is <platform_a|platform_b>:<user id>, not '${o.identity}'`);
  const channels = list(o.channels);
  const connections = list(o.connections);
  const expires_at = parseExpiry(o.expires);
  return withRuntime(cfg, 'keys create', (rt) =>
    rt.apiKeys.create({
      name: o.name,
      role: o.role as Role,
      scope: channels || connections ? { channels, connections } : null,
      identity,
      expires_at,
    }),
  );
};

/** `atlas keys list [--all]`: the keys (revoked ones with --all), never a key itself. */
export const listKeysCommand = (cfg: Config, all: boolean): Promise<ApiKeyRecord[]> =>
  withRuntime(cfg, 'keys list', (rt) => rt.apiKeys.list({ includeRevoked: all }));

/** `atlas keys revoke <key_id>`: revokes the key; AtlasError NOT_FOUND for an unknown id. */
export const revokeKeyCommand = (cfg: Config, keyId: string): Promise<ApiKeyRecord> =>
  withRuntime(cfg, 'keys revoke', async (rt) => {
    const k = await rt.apiKeys.revoke(keyId);
    if (!k) throw new AtlasError('NOT_FOUND', `no API key ${keyId}`);
    return k;
  });
