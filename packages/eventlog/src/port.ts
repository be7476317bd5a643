import type { AnyStoredEvent, NewEvent } from '@atlas/core';

/** Where a reset moves a consumer group: the first retained offset, the end, or the first event at/after a time (ms). */
export type ResetTarget = 'earliest' | 'latest' | { timestamp: number };

export interface LagRow {
  group: string;
  topic: string;
  partition: number;
  /** Next offset the group will read (Kafka's committed offset); null when the group never committed here. */
  committedOffset: number | null;
  /** Offset the next appended event will get (high watermark). */
  endOffset: number;
  /** endOffset minus committedOffset (minus the earliest offset when never committed). */
  lag: number;
}

export interface SubscribeOptions {
  /** Consumer group id; offsets are committed per group, topic and partition. */
  group: string;
  topics: readonly string[];
  /**
   * Called with events of one partition in offset order. When it resolves, the offset after the
   * batch is committed; when it rejects, nothing is committed and the batch is delivered again
   * after a backoff (at-least-once).
   */
  handler: (batch: AnyStoredEvent[]) => Promise<void>;
  /** Where a group with no committed offset starts: 'earliest' (default) or 'latest'. */
  start?: 'earliest' | 'latest';
  /** At most this many events per batch (default 500). */
  maxBatch?: number;
  /** Called when the handler rejects (before the redelivery backoff). */
  onError?: (err: unknown, batch: AnyStoredEvent[]) => void;
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface Subscription {
  readonly group: string;
  /** Partitions this member owns right now (after the last rebalance). */
  assignment(): TopicPartition[];
  /**
   * Stops fetching. A batch still inside its handler is abandoned: its offset is not committed,
   * so another member of the group gets it again (a crash looks the same to the log).
   */
  stop(): Promise<void>;
}

/**
 * The event log port (ARCHITECTURE.md): topics of partitions, keyed appends, consumer groups with
 * committed offsets, at-least-once delivery, offset resets and lag. Adapters: embedded (a Postgres
 * table log, PGlite or a server) and Kafka. Errors: AtlasError STORE_UNAVAILABLE (retriable) when
 * the backing store is down.
 */
export interface EventLog {
  /** Creates the topics that do not exist yet, with `partitions` each (default: configured count). */
  ensureTopics(topics: readonly { name: string; partitions?: number }[]): Promise<void>;
  /** Appends events; the key picks the partition (murmur2, as Kafka). Embedded: atomic, all or none. */
  append(topic: string, events: readonly NewEvent[]): Promise<{ partition: number; offset: number }[]>;
  subscribe(opts: SubscribeOptions): Promise<Subscription>;
  /** Moves a group's committed offsets on every partition of a topic. */
  resetOffsets(group: string, topic: string, to: ResetTarget): Promise<void>;
  /**
   * Lag of a group on each partition of the topics it has offsets for (or of `topics` when given): end offset minus
   * committed offset. Kafka reads the end offset at the last stable offset (read-committed, what consumers see), which
   * may trail an append's returned offsets for a moment: the commit markers are written after the commit returns.
   */
  lag(group: string, topics?: readonly string[]): Promise<LagRow[]>;
  /**
   * Events of the given `types` on `topic` that `group` has not committed yet, counted by key (the channel on the
   * channel-keyed topics; issue 27 point 3, docs/ask.md "Freshness"). Keys with none are absent. Embedded: exact, one
   * read over each partition's unread window. Kafka: null, since counting by key would mean reading every record of
   * the window (callers fall back to `lag()` of the key's partition, an upper bound).
   */
  pendingByKey(group: string, topic: string, types: readonly string[]): Promise<Map<string, number> | null>;
  /** Partition count of a topic, or null when it does not exist. */
  partitions(topic: string): Promise<number | null>;
  close(): Promise<void>;
}
