import { describe, expect, it } from 'vitest';
import { AtlasError } from './errors.js';
import { dueScheduleRun, nextScheduleRun, parseSchedule } from './schedule.js';

const at = (iso: string) => new Date(iso);

describe('sync schedule cron helpers (spec "Sync schedule": five fields, UTC)', () => {
  it('accepts five-field expressions only, with a reason for the rest', () => {
    expect(() => parseSchedule('*/15 9-18 * * mon-fri')).not.toThrow();
    for (const bad of ['0 0 * * * *', '* * * *', '61 * * * *', '0 0 32 * *', 'hourly', '']) {
      expect(() => parseSchedule(bad), bad).toThrow(AtlasError);
      try {
        parseSchedule(bad);
      } catch (err) {
        expect((err as AtlasError).code).toBe('INVALID_REQUEST');
      }
    }
  });

  it('next run is strictly after the reference, in UTC', () => {
    expect(nextScheduleRun('0 2 * * *', at('2026-03-02T01:59:59Z'))?.toISOString()).toBe('2026-03-02T02:00:00.000Z');
    expect(nextScheduleRun('0 2 * * *', at('2026-03-02T02:00:00Z'))?.toISOString()).toBe('2026-03-03T02:00:00.000Z');
    expect(nextScheduleRun('30 9 * * mon', at('2026-03-02T10:00:00Z'))?.toISOString()).toBe('2026-03-09T09:30:00.000Z');
  });

  it('the due run is the latest in (since, at]: a run exactly at `at` counts, one exactly at `since` does not', () => {
    const q = '*/15 * * * *';
    expect(dueScheduleRun(q, at('2026-03-02T10:15:00Z'), at('2026-03-02T10:07:00Z'))?.toISOString()).toBe(
      '2026-03-02T10:15:00.000Z',
    );
    expect(dueScheduleRun(q, at('2026-03-02T13:52:00Z'), at('2026-03-02T10:07:00Z'))?.toISOString()).toBe(
      '2026-03-02T13:45:00.000Z',
    );
    expect(dueScheduleRun(q, at('2026-03-02T10:14:59Z'), at('2026-03-02T10:07:00Z'))).toBeNull();
    expect(dueScheduleRun(q, at('2026-03-02T10:20:00Z'), at('2026-03-02T10:15:00Z'))).toBeNull();
  });
});
