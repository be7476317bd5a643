import { describe, expect, it } from 'vitest';
import { AsOf, resolveAsOf } from './as-of.js';

describe('as_of (issue 27 point 2)', () => {
  const now = Date.parse('2026-11-29T12:00:00.000Z');
  it('normalises ISO 8601 dates and date-times to UTC with milliseconds', () => {
    expect(resolveAsOf('2026-06-03', now)).toBe('2026-06-03T00:00:00.000Z');
    expect(resolveAsOf('2026-06-03T10:00Z', now)).toBe('2026-06-03T10:00:00.000Z');
    expect(resolveAsOf('2026-06-03T12:00:00.5+02:00', now)).toBe('2026-06-03T10:00:00.500Z');
  });
  it('clamps a future instant to now', () => {
    expect(resolveAsOf('2999-01-01T00:00:00Z', now)).toBe('2026-11-29T12:00:00.000Z');
  });
  it('refuses what is not an ISO 8601 date or date-time', () => {
    for (const bad of ['yesterday', '1234', '2026-13-45', 'June 3, 2026', '1717400000', ''])
      expect(resolveAsOf(bad, now), bad).toBeNull();
    expect(AsOf.safeParse('soon').success).toBe(false);
    expect(AsOf.parse('2026-06-03')).toBe('2026-06-03T00:00:00.000Z');
  });
});
