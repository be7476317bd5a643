import { runsOfType, settingsOfEvent, TOPICS } from '@atlas/core';
import type { Projector } from '@atlas/eventlog';
import type { ChannelDataPart, DocumentStore } from '@atlas/stores';

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
 * ContradictionResolved (atlas.graph) records an admin's resolution of a potential contradiction (first one of an id
 * wins), read with the supersessions (issue 27, point 5). DigestPosted (atlas.messages) keeps the newest digest the bot
 * posted to each channel (issue 27 point 4).
 */
export const documentsProjector: Projector<
  { documents: DocumentStore },
  | 'ChannelDiscovered'
  | 'MessageIngested'
  | 'MessageDeleted'
  | 'FactsExtracted'
  | 'EntitiesExtracted'
  | 'ChannelSettingsUpdated'
  | 'ChannelDataDeleted'
  | 'ContradictionResolved'
  | 'DigestPosted'
> = {
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
    'ContradictionResolved',
    'DigestPosted',
  ],
  reset: ({ documents }) => documents.truncate(),
  async handle(events, { documents }) {
    for (const run of runsOfType(events)) {
      switch (run.type) {
        case 'ChannelDiscovered':
          for (const e of run.events) await documents.upsertChannel(e.data, new Date(e.timestamp));
          break;
        case 'MessageIngested':
          await documents.upsertMessages(run.events.map((e) => e.data));
          break;
        case 'MessageDeleted':
          for (const { data: d } of run.events)
            await documents.markMessageDeleted(d.channelId, d.platformMessageId, d.deletedAt);
          break;
        case 'FactsExtracted':
          await documents.replaceFacts(run.events.map((e) => e.data));
          break;
        case 'EntitiesExtracted':
          await documents.replaceGraphLinks(run.events.map((e) => e.data));
          break;
        case 'ChannelSettingsUpdated':
          for (const e of run.events.filter((x) => x.topic === TOPICS.messages))
            await documents.applyChannelSettings(e.data.channelId, settingsOfEvent(e.data));
          break;
        case 'ContradictionResolved':
          await documents.applyContradictionResolutions(run.events.map((e) => e.data));
          break;
        case 'DigestPosted':
          await documents.recordDigestPosts(run.events.map((e) => e.data));
          break;
        case 'ChannelDataDeleted':
          for (const e of run.events) {
            const part = PART_OF_TOPIC[e.topic];
            if (part) await documents.deleteChannelData(e.data.channelId, part);
          }
          break;
      }
    }
  },
};
