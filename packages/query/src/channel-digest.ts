import type { DocumentStore, LifecycleStore } from '@atlas/stores';
import { composeDigest, type Digest } from './digest.js';

/** What a channel's digest is read from: its channel row and topic window, and the lifecycle store (absent: topics only). */
export interface DigestSources {
  documents: Pick<DocumentStore, 'getChannel' | 'topicWindow'>;
  lifecycle?: Pick<LifecycleStore, 'list'> | undefined;
}

/** At most this many lifecycle items of one channel go into a digest (the newest first). */
export const DIGEST_ITEMS = 5_000;

/** A channel's digest with its name (null when the channel is unknown). */
export type ChannelDigest = Digest & { channel_name: string | null };

/**
 * The digest of `channelId` for [start, end) (ISO 8601 UTC; docs/digests.md): its lifecycle items opened before `end`
 * with their transitions, and the topic tags of its facts in the period and the one before, through composeDigest.
 * The one reading of a digest: GET /api/channels/{channel_id}/digest, GET /api/digests and the posted digest use it.
 * Throws what the stores throw.
 */
export const channelDigest = async (
  src: DigestSources,
  channelId: string,
  start: string,
  end: string,
): Promise<ChannelDigest> => {
  const [channel, items, topics] = await Promise.all([
    src.documents.getChannel(channelId),
    src.lifecycle
      ? src.lifecycle.list({ channelIds: [channelId], until: end, limit: DIGEST_ITEMS }).then((r) => r.items)
      : Promise.resolve([]),
    src.documents.topicWindow(channelId, start, end),
  ]);
  const channelName = channel?.name ?? null;
  return { ...composeDigest({ channelId, channelName, start, end, items, topics }), channel_name: channelName };
};

/** One day in ms. */
const DAY_MS = 86_400_000;

/** The [start, end) of a digest of `days` days ending at `end` (ISO 8601 UTC). */
export const digestPeriodOf = (end: string | number, days: number): { start: string; end: string } => {
  const e = typeof end === 'number' ? end : Date.parse(end);
  return { start: new Date(e - days * DAY_MS).toISOString(), end: new Date(e).toISOString() };
};
