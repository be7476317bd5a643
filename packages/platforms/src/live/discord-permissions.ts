import { PermissionFlagsBits } from 'discord-api-types/v10';
import { arr, num, str } from '../json.js';

/** Guild-level permissions of a member: @everyone's plus its roles' (research note §8; overwrites not applied). */
export function basePermissions(guild: unknown, member: unknown, guildId: string): bigint {
  const roles = new Map(arr(guild, 'roles').map((r) => [str(r, 'id'), BigInt(str(r, 'permissions') ?? '0')]));
  let perms = roles.get(guildId) ?? 0n;
  for (const id of arr(member, 'roles')) perms |= roles.get(String(id)) ?? 0n;
  return (perms & PermissionFlagsBits.Administrator) !== 0n ? ~0n & 0xffffffffffffn : perms;
}

/**
 * A member's permissions in a channel (Discord's documented algorithm): the guild owner and ADMINISTRATOR have all;
 * else @everyone's and the member's roles' permissions, then the channel's @everyone overwrite, the member's roles'
 * overwrites (their denies, then their allows, together) and the member's own overwrite. `member.id` '' = nobody in
 * particular (what @everyone alone may do).
 */
export function channelPermissions(
  guild: unknown,
  channel: unknown,
  guildId: string,
  member: { id: string; roles: readonly string[] },
): bigint {
  const all = ~0n & 0xffffffffffffn;
  if (member.id !== '' && str(guild, 'owner_id') === member.id) return all;
  let perms = basePermissions(guild, { roles: member.roles }, guildId);
  if ((perms & PermissionFlagsBits.Administrator) !== 0n) return all;
  const overwrites = arr(channel, 'permission_overwrites');
  const bits = (o: unknown, k: 'allow' | 'deny') => BigInt(str(o, k) ?? '0');
  const everyone = overwrites.find((o) => str(o, 'id') === guildId);
  if (everyone) perms = (perms & ~bits(everyone, 'deny')) | bits(everyone, 'allow');
  let allow = 0n;
  let deny = 0n;
  for (const o of overwrites) {
    if (num(o, 'type') !== 0 || str(o, 'id') === guildId || !member.roles.includes(str(o, 'id') ?? '')) continue;
    allow |= bits(o, 'allow');
    deny |= bits(o, 'deny');
  }
  perms = (perms & ~deny) | allow;
  const own = member.id === '' ? undefined : overwrites.find((o) => num(o, 'type') === 1 && str(o, 'id') === member.id);
  if (own) perms = (perms & ~bits(own, 'deny')) | bits(own, 'allow');
  return perms;
}

/** True when the channel's @everyone overwrite denies VIEW_CHANNEL. */
export function everyoneDenied(c: unknown, guildId: string): boolean {
  const ow = arr(c, 'permission_overwrites').find((o) => str(o, 'id') === guildId);
  return ow !== undefined && (BigInt(str(ow, 'deny') ?? '0') & PermissionFlagsBits.ViewChannel) !== 0n;
}
