import type { Freshness, FreshnessPort } from '@atlas/core';

/**
 * The `freshness` member of a response (issue 27 point 3; docs/ask.md "Freshness"), or nothing without a reader. A
 * channel-scoped read marks its channel; a read over every channel marks `drawn` (the channels its results come from)
 * and every channel of the caller's scope still being read: `visible` (a restricted caller's channels), else all.
 */
export const freshnessMark = async (
  port: FreshnessPort | null | undefined,
  channelId: string | null,
  drawn: readonly string[],
  visible?: readonly string[] | null,
): Promise<{ freshness?: Freshness }> => {
  if (!port) return {};
  if (channelId) return { freshness: await port.of({ channels: [channelId] }) };
  return { freshness: await port.of({ channels: [...new Set(drawn)], behindIn: visible ?? 'all' }) };
};
