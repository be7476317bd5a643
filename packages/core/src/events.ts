import type { AuditRecorded } from './audit.js';
import type { ContradictionResolved } from './contradictions.js';
import type {
  ChannelDataDeleted,
  ChannelDiscovered,
  ChannelSettingsUpdated,
  DeadLettered,
  DigestPosted,
  EntitiesExtracted,
  FactsExtracted,
  MessageDeleted,
  MessageIngested,
} from './domain.js';
import type { DeadLetterRedriven, StoreWriteApplied, StoreWriteFailed, WriteIntentCreated } from './intents.js';
import type { ChannelMembershipObserved } from './membership.js';
import type { SyncScheduleUpdated } from './schedule.js';
import type { SyncCancelled, SyncJobUpdated, SyncRequested } from './sync.js';
import type { WikiRefreshRequested } from './wiki.js';

// Write intents and dead-letter re-drives: their data types and ids (re-exported with the events, see intents.ts).
export * from './intents.js';

/**
 * Topic names (ARCHITECTURE.md "Topics"); every topic is keyed by channel_id unless noted. Only topics some event is
 * appended to are declared (the runtime creates each of them).
 */
export const TOPICS = {
  commands: 'atlas.commands',
  messages: 'atlas.messages',
  syncJobs: 'atlas.sync-jobs',
  facts: 'atlas.facts',
  graph: 'atlas.graph',
  intents: 'atlas.intents',
  deadLetters: 'atlas.dead-letters',
  /** Channel membership read from the platforms (ChannelMembershipObserved), keyed by channel_id. */
  access: 'atlas.access',
  /** The audit trail of the API (AuditRecorded): key use, denials, admin actions; keyed by principal name or address. */
  audit: 'atlas.audit',
} as const;
export type TopicName = (typeof TOPICS)[keyof typeof TOPICS];

/** Event type name → data shape. Adding an event: a schema in schemas/, an entry here. */
export interface EventDataMap {
  ChannelDiscovered: ChannelDiscovered;
  MessageIngested: MessageIngested;
  MessageDeleted: MessageDeleted;
  FactsExtracted: FactsExtracted;
  EntitiesExtracted: EntitiesExtracted;
  DeadLettered: DeadLettered;
  ChannelSettingsUpdated: ChannelSettingsUpdated;
  ChannelDataDeleted: ChannelDataDeleted;
  DigestPosted: DigestPosted;
  SyncRequested: SyncRequested;
  SyncCancelled: SyncCancelled;
  SyncJobUpdated: SyncJobUpdated;
  SyncScheduleUpdated: SyncScheduleUpdated;
  WriteIntentCreated: WriteIntentCreated;
  StoreWriteApplied: StoreWriteApplied;
  StoreWriteFailed: StoreWriteFailed;
  DeadLetterRedriven: DeadLetterRedriven;
  WikiRefreshRequested: WikiRefreshRequested;
  ChannelMembershipObserved: ChannelMembershipObserved;
  AuditRecorded: AuditRecorded;
  ContradictionResolved: ContradictionResolved;
}
export type EventType = keyof EventDataMap;

/** An event as written by a producer: type, partition key and data. */
export interface NewEvent<T extends EventType = EventType> {
  type: T;
  key: string;
  data: EventDataMap[T];
}

/** An event as read back from a topic, with its position and system time. */
export interface StoredEvent<T extends EventType = EventType> extends NewEvent<T> {
  topic: string;
  partition: number;
  offset: number;
  /** Append time, ms since epoch (system time, not world time). */
  timestamp: number;
}

/**
 * One stored event of any of the types `T` (default: every type), as a discriminated union on `type`: `switch (e.type)`
 * narrows `e.data` to that type's shape (emmett's `ReadEvent` union). What the log hands a subscriber.
 */
export type AnyStoredEvent<T extends EventType = EventType> = { [K in T]: StoredEvent<K> }[T];

/** A new event of any of the types `T`, as a discriminated union on `type` (see AnyStoredEvent). */
export type AnyNewEvent<T extends EventType = EventType> = { [K in T]: NewEvent<K> }[T];

/** Consecutive events of one type: `switch (run.type)` narrows `run.events`. */
export type EventRun<T extends EventType = EventType> = { [K in T]: { type: K; events: StoredEvent<K>[] } }[T];

/** Narrowing helper: `isEvent(e, 'MessageIngested')`. */
export const isEvent = <T extends EventType>(e: StoredEvent, type: T): e is StoredEvent<T> => e.type === type;

/**
 * Splits a batch into runs of consecutive events of one type, in order (a projector writes a run in one call).
 * Pure; an empty batch gives no runs.
 */
export const runsOfType = <T extends EventType>(events: readonly AnyStoredEvent<T>[]): EventRun<T>[] => {
  const runs: { type: EventType; events: StoredEvent[] }[] = [];
  for (const e of events) {
    const last = runs[runs.length - 1];
    if (last && last.type === e.type) last.events.push(e);
    else runs.push({ type: e.type, events: [e] });
  }
  // Every event of a run has the run's type, so each run is one member of the union.
  return runs as EventRun<T>[];
};
