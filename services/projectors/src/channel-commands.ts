import { AtlasError, type ChannelSettings, DEFAULT_CHANNEL_SETTINGS, type NewEvent, TOPICS } from '@atlas/core';
import { type EventLog, groupOf, partitionForKey } from '@atlas/eventlog';
import type { DocumentStore } from '@atlas/stores';
import { PROJECTORS } from './registry.js';
import { waitForGroups } from './sync/stage-wait.js';

/** What appending and awaiting a channel command reads: the log, and the projectors this deployment runs. */
export interface ChannelCommandDeps {
  /** Where the command is appended, and whose consumer groups' offsets are polled. */
  eventLog: EventLog;
  /** The names of the projectors this deployment runs (read at each wait: only those are awaited). */
  activeProjectors(): readonly string[];
}

/**
 * A channel's settings as the documents projector last applied them (spec "Channel settings": sync_enabled,
 * wiki_enabled, graph_enabled, fact_extraction_enabled, retention_days), the defaults (every flag on, retention null)
 * for a channel the document store does not know yet. The read the sync worker makes before a job: a channel whose
 * sync_enabled is false is not synced. Throws what the document store throws (STORE_UNAVAILABLE, retriable).
 */
export const channelSettings = async (
  deps: { documents: Pick<DocumentStore, 'channelSettings'> },
  channelId: string,
): Promise<ChannelSettings> => (await deps.documents.channelSettings(channelId)) ?? { ...DEFAULT_CHANNEL_SETTINGS };

/** A channel command: appended by the API to atlas.messages, keyed by channel_id. */
export type ChannelCommand = NewEvent<'ChannelDataDeleted'> | NewEvent<'ChannelSettingsUpdated'>;

export interface AwaitOptions {
  /** Give up after this long (ms, default 60,000): AtlasError STORE_UNAVAILABLE (retriable). */
  timeoutMs?: number;
  /** Lag poll interval (ms, default 50). */
  pollMs?: number;
  /** Only these projectors (default: every active one). */
  projectors?: readonly string[];
  /** How many topics of the cascade to follow (default 3: atlas.messages, atlas.facts, atlas.graph). */
  depth?: number;
}

/**
 * The path a channel command takes: read on atlas.messages, forwarded in order by the facts projector to atlas.facts
 * and by the entities projector to atlas.graph (ChannelDataDeleted; ChannelSettingsUpdated stops at atlas.facts).
 */
const CASCADE = [TOPICS.messages, TOPICS.facts, TOPICS.graph] as const;

/**
 * Appends a channel command to atlas.messages and resolves once every projector that reads a topic of its path has
 * applied it there, and so everything before it on the channel's partition (a consumer group's committed offset on
 * that partition is past it). Downstream topics are awaited up to their end offset on the channel's partition taken
 * when their upstream projector had passed the command, which covers the copy it forwarded; so the wait ends under
 * continuous traffic too. Throws AtlasError STORE_UNAVAILABLE (retriable) after `timeoutMs` (the command stays in
 * the log and is applied when the projectors catch up), and what the event log throws.
 */
export const appendChannelCommand = async (
  deps: ChannelCommandDeps,
  command: ChannelCommand,
  opts: AwaitOptions = {},
) => {
  const [pos] = await deps.eventLog.append(TOPICS.messages, [command]);
  await awaitChannelPosition(deps, command.key, { partition: pos!.partition, offset: pos!.offset + 1 }, opts);
};

/**
 * Waits until the projectors reading atlas.messages have committed `at.offset` on `at.partition`, then follows the
 * cascade to atlas.facts and atlas.graph (see appendChannelCommand). `channelId` is the partition key downstream.
 */
export const awaitChannelPosition = async (
  deps: ChannelCommandDeps,
  channelId: string,
  at: { partition: number; offset: number },
  opts: AwaitOptions = {},
): Promise<void> => {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const names = opts.projectors ?? deps.activeProjectors();
  let target = at;
  for (const [i, topic] of CASCADE.slice(0, opts.depth ?? CASCADE.length).entries()) {
    const readers = PROJECTORS.filter((p) => names.includes(p.name) && (p.topics as readonly string[]).includes(topic));
    await waitCommitted(deps.eventLog, readers.map(groupOf), topic, target, deadline, opts.pollMs ?? 50);
    const next = CASCADE[i + 1];
    if (!next || i + 1 >= (opts.depth ?? CASCADE.length)) break;
    // The producer of `next` (facts, entities) read `topic` and has committed past the command, so it has appended
    // what it forwarded: the end offset of `next` now is past that copy.
    const partitions = (await deps.eventLog.partitions(next)) ?? 1;
    const partition = partitionForKey(channelId, partitions);
    const readersNext = PROJECTORS.filter((p) => (p.topics as readonly string[]).includes(next));
    const rows = await deps.eventLog.lag(groupOf(readersNext[0]!), [next]);
    target = { partition, offset: rows.find((r) => r.partition === partition)?.endOffset ?? 0 };
  }
};

/** waitForGroups (the sync stages' wait) with a deadline: STORE_UNAVAILABLE when the groups are not there by then. */
const waitCommitted = async (
  eventLog: EventLog,
  groups: readonly string[],
  topic: string,
  target: { partition: number; offset: number },
  deadline: number,
  pollMs: number,
): Promise<void> => {
  const caughtUp = await waitForGroups(
    eventLog,
    groups,
    topic,
    target.partition,
    target.offset,
    new AbortController().signal,
    { pollMs, timeoutMs: Math.max(0, deadline - Date.now()) },
  );
  if (!caughtUp)
    throw new AtlasError(
      'STORE_UNAVAILABLE',
      `the projectors have not applied the channel command yet (behind on ${topic}); it stays in the log and is applied when they catch up`,
      { retriable: true, details: { groups, topic } },
    );
};
