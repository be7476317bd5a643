import { Cron } from 'croner';
import { z } from 'zod';
import { AtlasError } from './errors.js';

/**
 * Data of `SyncScheduleUpdated` (topic atlas.commands, key channel_id): PUT /api/sync/schedules saved a channel's sync
 * schedule (spec "Sync schedule"). `schedule` is a five-field cron expression read in UTC; `enabled` false keeps it
 * but stops the scheduler from firing it; `updatedAt` (ISO 8601 UTC) is when it was saved: the scheduler never fires
 * a due time before it.
 */
export const SyncScheduleUpdated = z.object({
  channelId: z.string(),
  schedule: z.string(),
  enabled: z.boolean(),
  updatedAt: z.string(),
});
export type SyncScheduleUpdated = z.infer<typeof SyncScheduleUpdated>;

/**
 * A validated sync schedule (spec "Sync schedule": "cron-style string of five fields"): minute, hour, day of month,
 * month, day of week, in UTC (croner, `5-part` mode; ranges, lists, steps, names such as `mon-fri` and `L` work).
 * Throws AtlasError INVALID_REQUEST naming the problem when the expression is not five fields or croner refuses it.
 */
export const parseSchedule = (expr: string): Cron => {
  const fields = expr.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5)
    throw new AtlasError(
      'INVALID_REQUEST',
      `schedule must be a five-field cron expression (minute hour day-of-month month day-of-week), got ${fields.length} field(s): '${expr}'`,
      { details: { issues: [{ path: 'body.schedule', message: 'five cron fields expected' }] } },
    );
  try {
    return new Cron(fields.join(' '), { timezone: 'UTC', mode: '5-part', paused: true });
  } catch (err) {
    throw new AtlasError(
      'INVALID_REQUEST',
      `invalid cron expression '${expr}': ${err instanceof Error ? err.message : String(err)}`,
      { details: { issues: [{ path: 'body.schedule', message: 'invalid cron expression' }] } },
    );
  }
};

/** The first time `expr` fires strictly after `after` (UTC), or null when it never fires again. Throws as parseSchedule. */
export const nextScheduleRun = (expr: string, after: Date): Date | null => parseSchedule(expr).nextRun(after);

/**
 * The latest time `expr` fires at or before `at` and strictly after `since` (UTC), or null when it did not fire in
 * that window: the due time a scheduler that last looked at `since` owes. Throws as parseSchedule.
 */
export const dueScheduleRun = (expr: string, at: Date, since: Date): Date | null => {
  // previousRuns counts a run in the reference's own second, so a run exactly at `at` is included.
  const [last] = parseSchedule(expr).previousRuns(1, new Date(at.getTime() + 1));
  return last && last.getTime() > since.getTime() && last.getTime() <= at.getTime() ? last : null;
};
