import { describe, expect, it } from 'vitest';
import { freshnessOf, freshnessText, freshnessTime, withSummary } from './freshness.js';

const now = new Date('2026-11-29T15:30:00Z');

describe('freshnessText (issue 27 point 3)', () => {
  it('says the time alone on the same day, with the pending count while behind', () => {
    expect(freshnessText({ current_to: '2026-11-29T14:02:10Z', pending_messages: 0 }, { now, timeZone: 'UTC' })).toBe(
      'current to 14:02',
    );
    expect(freshnessText({ current_to: '2026-11-29T14:02:10Z', pending_messages: 3 }, { now, timeZone: 'UTC' })).toBe(
      'current to 14:02, 3 messages still being read',
    );
    expect(freshnessText({ current_to: '2026-11-29T14:02:10Z', pending_messages: 1 }, { now, timeZone: 'UTC' })).toBe(
      'current to 14:02, 1 message still being read',
    );
  });

  it('adds the day in the same year and the year before it, in the reader time zone', () => {
    expect(freshnessTime('2026-03-03T09:05:00Z', { now, timeZone: 'UTC' })).toBe('3 Mar 09:05');
    expect(freshnessTime('2018-02-01T23:59:00Z', { now, timeZone: 'UTC' })).toBe('1 Feb 2018 23:59');
    // 23:59 UTC on 1 Feb is 00:59 on 2 Feb in Paris
    expect(freshnessTime('2018-02-01T23:59:00Z', { now, timeZone: 'Europe/Paris' })).toBe('2 Feb 2018 00:59');
  });

  it('says nothing read yet before any message is stored', () => {
    expect(freshnessText({ current_to: null, pending_messages: 0 })).toBe('nothing read yet');
    expect(freshnessText({ current_to: null, pending_messages: 1200 })).toBe(
      'nothing read yet, 1,200 messages still being read',
    );
  });
});

describe('freshnessOf', () => {
  it('takes the newest channel time and sums the pending messages', () => {
    const f = freshnessOf([
      { channel_id: 'a', newest_message_at: '2026-11-29T10:00:00.000Z', pending_messages: 2 },
      { channel_id: 'b', newest_message_at: '2026-11-29T14:02:00.000Z', pending_messages: 0 },
      { channel_id: 'c', newest_message_at: null, pending_messages: 5 },
    ]);
    expect(f).toMatchObject({ current_to: '2026-11-29T14:02:00.000Z', pending_messages: 7, behind: true });
    expect(withSummary(f, now).summary).toBe('current to 14:02 UTC, 7 messages still being read');
    expect(withSummary(freshnessOf([]), now)).toEqual({
      current_to: null,
      pending_messages: 0,
      behind: false,
      channels: [],
      summary: 'nothing read yet',
    });
  });
});
