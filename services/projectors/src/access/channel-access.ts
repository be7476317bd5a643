import { TOPICS } from '@atlas/core';
import type { Projector } from '@atlas/eventlog';
import type { ChannelAccessStore } from '@atlas/stores';

/**
 * ChannelMembershipObserved (atlas.access) → the channel-access read model (ChannelAccessStore, docs/access.md
 * "Channel access"). Idempotent: per channel the observation with the latest observedAt wins (an import never replaces
 * one read from the platform), so redelivery and replay end equal.
 */
export const channelAccessProjector: Projector<{ access: ChannelAccessStore }, 'ChannelMembershipObserved'> = {
  name: 'channel-access',
  topics: [TOPICS.access],
  handles: ['ChannelMembershipObserved'],
  reset: ({ access }) => access.truncate(),
  handle: (events, { access }) => access.apply(events),
};
