import { runsOfType, TOPICS } from '@atlas/core';
import type { Projector } from '@atlas/eventlog';
import type { StatsChannelPart, StatsWriter } from '@atlas/stores';

/** Which part of a channel's stats the copy of ChannelDataDeleted read on each topic deletes. */
const PART_OF_TOPIC: Record<string, StatsChannelPart> = {
  [TOPICS.messages]: 'messages',
  [TOPICS.facts]: 'facts',
  [TOPICS.graph]: 'graph',
};

/**
 * The stats projector (ARCHITECTURE.md "projector: stats ─► counters, activity"): reads the same events as the
 * other read stores and folds them into the stats store (`packages/stores/src/stats`), which serves every
 * /api/stats route (spec "Statistics and health objects", "Activity feed"):
 * ChannelDiscovered, MessageIngested, MessageDeleted (atlas.messages) → channels and messages per author and time;
 * FactsExtracted (atlas.facts) → facts per channel, author, type, importance and topic tag;
 * EntitiesExtracted (atlas.graph) → entities per channel and when each was first seen;
 * SyncJobUpdated (atlas.sync-jobs) → completed syncs and their durations; DeadLettered (atlas.dead-letters) → the
 * dead-letter depth (a DeadLetterRedriven takes one out); ChannelDataDeleted (each topic's copy) deletes the rows
 * that topic wrote. Runs of one type are written in one call, in the batch's order (a deletion between two ingests
 * stays between them). Idempotent (upserts, replace-by-message), so a redelivered batch or a replay gives the same
 * figures.
 */
export const statsProjector: Projector<
  { stats: StatsWriter },
  | 'ChannelDiscovered'
  | 'MessageIngested'
  | 'MessageDeleted'
  | 'FactsExtracted'
  | 'EntitiesExtracted'
  | 'ChannelDataDeleted'
  | 'SyncJobUpdated'
  | 'DeadLettered'
  | 'DeadLetterRedriven'
> = {
  name: 'stats',
  topics: [TOPICS.messages, TOPICS.facts, TOPICS.graph, TOPICS.syncJobs, TOPICS.deadLetters],
  handles: [
    'ChannelDiscovered',
    'MessageIngested',
    'MessageDeleted',
    'FactsExtracted',
    'EntitiesExtracted',
    'ChannelDataDeleted',
    'SyncJobUpdated',
    'DeadLettered',
    'DeadLetterRedriven',
  ],
  reset: ({ stats }) => stats.truncate(),
  async handle(events, { stats }) {
    for (const run of runsOfType(events)) {
      switch (run.type) {
        case 'ChannelDiscovered':
          await stats.upsertChannels(run.events.map((e) => e.data));
          break;
        case 'MessageIngested':
          await stats.upsertMessages(run.events.map((e) => e.data));
          break;
        case 'MessageDeleted':
          for (const e of run.events) await stats.markMessageDeleted(e.data);
          break;
        case 'FactsExtracted':
          await stats.replaceFacts(run.events.map((e) => e.data));
          break;
        case 'EntitiesExtracted':
          await stats.replaceEntities(run.events.map((e) => e.data));
          break;
        case 'ChannelDataDeleted':
          for (const e of run.events) {
            const part = PART_OF_TOPIC[e.topic];
            if (part) await stats.deleteChannelPart(e.data.channelId, part);
          }
          break;
        case 'SyncJobUpdated':
          for (const e of run.events) await stats.recordSyncJob(e.data);
          break;
        case 'DeadLettered':
          for (const e of run.events) await stats.addDeadLetter(e.data);
          break;
        case 'DeadLetterRedriven':
          for (const e of run.events) await stats.markDeadLetterRedriven(e.data);
          break;
      }
    }
  },
};
