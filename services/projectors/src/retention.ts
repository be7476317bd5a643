import { AtlasError, type NewEvent, TOPICS } from '@atlas/core';
import { Cron } from 'croner';
import { awaitChannelPosition } from './channel-commands.js';
import type { Runtime } from './runtime.js';

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
  rt: Runtime,
  opts: { now?: Date; maxPerChannel?: number; timeoutMs?: number } = {},
): Promise<RetentionResult> => {
  const now = opts.now ?? new Date();
  const max = opts.maxPerChannel ?? 10_000;
  const channels = await rt.documents.channelsWithRetention();
  let deleted = 0;
  for (const { channelId, retentionDays } of channels) {
    const cutoff = new Date(now.getTime() - retentionDays * DAY_MS).toISOString();
    for (let done = 0; done < max; ) {
      const expired = await rt.documents.messagesBefore(channelId, cutoff, Math.min(CHUNK, max - done));
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
      const positions = await rt.eventLog.append(TOPICS.messages, events);
      const last = positions[positions.length - 1]!;
      await awaitChannelPosition(
        rt,
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
  rt: Runtime,
  opts: { cron: string; log?: { info(msg: string): void; warn(msg: string): void } },
): RetentionScheduler => {
  if (opts.cron.trim() === 'off') return { nextRun: () => null, stop: () => undefined };
  if (opts.cron.trim().split(/\s+/).length !== 5)
    throw new AtlasError('INVALID_REQUEST', `RETENTION_CRON must be a five-field cron expression: '${opts.cron}'`);
  let job: Cron;
  try {
    job = new Cron(opts.cron, { timezone: 'UTC', protect: true }, async () => {
      try {
        const r = await runRetentionPass(rt);
        if (r.deleted > 0) opts.log?.info(`retention: ${r.deleted} message(s) deleted in ${r.channels} channel(s)`);
      } catch (err) {
        opts.log?.warn(`retention pass failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
  } catch (err) {
    throw new AtlasError('INVALID_REQUEST', `invalid RETENTION_CRON '${opts.cron}': ${String(err)}`);
  }
  return { nextRun: () => job.nextRun(), stop: () => job.stop() };
};
