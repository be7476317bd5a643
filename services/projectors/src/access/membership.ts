import { AtlasError, type NewEvent } from '@atlas/core';
import type { ChannelMembers, PlatformClient } from '@atlas/platforms';

/** A ChannelMembershipObserved of what listMembers read (`source` sync or refresh), observed at `at`. */
export const membershipEvent = (
  platform: PlatformClient['platform'],
  connectionId: string | null,
  m: ChannelMembers,
  source: 'sync' | 'refresh',
  at: Date,
): NewEvent<'ChannelMembershipObserved'> => ({
  type: 'ChannelMembershipObserved',
  key: m.channel_id,
  data: {
    connectionId,
    platform,
    channelId: m.channel_id,
    isPrivate: m.is_private,
    members: m.is_private ? m.members : null,
    source,
    observedAt: at.toISOString(),
  },
});

/**
 * The channel's membership read through `client`, as an event; when it cannot be read, fail closed: a channel the
 * platform lists as private gets an observation without members (hidden from every identity until a read succeeds),
 * a public one stays public. Never throws; `onError` hears the failure.
 */
export const observeMembership = async (
  client: PlatformClient,
  connectionId: string | null,
  channel: { id: string; is_private: boolean },
  source: 'sync' | 'refresh',
  opts: { now?: () => Date; signal?: AbortSignal; onError?: (err: unknown) => void } = {},
): Promise<NewEvent<'ChannelMembershipObserved'>> => {
  const at = () => opts.now?.() ?? new Date();
  try {
    const m = await client.listMembers(channel.id, opts.signal ? { signal: opts.signal } : {});
    return membershipEvent(client.platform, connectionId, m, source, at());
  } catch (err) {
    opts.onError?.(err);
    const unknown = { channel_id: channel.id, is_private: channel.is_private, members: null };
    return membershipEvent(client.platform, connectionId, unknown, source, at());
  }
};

/** The spec code of an error (an AtlasError's or PlatformError's code), else INTERNAL_ERROR. */
export const codeOf = (err: unknown): string => (err instanceof AtlasError ? err.code : 'INTERNAL_ERROR');
