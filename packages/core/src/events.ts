import type {
  ChannelDataDeleted,
  ChannelDiscovered,
  ChannelSettingsUpdated,
  DeadLettered,
  EntitiesExtracted,
  FactsExtracted,
  MessageDeleted,
  MessageIngested,
} from './domain.js';
import type { DeadLetterRedriven, StoreWriteApplied, StoreWriteFailed, WriteIntentCreated } from './intents.js';
import type { SyncScheduleUpdated } from './schedule.js';
import type { SyncCancelled, SyncJobUpdated, SyncRequested } from './sync.js';

// Write intents and dead-letter re-drives: their data types and ids (re-exported with the events, see intents.ts).
export * from './intents.js';

/** Topic names (ARCHITECTURE.md "Topics"); every topic is keyed by channel_id unless noted. */
export const TOPICS = {
  commands: 'atlas.commands',
  messages: 'atlas.messages',
  syncJobs: 'atlas.sync-jobs',
  facts: 'atlas.facts',
  graph: 'atlas.graph',
  intents: 'atlas.intents',
  wiki: 'atlas.wiki',
  connections: 'atlas.connections',
  deadLetters: 'atlas.dead-letters',
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
  SyncRequested: SyncRequested;
  SyncCancelled: SyncCancelled;
  SyncJobUpdated: SyncJobUpdated;
  SyncScheduleUpdated: SyncScheduleUpdated;
  WriteIntentCreated: WriteIntentCreated;
  StoreWriteApplied: StoreWriteApplied;
  StoreWriteFailed: StoreWriteFailed;
  DeadLetterRedriven: DeadLetterRedriven;
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

/** Narrowing helper: `isEvent(e, 'MessageIngested')`. */
export const isEvent = <T extends EventType>(e: StoredEvent, type: T): e is StoredEvent<T> => e.type === type;
