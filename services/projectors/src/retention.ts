import { cronJob, type NewEvent, TOPICS } from '@atlas/core';
import type { DocumentStore } from '@atlas/stores';
import { awaitChannelPosition, type ChannelCommandDeps } from './channel-commands.js';

/** What a retention pass reads and appends: expired messages from the documents, MessageDeleted on the log. */
export interface RetentionDeps extends ChannelCommandDeps {
  documents: Pick<DocumentStore, 'channelsWithRetention' | 'messagesBefore'>;
}

const DAY_MS = 86_400_000;
/** MessageDeleted events appended per append (one channel at a time). */
const CHUNK = 500;

export interface RetentionResult {
  /** Channels with a retention_days setting. */
  channels: number;
  /** MessageDeleted events appended. */
  deleted: number;
}

/**
 * One retention pass (spec "Channel settings" retention_days): for every channel whose retention_days is set, appends
 * a MessageDeleted (deletedAt = `now`) for each live message whose message time is more than retention_days before
 * `now`, so the message is hidden and its facts are retracted from every store (documents, keyword index, vectors,
 * graph; its wiki marked stale) like any platform deletion. After each chunk of 500 it waits until the documents
 * projector has applied it (so the next read does not see those messages again). At most `maxPerChannel` messages
 * per channel per pass (default 10,000; the rest next time). Throws what the stores and the log throw, and
 * AtlasError STORE_UNAVAILABLE when the documents projector does not catch up within `timeoutMs` (default 60 s).
 */
export const runRetentionPass = async (
  deps: RetentionDeps,
  opts: { now?: Date; maxPerChannel?: number; timeoutMs?: number } = {},
): Promise<RetentionResult> => {
  const now = opts.now ?? new Date();
  const max = opts.maxPerChannel ?? 10_000;
  const channels = await deps.documents.channelsWithRetention();
  let deleted = 0;
  for (const { channelId, retentionDays } of channels) {
    const cutoff = new Date(now.getTime() - retentionDays * DAY_MS).toISOString();
    for (let done = 0; done < max; ) {
      const expired = await deps.documents.messagesBefore(channelId, cutoff, Math.min(CHUNK, max - done));
      if (expired.length === 0) break;
      const events: NewEvent<'MessageDeleted'>[] = expired.map((m) => ({
        type: 'MessageDeleted',
        key: channelId,
        data: {
          messageId: m.messageId,
          platform: m.platform,
          channelId,
          platformMessageId: m.platformMessageId,
          deletedAt: now.toISOString(),
        },
      }));
      const positions = await deps.eventLog.append(TOPICS.messages, events);
      const last = positions[positions.length - 1]!;
      await awaitChannelPosition(
        deps,
        channelId,
        { partition: last.partition, offset: last.offset + 1 },
        { projectors: ['documents'], depth: 1, timeoutMs: opts.timeoutMs ?? 60_000 },
      );
      done += expired.length;
      deleted += expired.length;
    }
  }
  return { channels: channels.length, deleted };
};

/** A running retention schedule. */
export interface RetentionScheduler {
  /** The next pass, or null when disabled. */
  nextRun(): Date | null;
  stop(): void;
}

/**
 * Runs runRetentionPass at `cron` (five fields, UTC; `off` disables it; croner, passes never overlap). Failures are
 * logged and the next pass tries again. Throws AtlasError INVALID_REQUEST on an invalid expression.
 */
export const startRetentionScheduler = (
  deps: RetentionDeps,
  opts: { cron: string; log?: { info(msg: string): void; warn(msg: string): void } },
): RetentionScheduler => {
  if (opts.cron.trim() === 'off') return { nextRun: () => null, stop: () => undefined };
  const job = cronJob(opts.cron, { name: 'RETENTION_CRON' }, async () => {
    try {
      const r = await runRetentionPass(deps);
      if (r.deleted > 0) opts.log?.info(`retention: ${r.deleted} message(s) deleted in ${r.channels} channel(s)`);
    } catch (err) {
      opts.log?.warn(`retention pass failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return { nextRun: () => job.nextRun(), stop: () => job.stop() };
};
