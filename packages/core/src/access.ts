/**
 * Identity and access (docs/access.md): who is calling (a principal), what role it holds, and which channels it may
 * see. The API's auth hook makes the principal; the channel-access read model (channel membership read from the
 * platforms) says which private channels a platform identity belongs to; every surface filters by the result.
 */

/** Roles of an API key, from least to most: readers read; members also ask, upload, give feedback and sync; admins manage. */
export const ROLES = ['reader', 'member', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** True when `held` includes what `needed` may do (admin ⊇ member ⊇ reader). */
export const roleAllows = (held: Role, needed: Role): boolean => ROLES.indexOf(held) >= ROLES.indexOf(needed);

/** A user on a platform (spec "Connection" platforms): the Slack user id (`U…`) or the Discord user snowflake. */
export interface PlatformIdentity {
  platform: 'platform_a' | 'platform_b';
  user_id: string;
}

/**
 * `<platform>:<user id>` (e.g. `platform_a:U024BE7LH`, as the bot's `x-atlas-platform-user` header and
 * `atlas keys create --identity` spell it) as an identity; null when it is not that form.
 */
export const parsePlatformIdentity = (v: string | undefined): PlatformIdentity | null => {
  const m = /^(platform_a|platform_b):([A-Za-z0-9._-]{1,64})$/.exec(v ?? '');
  return m ? { platform: m[1] as PlatformIdentity['platform'], user_id: m[2]! } : null;
};

/**
 * What a key may see besides its role: the connections and/or channels named (null: no limit of that kind). A channel
 * is within scope when it is named in `channels`, or belongs to a connection named in `connections` (both given: either).
 */
export interface KeyScope {
  connections: string[] | null;
  channels: string[] | null;
}

/**
 * The caller of a request.
 * - `key`: an API key (its id and name; `identity` when bound to a platform user; `scope` when limited).
 * - `bootstrap`: the ATLAS_ADMIN_API_KEY from the environment (role admin, sees every channel).
 * - `bridge`: the bot, authenticated by BRIDGE_API_KEY, acting for `identity` (the platform user who invoked it) with
 *   role member.
 * - `local`: no key configured and a loopback HOST: the open local default (role admin, sees every channel).
 */
export interface Principal {
  kind: 'key' | 'bootstrap' | 'bridge' | 'local';
  /** The key's id (kind `key`), else null. */
  key_id: string | null;
  /** A name for logs and the audit trail: the key's name, `bootstrap`, `bridge:<platform>:<user>`, `local`. */
  name: string;
  role: Role;
  identity: PlatformIdentity | null;
  scope: KeyScope | null;
}

/**
 * The channel-access read model (channel membership as the platforms report it, refreshed on every sync, hourly and
 * by POST /api/admin/acl/refresh). Only private channels are restricted: a channel with no membership record, or a
 * public one, is visible to every principal that may read (within its key scope).
 */
export interface ChannelAccessView {
  /**
   * The private channels `identity` may NOT see at `now`: every private channel whose membership list does not hold
   * the identity, every private channel when `identity` is null, and every private channel whose membership data is
   * older than two refresh periods (fail closed). Channel ids as Atlas stores them.
   */
  hiddenChannels(identity: PlatformIdentity | null, now?: Date): Promise<Set<string>>;
}
