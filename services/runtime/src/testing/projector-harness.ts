import { type EventDataMap, type EventType, loadConfig, type NewEvent, type StoredEvent, TOPICS } from '@atlas/core';
import { channelEvent, messageEvent } from '@atlas/stores/testing';
import { openRuntime } from '../open.js';

/** A fresh in-memory embedded profile for the projectors' tests, with a fast-polling log (`log`: its event log). */
export const openProjectorHarness = async () => {
  const rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://' }), {
    pollIntervalMs: 20,
    sessionTimeoutMs: 1000,
  });
  return { ...rt, log: rt.eventLog };
};

/** A channel discovered and two messages of it (a decision with Kafka by alice, bob on TypeScript and PostgreSQL). */
export const twoMessageConversation = (
  ch: string,
): [NewEvent<'ChannelDiscovered'>, NewEvent<'MessageIngested'>, NewEvent<'MessageIngested'>] => [
  { type: 'ChannelDiscovered', key: ch, data: channelEvent(ch, 'platform') },
  {
    type: 'MessageIngested',
    key: ch,
    data: messageEvent(ch, 1_700_000_000, 'We decided to use Kafka for the event log, it replaces our cron jobs.'),
  },
  {
    type: 'MessageIngested',
    key: ch,
    data: messageEvent(ch, 1_700_000_600, 'I am working on the ingest service in TypeScript with PostgreSQL.', {
      author: { id: 'U2', name: 'bob', isBot: false },
    }),
  },
];

/** Wraps data as the log would deliver it from `topic` (default messages) at `offset` of partition 0, key `k`. */
export const delivered = <T extends EventType>(
  type: T,
  data: EventDataMap[T],
  topic: string = TOPICS.messages,
  offset = 0,
): StoredEvent<T> => ({
  topic,
  partition: 0,
  offset,
  key: 'k',
  type,
  data,
  timestamp: Date.parse('2024-05-01T00:00:00Z'),
});
