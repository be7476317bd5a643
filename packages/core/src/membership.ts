import { z } from 'zod';

/**
 * Data of `ChannelMembershipObserved` (atlas.access, key channel_id): who could see a channel on its platform when
 * Atlas last looked (docs/access.md "Channel access"). Appended on every sync of the channel (`sync`), by the hourly
 * and on-demand ACL refresh (`refresh`), and by an import (`import`). The channel-access projector keeps the latest
 * observation per channel (by `observedAt`).
 * - `connectionId`: the connection it was read through; null for an import.
 * - `isPrivate`: false → the channel is visible to every principal that may read (members is then null).
 * - `members`: the platform user ids that can see a private channel (Slack `U…`, Discord user snowflakes), sorted and
 *   unique; null = public to the workspace (a public channel, or an export that lists no members).
 * - `observedAt`: when the membership was read (ISO 8601 UTC); the read model fails closed on private channels whose
 *   latest observation is older than two ACL refresh periods.
 */
export const ChannelMembershipObserved = z.object({
  connectionId: z.string().nullable(),
  platform: z.enum(['platform_a', 'platform_b']),
  channelId: z.string().min(1),
  isPrivate: z.boolean(),
  members: z.array(z.string()).nullable(),
  source: z.enum(['sync', 'refresh', 'import']),
  observedAt: z.string(),
});
export type ChannelMembershipObserved = z.infer<typeof ChannelMembershipObserved>;
