import { loadConfig, type NewEvent } from '@atlas/core';
import { channelEvent, messageEvent } from '@atlas/stores/testing';
import { openRuntime } from './runtime.js';

/** A fresh in-memory embedded profile for projector tests, with a fast-polling log. */
export const openHarness = async () => {
  const rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://' }), {
    pollIntervalMs: 20,
    sessionTimeoutMs: 1000,
  });
  return { ...rt, log: rt.eventLog };
};

/** A channel discovered and two messages of it (a decision with Kafka by alice, bob on TypeScript and PostgreSQL). */
export const conversation = (ch: string): NewEvent[] => [
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
