import type { SyncJobRecord } from '@atlas/stores';
import { describe, expect, it } from 'vitest';
import { jobView } from './routes/sync.js';

/** #help of the olake export: 254 messages kept, most of them thread replies. */
const HELP = 'C081MV728N7';

/** A running job record as the sync-jobs projector stores it. */
const running = (over: Partial<SyncJobRecord>): SyncJobRecord => ({
  job_id: 'job-1',
  channel_id: HELP,
  connection_id: 'conn-1',
  platform: 'platform_a',
  force: false,
  estimated_messages: 100,
  requested_by: 'api',
  requested_at: '2026-01-01T00:00:00.000Z',
  cancel_requested_at: null,
  seq: 5,
  status: 'running',
  stage: 'extracting_facts',
  total_messages: 100,
  processed_messages: 100,
  failing_messages: 0,
  percentage: 50,
  started_at: '2026-01-01T00:00:00.000Z',
  estimated_completion: '2026-01-01T00:00:20.000Z',
  completed_at: null,
  cursor: null,
  messages_synced: 100,
  facts_extracted: 0,
  entities_created: 0,
  error: null,
  updated_at: '2026-01-01T00:00:10.000Z',
  ...over,
});

// Issue 21, point 1, bullet 6: estimated_completion lay in the past while the job still ran (the worker's estimate,
// made at the start of a long stage, went stale), and a finished job echoed a time instead of having none.
describe('sync job estimated_completion (issue 21)', () => {
  it('is never in the past while the job runs: a lapsed estimate is extrapolated from the pace since started_at', () => {
    const now = Date.parse('2026-01-01T00:01:00.000Z'); // 40 s after the stored estimate
    const est = jobView(running({}), now).estimated_completion;
    expect(est).not.toBeNull();
    expect(Date.parse(est!)).toBeGreaterThan(now);
    // 50 % in 60 s: 60 s more at that pace.
    expect(Date.parse(est!)).toBe(now + 60_000);
    // A stored estimate that still lies ahead is kept.
    expect(jobView(running({}), Date.parse('2026-01-01T00:00:15.000Z')).estimated_completion).toBe(
      '2026-01-01T00:00:20.000Z',
    );
  });

  it('is null before any progress, for a queued job and for a finished one; completed_at and error are null while running', () => {
    const now = Date.parse('2026-01-01T00:01:00.000Z');
    expect(jobView(running({ percentage: 0, estimated_completion: null }), now).estimated_completion).toBeNull();
    expect(
      jobView(running({ status: 'queued', stage: null, percentage: 0, estimated_completion: null }), now)
        .estimated_completion,
    ).toBeNull();
    for (const status of ['completed', 'failed', 'cancelled'] as const)
      expect(
        jobView(running({ status, completed_at: '2026-01-01T00:00:30.000Z', percentage: 100 }), now)
          .estimated_completion,
      ).toBeNull();
    const view = jobView(running({}), now);
    expect(view).toHaveProperty('completed_at', null);
    expect(view).toHaveProperty('error', null);
  });
});
