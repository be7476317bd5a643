import * as chrono from 'chrono-node';

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** `d Month yyyy` of a UTC date (the form extractive answers use for dates). */
export const dayText = (d: Date): string => `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;

/**
 * When what a fact says happened, as the opening of a `when` answer: the fact's own time expression resolved
 * against the date of its message (chrono-node, English, UTC, past-leaning), at the precision the expression has:
 * - a day ("yesterday", "two days ago", "this morning", "on 3 March"): `On 24 May 2023`;
 * - a weekday ("last Sunday", "on Friday"): `On Sunday, 21 May 2023` (the nearest one before the message, or after
 *   it for "next …"); a weekend: `On the weekend before 25 May 2023` (or after, or of);
 * - a week ("last week", "a few weeks ago", "next week"): `In the week before 25 May 2023`, `A few weeks before 25 May
 *   2023`, `In the week after 25 May 2023`;
 * - a month ("next month", "in June"): `In June 2023`; a year ("last year", "ten years ago", "in 2022"): `In 2022`.
 * With no time expression in the text (or none chrono reads): `On <message date>`, the message's own day.
 * `messageTs` is an ISO 8601 timestamp.
 */
export function whenOf(text: string, messageTs: string): string {
  const sent = new Date(messageTs);
  const fallback = `On ${dayText(sent)}`;
  if (Number.isNaN(sent.getTime())) return fallback;
  const yearOnly = /\b(?:in|of|during|since)\s+((?:19|20)\d\d)\b/i.exec(text);
  const found = chrono.parse(text, { instant: sent, timezone: 0 }, { forwardDate: false })[0];
  if (!found) return yearOnly ? `In ${yearOnly[1]}` : fallback;
  const said = found.text.toLowerCase();
  const d = found.start.date();
  const s = found.start;
  if (/\bweekend\b/.test(said)) {
    if (/\bnext\b/.test(said)) return `On the weekend after ${dayText(sent)}`;
    if (/\b(last|past|previous)\b/.test(said)) return `On the weekend before ${dayText(sent)}`;
    return `On the weekend of ${dayText(d)}`;
  }
  if (/\bweeks?\b/.test(said)) {
    const ago = /^(.*\bweeks?)\s+ago$/.exec(said);
    if (ago) return `${capitalise(ago[1]!)} before ${dayText(sent)}`;
    if (/\bnext\b/.test(said)) return `In the week after ${dayText(sent)}`;
    if (/\b(last|past|previous)\b/.test(said)) return `In the week before ${dayText(sent)}`;
    return `In the week of ${dayText(d)}`;
  }
  if (
    s.isCertain('day') ||
    /\b(yesterday|today|tonight|this morning|this afternoon|this evening|days? ago)\b/.test(said)
  )
    return `On ${dayText(d)}`;
  // A weekday named in full, or shortened after last / next / this / on ("last Fri"); "Sun is shining" is no Sunday.
  if (
    s.isCertain('weekday') &&
    (/\b(sun|mon|tues|wednes|thurs|fri|satur)day\b/.test(said) || /^(last|next|this|on|past|coming)\s/.test(said))
  )
    return `On ${WEEKDAYS[d.getUTCDay()]}, ${dayText(d)}`;
  if (s.isCertain('month')) return `In ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  if (s.isCertain('year')) return `In ${d.getUTCFullYear()}`;
  return fallback;
}

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
