// Small text helpers shared by the offline entity rules: escaping, clipping, words, dates.

export const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** `s` cut to at most `max` characters at a word boundary, with `…` when cut. */
export const clip = (s: string, max: number): string => {
  const t = s.replace(/\s+/g, ' ').trim();
  if (t.length <= max) return t;
  const cut = t.lastIndexOf(' ', max - 1);
  return `${t.slice(0, cut > max * 0.5 ? cut : max - 1).replace(/[\s,;:.-]+$/, '')}…`;
};

/** The YYYY-MM-DD date (UTC) of an ISO 8601 timestamp. */
export const isoDate = (ts: string): string => new Date(ts).toISOString().slice(0, 10);

/** The memory text without the `(in reply to X: "…")` suffix the fact extractor adds to short replies. */
export const factBody = (memoryText: string): string =>
  memoryText.replace(/\s*\(in reply to [^:()]{1,80}: ".*$/s, '').trim();

/** A word of `text` as a whole word (not inside an identifier), case-insensitive; index or -1. */
export const findWord = (text: string, word: string, from = 0): number => {
  const re = new RegExp(`(?<![\\p{L}\\p{N}_@./-])${esc(word)}(?![\\p{L}\\p{N}_]|[./-][\\p{L}\\p{N}])`, 'iu');
  const m = re.exec(text.slice(from));
  return m ? m.index + from : -1;
};

export const upperFirst = (s: string): string => (/^[a-z][a-z]/.test(s) ? s.charAt(0).toUpperCase() + s.slice(1) : s);

/** Regex source of the fact's subject: the author (as memory texts write "I"), `Author and team` ("we"), I, we. */
export const subjectRe = (author: string): string => `(?:${esc(author)}(?:\\s+and\\s+team)?|I|we)`;

/**
 * subjectRe plus `they`: memory texts name the author once and write a later "I" as singular "they" ("Caroline went
 * to the parade and they loved it"), so rules about the author's own doings (participation) read it too.
 */
export const selfSubjectRe = (author: string): string => `(?:${esc(author)}(?:\\s+and\\s+team)?|I|we|they)`;

/** Regex source of the author's possessive in a memory text: `Caroline's`, or `their` after the author was named. */
export const selfPossessiveRe = (author: string): string => `(?:${esc(author)}['’]s|their)`;

export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
export const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
export const DAY_RE = '(?:mon|tues|wednes|thurs|fri|satur|sun)day';
