import { TOPICS } from '@atlas/core';
import type { Projector } from '@atlas/eventlog';
import type { StatsStore } from '@atlas/stores';

/**
 * The stats projector (ARCHITECTURE.md "projector: stats ─► counters, activity"): reads the same events as the
 * other read stores and folds them into the stats store (`packages/stores/src/stats`), which serves every
 * /api/stats route (spec "Statistics and health objects", "Activity feed"):
 * ChannelDiscovered, MessageIngested, MessageDeleted (atlas.messages) → channels and messages per author and time;
 * FactsExtracted (atlas.facts) → facts per channel, author, type, importance and topic tag;
 * EntitiesExtracted (atlas.graph) → entities per channel and when each was first seen;
 * SyncJobUpdated (atlas.sync-jobs) → completed syncs and their durations; DeadLettered (atlas.dead-letters) → the
 * dead-letter depth (a DeadLetterRedriven takes one out); ChannelDataDeleted (each topic's copy) deletes the rows
 * that topic wrote. Idempotent (upserts, replace-by-message), so a redelivered batch or a replay gives the same
 * figures.
 */
export const statsProjector: Projector<{ stats: StatsStore }> = {
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
  handle: (events, { stats }) => stats.apply(events),
};
