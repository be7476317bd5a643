import { z } from 'zod';

/**
 * ISO 8601 date or date-time: `2026-06-03`, `2026-06-03T10:00Z`, `2026-06-03T10:00:00.123+02:00`. A bare date means
 * its first instant in UTC.
 */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * Normalises an `as_of` (issue 27 point 2, "As of a date") to an ISO 8601 UTC timestamp with milliseconds, clamped to
 * `now` (a future as_of answers as now). Returns null for a value that is not an ISO 8601 date or date-time.
 */
export const resolveAsOf = (value: string, now: number = Date.now()): string | null => {
  if (!ISO_8601.test(value.trim())) return null;
  const ms = Date.parse(value.trim());
  if (Number.isNaN(ms)) return null;
  return new Date(Math.min(ms, now)).toISOString();
};

/**
 * The `as_of` parameter of the memories, search, ask, graph and wiki routes (issue 27 point 2): an ISO 8601 date or
 * date-time, parsed into the ISO 8601 UTC timestamp (milliseconds) of that instant, a future one clamped to now.
 * A bad value fails validation, which the API answers 400 INVALID_REQUEST.
 */
export const AsOf = z
  .string()
  .min(1)
  .transform((v, ctx) => {
    const out = resolveAsOf(v);
    if (out === null) {
      ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 date or date-time (e.g. 2026-06-03T10:00:00Z)' });
      return z.NEVER;
    }
    return out;
  });
