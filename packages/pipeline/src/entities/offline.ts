import {
  type EntityType,
  type ExtractedEntity,
  type ExtractedRelationship,
  entityUuid,
  type Fact,
  normalizeEntityName,
  type RelationshipType,
} from '@atlas/core';
import nlp from 'compromise';
import { classify } from '../classify.js';
import { GENERIC_NOUNS, isNameWord, lexTag, STOPWORDS, TECH } from '../lexicon.js';
import { extractTags } from '../tags.js';
import { findOwnerChanges, type KnownOwner, ownershipOf } from './ownership.js';
import type { EntityExtraction, EntityExtractionInput, EntityExtractor, KnownDecision, KnownPerson } from './port.js';
import { findSupersessions, type NewDecision } from './supersede.js';

/**
 * Confidence of each offline rule, in [0, 1]. Entities: the graph store's noisy-or of mentions decides `active`
 * against ENTITY_THRESHOLD (0.6 by default), so a rule below it (a bare proper noun, a name compromise guessed)
 * stays `pending` until another mention confirms it. Relationships follow the spec's bands ("Relationship":
 * 0.8–1.0 explicit statement, 0.5–0.8 strong implication, below 0.5 weak connection).
 */
export const OFFLINE_CONFIDENCE = {
  author: 0.95,
  mention: 0.9,
  knownPersonTag: 0.85,
  knownPersonText: 0.7,
  detectedPerson: 0.5,
  technology: 0.85,
  projectOwned: 0.8,
  projectRepo: 0.8,
  projectCue: 0.7,
  projectBare: 0.45,
  team: 0.75,
  meetingNamed: 0.8,
  meetingGeneric: 0.6,
  decision: 0.85,
  decisionProposed: 0.7,
  decidedByExplicit: 0.9,
  decidedByImplied: 0.7,
  decisionRelated: 0.6,
  teamDecided: 0.8,
  memberOf: 0.85,
  memberOfImplied: 0.6,
  participatedIn: 0.85,
  participatedInImplied: 0.6,
  participatedInCompanion: 0.6,
  worksOnExplicit: 0.85,
  worksOnImplied: 0.6,
  usesExplicit: 0.85,
  usesCooccurrence: 0.55,
  relatedCooccurrence: 0.35,
  authoredTechnology: 0.7,
} as const;

/** Longest relationship context and Decision `context` property, in characters (spec: the fact text). */
export const CONTEXT_MAX = 300;
/** Longest Decision name, in characters (cut at a word boundary, with `…`). */
export const DECISION_NAME_MAX = 80;
/** At most this many RELATED_TO co-occurrence edges per fact. */
export const MAX_RELATED_PER_FACT = 3;

// ---------------------------------------------------------------------------------------------------------------
// Small text helpers

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

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
const findWord = (text: string, word: string, from = 0): number => {
  const re = new RegExp(`(?<![\\p{L}\\p{N}_@./-])${esc(word)}(?![\\p{L}\\p{N}_]|[./-][\\p{L}\\p{N}])`, 'iu');
  const m = re.exec(text.slice(from));
  return m ? m.index + from : -1;
};

const upperFirst = (s: string): string => (/^[a-z][a-z]/.test(s) ? s.charAt(0).toUpperCase() + s.slice(1) : s);

/** Regex source of the fact's subject: the author (as memory texts write "I"), `Author and team` ("we"), I, we. */
const subjectRe = (author: string): string => `(?:${esc(author)}(?:\\s+and\\s+team)?|I|we)`;

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = [
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
const DAY_RE = '(?:mon|tues|wednes|thurs|fri|satur|sun)day';

// ---------------------------------------------------------------------------------------------------------------
// Technologies (the TECH lexicon of the fact extractor)

const TECH_BY_NORM = new Map<string, string>();
const TECH_SPELLINGS = new Map<string, string[]>();
for (const [raw, t] of TECH) {
  TECH_BY_NORM.set(normalizeEntityName(t.name), t.name);
  TECH_SPELLINGS.set(t.name, [...(TECH_SPELLINGS.get(t.name) ?? []), raw]);
}

/** The TECH lexicon's display name of a technology tag or spelling (`lein` → `Leiningen`), else null. */
export const technologyName = (s: string): string | null =>
  TECH_BY_NORM.get(normalizeEntityName(s)) ?? TECH.get(s.toLowerCase())?.name ?? null;

/** Where a technology is written in `text` and the spelling used (`lein` for Leiningen). */
const findTech = (text: string, name: string): { index: number; spelling: string } | null => {
  let best: { index: number; spelling: string } | null = null;
  for (const raw of [name, ...(TECH_SPELLINGS.get(name) ?? [])]) {
    const i = findWord(text, raw);
    if (i >= 0 && (best === null || i < best.index)) best = { index: i, spelling: text.slice(i, i + raw.length) };
  }
  return best;
};

// ---------------------------------------------------------------------------------------------------------------
// People

interface PersonIndex {
  byKey: Map<string, KnownPerson>;
  byFirst: Map<string, KnownPerson[]>;
  /** Names and handles with everything but letters and digits removed (`tony.kay` → `tonykay`), 5+ characters. */
  bySquash: Map<string, KnownPerson>;
}

/** Letters and digits of a name, lower case: the shape handles are made from (`Stuart Halloway` → `stuarthalloway`). */
const squash = (s: string): string => normalizeEntityName(s).replace(/[^\p{L}\p{N}]+/gu, '');

/**
 * The handles a full name is commonly turned into: firstlast (also first.last, first_last, first-last), flast,
 * firstl. `David Nolen` → davidnolen, dnolen, davidn.
 */
const handleShapes = (fullName: string): string[] => {
  const words = normalizeEntityName(fullName)
    .split(' ')
    .map((w) => w.replace(/[^\p{L}\p{N}]+/gu, ''))
    .filter(Boolean);
  if (words.length < 2) return [];
  const first = words[0]!;
  const last = words[words.length - 1]!;
  return [words.join(''), `${first[0]}${last}`, `${first}${last[0]}`].filter((h) => h.length >= 5);
};

/** Indexes of the channel people arrays seen, rebuilt when an array's length changes (callers may append). */
const INDEXES = new WeakMap<readonly KnownPerson[], { size: number; index: PersonIndex }>();

const buildIndex = (people: readonly KnownPerson[]): PersonIndex => {
  const cached = INDEXES.get(people);
  if (cached && cached.size === people.length) return cached.index;
  const index: PersonIndex = { byKey: new Map(), byFirst: new Map(), bySquash: new Map() };
  for (const p of people) addToIndex(index, p);
  INDEXES.set(people, { size: people.length, index });
  return index;
};

const addToIndex = (index: PersonIndex, p: KnownPerson): void => {
  for (const k of [p.name, ...p.aliases].map(normalizeEntityName)) if (k && !index.byKey.has(k)) index.byKey.set(k, p);
  for (const k of [p.name, ...p.aliases].map(squash))
    if (k.length >= 5 && !index.bySquash.has(k)) index.bySquash.set(k, p);
  const first = normalizeEntityName(p.name).split(' ');
  if (first.length >= 2 && first[0]!.length >= 3)
    index.byFirst.set(first[0]!, [...(index.byFirst.get(first[0]!) ?? []), p]);
};

/**
 * The known person a spelling names: by name or alias, else by a first name only one known person has, else a
 * full name whose handle shape is a known handle ("Stuart Halloway" → stuarthalloway, "David Nolen" → dnolen).
 */
const resolvePerson = (index: PersonIndex, spelling: string): KnownPerson | null => {
  const k = normalizeEntityName(spelling);
  const exact = index.byKey.get(k);
  if (exact) return exact;
  const first = index.byFirst.get(k);
  if (first?.length === 1) return first[0]!;
  for (const h of handleShapes(spelling)) {
    const p = index.bySquash.get(h);
    if (p) return p;
  }
  return null;
};

/**
 * The known person a spelling names (`@alice`, `alice`, `Alice Chen`): by name or alias after normalizeEntityName,
 * else by a first name only one known person has; null when none.
 */
export const findKnownPerson = (people: readonly KnownPerson[], spelling: string): KnownPerson | null =>
  resolvePerson(buildIndex(people), spelling);

/** A name distinctive enough to find in running text: a handle (digits, `.`, `-`, `_`), several words, or an unknown word. */
const distinctive = (key: string): boolean =>
  key.length >= 4 &&
  !STOPWORDS.has(key) &&
  !GENERIC_NOUNS.has(key) &&
  technologyName(key) === null &&
  (/[\d._-]/.test(key) || key.includes(' ') || lexTag(key) === '' || isNameWord(key));

// ---------------------------------------------------------------------------------------------------------------
// Meetings (spec "Graph entity": Meeting)

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
  call: new Set(
    'video conference zoom phone skype hangout hangouts team weekly daily sales quick standup planning sync group'.split(
      ' ',
    ),
  ),
  sync: new Set('weekly daily monthly team quick our their standup'.split(' ')),
  planning: new Set('sprint release quarterly weekly roadmap capacity the our their'.split(' ')),
  retrospective: new Set('the our their a sprint team weekly monthly'.split(' ')),
  '1:1': new Set('a the our my their weekly monthly'.split(' ')),
};
const MEETING_PARTICIPATION =
  /\b(attend(?:s|ed|ing)?|speak(?:s|ing)?|spoke|present(?:s|ed|ing)?|talk(?:s|ed|ing)? at|giv(?:e|es|ing) a talk|gave a talk|will be at|be at|was at|were at|is at|went to|going to|go to|join(?:s|ed|ing)?|host(?:s|ed|ing)?|co-?organi[sz](?:e|es|ed|ing)|organi[sz](?:e|es|ed|ing)|run(?:s|ning)?|ran|held|hold(?:s|ing)?|see (?:you|everyone) at|had|have)\b/gi;
const NEGATION = /\b(not|never|no|can'?t|cannot|won'?t|couldn'?t|didn'?t|doesn'?t|don'?t|isn'?t|wasn'?t|unable)\b/i;

interface Span {
  name: string;
  index: number;
  end: number;
}

interface MeetingSpan extends Span {
  kind: string;
  named: boolean;
}

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

// ---------------------------------------------------------------------------------------------------------------
// Teams (spec "Graph entity": Team)

const TEAM_SKIP = new Set(
  'whole same other entire new old my our your their his her this that right wrong best first next last only home away opposing winning losing national a an every any some each'.split(
    ' ',
  ),
);
const GROUP_MODIFIERS = new Set(
  'user study working interest steering advisory reading program programme organizing organising core review technical'.split(
    ' ',
  ),
);

/** Teams a text names: `the X team` and `team X` (as `X team`), `X squad`, `X committee`, `X user/study/working group`. */
export const findTeams = (text: string): Span[] => {
  const out: Span[] = [];
  for (const m of text.matchAll(
    /\b(?:the|our|their|my|your) ((?:[\p{L}\p{N}.+#-]+ ){0,2}[\p{L}\p{N}.+#-]+) team\b/giu,
  )) {
    const words = m[1]!.split(' ');
    while (words.length > 0 && TEAM_SKIP.has(words[0]!.toLowerCase())) words.shift();
    if (words.length === 0 || words.some((w) => STOPWORDS.has(w.toLowerCase()) || TEAM_SKIP.has(w.toLowerCase())))
      continue;
    const x = words.join(' ');
    const index = m.index + m[0].indexOf(x, m[0].indexOf(' '));
    out.push({ name: `${x} team`, index, end: m.index + m[0].length });
  }
  for (const m of text.matchAll(/(?<!\band )\bteam (\p{Lu}[\p{L}\p{N}.+-]*)/gu)) {
    if (STOPWORDS.has(m[1]!.toLowerCase())) continue;
    out.push({ name: `${m[1]} team`, index: m.index, end: m.index + m[0].length });
  }
  for (const m of text.matchAll(
    /\b((?:\p{Lu}[\p{L}\p{N}.+&-]*\s+){0,4})((?:[a-z][\w-]*\s+)?)(squad|committee|[Cc]ommittee|[Gg]roup|[Ss]quad)\b(?! of\b|-by|\()/gu,
  )) {
    let prefix = m[1]!.trim().split(/\s+/).filter(Boolean);
    while (prefix.length > 0 && /^(The|A|An|Our|Their|My|This)$/.test(prefix[0]!)) prefix = prefix.slice(1);
    const modifier = m[2]!.trim().toLowerCase();
    const kind = m[3]!;
    const ok =
      prefix.length > 0 ||
      GROUP_MODIFIERS.has(modifier) ||
      (/squad|committee/i.test(kind) && modifier !== '' && !TEAM_SKIP.has(modifier) && !GENERIC_NOUNS.has(modifier));
    if (!ok || (prefix.length > 0 && m.index === 0 && prefix.length === 1 && !modifier)) continue;
    if (
      /^(google|facebook|slack|telegram|whatsapp|discord|linkedin|yahoo|reddit|meetup|signal|wechat)$/i.test(
        prefix.at(-1) ?? '',
      )
    )
      continue;
    const name = [...prefix, m[2]!.trim(), kind].filter(Boolean).join(' ');
    const index = m.index + m[0].indexOf(prefix[0] ?? m[2]!.trim() ?? kind);
    out.push({ name, index, end: m.index + m[0].length });
  }
  return out.sort((a, b) => a.index - b.index);
};

// ---------------------------------------------------------------------------------------------------------------
// Community events and groups (personal and community conversation: parades, classes, races, support groups…)

/** Event nouns that are never programming words: a Meeting after a determiner, a modifier or a participation verb. */
const SAFE_EVENTS: Record<string, string> = {
  parade: 'parade',
  festival: 'festival',
  fest: 'festival',
  concert: 'concert',
  exhibition: 'exhibition',
  marathon: 'marathon',
  fundraiser: 'fundraiser',
  rally: 'rally',
  retreat: 'retreat',
  ceremony: 'ceremony',
  competition: 'competition',
  comp: 'competition',
  recital: 'recital',
  gala: 'gala',
};
/**
 * Event nouns that are also programming or everyday words (a Java class, a REPL session, a race condition, a web
 * service, a round trip): a Meeting only with a lower-case, non-technical modifier right before ("pottery class") or
 * governed by a participation verb ("signed up for a class", "ran a race").
 */
const AMBIGUOUS_EVENTS: Record<string, string> = {
  class: 'class',
  course: 'course',
  program: 'program',
  programme: 'program',
  session: 'session',
  party: 'party',
  show: 'show',
  race: 'race',
  trip: 'trip',
  camp: 'camp',
  service: 'service',
  march: 'march',
  event: 'event',
  fair: 'fair',
  workshop: 'workshop',
  conference: 'conference',
  meetup: 'meetup',
  meeting: 'meeting',
  talk: 'talk',
  speech: 'speech',
};
/** Modifiers that make a `service` a ceremony people attend (anything else is a software or business service). */
const SERVICE_CEREMONY = new Set(
  'church memorial funeral worship sunday religious prayer wedding candlelight remembrance mass chapel easter christmas'.split(
    ' ',
  ),
);
/** Kinds the technical finder already names: an event phrase only refines its bare generic name. */
const TECH_KINDS = new Set(['workshop', 'conference', 'meetup', 'meeting']);
const EVENT_HEAD = new RegExp(
  `(?<![\\p{L}\\p{N}_./@-])(${[...Object.keys(SAFE_EVENTS), ...Object.keys(AMBIGUOUS_EVENTS), 'camping']
    .sort((a, b) => b.length - a.length)
    .join('|')})(e?s)?(?![\\p{L}\\p{N}_]|[-/.][\\p{L}\\p{N}])`,
  'giu',
);
/** Words that end an event's modifiers: evaluations, sizes, times, quantities. */
const NOT_MODIFIER = new Set(
  'great awesome amazing fun big small little new old first last next recent local huge nice cool special whole real quick short long annual weekly daily monthly yearly regular wonderful beautiful lovely good bad best worst fantastic incredible favorite favourite fave fav upcoming latest same other different another own free online virtual huge entire actual certain such many much more most few several whole wild crazy super really very particular specific general broader wider larger global open strong solid supportive close tight amazing'.split(
    ' ',
  ),
);
/** Modifiers of an ambiguous event noun that make it a programming word ("helper class", "REPL session"). */
const TECH_MODIFIERS = new Set(
  'main helper abstract base inner outer anonymous static data record test wrapper proxy sub super parent child utility util java web micro repl http https user browser login ring server client database db api rest interactive debug debugging build condition data-race round shell computer clojure small tiny simple type value style css component root top bottom deftype defrecord ui dom wire click mouse keyboard key change input async sync handleable custom video third thirt 3rd second'.split(
    ' ',
  ),
);
/** Determiners and possessives before an event or group phrase. */
const DETERMINER =
  /(?:^|\s)(a|an|the|this|that|these|those|my|your|his|her|our|their|its|some|another|every|each|one|[\p{Lu}][\p{L}]+['’]s)\s+$/u;
/** A verb that governs an event noun phrase: taking part, running, hosting ("went to a", "signed up for the"). */
const EVENT_VERB =
  /(?:\b(?:went|go(?:es|ing)?|gone|headed|came|come|coming) (?:to|on)|\b(?:attend(?:s|ed|ing)?|join(?:s|ed|ing)?|visit(?:s|ed|ing)?|host(?:s|ed|ing)?|organi[sz](?:e|es|ed|ing)|(?:co-?)?led|lead(?:s|ing)?|ran|run(?:s|ning)?|took|take(?:s|n)?|taking|did|doing|had|having|held|hold(?:s|ing)?|threw|throw(?:s|ing)?|gave|give(?:s|n)?|giving|deliver(?:s|ed|ing)?|started|start(?:s|ing)?|finish(?:ed|es|ing)?|completed|enjoy(?:s|ed|ing)?|watched|saw|put(?:ting)? together|plan(?:s|ned|ning)?)|\b(?:took|take|taking|takes) part in|\bparticipat(?:e|es|ed|ing) in|\bsign(?:s|ed|ing)? up (?:for|to)|\benrol(?:l|ls|led|ling)? in|\bregister(?:ed)? for|\bvolunteer(?:s|ed|ing)? (?:at|for|with)|\bperform(?:s|ed|ing)? (?:at|in)|\bspoke at|\bspeak(?:s|ing)? at|\b(?:was|were|is|are|be|been) at|\bat|\btook (?:[\p{L}'’]+\s+){1,3}to)$/iu;

interface EventSpan extends MeetingSpan {
  /** True when a participation verb governs the phrase ("went to a pottery class"). */
  governed: boolean;
}

const modifierWord = (w: string): string | null => {
  const clean = w.replace(/\+$/, '');
  if (!/^[\p{L}][\p{L}\p{N}'’-]*$/u.test(clean) || /['’]s$/.test(clean)) return null;
  const lw = clean.toLowerCase();
  if (STOPWORDS.has(lw) || NOT_MODIFIER.has(lw) || GENERIC_NOUNS.has(lw) || MONTHS.includes(lw)) return null;
  if (/Adjective|Comparative|Superlative|Adverb|Pronoun|Determiner|Preposition|Conjunction/.test(lexTag(lw)))
    return null;
  if (new RegExp(`^${DAY_RE}$`).test(lw) || /^(yesterday|tonight|today|tomorrow|weekend|ago)$/.test(lw)) return null;
  if (/ed$/.test(lw) && !/^(?:red|bed|med|shared|guided|supervised|organized|organised)$/.test(lw)) return null;
  if (/ly$/.test(lw) && lw !== 'family') return null;
  if (/-(?:like|style|based|as|ish)$/.test(lw) || (lw.match(/-/g) ?? []).length >= 2) return null;
  // keep acronyms (LGBTQ) and proper nouns as written, lower-case the others
  return /^\p{Lu}{2,}$/u.test(clean) || /^\p{Lu}\p{Ll}+\p{Lu}/u.test(clean) ? clean : lw;
};

/** Up to `max` modifier words right before `at` in `text` (nearest last), and where they start. */
const modifiersBefore = (text: string, at: number, max: number): { words: string[]; start: number } => {
  const words: string[] = [];
  let start = at;
  let rest = text.slice(0, at);
  while (words.length < max) {
    const m = rest.match(/([\p{L}][\p{L}\p{N}'’+-]*)\s+$/u);
    if (!m) break;
    const w = modifierWord(m[1]!);
    if (!w) break;
    words.unshift(w);
    start = m.index!;
    rest = rest.slice(0, m.index);
  }
  return { words, start };
};

/**
 * Events of community life a text names (spec "Graph entity": Meeting, "an event people take part in"): parades,
 * festivals, concerts, races, camping trips, classes, courses, programs, workshops, parties, talks at a place…
 * Named by the noun phrase with its modifiers, lower-cased, singular ("pride parade", "pottery class", "charity
 * race", "mentorship program", "LGBTQ support group meeting"); "went camping" is a `camping trip`, "a talk at a
 * school" a `talk at school`. Ambiguous nouns (class, session, race, service…) need a non-technical modifier or a
 * participation verb; a bare noun needs a determiner ("the parade"), never a sentence start or a verb use.
 */
export const findEvents = (text: string): EventSpan[] => {
  const out: EventSpan[] = [];
  for (const m of text.matchAll(EVENT_HEAD)) {
    const written = m[1]!;
    const lower = written.toLowerCase();
    const start = m.index;
    let end = start + m[0].length;
    if (lower === 'march' && written !== 'march') continue; // the month
    const before = text.slice(0, start);
    if (lower === 'camping') {
      // "went camping", "took the kids camping", "camping trip" (the trip is the head), "go camping"
      const next = text.slice(end).match(/^\s+(trips?)\b/i);
      if (next) continue; // the `trip` match names it
      if (
        !/\b(?:go|goes|going|went|gone|been|took|take|takes|taking|love|loves|enjoy|enjoys|enjoyed|fam|family|kids|us|them)\s+$/i.test(
          before,
        )
      )
        continue;
      out.push({ name: 'camping trip', index: start, end, kind: 'trip', named: false, governed: true });
      continue;
    }
    const head = SAFE_EVENTS[lower] ?? AMBIGUOUS_EVENTS[lower] ?? '';
    if (!head) continue;
    const ambiguous = lower in AMBIGUOUS_EVENTS;
    const mods = modifiersBefore(text, start, 3);
    // "race condition", "class loader", "show me", "talk to": a noun followed by a noun or a preposition it takes
    const next =
      text
        .slice(end)
        .match(/^\s+([\p{L}][\p{L}'-]*)/u)?.[1]
        ?.toLowerCase() ?? '';
    if (
      ambiguous &&
      /^(condition|conditions|loader|loaders|path|name|names|method|methods|file|files|var|vars|id|ids|key|keys|store|storage|state|token|cookie|object|instance|instances|hierarchy|registry|discovery|mesh|account|layer|worker|workers|me|you|him|her|them|us|it|that|this|how|amount|bit|share|number|enough|point|list|lists|names)$/.test(
        next,
      ) &&
      !/^(talk|speech)$/.test(head)
    )
      continue;
    if (
      ambiguous &&
      mods.words.length === 0 &&
      /^(?:up|off|to|with|through|about)$/.test(next) &&
      !/^(talk|speech)$/.test(head)
    )
      continue;
    const det = before.slice(0, mods.start);
    const detM = det.match(DETERMINER);
    const hasDet = detM !== null;
    const beforeDet = detM ? det.slice(0, det.length - detM[0].length) : det;
    const verbText = beforeDet.slice(-48).replace(/\s+$/, '');
    const governed = EVENT_VERB.test(verbText.split(/[.;!?,:]/).at(-1) ?? '') && /\b\S+$/.test(verbText);
    const immediate = mods.words.at(-1) ?? '';
    let name = [...mods.words, head].join(' ');
    const index = mods.words.length > 0 ? mods.start : start;
    if (head === 'talk' || head === 'speech') {
      // "gave a talk at a school", "giving Caroline's talk": only given, never "talk to"
      const verb =
        /\b(?:gave|give|gives|giving|deliver(?:s|ed|ing)?|did|do|doing)\s*$/i.test(beforeDet) ||
        /\b(?:gave|give|giving)\s+$/i.test(det);
      if (!verb || !hasDet) continue;
      const at = text
        .slice(end)
        .match(
          /^\s+at\s+(?:(?:a|an|the|their|her|his|my|our|a local)\s+)?((?:[\p{L}][\p{L}'-]*\s+){0,2}?)(school|college|university|church|library|center|centre|conference|event|club|meetup|festival|parade|rally|company|office|museum|hospital|shelter)\b/iu,
        );
      if (at) {
        name = `${head} at ${at[2]!.toLowerCase()}`;
        end += at[0].length;
      }
      out.push({ name, index, end, kind: head, named: false, governed: true });
      continue;
    }
    if (ambiguous) {
      const techMod =
        immediate !== '' &&
        (TECH_MODIFIERS.has(immediate.toLowerCase()) ||
          technologyName(immediate) !== null ||
          /^\p{Lu}/u.test(immediate) ||
          CODE_WORDS.has(immediate.toLowerCase()));
      if (techMod) continue;
      // "billing service", "web service": a service is an event only as a ceremony ("memorial service")
      if (head === 'service' && !SERVICE_CEREMONY.has(immediate.toLowerCase())) continue;
      if ((head === 'camp' || head === 'fair') && !governed) continue;
      if (
        head === 'fair' &&
        next &&
        !/^(?:at|in|on|last|this|next|yesterday|today|with|and|to|for|was|is|where|that)$/.test(next)
      )
        continue;
      const nextWritten = text.slice(end).match(/^\s+([\p{L}][\p{L}\p{N}.+#-]*)/u)?.[1] ?? '';
      if (nextWritten && (technologyName(nextWritten) || /^\p{Lu}{2,}$/u.test(nextWritten))) continue;
      if (mods.words.length === 0 && !(governed && hasDet)) continue;
      if (mods.words.length > 0 && !hasDet && !governed && !/\b(?:in|at|from|after|before|during)\s+$/i.test(det)) {
        // "pottery class" without a determiner: only after a preposition ("made it in pottery class")
        continue;
      }
    } else if (mods.words.length === 0 && !hasDet && !/\b(?:in|at)\s+$/i.test(det)) continue;
    if (TECH_KINDS.has(head) && mods.words.length === 0) continue; // the technical finder names it
    out.push({ name, index, end, kind: head, named: false, governed });
  }
  return out;
};

/** Group nouns of community life: a Team with a modifier ("support group", "book club") or after a membership verb. */
const GROUP_HEAD =
  /(?<![\p{L}\p{N}_./@-])(group|club|band|choir|orchestra|community|organi[sz]ation|agency|church|congregation|association|society|troupe|crew|league|collective|nonprofit|non-profit|charity)(s)?(?![\p{L}\p{N}_]|[-/.][\p{L}\p{N}])/giu;
const GROUP_CANON: Record<string, string> = { organisation: 'organization', 'non-profit': 'nonprofit' };
const MEMBERSHIP_VERB =
  /\b(?:join(?:s|ed|ing)?|(?:is|am|are|was|were|'m|'re|been|being)\s+(?:(?:now|also|still|already|really|proud|happy)\s+)*(?:part of|a member of|member of|in)|goes to|go to|going to|went to|attend(?:s|ed|ing)?|volunteer(?:s|ed|ing)? (?:at|for|with)|found(?:ed)?|start(?:ed)?|belong(?:s|ed)? to|sing(?:s)? in|play(?:s|ed)? in)\s+$/i;

/**
 * Groups of community life a text names (spec "Graph entity": Team): `X group` with a lower-case modifier
 * ("support group", "activist group"), clubs, bands, choirs, agencies ("adoption agency"), organisations, churches
 * and communities with a non-technical modifier ("LGBTQ community", not "Clojure community"). Conservative: a group
 * noun is required, and a bare one ("the club") counts only after a membership verb ("joined the club").
 */
export const findGroups = (text: string): Span[] => {
  const out: Span[] = [];
  for (const m of text.matchAll(GROUP_HEAD)) {
    const lower = m[1]!.toLowerCase();
    const head = GROUP_CANON[lower] ?? lower;
    const start = m.index;
    const end = start + m[0].length;
    if (/^\s+of\b/i.test(text.slice(end))) continue; // "a group of people", "the community of"
    const mods = modifiersBefore(text, start, 3);
    const immediate = mods.words.at(-1) ?? '';
    if (immediate && (technologyName(immediate) || TECH_MODIFIERS.has(immediate.toLowerCase()))) continue;
    if (mods.words.some((w) => technologyName(w))) continue;
    const det = text.slice(0, mods.start);
    const detM = det.match(DETERMINER);
    const beforeDet = detM ? det.slice(0, det.length - detM[0].length) : det;
    const member = MEMBERSHIP_VERB.test(`${beforeDet.slice(-40)} `) || MEMBERSHIP_VERB.test(det.slice(-40));
    if (mods.words.length === 0 && !(member && detM && head !== 'community' && head !== 'group')) continue;
    if (mods.words.length > 0 && head === 'group' && /^(the|a|this|that)$/i.test(mods.words[0]!)) continue;
    const name = [...mods.words, head].join(' ');
    out.push({ name, index: mods.words.length > 0 ? mods.start : start, end });
  }
  return out;
};

// ---------------------------------------------------------------------------------------------------------------
// Projects (spec "Graph entity": Project)

const NAME_TAIL = "[\\p{L}\\p{N}_+#'-]*(?:[./][\\p{L}\\p{N}_+#-]+)*";
const NAME = `[\\p{L}]${NAME_TAIL}`;
const NOT_PROJECT = new Set(
  'im ive id ill dont cant wont didnt doesnt isnt thats whats youre theyre lets ok okay yes no hi hey thanks version release update library project tool app plugin framework fork'.split(
    ' ',
  ),
);
/** Capitalised words of code talk (Java classes, placeholders) that are no project without a cue. */
const CODE_WORDS = new Set(
  'class object string map list set vector exception error logger foo bar baz qux quux protocol record type interface method function instance coffee thread system runtime integer long boolean array node atom ref agent var'.split(
    ' ',
  ),
);
const NOUN_SUFFIX = /(tion|sion|ment|ness|ity|ance|ence|ible|able|ing|ism|ize|ise|ful|less|ous|ive)$/;
const CLASS_SUFFIX =
  /(Exception|Error|Class|Factory|Impl|Builder|Handler|Listener|Interface|Type|Key|Map|List|Set|Vector|String|Fn|Function|Object|Record|Protocol|Loader|Reader|Writer|Stream)$/;

/** Why a word cannot be a project name (null when it can): a stop word, a date, a technology, a class name… */
const projectNameProblem = (name: string, strongCue: boolean): string | null => {
  const lower = name.toLowerCase();
  const words = lower.split(/\s+/);
  if (name.length < 2 || words.every((w) => STOPWORDS.has(w) || GENERIC_NOUNS.has(w) || NOT_PROJECT.has(w)))
    return 'common word';
  if (technologyName(name)) return 'technology';
  if (/-(like|style|based|compatible|specific|friendly|ish|esque|only|free|ready|aware|side|level|time)$/i.test(name))
    return 'adjective';
  if (name.split(/[/+&]/).every((p) => technologyName(p))) return 'technologies';
  if (/^[\p{Lu}\d]{6,}$/u.test(name) && /\d/.test(name)) return 'id';
  if (!strongCue && !name.includes(' ') && (NOUN_SUFFIX.test(lower) || (lower.length >= 7 && /(er|or)$/.test(lower))))
    return 'common noun';
  if (/^\d/.test(name) || /^v?\d+(\.\d+)+/.test(lower)) return 'number';
  if (words.some((w) => /Date|Month|WeekDay|Holiday/.test(lexTag(w)) || MONTHS.includes(w))) return 'date';
  if (/^\p{Lu}{2,}s?$/u.test(name)) return 'acronym';
  if (/^\p{Lu}[\p{Ll}]+\p{Lu}/u.test(name) && CLASS_SUFFIX.test(name)) return 'class name';
  if (/^I\p{Lu}\p{Ll}/u.test(name)) return 'interface name';
  if (!strongCue && CODE_WORDS.has(lower)) return 'code word';
  if (!strongCue && /^\p{Lu}\p{Ll}+s$/u.test(name) && !/(ss|us|is)$/.test(lower)) return 'plural noun';
  if (!strongCue && /^\p{Ll}+\p{Lu}/u.test(name)) return 'method name';
  if (/^\p{Lu}/u.test(name) || /[a-z][A-Z]/.test(name)) return null;
  // lowercase: a library-like name (`atom-parinfer`, `boot-tools-deps`, `owner/repo`) with a cue
  if (!strongCue) return 'lowercase';
  if (/[./]/.test(name) && /^[a-z][\w.-]*(\/[\w.-]+)?$/.test(name)) {
    const parts = lower.split(/[./]/);
    return parts.every((p) => STOPWORDS.has(p) || lexTag(p) !== '') ? 'common words' : null;
  }
  const parts = lower.split('-');
  if (parts.length >= 3 || (parts.length === 2 && parts.some((p) => lexTag(p) === '' && !STOPWORDS.has(p))))
    return null;
  return 'common word';
};

interface ProjectHit extends Span {
  confidence: number;
  /** WORKS_ON from the author: explicit (I maintain/wrote/released X, my project X), implied (a release note). */
  worksOn: 'explicit' | 'implied' | null;
  repo: string | null;
}

const cleanName = (s: string): string => s.replace(/['’]s$/, '').replace(/[.,;:!?'’)-]+$/, '');

/**
 * Projects a fact's text names by cue: repository URLs and paths, dependency coordinates, ownership
 * ("I'm working on / I maintain / I wrote / released X", "my library X"), nouns ("the X library", "X project")
 * and versions ("X 1.2", "X v0.5.0 is out"). Bare proper nouns are added by the caller from the entity tags.
 */
export const findProjects = (text: string, author: string): ProjectHit[] => {
  const out: ProjectHit[] = [];
  const S = subjectRe(author);
  const add = (
    raw: string,
    index: number,
    confidence: number,
    worksOn: ProjectHit['worksOn'],
    strong: boolean,
    repo: string | null = null,
  ): void => {
    const name = cleanName(raw);
    if (projectNameProblem(name, strong)) return;
    out.push({ name, index, end: index + name.length, confidence, worksOn, repo });
  };
  for (const m of text.matchAll(
    /\bhttps?:\/\/(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org|codeberg\.org)\/([\w.-]+)\/([\w.-]+)/gi,
  )) {
    const repoName = m[2]!.replace(/\.+$/, '').replace(/\.git$/, '');
    if (/^(orgs|users|topics|settings|features|marketplace|about)$/i.test(m[1]!)) continue;
    const tech = technologyName(repoName);
    if (!tech) add(repoName, m.index, OFFLINE_CONFIDENCE.projectRepo, null, true, `${m[1]}/${repoName}`);
  }
  for (const m of text.matchAll(/\[([\w.-]+)\/([\w.-]+) "[^"]+"\]|(?<![\w/.])([\w.-]+)\/([\w.-]+) \{:mvn\/version/g)) {
    const group = m[1] ?? m[3]!;
    const artifact = (m[2] ?? m[4]!).replace(/\.+$/, '');
    if (!technologyName(artifact))
      add(artifact, m.index + 1 + group.length + 1, OFFLINE_CONFIDENCE.projectRepo, null, true, `${group}/${artifact}`);
  }
  const ownership = new RegExp(
    `\\b${S}\\s+(?:(?:is|am|are|'m|has|have|had|was|were|been|also|just|now|currently|still|finally|recently|actively)\\s+)*([Ww]orking on|[Ww]orks? on|[Mm]aintain(?:s|ing)?|[Ww]rote|[Ww]ritten|[Bb]uilt|[Cc]reated|[Aa]uthored|[Dd]evelop(?:s|ed|ing)?|[Rr]eleased|[Pp]ublished|[Ll]aunched|[Oo]pen[- ]sourced)\\s+(?:(?:a|an|the|my|our|their|${esc(author)}'s|new|first|little|small|simple|tiny|own)\\s+)*(?:(?:library|lib|project|tool|app|plugin|framework|wrapper|fork|port|service|site|website)\\s+)?(?:called\\s+|named\\s+)?(${NAME}(?:\\s+\\p{Lu}${NAME_TAIL})?)`,
    'gu',
  );
  for (const m of text.matchAll(ownership)) {
    if (/\b(?:if|when|whether|unless|once)\s+$/i.test(text.slice(Math.max(0, m.index - 10), m.index))) continue;
    const x = m[2]!;
    add(x, m.index + m[0].length - x.length, OFFLINE_CONFIDENCE.projectOwned, 'explicit', true);
  }
  const possessive = new RegExp(
    `(?:\\b${esc(author)}'s|\\b[Mm]y|\\b[Oo]ur)\\s+(?:(?:new|own|little|small|open[- ]source|side)\\s+)*(?:library|lib|project|tool|app|plugin|framework|fork|startup|company|product)\\s+(?:called\\s+|named\\s+)?(${NAME})`,
    'gu',
  );
  for (const m of text.matchAll(possessive)) {
    const x = m[1]!;
    add(x, m.index + m[0].length - x.length, OFFLINE_CONFIDENCE.projectOwned, 'explicit', true);
  }
  for (const m of text.matchAll(
    new RegExp(
      `\\b(?:the|a|an|this|that)\\s+(?:library|lib|project|tool|plugin|framework)\\s+(?:called\\s+|named\\s+)?(${NAME})`,
      'giu',
    ),
  )) {
    const x = m[1]!;
    add(x, m.index + m[0].length - x.length, OFFLINE_CONFIDENCE.projectCue, null, true);
  }
  for (const m of text.matchAll(
    new RegExp(`(?<![\\p{L}\\p{N}_./-])(${NAME})\\s+(?:library|lib|project|plugin|framework)\\b`, 'giu'),
  )) {
    add(m[1]!, m.index, OFFLINE_CONFIDENCE.projectCue, null, /[-./]/.test(m[1]!));
  }
  const version = new RegExp(
    `(?<![\\p{L}\\p{N}_./-])((?:\\p{Lu}[\\p{L}\\p{N}]*\\s+)?${NAME})\\s+v?\\d+\\.\\d+(?:\\.\\d+)*(?:[-.][\\w]+)*(\\s+(?:(?:is|was|has been|have been|just|now|finally)\\s+)*(?:released|out|published|available|shipped|landed))?`,
    'gu',
  );
  for (const m of text.matchAll(version)) {
    const released =
      m[2] !== undefined || /\b(released|publish(?:ed)?|announcing|shipped)\s+$/i.test(text.slice(0, m.index));
    let x = m[1]!;
    // "Keechma Toolbox 0.1.8": keep a capitalised first word unless it opens the text, is a stop word or the author.
    const two = x.split(/\s+/);
    if (two.length === 2 && (STOPWORDS.has(two[0]!.toLowerCase()) || two[0] === author)) x = two[1]!;
    const index = m.index + m[1]!.length - x.length;
    add(
      x,
      index,
      released ? OFFLINE_CONFIDENCE.projectCue + 0.05 : OFFLINE_CONFIDENCE.projectCue,
      released ? 'implied' : null,
      true,
    );
  }
  // keep the strongest hit of each name
  const best = new Map<string, ProjectHit>();
  for (const h of out) {
    const k = normalizeEntityName(h.name);
    const prev = best.get(k);
    const rank = (x: ProjectHit): number => (x.worksOn === 'explicit' ? 2 : x.worksOn === 'implied' ? 1 : 0);
    if (!prev || h.confidence > prev.confidence || rank(h) > rank(prev))
      best.set(k, {
        ...h,
        confidence: Math.max(h.confidence, prev?.confidence ?? 0),
        worksOn: prev && rank(prev) > rank(h) ? prev.worksOn : h.worksOn,
        repo: h.repo ?? prev?.repo ?? null,
      });
    else if (prev && !prev.repo && h.repo) prev.repo = h.repo;
  }
  return [...best.values()].sort((a, b) => a.index - b.index);
};

// ---------------------------------------------------------------------------------------------------------------
// Decisions (spec "Decision record")

type DecisionStatus = 'agreed' | 'implemented' | 'proposed';

/** The decision a fact states: a short imperative or noun phrase, who decided (null: the author), its status. */
export interface DecisionParts {
  name: string;
  /** The subject that decided as written, when it is not the author ("bob", "the core team"); null otherwise. */
  decider: string | null;
  /** True when the fact states who decided (the author or a named decider); false when implied (passive). */
  explicit: boolean;
  status: DecisionStatus;
}

const DECISION_VERBS: ReadonlyArray<[RegExp, string]> = [
  [
    /\b(?:decided|agreed|voted) (?:that |to )(?:we |they |(?:\S+ and team) )?(?:will |would |should |shall |are going to |'ll )?/i,
    '',
  ],
  [/\b(?:decided|agreed|voted) not to /i, 'Do not '],
  [/\b(?:decided|agreed|settled) on |\b(?:chose|choose|opted for|voted for|picked|selected) /i, 'Choose '],
  [/\b(?:the decision|the consensus|consensus) (?:is|was) (?:to |that )?/i, ''],
  [/\b(?:settled|settle) on /i, 'Settle on '],
  [/\b(?:went|go|going|will go|goes) with /i, 'Go with '],
  [/\bstick(?:s|ing)? with /i, 'Stick with '],
  [/\bswitch(?:ed|es|ing)? (?:over )?to /i, 'Switch to '],
  [/\bswitch(?:ed|es|ing)? from /i, 'Switch from '],
  [/\bmov(?:e|ed|es|ing) (?:over )?to /i, 'Move to '],
  [/\bmigrat(?:e|ed|es|ing) (?:over )?/i, 'Migrate '],
  [/\b(?:are |is |am )?mov(?:e|ed|es|ing) (?=\S+(?: \S+){0,3} (?:from|to) )/i, 'Move '],
  [/\bstandardi[sz](?:e|ed|es|ing) on /i, 'Standardize on '],
  [/\badopt(?:s|ed|ing)? /i, 'Adopt '],
  [/\bdrop(?:s|ped|ping)? /i, 'Drop '],
  [/\blet'?s use /i, 'Use '],
  [/\b(?:will|'ll|are going to|is going to|gonna) use /i, 'Use '],
  [
    /\b(?:just |finally |now )?(?:released|published|cut a release of|tagged) (?!to |for |in |on |at |with |from |by )/i,
    'Release ',
  ],
  [/\b(?:just |finally |now )?(?:shipped) (?!to |for |in |on |at |with |from |by )/i, 'Ship '],
  [/\b(?:just |finally |now )?merged /i, 'Merge '],
  [/\b(?:just |finally |now )?deployed /i, 'Deploy '],
  [/\b(?:just |finally |now )?deprecated /i, 'Deprecate '],
  [/\b(?:just |finally |now )?(?:removed|dropped) /i, 'Remove '],
  [/\b(?:just |finally |now )?launched /i, 'Launch '],
];
const AUXILIARIES =
  /(?:\s+(?:has|have|had|is|are|am|was|were|just|finally|now|also|all|unanimously|will|would|should|could|might|must|shall|'ll|'d|then|eventually|recently|going to|gonna))+\s*$/i;
const RELEASED_SUBJECT =
  /^(.{2,80}?)\s+(?:(?:is|was|has been|have been|are|just|now|finally)\s+)*(?:released|out|published|available|shipped|landed)\b/i;
const CLAUSE_END =
  /,\s+(?:which|but|and then|so|because|since|as|while|though|although|including|includes)\b|\s+(?:because|since|although|though|but|which|whereas)\s|;|\s+--?\s+|\.\s|:\s|!\s|\s\(|\.$|\s+https?:\/\//i;
const IMPLEMENTED =
  /\b(done|shipped|merged|migrated|released|published|deployed|launched|switched|moved (?:over )?to|rolled out|is out|are out|is now available|now available|completed|finished|implemented|landed)\b/i;
const PROPOSED =
  /\b(should|let'?s (?:consider|maybe|think about|discuss)|consider(?:ing)?|propos(?:e|ed|es|ing)|suggest(?:s|ed|ing)?|how about|what if|might|could|would like to)\b/i;

const cutClause = (s: string): string => {
  const m = CLAUSE_END.exec(s);
  let out = m ? s.slice(0, m.index) : s;
  // ", spent a week…", ", then tried…": a comma before a verb, pronoun or adverb starts another clause
  for (const c of out.matchAll(/,\s+([\p{L}'’]+)/gu)) {
    const w = c[1]!.toLowerCase();
    if (
      /^(there|it|this|that|thats|that's|so|then|which|who|we|they|he|she|i)$/.test(w) ||
      /PastTense|Pronoun|Gerund|Adverb|Copula|Modal|Conjunction|Preposition|Determiner/.test(lexTag(w))
    ) {
      out = out.slice(0, c.index);
      break;
    }
  }
  return out.replace(/[\s,.;:!?]+$/, '').trim();
};

/**
 * The decision a decision-type fact states (spec "Decision record": name, decided_by, status). The name is the
 * decision as a short imperative or noun phrase ("Use Postgres for the event log" from "alice and team decided to
 * use Postgres for the event log, because…"), at most DECISION_NAME_MAX characters; releases read "Release X 1.2".
 * status: `proposed` ("should", "let's consider"), `implemented` (done, shipped, merged, migrated, released), else
 * `agreed`.
 */
export const decisionParts = (memoryText: string, author: string): DecisionParts => {
  const body = factBody(memoryText);
  const S = new RegExp(`^(?:(?:so|then|in the end|finally|eventually|ok|now)[, ]+)*${subjectRe(author)}\\b`, 'i');
  const status: DecisionStatus = IMPLEMENTED.test(body) ? 'implemented' : PROPOSED.test(body) ? 'proposed' : 'agreed';
  let best: { index: number; name: string; subject: string } | null = null;
  for (const [re, prefix] of DECISION_VERBS) {
    const m = re.exec(body);
    if (!m || (best && m.index >= best.index)) continue;
    const rest = cutClause(body.slice(m.index + m[0].length));
    if (rest.length < 2) continue;
    const clause =
      body
        .slice(0, m.index)
        .split(/[,;:]\s+|\s+(?:so|but|and then|then|because|since|when|while|that)\s+/i)
        .at(-1) ?? '';
    const subject = clause
      .replace(/^(?:(?:so|then|in the end|finally|eventually|first|now|ok|and|but)[, ]+)+/i, '')
      .replace(AUXILIARIES, '')
      .trim();
    best = { index: m.index, name: prefix + rest, subject };
  }
  if (!best) {
    const r = RELEASED_SUBJECT.exec(cutClause(body.replace(/^(?:FYI|PSA|ANN|announcing)[,:\s-]+/i, '')));
    if (r)
      best = { index: 0, name: `Release ${(r[1]!.split(/,\s+/).at(-1) ?? '').replace(/^(?:the )/i, '')}`, subject: '' };
  }
  if (!best) {
    const stripped = body.replace(S, '').replace(/^\s*(?:has|have|had|is|are|will|would|'ll)\s+/i, '');
    best = { index: -1, name: cutClause(stripped) || stripped, subject: stripped === body ? '' : author };
  }
  const subject = best.subject;
  const authorAtEnd = new RegExp(`(?:^|\\s)${subjectRe(author)}$`, 'i');
  const byAuthor = subject !== '' && authorAtEnd.test(subject);
  const decider =
    byAuthor ||
    subject === '' ||
    /^(?:so|then|and|but|it|this|that|there|they|you|he|she)\b/i.test(subject) ||
    subject.split(' ').length > 4 ||
    subject.toLowerCase().includes(author.toLowerCase())
      ? null
      : subject.replace(/^(?:the|our)\s+/i, '');
  return {
    name: clip(
      upperFirst(best.name.replace(/^(?:to|that)\s+/i, '').replace(/\[[\w.-]+\/([\w.-]+) "([^"]+)"\]/g, '$1 $2')),
      DECISION_NAME_MAX,
    ),
    decider,
    explicit: byAuthor || decider !== null,
    status,
  };
};

// ---------------------------------------------------------------------------------------------------------------
// Validity end ("until March", "until Friday", "until 2018-03-01")

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

// ---------------------------------------------------------------------------------------------------------------
// The message-level graph builder

interface Mention {
  id: string;
  type: EntityType;
  name: string;
  index: number;
}

class GraphBuilder {
  readonly entities = new Map<string, ExtractedEntity>();
  readonly relationships = new Map<string, ExtractedRelationship>();

  constructor(private readonly channelId: string) {}

  /** Adds a mention; merges by entityUuid (union of fact ids and aliases, max confidence, first properties win). */
  entity(
    type: EntityType,
    name: string,
    confidence: number,
    factId: string,
    aliases: readonly string[] = [],
    properties: Record<string, string> = {},
  ): string {
    const entityId = entityUuid(this.channelId, type, name);
    const norm = normalizeEntityName(name);
    const cleanAliases = aliases.map((a) => a.replace(/^@/, '')).filter((a) => a && normalizeEntityName(a) !== norm);
    const prev = this.entities.get(entityId);
    const c = Math.round(Math.min(1, Math.max(0, confidence)) * 100) / 100;
    if (!prev) {
      this.entities.set(entityId, {
        entityId,
        type,
        name,
        aliases: dedupe(cleanAliases),
        confidence: c,
        factIds: [factId],
        properties: { ...properties },
      });
    } else {
      if (!prev.factIds.includes(factId)) prev.factIds.push(factId);
      prev.aliases = dedupe([...prev.aliases, ...cleanAliases]);
      prev.confidence = Math.max(prev.confidence, c);
      prev.properties = { ...properties, ...prev.properties };
    }
    return entityId;
  }

  relate(
    type: RelationshipType,
    sourceId: string,
    targetId: string,
    confidence: number,
    fact: Fact,
    validUntil: string | null,
  ): boolean {
    if (sourceId === targetId || !this.entities.has(sourceId) || !this.entities.has(targetId)) return false;
    const key = `${type}|${sourceId}|${targetId}`;
    const c = Math.round(Math.min(1, Math.max(0, confidence)) * 100) / 100;
    const prev = this.relationships.get(key);
    if (prev && prev.confidence >= c) return false;
    this.relationships.set(key, {
      type,
      sourceId,
      targetId,
      confidence: c,
      validFrom: isoDate(fact.messageTs),
      validUntil,
      context: clip(fact.memoryText, CONTEXT_MAX),
      sourceFactId: fact.factId,
    });
    return true;
  }

  linked(a: string, b: string): boolean {
    for (const r of this.relationships.values())
      if ((r.sourceId === a && r.targetId === b) || (r.sourceId === b && r.targetId === a)) return true;
    return false;
  }
}

const dedupe = (xs: readonly string[]): string[] => {
  const seen = new Set<string>();
  return xs.filter((x) => {
    const k = normalizeEntityName(x);
    if (!k || seen.has(k)) return false;
    seen.add(k);
    return true;
  });
};

/** Capitalised words mid-sentence that compromise's lexicon knows as first names or person names. */
const nameWords = (text: string): string[] =>
  [...text.matchAll(/(?<![.!?:]\s|^)\b(\p{Lu}\p{Ll}+)/gu)]
    .map((m) => m[1]!)
    .filter((w) => isNameWord(w.toLowerCase()) && !technologyName(w));

const cleanNlp = (s: string): string =>
  s
    .replace(/^[^\p{L}]+|[^\p{L}\p{N}]+$/gu, '')
    .replace(/['’]s$/, '')
    .trim();

/** A one-word name with the capitalised surname that follows it in `text` ("Stuart" → "Stuart Halloway"). */
const withSurname = (name: string, text: string): string =>
  name.includes(' ')
    ? name
    : (text.match(new RegExp(`\\b${esc(name)} \\p{Lu}\\p{Ll}+(?=['’]s\\b|\\b)`, 'u'))?.[0] ?? name).replace(
        /\s+\S+$/,
        (sur) => (technologyName(sur.trim()) || STOPWORDS.has(sur.trim().toLowerCase()) ? '' : sur),
      );

/** A detected name that can be a person's: capitalised words, no acronym, technology, organisation or place. */
const plausiblePersonName = (name: string): boolean => {
  const words = name.split(/\s+/);
  return (
    words.length <= 3 &&
    words.every((w) => /^\p{Lu}\p{Ll}[\p{L}'’-]*$/u.test(w)) &&
    !words.some((w) => technologyName(w) || /Organization/.test(lexTag(w.toLowerCase()))) &&
    !/Place|Country|City|Region/.test(lexTag(words.at(-1)!.toLowerCase())) &&
    !STOPWORDS.has(name.toLowerCase())
  );
};

/** Contexts where a capitalised name is a thing, not a person: "support for Clara", "Clara rules", "using Clara". */
const NOT_A_PERSON_CONTEXT = (name: string): RegExp =>
  new RegExp(
    `\\b(?:support for|using|uses|use|via|into|on top of|port of|version of|install|installed|upgrade|upgraded)\\s+${esc(name)}\\b|\\b${esc(name)}(?:['’]s)?\\s+(?:rules?|sessions?|library|lib|engine|version|api|docs?|code|project|repo|app|queries|query|plugin|server|client|build|builds|ci|dsl|syntax|support|release|integration)\\b`,
    'i',
  );

// ---------------------------------------------------------------------------------------------------------------
// The extractor

/**
 * The offline entity extractor (id `offline-entities@1`; port EntityExtractor): rules over one message's facts,
 * no model. Pure and deterministic: the same facts and channel state always give the same extraction.
 *
 * Per fact (spec "Graph entity", "Relationship", "Decision record"; confidences in OFFLINE_CONFIDENCE):
 * - Person: the author (0.95; the author id is never an alias), `@mentions` (0.9), entity tags naming a known
 *   person by name or alias (0.85; the name is the known display name, the spelling used an alias), distinctive
 *   known names in the text (0.7), names compromise detects (0.5, pending until confirmed).
 * - Technology: entity tags in the TECH lexicon (0.85; other spellings such as `lein` become aliases).
 * - Project: repository URLs and dependency coordinates (0.8), ownership cues (0.8), noun and version cues
 *   (0.7–0.75), bare proper nouns that are no person, place, organisation, date or technology (0.45, pending).
 * - Team: `the X team`, `team X`, `X squad/committee`, `X user/study/working group` (0.75).
 * - Meeting: named conferences and meetups keep their name, generic ones are kind plus day (see findMeetings).
 * - Decision: one per decision-type fact (see decisionParts), with decided_by, date, status and context.
 * - Relationships: DECIDED_BY, PARTICIPATED_IN, WORKS_ON, USES, MEMBER_OF, RELATED_TO, each with validFrom = the
 *   message date, validUntil from statedValidUntil, context = the fact text (≤ 300 characters), sourceFactId.
 * Supersessions come from findSupersessions over the channel's earlier decisions. Never throws on odd input.
 */
export class OfflineEntityExtractor implements EntityExtractor {
  readonly id = 'offline-entities@1';

  async extract(input: EntityExtractionInput): Promise<EntityExtraction> {
    return this.extractSync(input);
  }

  /** Synchronous form of `extract`, for batch scripts and for the LLM extractor's fallback. */
  extractSync(input: EntityExtractionInput): EntityExtraction {
    const { facts: event } = input;
    const g = new GraphBuilder(event.channelId);
    const index = buildIndex(input.people);
    const local: PersonIndex = { byKey: new Map(), byFirst: new Map(), bySquash: new Map() };
    const newPeople = new Map<string, KnownPerson>();
    const newDecisions: NewDecision[] = [];
    const newOwners: (KnownOwner & { change: boolean })[] = [];

    /** A person mention: resolved to a known (or earlier in this message) person, else a new person. */
    const person = (spelling: string, confidence: number, factId: string, learn: boolean): string => {
      const known = resolvePerson(index, spelling) ?? resolvePerson(local, spelling);
      const name = known?.name ?? spelling.replace(/^@/, '');
      const id = g.entity('Person', name, confidence, factId, [spelling]);
      if (learn) {
        const alias = spelling.replace(/^@/, '');
        const isNewAlias =
          known !== null &&
          normalizeEntityName(alias) !== normalizeEntityName(known.name) &&
          !known.aliases.some((a) => normalizeEntityName(a) === normalizeEntityName(alias));
        if (!known || isNewAlias) {
          const entry = newPeople.get(normalizeEntityName(name)) ?? { name, aliases: [...(known?.aliases ?? [])] };
          if (isNewAlias && !entry.aliases.includes(alias)) entry.aliases.push(alias);
          newPeople.set(normalizeEntityName(name), entry);
          addToIndex(local, entry);
        }
      }
      return id;
    };

    for (const fact of event.facts) {
      const body = factBody(fact.memoryText);
      const ts = fact.messageTs;
      const until = statedValidUntil(body, ts);
      const mentions: Mention[] = [];
      const note = (id: string, index: number): void => {
        const e = g.entities.get(id)!;
        if (!mentions.some((m) => m.id === id)) mentions.push({ id, type: e.type, name: e.name, index });
      };
      const covered: string[] = []; // names already explained (meeting, team, project, person names)

      // People --------------------------------------------------------------------------------------------------
      const authorId = person(fact.authorName, OFFLINE_CONFIDENCE.author, fact.factId, true);
      const authorName = g.entities.get(authorId)!.name;
      covered.push(fact.authorName);
      const mentioned = new Set<string>();
      for (const m of body.matchAll(/(?<![\w.@])@([\p{L}\p{N}][\p{L}\p{N}._-]*[\p{L}\p{N}_])/gu)) {
        const tag = fact.entityTags.find((t) => body.startsWith(`@${t}`, m.index)) ?? m[1]!;
        if (mentioned.has(tag)) continue;
        mentioned.add(tag);
        note(person(`@${tag}`, OFFLINE_CONFIDENCE.mention, fact.factId, true), m.index);
        covered.push(tag);
      }
      const techTags: string[] = [];
      const others: string[] = [];
      for (const tag of fact.entityTags) {
        if (mentioned.has(tag)) continue;
        const tech = technologyName(tag);
        if (tech) techTags.push(tech);
        else if (resolvePerson(index, tag) ?? resolvePerson(local, tag)) {
          note(person(tag, OFFLINE_CONFIDENCE.knownPersonTag, fact.factId, true), Math.max(0, findWord(body, tag)));
          covered.push(tag);
        } else others.push(tag);
      }
      // distinctive known names written in the text without `@`
      const words = [...body.matchAll(/[\p{L}\p{N}][\p{L}\p{N}._-]*[\p{L}\p{N}]/gu)];
      for (let i = 0; i < words.length; i++) {
        for (let n = 3; n >= 1; n--) {
          if (i + n > words.length) continue;
          const spelled = body.slice(words[i]!.index, words[i + n - 1]!.index + words[i + n - 1]![0].length);
          const k = normalizeEntityName(spelled);
          const p = index.byKey.get(k) ?? local.byKey.get(k);
          if (!p || !distinctive(k) || normalizeEntityName(p.name) === normalizeEntityName(authorName)) continue;
          if (mentions.some((x) => x.type === 'Person' && x.name === p.name)) break;
          note(person(spelled, OFFLINE_CONFIDENCE.knownPersonText, fact.factId, false), words[i]!.index);
          covered.push(spelled);
          i += n - 1;
          break;
        }
      }

      // Technologies --------------------------------------------------------------------------------------------
      for (const tech of techTags) {
        const at = findTech(body, tech);
        note(
          g.entity('Technology', tech, OFFLINE_CONFIDENCE.technology, fact.factId, at ? [at.spelling] : []),
          at?.index ?? body.length,
        );
      }

      // Meetings ------------------------------------------------------------------------------------------------
      const prose = body.replace(/\bhttps?:\/\/\S+/g, (u) => ' '.repeat(u.length));
      const question = fact.factType === 'question';
      // "X shared an image: a photo of a parade": a caption shows an event, nobody takes part in it
      const caption = /\bshared an image\b|^\s*(?:a |the )?(?:photo|picture|pic|image|photography) of\b/i.test(body);
      const meetings = findMeetings(prose, ts).filter(
        (mt) => !((question || caption) && !TECH_KINDS.has(mt.kind) && mt.kind !== 'conference' && !mt.named),
      );
      for (const mt of meetings) {
        const id = g.entity(
          'Meeting',
          mt.name,
          mt.named ? OFFLINE_CONFIDENCE.meetingNamed : OFFLINE_CONFIDENCE.meetingGeneric,
          fact.factId,
          [],
          { kind: mt.kind },
        );
        note(id, mt.index);
        covered.push(mt.name);
        if (question || caption) continue;
        const how = participates(body, mt, fact.authorName, mentions)
          ? 'explicit'
          : takesPart(body, mt, fact.authorName, mentions);
        if (!how) continue;
        g.relate(
          'PARTICIPATED_IN',
          authorId,
          id,
          how === 'explicit' ? OFFLINE_CONFIDENCE.participatedIn : OFFLINE_CONFIDENCE.participatedInImplied,
          fact,
          until,
        );
        for (const c of companions(body, mt, mentions, authorName))
          g.relate('PARTICIPATED_IN', c, id, OFFLINE_CONFIDENCE.participatedInCompanion, fact, until);
      }

      // Teams ---------------------------------------------------------------------------------------------------
      const teams = findTeams(prose);
      const groups =
        question || caption
          ? []
          : findGroups(prose).filter((gr) => !teams.some((t) => gr.index < t.end && gr.end > t.index));
      for (const t of teams) {
        const id = g.entity('Team', t.name, OFFLINE_CONFIDENCE.team, fact.factId);
        note(id, t.index);
        covered.push(t.name);
        if (!question && isMember(body, event.sourceText ?? '', t, fact.authorName)) {
          g.relate('MEMBER_OF', authorId, id, OFFLINE_CONFIDENCE.memberOf, fact, until);
        } else if (!question && !caption && groupMembership(body, t, fact.authorName, mentions)) {
          const how = groupMembership(body, t, fact.authorName, mentions);
          g.relate(
            'MEMBER_OF',
            authorId,
            id,
            how === 'explicit' ? OFFLINE_CONFIDENCE.memberOf : OFFLINE_CONFIDENCE.memberOfImplied,
            fact,
            until,
          );
        }
      }
      for (const t of groups) {
        const id = g.entity('Team', t.name, OFFLINE_CONFIDENCE.team, fact.factId);
        note(id, t.index);
        covered.push(t.name);
        const how = groupMembership(body, t, fact.authorName, mentions);
        if (how)
          g.relate(
            'MEMBER_OF',
            authorId,
            id,
            how === 'explicit' ? OFFLINE_CONFIDENCE.memberOf : OFFLINE_CONFIDENCE.memberOfImplied,
            fact,
            until,
          );
      }
      teams.push(...groups);

      // Projects ------------------------------------------------------------------------------------------------
      const projects = findProjects(body, fact.authorName).filter(
        (p) => !isPersonName(p.name, index, local) && !coveredBy(p.name, covered.slice(1)),
      );
      for (const p of projects) {
        const id = g.entity(
          'Project',
          p.name,
          p.confidence,
          fact.factId,
          p.repo ? [p.repo] : [],
          p.repo ? { repo: p.repo } : {},
        );
        note(id, p.index);
        covered.push(p.name);
        if (p.worksOn === 'explicit')
          g.relate('WORKS_ON', authorId, id, OFFLINE_CONFIDENCE.worksOnExplicit, fact, until);
        else if (p.worksOn === 'implied')
          g.relate('WORKS_ON', authorId, id, OFFLINE_CONFIDENCE.worksOnImplied, fact, until);
      }
      // Ownership ("bob now owns the billing service"): WORKS_ON, and the channel's owner of that thing --------
      const own = question
        ? null
        : ownershipOf(body, (n) => n === fact.authorName || !!resolvePerson(index, n) || !!resolvePerson(local, n));
      if (own) {
        const ownerId =
          own.owner === fact.authorName
            ? authorId
            : person(own.owner, OFFLINE_CONFIDENCE.knownPersonText, fact.factId, false);
        const tech = technologyName(own.subject);
        const subjectId = g.entity(
          tech ? 'Technology' : 'Project',
          tech ?? own.subject,
          tech ? OFFLINE_CONFIDENCE.technology : OFFLINE_CONFIDENCE.projectOwned,
          fact.factId,
        );
        note(subjectId, Math.max(0, findWord(body, own.subject)));
        covered.push(own.subject);
        g.relate(tech ? 'RELATED_TO' : 'WORKS_ON', ownerId, subjectId, OFFLINE_CONFIDENCE.worksOnExplicit, fact, until);
        newOwners.push({
          subjectKey: normalizeEntityName(tech ?? own.subject),
          subject: tech ?? own.subject,
          owner: g.entities.get(ownerId)!.name,
          factId: fact.factId,
          messageTs: ts,
          change: own.change,
        });
      }

      // An author announcing a release of a lexicon technology ("I released Fulcro 2.1", "Fulcro 2.1.5 released").
      for (const tech of techTags) {
        if (
          new RegExp(
            `(?:released|published|shipped|announcing)\\s+${esc(tech)}\\b|\\b${esc(tech)}\\s+v?\\d+\\.\\d+[\\w.-]*\\s+(?:(?:is|was|has been|just|now)\\s+)*(?:released|out|published)\\b`,
            'i',
          ).test(body)
        )
          g.relate(
            'RELATED_TO',
            authorId,
            entityUuid(event.channelId, 'Technology', tech),
            OFFLINE_CONFIDENCE.authoredTechnology,
            fact,
            until,
          );
      }

      // Remaining proper nouns: people compromise knows, else projects (pending) --------------------------------
      const rest = others.filter((t) => !coveredBy(t, covered));
      const english = fact.sourceLang === '' || fact.sourceLang.startsWith('en');
      const detected = english
        ? detectNames(body, [...rest, ...nameWords(body).filter((w) => !coveredBy(w, covered))])
        : { people: [], skip: new Set<string>() };
      for (const name of detected.people) {
        if (coveredBy(name, covered)) continue;
        const full = withSurname(rest.find((t) => t === name || t.startsWith(`${name} `)) ?? name, body);
        if (resolvePerson(index, name) || resolvePerson(local, name)) {
          // a known person written by full name ("Stuart Halloway" for stuarthalloway): mention it, learn the alias
          if (full.includes(' ') && (resolvePerson(index, full) || resolvePerson(local, full))) {
            note(
              person(full, OFFLINE_CONFIDENCE.knownPersonText, fact.factId, true),
              Math.max(0, findWord(body, full)),
            );
            covered.push(full);
          }
          continue;
        }
        if (!plausiblePersonName(full) || NOT_A_PERSON_CONTEXT(full).test(body)) continue;
        note(person(full, OFFLINE_CONFIDENCE.detectedPerson, fact.factId, false), Math.max(0, findWord(body, full)));
        covered.push(full);
      }
      for (const tag of rest) {
        if (coveredBy(tag, covered) || detected.skip.has(normalizeEntityName(tag))) continue;
        // "Stuart Halloway's talk": a first name the lexicon knows, with the capitalised surname that follows it
        const full = withSurname(tag, body);
        if (
          english &&
          /^\p{Lu}\p{Ll}+( \p{Lu}\p{Ll}+)?$/u.test(full) &&
          /FirstName|MaleName|FemaleName/.test(lexTag(tag.split(' ')[0]!.toLowerCase())) &&
          plausiblePersonName(full) &&
          !NOT_A_PERSON_CONTEXT(full).test(body)
        ) {
          note(person(full, OFFLINE_CONFIDENCE.detectedPerson, fact.factId, false), Math.max(0, findWord(body, tag)));
          covered.push(full);
          continue;
        }
        if (tag.split(' ').some((w) => /Place|Country|City|Region|Organization/.test(lexTag(w.toLowerCase()))))
          continue;
        const at = findWord(body, tag);
        if (at < 0 || projectNameProblem(tag, false)) continue;
        note(g.entity('Project', tag, OFFLINE_CONFIDENCE.projectBare, fact.factId), at);
      }

      // Decision ------------------------------------------------------------------------------------------------
      if (fact.factType === 'decision') {
        const d = decisionParts(fact.memoryText, fact.authorName);
        const deciderPerson = d.decider
          ? (resolvePerson(index, d.decider) ?? resolvePerson(local, d.decider) ?? null)
          : null;
        const deciderTeam = d.decider
          ? teams.find((t) => d.decider!.toLowerCase().includes(t.name.toLowerCase()))
          : undefined;
        const decidedBy = deciderPerson?.name ?? deciderTeam?.name ?? d.decider ?? authorName;
        const decisionId = g.entity(
          'Decision',
          d.name,
          d.status === 'proposed' ? OFFLINE_CONFIDENCE.decisionProposed : OFFLINE_CONFIDENCE.decision,
          fact.factId,
          [],
          { decided_by: decidedBy, date: isoDate(ts), status: d.status, context: clip(fact.memoryText, CONTEXT_MAX) },
        );
        if (deciderPerson) {
          const pid = person(deciderPerson.name, OFFLINE_CONFIDENCE.knownPersonText, fact.factId, false);
          g.relate('DECIDED_BY', pid, decisionId, OFFLINE_CONFIDENCE.decidedByExplicit - 0.1, fact, null);
        } else if (deciderTeam) {
          g.relate(
            'RELATED_TO',
            entityUuid(event.channelId, 'Team', deciderTeam.name),
            decisionId,
            OFFLINE_CONFIDENCE.teamDecided,
            fact,
            null,
          );
        } else if (!d.decider) {
          g.relate(
            'DECIDED_BY',
            authorId,
            decisionId,
            d.explicit ? OFFLINE_CONFIDENCE.decidedByExplicit : OFFLINE_CONFIDENCE.decidedByImplied,
            fact,
            null,
          );
        }
        const about = mentions.filter((m) => m.type === 'Technology' || m.type === 'Project');
        for (const m of about)
          g.relate('RELATED_TO', decisionId, m.id, OFFLINE_CONFIDENCE.decisionRelated, fact, until);
        const topicKeys = dedupe([...about.map((m) => m.name), ...fact.topicTags])
          .map(normalizeEntityName)
          .filter(Boolean)
          .slice(0, 10);
        newDecisions.push({
          entityId: decisionId,
          name: d.name,
          factId: fact.factId,
          messageTs: ts,
          decidedBy,
          topicKeys,
          text: fact.memoryText,
        });
      }

      // USES and co-occurrence ----------------------------------------------------------------------------------
      mentions.sort((a, b) => a.index - b.index);
      const projectsHere = mentions.filter(
        (m) => m.type === 'Project' && g.entities.get(m.id)!.confidence >= OFFLINE_CONFIDENCE.projectCue,
      );
      const techsHere = mentions.filter((m) => m.type === 'Technology');
      for (const p of projectsHere) {
        for (const t of techsHere) {
          const lastP = body.toLowerCase().lastIndexOf(p.name.toLowerCase(), t.index);
          const between = lastP >= 0 && t.index > lastP ? body.slice(lastP + p.name.length, t.index) : '';
          const explicit =
            between.length <= 60 &&
            !/[.;!?]\s/.test(between) &&
            /\b(uses|using|used|built (?:on|with)|written in|runs on|running on|based on|depends on|relies on|powered by|on top of)\b/i.test(
              between,
            );
          g.relate(
            'USES',
            p.id,
            t.id,
            explicit ? OFFLINE_CONFIDENCE.usesExplicit : OFFLINE_CONFIDENCE.usesCooccurrence,
            fact,
            until,
          );
        }
      }
      const things = mentions.filter((m) => m.type !== 'Person' && m.type !== 'Decision');
      let related = 0;
      for (let i = 0; i < things.length && related < MAX_RELATED_PER_FACT; i++) {
        for (let j = i + 1; j < things.length && related < MAX_RELATED_PER_FACT; j++) {
          const a = things[i]!;
          const b = things[j]!;
          if (g.linked(a.id, b.id)) continue;
          if (g.relate('RELATED_TO', a.id, b.id, OFFLINE_CONFIDENCE.relatedCooccurrence, fact, until)) related++;
        }
      }
    }

    const supersessions = [
      ...findSupersessions(newDecisions, input.decisions),
      ...findOwnerChanges(newOwners, input.owners ?? []),
    ];
    return {
      entities: [...g.entities.values()],
      relationships: [...g.relationships.values()],
      supersessions,
      people: [...newPeople.values()],
      decisions: newDecisions.map(({ text: _text, ...d }): KnownDecision => d),
      owners: newOwners.map(({ change: _change, ...o }) => o),
    };
  }
}

const isPersonName = (name: string, index: PersonIndex, local: PersonIndex): boolean => {
  const k = normalizeEntityName(name);
  return index.byKey.has(k) || local.byKey.has(k);
};

/** True when `name` is one of `covered` or a word sequence inside one (`Toolbox` in `Keechma Toolbox`). */
const coveredBy = (name: string, covered: readonly string[]): boolean => {
  const k = ` ${normalizeEntityName(name).replaceAll('/', ' ')} `;
  return covered.some((c) => ` ${normalizeEntityName(c).replaceAll('/', ' ')} `.includes(k));
};

/**
 * People compromise detects (capitalised names only), and the places, organisations and dates it sees, in the
 * sentences of `text` that hold one of `candidates`. compromise's tagger costs ~1 ms per short sentence, so it
 * runs only when there is a candidate (an unexplained proper noun or a first name), on those sentences only.
 */
const detectNames = (text: string, candidates: readonly string[]): { people: string[]; skip: Set<string> } => {
  const skip = new Set<string>();
  if (candidates.length === 0) return { people: [], skip };
  const sentences = text.split(/(?<=[.!?])\s+/).filter((s) => candidates.some((c) => s.includes(c)));
  const doc = nlp(sentences.join(' ') || text);
  const people = (doc.people().out('array') as string[]).map(cleanNlp).filter((p) => p.length >= 2);
  for (const list of [doc.places(), doc.organizations(), doc.match('#Date')])
    for (const s of list.out('array') as string[]) {
      const c = cleanNlp(s);
      skip.add(normalizeEntityName(c));
      for (const w of c.split(/\s+/)) skip.add(normalizeEntityName(w));
    }
  return { people, skip };
};

/** PARTICIPATED_IN: the author (or "we") attends, speaks at, presents at, hosts or will be at the meeting. */
const participates = (body: string, mt: MeetingSpan, author: string, mentions: readonly Mention[]): boolean => {
  const sentenceStart = Math.max(0, body.lastIndexOf('. ', mt.index) + 1);
  const before = body.slice(Math.max(sentenceStart, mt.index - 160), mt.index);
  const subject = new RegExp(`\\b${subjectRe(author)}\\b`, 'gi');
  let last: RegExpExecArray | null = null;
  for (let m = subject.exec(before); m; m = subject.exec(before)) last = m;
  if (!last) return false;
  const afterSubject = before.slice(last.index + last[0].length);
  const verbs = [...afterSubject.matchAll(MEETING_PARTICIPATION)];
  const verb = verbs.at(-1);
  if (!verb || verb.index > 100) return false;
  const window = afterSubject.slice(Math.max(0, verb.index - 16), verb.index);
  if (NEGATION.test(window)) return false;
  const between = afterSubject.slice(0, verb.index);
  // another person as the subject in between ("alice said bob will attend")
  return !mentions.some((m) => m.type === 'Person' && m.name !== author && between.includes(m.name));
};

/** The sentence of `text` around [start, end): its start index and text. */
const sentenceAround = (text: string, start: number, end: number): { from: number; text: string } => {
  const cut = /[.!?](?=\s)|\s[-–—]\s|;/g;
  let from = 0;
  for (let m = cut.exec(text); m && m.index < start; m = cut.exec(text)) from = m.index + m[0].length;
  cut.lastIndex = end;
  const next = cut.exec(text);
  return { from, text: text.slice(from, next ? next.index : text.length) };
};

/** A verb of taking part written after the event: "this pride parade Caroline went to", "the group I joined". */
const AFTER_VERB =
  /^\s+(?:that\s+|which\s+)?(?:SUBJ)\s+(?:(?:just|also|finally|recently|had|has|have|was|were|is|am|are)\s+)*(?:went to|go to|goes to|attended|attend|joined|join|ran|did|took|visited|hosted|organi[sz]ed|took part in|participated in|signed up for|volunteered at|performed at|was at|were at)\b/;

/** The sentence around a span, split at it, and the regex source of the fact's subject (the author, I, we). */
const spanContext = (
  body: string,
  span: { index: number; end: number },
  author: string,
): { S: string; before: string; after: string } => {
  const sent = sentenceAround(body, span.index, span.end);
  return {
    S: subjectRe(author),
    before: body.slice(sent.from, span.index),
    after: body.slice(span.end, sent.from + sent.text.length),
  };
};

/** The last mention of the subject (`S`, see subjectRe) in `text`, or null. */
const lastSubject = (text: string, S: string): RegExpExecArray | null => {
  const subject = new RegExp(`\\b${S}\\b`, 'gi');
  let last: RegExpExecArray | null = null;
  for (let m = subject.exec(text); m; m = subject.exec(text)) last = m;
  return last;
};

/**
 * PARTICIPATED_IN for a community event beyond `participates`: "explicit" when the author (or "we") governs it with
 * a participation verb in the same sentence ("Melanie signed up for a pottery class", "the parade Caroline went
 * to"), "implied" when the event is the author's ("Melanie's pottery class was fun") or the author is the sentence's
 * subject ("Melanie made it in pottery class"); null otherwise, or when negated or another person is the subject.
 */
const takesPart = (
  body: string,
  mt: MeetingSpan,
  author: string,
  mentions: readonly Mention[],
): 'explicit' | 'implied' | null => {
  const { S, before, after } = spanContext(body, mt, author);
  if (
    NEGATION.test(before.slice(-40)) &&
    !/\b(?:can'?t wait|couldn'?t (?:be|have been) (?:more|happier))\b/i.test(before)
  )
    return null;
  const last = lastSubject(before, S);
  const otherPerson = (between: string): boolean =>
    mentions.some(
      (m) => m.type === 'Person' && m.name !== author && new RegExp(`\\b${esc(m.name)}\\b(?!['’]s)`).test(between),
    );
  if (new RegExp(AFTER_VERB.source.replace('SUBJ', S), 'i').test(after)) return 'explicit';
  if (last) {
    const afterSubject = before.slice(last.index + last[0].length);
    if (
      otherPerson(afterSubject) ||
      /\b(?:you|your|he|she|they)\b/i.test(afterSubject.replace(/\b(?:with|for|to)\s+(?:you|them|her|him)\b/gi, ''))
    )
      return null;
    if (
      /\b(?:thinking about|thinks about|wants? to|would like to|hopes? to|hoping to|plans? to|planning to|might|may|could|should|wish(?:es)? )\b/i.test(
        afterSubject,
      )
    )
      return 'implied';
    if (
      EVENT_VERB.test(
        afterSubject.replace(
          /\s*\b(?:a|an|the|this|that|my|her|his|our|their|[\p{Lu}][\p{L}]+['’]s)\s+(?:[\p{L}+'-]+\s+){0,3}$/u,
          '',
        ),
      )
    )
      return 'explicit';
    return 'implied';
  }
  // "Melanie's pottery class", "Caroline's talk": the author's event
  if (new RegExp(`\\b${esc(author)}['’]s\\s+(?:[\\p{L}+'-]+\\s+){0,3}$`, 'iu').test(before)) return 'implied';
  return null;
};

/** Known people who took part alongside the author: "with Caroline", "Melanie and Caroline went". */
const companions = (body: string, mt: MeetingSpan, mentions: readonly Mention[], author: string): string[] => {
  const sent = sentenceAround(body, mt.index, mt.end);
  return mentions
    .filter(
      (m) =>
        m.type === 'Person' &&
        m.name !== author &&
        new RegExp(`\\b(?:with|and)\\s+${esc(m.name)}\\b(?!['’]s)`, 'i').test(sent.text),
    )
    .map((m) => m.id);
};

/**
 * MEMBER_OF for a community group: "explicit" when the author joined it, is part or a member of it or goes to it
 * ("Caroline joined an activist group", "the support group Caroline goes to"), "implied" when the author went to
 * or attended it once, or it is the author's ("Caroline's support group"); null otherwise.
 */
const groupMembership = (
  body: string,
  t: Span,
  author: string,
  mentions: readonly Mention[],
): 'explicit' | 'implied' | null => {
  const { S, before, after } = spanContext(body, t, author);
  if (NEGATION.test(before.slice(-40))) return null;
  const strip = (s: string): string =>
    s.replace(
      /\s*\b(?:a|an|the|this|that|my|her|his|our|their|[\p{Lu}][\p{L}]+['’]s)\s+(?:[\p{L}+'-]+\s+){0,3}$/u,
      ' ',
    );
  const last = lastSubject(before, S);
  const strong =
    /\b(?:join(?:s|ed|ing)?|part of|a member of|member of|goes to|go to|belong(?:s|ed)? to|sings? in|plays? in|founded|started)\s+$/i;
  const weak = /\b(?:went to|going to|attend(?:s|ed|ing)?|volunteer(?:s|ed|ing)? (?:at|for|with))\s+$/i;
  if (last) {
    const afterSubject = before.slice(last.index + last[0].length);
    const other = mentions.some((m) => m.type === 'Person' && m.name !== author && afterSubject.includes(m.name));
    if (!other && afterSubject.length <= 120) {
      const v = `${strip(afterSubject)} `.replace(/\s+$/, ' ');
      if (strong.test(v)) return 'explicit';
      if (weak.test(v)) return 'implied';
    }
  }
  const afterRe = new RegExp(
    `^\\s+(?:that\\s+|which\\s+)?${S}\\s+(?:(?:just|also|recently|has|have|had)\\s+)*(joined|goes to|go to|belongs? to|is part of|attended|went to|volunteers? at)\\b`,
    'i',
  );
  const a = after.match(afterRe);
  if (a) return /joined|goes|go to|belong|part of/i.test(a[1]!) ? 'explicit' : 'implied';
  if (new RegExp(`\\b${esc(author)}['’]s\\s+(?:[\\p{L}+'-]+\\s+){0,3}$`, 'iu').test(before)) return 'implied';
  return null;
};

/** MEMBER_OF: "I'm on / I joined / I lead the X team" (author as subject right before), or "our X team" in the message. */
const isMember = (body: string, sourceText: string, t: Span, author: string): boolean => {
  const before = body.slice(Math.max(0, t.index - 80), t.index);
  const cue = new RegExp(
    `\\b${subjectRe(author)}\\s+(?:(?:is|am|'m|are|'re|has been|have been|was|just|now|recently|also)\\s+)*(?:on|in|part of|a member of|member of|joining|joined|join|leading|leads|lead|running|runs|with)\\s+(?:the\\s+)?$`,
    'i',
  );
  if (cue.test(before)) return true;
  const x = t.name.replace(/ team$/i, '');
  return (
    new RegExp(`\\b(?:our|my)\\s+${esc(x)}\\s+team\\b`, 'i').test(sourceText) ||
    new RegExp(`\\b${esc(author)}'s\\s+${esc(x)}\\s+team\\b`, 'i').test(body)
  );
};

// ---------------------------------------------------------------------------------------------------------------
// Search questions

/**
 * The entities a search question names, for graph-expanded retrieval: people by name or alias (and `@handles`),
 * technologies (TECH lexicon), meetings, teams and projects (repository paths, cue phrases, proper nouns that are
 * no person, place or technology). Each name once per type, in order of appearance; `[]` when none.
 * Deterministic, except that `today`/`tomorrow` before a meeting kind resolve against the current date (UTC).
 */
export const questionEntities = (
  text: string,
  people: readonly KnownPerson[],
): { name: string; type: EntityType }[] => {
  const out: { name: string; type: EntityType; index: number }[] = [];
  const index = buildIndex(people);
  const push = (name: string, type: EntityType, at: number): void => {
    const k = normalizeEntityName(name);
    if (k && !out.some((o) => o.type === type && normalizeEntityName(o.name) === k))
      out.push({ name, type, index: at });
  };
  const explained: string[] = [];
  // people: n-grams of words against the known names and aliases
  const words = [...text.matchAll(/@?[\p{L}\p{N}][\p{L}\p{N}._-]*[\p{L}\p{N}]|@?[\p{L}\p{N}]/gu)];
  for (let i = 0; i < words.length; i++) {
    for (let n = 3; n >= 1; n--) {
      if (i + n > words.length) continue;
      const spelled = text.slice(words[i]!.index, words[i + n - 1]!.index + words[i + n - 1]![0].length);
      const k = normalizeEntityName(spelled);
      if (STOPWORDS.has(k) || (technologyName(k) && !spelled.startsWith('@'))) continue;
      const p = resolvePerson(index, k);
      if (!p || (k.length < 3 && !spelled.startsWith('@'))) continue;
      push(p.name, 'Person', words[i]!.index);
      explained.push(spelled);
      i += n - 1;
      break;
    }
  }
  for (const m of text.matchAll(/(?<![\w.@])@([\p{L}\p{N}][\p{L}\p{N}._-]*[\p{L}\p{N}_])/gu)) {
    if (!coveredBy(m[1]!, explained)) {
      push(m[1]!, 'Person', m.index);
      explained.push(m[1]!);
    }
  }
  const tags = extractTags(text, [], classify(text), { author: '', mentions: [] }, '');
  for (const t of tags.entityTags) {
    const tech = technologyName(t);
    if (tech) {
      push(tech, 'Technology', Math.max(0, findTech(text, tech)?.index ?? 0));
      explained.push(t);
    }
  }
  // technologies the tag cap left out, and lowercase spellings in a question ("is lein faster than boot?")
  for (const w of words) {
    const t = TECH.get(w[0].toLowerCase());
    if (t && (!t.capitalOnly || /^\p{Lu}/u.test(w[0]))) {
      push(t.name, 'Technology', w.index);
      explained.push(w[0]);
    }
  }
  const ts = new Date().toISOString();
  for (const mt of findMeetings(text, ts)) {
    push(mt.name, 'Meeting', mt.index);
    explained.push(mt.name);
  }
  for (const t of findTeams(text)) {
    push(t.name, 'Team', t.index);
    explained.push(t.name);
  }
  for (const p of findProjects(text, '\u0000')) {
    if (!coveredBy(p.name, explained)) {
      push(p.name, 'Project', p.index);
      explained.push(p.name);
    }
  }
  for (const m of text.matchAll(/(?<![\w/.])([A-Za-z][\w.-]*\/[\w.-]*[A-Za-z0-9])(?![\w/])/g)) {
    if (/[a-z]/.test(m[1]!) && !coveredBy(m[1]!, explained) && m[1]!.split('/').every((x) => x.length >= 2)) {
      const repo = m[1]!.split('/')[1]!;
      if (!technologyName(repo) && !/^(and|or)$/i.test(repo)) push(repo, 'Project', m.index);
      explained.push(m[1]!);
    }
  }
  const names = detectNames(text, [...tags.entityTags, ...nameWords(text)]);
  for (const n of names.people) {
    if (/^\p{Lu}/u.test(n) && !technologyName(n) && !coveredBy(n, explained)) {
      push(n, 'Person', Math.max(0, findWord(text, n)));
      explained.push(n);
    }
  }
  const candidates = [...tags.entityTags];
  // a capitalised first word the lexicon does not know ("Expound: who wrote it?")
  const first = text.match(/^\s*(\p{Lu}[\p{L}\p{N}-]+)/u)?.[1];
  if (first && lexTag(first.toLowerCase()) === '' && !STOPWORDS.has(first.toLowerCase())) candidates.push(first);
  for (const t of candidates) {
    if (coveredBy(t, explained) || names.skip.has(normalizeEntityName(t))) continue;
    if (t.split(' ').some((w) => /Place|Country|City|Region|Organization/.test(lexTag(w.toLowerCase())))) continue;
    if (
      /^(What|Who|Whom|Whose|When|Where|Which|Why|How|Is|Are|Was|Were|Did|Does|Do|Can|Could|Should|Would|Will)$/.test(t)
    )
      continue;
    if (projectNameProblem(t, false)) continue;
    push(t, 'Project', Math.max(0, findWord(text, t)));
    explained.push(t);
  }
  return out.sort((a, b) => a.index - b.index).map(({ name, type }) => ({ name, type }));
};
