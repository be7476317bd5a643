import type { PlatformIdentity } from '@atlas/core';
import type { PlatformClientOptions } from '@atlas/platforms';
import {
  type AclRefreshDeps,
  type AclRefresher,
  refreshChannelMemberships,
  startAclRefresher,
} from '@atlas/projectors';
import { waitForProjectors } from './lag.js';
import type { Runtime } from './runtime.js';
import { syncDepsOf } from './sync-wiring.js';

/**
 * What POST /api/admin/acl/refresh answers (docs/access.md "The ACL refresh"):
 * - `user_id`: as asked; `refreshed_at`: when the platforms were read (ISO 8601 UTC);
 * - `channels_checked`: the selected channels of connected connections whose membership was read or tried;
 * - `private_channels`: how many of them the platforms said are private;
 * - `visible_private_channels`: the private channels (ids) the user may see now, by the read model after the refresh
 *   (a member on its platform, membership younger than two refresh periods), imported ones included;
 * - `failed`: the channels that could not be read and why (spec sync error codes); they keep their last membership;
 * - `caught_up`: false when the read model had not applied the new membership within the wait (5 s; the channel-access
 *   projector runs in another process or none), so `visible_private_channels` may be older than `refreshed_at`.
 */
export interface AclRefreshResult {
  user_id: string;
  refreshed_at: string;
  channels_checked: number;
  private_channels: number;
  visible_private_channels: string[];
  failed: { channel_id: string; code: string }[];
  caught_up: boolean;
}

/** The ACL refresh's dependencies on a runtime: its connections, log, and the sync worker's platform clients. */
export const aclRefreshDepsOf = (
  rt: Runtime,
  over: Partial<AclRefreshDeps> & { client?: PlatformClientOptions } = {},
): AclRefreshDeps => {
  const { client, ...rest } = over;
  return {
    eventLog: rt.eventLog,
    connections: rt.connections,
    platformClient: syncDepsOf(rt, client ? { client } : {}).platformClient,
    ...rest,
  };
};

/**
 * The ACL refresh on demand (POST /api/admin/acl/refresh; docs/access.md): re-reads now the membership of every
 * selected channel of every connected connection (refreshChannelMemberships), waits up to `waitMs` (default 5 s) for
 * the channel-access read model to apply it, and answers what `user_id` may see: on `platform` only when given, else
 * on both (a Slack id and a Discord snowflake cannot collide). Throws only what the stores and the log throw.
 */
export const refreshChannelAccess = async (
  rt: Runtime,
  req: { user_id: string; platform?: PlatformIdentity['platform'] },
  opts: { waitMs?: number; deps?: Partial<AclRefreshDeps> & { client?: PlatformClientOptions } } = {},
): Promise<AclRefreshResult> => {
  const outcome = await refreshChannelMemberships(aclRefreshDepsOf(rt, opts.deps));
  const caught_up = await Promise.race([
    waitForProjectors(rt, ['channel-access'], 20).then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), opts.waitMs ?? 5000).unref()),
  ]);
  const platforms = req.platform ? [req.platform] : (['platform_a', 'platform_b'] as const);
  const visible = new Set<string>();
  for (const platform of platforms)
    for (const id of await rt.access.visiblePrivateChannels({ platform, user_id: req.user_id })) visible.add(id);
  const checked = new Set(outcome.channels.map((c) => c.channel_id));
  const priv = new Set(outcome.channels.filter((c) => c.is_private === true).map((c) => c.channel_id));
  return {
    user_id: req.user_id,
    refreshed_at: outcome.refreshed_at,
    channels_checked: checked.size,
    private_channels: priv.size,
    visible_private_channels: [...visible].sort(),
    failed: outcome.channels
      .filter((c) => c.code !== null)
      .map((c) => ({ channel_id: c.channel_id, code: c.code as string })),
    caught_up,
  };
};

/** Starts the hourly ACL refresh on a runtime (ACL_REFRESH_INTERVAL_MS; beside the sync scheduler). */
export const startRuntimeAclRefresher = (
  rt: Runtime,
  over: Partial<AclRefreshDeps> & { client?: PlatformClientOptions } = {},
): AclRefresher => startAclRefresher(aclRefreshDepsOf(rt, over), { intervalMs: rt.cfg.ACL_REFRESH_INTERVAL_MS });
