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
 * Where a cron expression comes from, for its errors: `name` is the setting (`RETENTION_CRON`) or request field
 * (`schedule`); `issuePath` (a request's field, `body.schedule`) adds the spec's `details.issues` to the error and
 * then names the field there instead of in the message.
 */
export interface CronSource {
  name: string;
  issuePath?: string;
}

const cronError = (source: CronSource, message: string, issue: string): AtlasError =>
  source.issuePath
    ? new AtlasError('INVALID_REQUEST', message, { details: { issues: [{ path: source.issuePath, message: issue }] } })
    : new AtlasError('INVALID_REQUEST', message);

/**
 * A five-field cron expression (minute, hour, day of month, month, day of week) read in UTC, as croner's paused
 * job (`nextRun(after)`, `previousRuns(n, before)`); ranges, lists, steps, names such as `mon-fri` and `L` work.
 * With `run`, the job is started instead: `run` is called at each time the expression fires, and a run still going
 * when the next is due makes that one skip (croner `protect`), so runs never overlap; `stop()` ends it.
 * Throws AtlasError INVALID_REQUEST naming `source` when the expression is not five fields or croner refuses it.
 */
export const cronJob = (expr: string, source: CronSource, run?: () => void | Promise<void>): Cron => {
  const fields = expr.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5)
    throw cronError(
      source,
      `${source.name} must be a five-field cron expression (minute hour day-of-month month day-of-week), got ${fields.length} field(s): '${expr}'`,
      'five cron fields expected',
    );
  try {
    return run
      ? new Cron(fields.join(' '), { timezone: 'UTC', mode: '5-part', protect: true }, run)
      : new Cron(fields.join(' '), { timezone: 'UTC', mode: '5-part', paused: true });
  } catch (err) {
    throw cronError(
      source,
      `invalid cron expression '${expr}'${source.issuePath ? '' : ` (${source.name})`}: ${err instanceof Error ? err.message : String(err)}`,
      'invalid cron expression',
    );
  }
};

/**
 * A validated sync schedule (spec "Sync schedule": "cron-style string of five fields"), as cronJob's paused job.
 * Throws AtlasError INVALID_REQUEST naming the problem, with `details.issues` at `body.schedule`.
 */
export const parseSchedule = (expr: string): Cron => cronJob(expr, { name: 'schedule', issuePath: 'body.schedule' });

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
