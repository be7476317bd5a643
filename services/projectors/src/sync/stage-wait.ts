import type { EventLog } from '@atlas/eventlog';
import { partitionForKey } from '@atlas/eventlog';

/** Thrown by waits when the job's signal aborts (cancel or shutdown); the job reads `signal.reason`. */
const aborted = (signal: AbortSignal): never => {
  throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
};

/** Sleeps `ms`, or rejects as soon as `signal` aborts. */
export const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** The partition of `topic` a channel's events land on (keyed by channel id, as every topic here). */
export const channelPartition = async (eventLog: EventLog, topic: string, channelId: string): Promise<number> =>
  partitionForKey(channelId, (await eventLog.partitions(topic)) ?? 1);

/** The offset the next event appended to `topic`'s `partition` gets (high watermark). */
export const endOffset = async (eventLog: EventLog, group: string, topic: string, partition: number) =>
  (await eventLog.lag(group, [topic])).find((r) => r.partition === partition)?.endOffset ?? 0;

/**
 * Waits until every consumer group in `groups` has consumed `topic`'s `partition` up to `target` (exclusive: the
 * group's committed offset reaches it, or its lag there is 0), polling every `pollMs`. Only what this job appended
 * matters, so a busy partition of other channels does not keep a job waiting. Resolves false after `timeoutMs`
 * (the projectors are not running or are stuck), true when caught up; rejects when `signal` aborts. Lag 0 counts as
 * caught up: on Kafka a transaction marker can hold the end offset one past the last committed event.
 *
 * `opts.onProgress`, when given, is called after each poll with the progress of the slowest group, 0..1: its
 * committed offset's way from where it stood at the first poll to `target` (1 once caught up). It may be async
 * (awaited before the next poll).
 */
export const waitForGroups = async (
  eventLog: EventLog,
  groups: readonly string[],
  topic: string,
  partition: number,
  target: number,
  signal: AbortSignal,
  opts: { pollMs?: number; timeoutMs?: number; onProgress?: (fraction: number) => unknown } = {},
): Promise<boolean> => {
  if (target <= 0 || groups.length === 0) {
    await opts.onProgress?.(1);
    return true;
  }
  const until = Date.now() + (opts.timeoutMs ?? 30 * 60_000);
  const startOf = new Map<string, number>();
  for (;;) {
    if (signal.aborted) aborted(signal);
    let slowest = 1;
    for (const group of groups) {
      const row = (await eventLog.lag(group, [topic])).find((r) => r.partition === partition);
      const committed = row?.committedOffset ?? -1;
      const done = row !== undefined && (committed >= target || row.lag === 0);
      if (done) continue;
      if (!startOf.has(group)) startOf.set(group, Math.min(committed, target));
      const from = startOf.get(group)!;
      slowest = Math.min(slowest, target > from ? Math.max(0, committed - from) / (target - from) : 0);
    }
    await opts.onProgress?.(slowest);
    if (slowest >= 1) return true;
    if (Date.now() > until) return false;
    await pause(opts.pollMs ?? 100, signal);
  }
};
