import { TOPICS } from '@atlas/core';
import type { Projector } from '@atlas/eventlog';
import type { SyncScheduleStore } from '@atlas/stores';

/**
 * SyncScheduleUpdated (atlas.commands) → rows of `sync_schedules` (spec "Sync schedule"). Idempotent: per channel the
 * schedule saved last (updated_at) wins, so redelivery and replay end equal.
 */
export const syncSchedulesProjector: Projector<{ schedules: SyncScheduleStore }, 'SyncScheduleUpdated'> = {
  name: 'sync-schedules',
  topics: [TOPICS.commands],
  handles: ['SyncScheduleUpdated'],
  reset: ({ schedules }) => schedules.truncate(),
  handle: (events, { schedules }) => schedules.apply(events),
};
