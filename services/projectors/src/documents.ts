import {
  type ChannelDataDeleted,
  type ChannelDiscovered,
  type ChannelSettingsUpdated,
  type EntitiesExtracted,
  type FactsExtracted,
  type MessageDeleted,
  type MessageIngested,
  type StoredEvent,
  settingsOfEvent,
  TOPICS,
} from '@atlas/core';
import type { Projector } from '@atlas/eventlog';
import type { ChannelDataPart, DocumentStore } from '@atlas/stores';

/** Splits a batch into runs of consecutive events of one type (order between runs is kept). */
export const runsOfType = (events: StoredEvent[]): StoredEvent[][] => {
  const runs: StoredEvent[][] = [];
  for (const e of events) {
    const last = runs[runs.length - 1];
    if (last && last[0]!.type === e.type) last.push(e);
    else runs.push([e]);
  }
  return runs;
};

/** Which part of a channel's rows the copy of ChannelDataDeleted read on each topic deletes. */
const PART_OF_TOPIC: Record<string, ChannelDataPart> = {
  [TOPICS.messages]: 'messages',
  [TOPICS.facts]: 'facts',
  [TOPICS.graph]: 'graph',
};

/**
 * ChannelDiscovered | MessageIngested | MessageDeleted | FactsExtracted | EntitiesExtracted → rows of
 * `channels`, `messages` and `memories`, and each memory's graph links and validity. Idempotent: upserts
 * on platform ids and fact UUIDs; a fact set (or graph contribution) replaces the message's earlier one.
 * A channel's last_sync is the append time of its newest event. ChannelSettingsUpdated (atlas.messages) stores the
 * channel's settings; ChannelDataDeleted deletes, on each topic, the rows that topic's earlier events wrote (messages,
 * memories, graph links), so a fact set still in flight on atlas.facts cannot outlive the deletion.
 */
export const documentsProjector: Projector<{ documents: DocumentStore }> = {
  name: 'documents',
  topics: [TOPICS.messages, TOPICS.facts, TOPICS.graph],
  handles: [
    'ChannelDiscovered',
    'MessageIngested',
    'MessageDeleted',
    'FactsExtracted',
    'EntitiesExtracted',
    'ChannelSettingsUpdated',
    'ChannelDataDeleted',
  ],
  reset: ({ documents }) => documents.truncate(),
  async handle(events, { documents }) {
    for (const run of runsOfType(events)) {
      const type = run[0]!.type;
      if (type === 'ChannelDiscovered') {
        for (const e of run) await documents.upsertChannel(e.data as ChannelDiscovered, new Date(e.timestamp));
      } else if (type === 'MessageIngested') {
        await documents.upsertMessages(run.map((e) => e.data as MessageIngested));
      } else if (type === 'MessageDeleted') {
        for (const e of run) {
          const d = e.data as MessageDeleted;
          await documents.markMessageDeleted(d.channelId, d.platformMessageId, d.deletedAt);
        }
      } else if (type === 'FactsExtracted') {
        await documents.replaceFacts(run.map((e) => e.data as FactsExtracted));
      } else if (type === 'EntitiesExtracted') {
        await documents.replaceGraphLinks(run.map((e) => e.data as EntitiesExtracted));
      } else if (type === 'ChannelSettingsUpdated') {
        for (const e of run.filter((x) => x.topic === TOPICS.messages)) {
          const d = e.data as ChannelSettingsUpdated;
          await documents.applyChannelSettings(d.channelId, settingsOfEvent(d));
        }
      } else if (type === 'ChannelDataDeleted') {
        for (const e of run) {
          const part = PART_OF_TOPIC[e.topic];
          if (part) await documents.deleteChannelData((e.data as ChannelDataDeleted).channelId, part);
        }
      }
    }
  },
};
