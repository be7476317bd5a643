import { TOPICS } from '@atlas/core';
import type { Projector } from '@atlas/eventlog';
import type { SyncStore } from '@atlas/stores';

/**
 * SyncRequested | SyncCancelled (atlas.commands) and SyncJobUpdated (atlas.sync-jobs) → rows of `sync_jobs` and
 * `sync_channels` (spec "Sync job", "Sync history entry"). Idempotent and order-tolerant across the two topics: a
 * job keeps the update with the highest seq, a request only fills the request's fields, a channel's cursor only
 * moves forward.
 */
export const syncJobsProjector: Projector<{ sync: SyncStore }, 'SyncRequested' | 'SyncCancelled' | 'SyncJobUpdated'> = {
  name: 'sync-jobs',
  topics: [TOPICS.commands, TOPICS.syncJobs],
  handles: ['SyncRequested', 'SyncCancelled', 'SyncJobUpdated'],
  reset: ({ sync }) => sync.truncate(),
  handle: (events, { sync }) => sync.apply(events),
};
