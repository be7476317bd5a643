// Meetings (spec "Graph entity": Meeting).

import { wordSet } from '../../facts/lexicon.js';
import { findEvents } from './events.js';
import type { MeetingSpan } from './spans.js';
import { DAY_RE, esc, upperFirst, WEEKDAYS } from './text.js';

const CONFERENCES: ReadonlyMap<string, string> = new Map(
  [
    'Clojure/conj',
    'Clojure/West',
    'Clojure/north',
    'Clojure/south',
    'EuroClojure',
    'clojureD',
    'ClojuTRE',
    'Dutch Clojure Days',
    'Clojure Days',
    'ClojureX',
    'Clojure eXchange',
    're:Clojure',
    'IN/Clojure',
    'Clojure Sync',
    'Clojure Remote',
    'Strange Loop',
    'Curry On',
    'LambdaConf',
    'Lambda World',
    'QCon',
    'JavaOne',
    'JSConf',
    'React Conf',
    'PyCon',
    'RubyConf',
    'KubeCon',
    're:Invent',
    'Devoxx',
    'FOSDEM',
    'ETHGlobal',
    'ETHDenver',
    'Devcon',
  ]
    .map((n): [string, string] => [n.toLowerCase(), n])
    .concat([
      ['strangeloop', 'Strange Loop'],
      ['the conj', 'Clojure/conj'],
      ['clojure conj', 'Clojure/conj'],
      ['clojure west', 'Clojure/West'],
    ]),
);
const CONFERENCE_RE = new RegExp(
  `(?<![\\w/:])(${[...CONFERENCES.keys()]
    .sort((a, b) => b.length - a.length)
    .map(esc)
    .join('|')})(?:\\s+(20\\d\\d|'\\d\\d))?(?![\\w/])`,
  'gi',
);
const KIND_WORD =
  /(?<![\w:/-])(stand-?ups?|retrospectives?|retros?|syncs?|meetings?|calls?|meetups?|conferences?|confs?|summits?|workshops?|hackathons?|demo days?|planning|1:1s?|one-on-ones?)(?![\w/]|:\d|-\w)/gi;
const KIND_CANON: Record<string, string> = {
  standup: 'standup',
  'stand-up': 'standup',
  retro: 'retrospective',
  retrospective: 'retrospective',
  sync: 'sync',
  meeting: 'meeting',
  call: 'call',
  meetup: 'meetup',
  conference: 'conference',
  conf: 'conference',
  summit: 'conference',
  workshop: 'workshop',
  hackathon: 'hackathon',
  'demo day': 'demo day',
  planning: 'planning',
  '1:1': '1:1',
  'one-on-one': '1:1',
};
const NAMEABLE_KINDS = new Set(['meetup', 'conference', 'workshop', 'hackathon', 'meeting', 'demo day']);
const MEETING_QUALIFIERS = new Set([
  'weekly',
  'daily',
  'monthly',
  'quarterly',
  'team',
  'sprint',
  'release',
  'design',
  'board',
  'all-hands',
]);
/** Kinds that are also ordinary programming words: they count only after one of these words. */
const GUARDED: Record<string, ReadonlySet<string>> = {
  call: wordSet(
    'video conference zoom phone skype hangout hangouts team weekly daily sales quick standup planning sync group',
  ),
  sync: wordSet('weekly daily monthly team quick our their standup'),
  planning: wordSet('sprint release quarterly weekly roadmap capacity the our their'),
  retrospective: wordSet('the our their a sprint team weekly monthly'),
  '1:1': wordSet('a the our my their weekly monthly'),
};
export const MEETING_PARTICIPATION =
  /\b(attend(?:s|ed|ing)?|speak(?:s|ing)?|spoke|present(?:s|ed|ing)?|talk(?:s|ed|ing)? at|giv(?:e|es|ing) a talk|gave a talk|will be at|be at|was at|were at|is at|went to|going to|go to|join(?:s|ed|ing)?|host(?:s|ed|ing)?|co-?organi[sz](?:e|es|ed|ing)|organi[sz](?:e|es|ed|ing)|run(?:s|ning)?|ran|held|hold(?:s|ing)?|see (?:you|everyone) at|had|have)\b/gi;
export const NEGATION =
  /\b(not|never|no|can'?t|cannot|won'?t|couldn'?t|didn'?t|doesn'?t|don'?t|isn'?t|wasn'?t|unable)\b/i;

const weekdayOf = (ts: string, plusDays: number): string =>
  WEEKDAYS[new Date(new Date(ts).getTime() + plusDays * 86_400_000).getUTCDay()]!;

/** The weekday a word names (`Monday`, `Monday's`, `today`, `tomorrow`, relative to the message), else null. */
const dayWord = (w: string, ts: string): string | null => {
  const lw = w.toLowerCase().replace(/['’]s$/, '');
  if (new RegExp(`^${DAY_RE}$`).test(lw)) return upperFirst(lw);
  if (lw === 'today' || lw === 'tonight') return weekdayOf(ts, 0);
  if (lw === 'tomorrow') return weekdayOf(ts, 1);
  return null;
};

/**
 * Meetings a text names. Named ones keep their name (`Clojure/West`, `EuroClojure 2014`, `Bristol Clojure Meetup`,
 * `FP meetup`); a generic one is named by its kind plus a qualifier or day when stated (`Monday standup`,
 * `weekly sync`, `sprint planning`; `today`/`tomorrow` become the weekday of `ts`). Words that are also
 * programming words (call, sync, planning, retro, 1:1) count only after a meeting-like qualifier.
 */
export const findMeetings = (text: string, ts: string): MeetingSpan[] => {
  const out: MeetingSpan[] = [];
  for (const m of text.matchAll(CONFERENCE_RE)) {
    const base = CONFERENCES.get(m[1]!.toLowerCase()) ?? m[1]!;
    const name = m[2] ? `${base} ${m[2]}` : base;
    out.push({ name, index: m.index, end: m.index + m[0].length, kind: 'conference', named: true });
  }
  for (const m of text.matchAll(KIND_WORD)) {
    const start = m.index;
    const end = start + m[0].length;
    if (out.some((o) => start < o.end && end > o.index)) continue;
    const written = m[1]!;
    const kind =
      KIND_CANON[
        written
          .toLowerCase()
          .replace(/s$/, '')
          .replace(/^retros$/, 'retro')
      ] ?? '';
    if (!kind) continue;
    const before = text.slice(0, start);
    const prevWords = before.match(/([\p{L}\p{N}'’:-]+)\s+$/u);
    const prev = (prevWords?.[1] ?? '').toLowerCase();
    const next =
      text
        .slice(end)
        .match(/^\s+([\p{L}\p{N}:'-]+)/u)?.[1]
        ?.toLowerCase() ?? '';
    if (/^(to|of|site|stack|back|graph|chain|with|by|for)$/.test(next) && kind !== 'meeting' && kind !== 'meetup') {
      if (!(kind === 'sync' || kind === '1:1') || next !== 'with') {
        if (GUARDED[kind] && !(kind === 'call' && next === 'with')) continue;
      }
    }
    if (/^[(.]/.test(text.slice(end)) && kind === 'call') continue;
    if (kind === 'conference' && next === 'call') continue;
    if (KIND_CANON[prev.replace(/s$/, '')] && ['meeting', 'call', 'sync'].includes(kind)) continue; // "standup meeting"
    const prevDay = dayWord(prev, ts);
    const guard = GUARDED[kind];
    if (
      guard &&
      !prevDay &&
      !guard.has(prev) &&
      !(/^(a|the|our|their)$/.test(prev) && /^(with|tomorrow|today|at|on)$/.test(next))
    )
      continue;
    if (kind === 'planning' && /^(to|on|for|of)$/.test(next)) continue;
    // A named meeting: capitalised words right before the kind (`Bristol Clojure Meetup`, `FP meetup`).
    const prefix: string[] = [];
    if (NAMEABLE_KINDS.has(kind)) {
      const words = before.trimEnd().split(/\s+/);
      for (let i = words.length - 1; i >= 0 && prefix.length < 4; i--) {
        const w = words[i]!;
        if (!/^(\p{Lu}[\p{L}\p{N}'&.-]*|\p{Lu}{2,})$/u.test(w) || /[.,;:!?]$/.test(w) || dayWord(w, ts)) break;
        if (/^(The|A|An|Our|Their|My|This|Next|Last|That)$/.test(w)) break;
        prefix.unshift(w);
      }
      if (prefix.length > 0 && before.trimEnd().length - prefix.join(' ').length <= 0) prefix.length = 0; // text start
    }
    if (prefix.length > 0) {
      const index = before.trimEnd().length - prefix.join(' ').length;
      out.push({ name: `${prefix.join(' ')} ${written.replace(/s$/, '')}`, index, end, kind, named: true });
      continue;
    }
    let qualifier = prevDay ?? (MEETING_QUALIFIERS.has(prev) ? prev : null);
    if (!qualifier) {
      const after = text
        .slice(end, end + 36)
        .match(
          new RegExp(
            `^\\s+(?:(?:is|was|will be|moved to|on|this|next|with\\s+[\\p{L}\\p{N}._-]+)\\s+){0,3}(${DAY_RE}|today|tomorrow)\\b`,
            'iu',
          ),
        );
      if (after) qualifier = dayWord(after[1]!, ts);
    }
    const name = qualifier ? `${qualifier} ${kind}` : kind;
    const index = qualifier && (prevDay || MEETING_QUALIFIERS.has(prev)) ? start - prev.length - 1 : start;
    out.push({ name, index, end, kind, named: false });
  }
  // community events: new phrases, or a qualified name for a bare generic one ("counseling workshop")
  for (const ev of findEvents(text)) {
    const { governed: _governed, ...span } = ev;
    const clash = out.findIndex((o) => ev.index < o.end && ev.end > o.index);
    if (clash < 0) out.push(span);
    else if (!out[clash]!.named && out[clash]!.name === out[clash]!.kind && ev.name !== out[clash]!.name)
      out[clash] = span;
  }
  return out.sort((a, b) => a.index - b.index);
};
