// Validity end ("until March", "until Friday", "until 2018-03-01").
import { DAY_RE, MONTHS, WEEKDAYS } from './text.js';

/**
 * The end of validity a text states (`until 2018-03-01`, `until March 5`, `until the end of March`, `until Friday`),
 * as YYYY-MM-DD on or after the message date `ts`; null when none is stated. A bare month means its first day
 * ("until March": valid before March), "the end of" a month its last day.
 */
export const statedValidUntil = (text: string, ts: string): string | null => {
  const iso = text.match(/\buntil (\d{4}-\d{2}-\d{2})\b/i);
  if (iso) return iso[1]!;
  const base = new Date(ts);
  const y0 = base.getUTCFullYear();
  const fmt = (d: Date): string => d.toISOString().slice(0, 10);
  const mre = MONTHS.join('|');
  const m = text.match(
    new RegExp(
      `\\buntil (?:(the )?end of )?(?:(\\d{1,2})(?:st|nd|rd|th)? )?(${mre})(?: (\\d{1,2})(?:st|nd|rd|th)?)?(?:,? (\\d{4}))?\\b`,
      'i',
    ),
  );
  if (m) {
    const month = MONTHS.indexOf(m[3]!.toLowerCase());
    const dayOfMonth = Number(m[2] ?? m[4] ?? 0);
    let year = m[5] ? Number(m[5]) : y0;
    const make = (yy: number): Date =>
      m[1] ? new Date(Date.UTC(yy, month + 1, 0)) : new Date(Date.UTC(yy, month, dayOfMonth || 1));
    if (!m[5] && make(year) < new Date(Date.UTC(y0, base.getUTCMonth(), base.getUTCDate()))) year++;
    return fmt(make(year));
  }
  const w = text.match(new RegExp(`\\buntil (?:next )?(${DAY_RE})\\b`, 'i'));
  if (w) {
    const target = WEEKDAYS.findIndex((d) => d.toLowerCase() === w[1]!.toLowerCase());
    const diff = (target - base.getUTCDay() + 7) % 7 || 7;
    return fmt(new Date(base.getTime() + diff * 86_400_000));
  }
  return null;
};
