// People: the index of known people and its lookups, and the tests that tell a detected name is a person's.

import { normalizeEntityName } from '@atlas/core';
import nlp from 'compromise';
import { GENERIC_NOUNS, isNameWord, lexTag, STOPWORDS } from '../../facts/lexicon.js';
import type { KnownPerson } from '../port.js';
import { technologyName } from './technologies.js';
import { esc } from './text.js';

export interface PersonIndex {
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

export const buildIndex = (people: readonly KnownPerson[]): PersonIndex => {
  const cached = INDEXES.get(people);
  if (cached && cached.size === people.length) return cached.index;
  const index: PersonIndex = { byKey: new Map(), byFirst: new Map(), bySquash: new Map() };
  for (const p of people) addToIndex(index, p);
  INDEXES.set(people, { size: people.length, index });
  return index;
};

export const addToIndex = (index: PersonIndex, p: KnownPerson): void => {
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
export const resolvePerson = (index: PersonIndex, spelling: string): KnownPerson | null => {
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
export const distinctive = (key: string): boolean =>
  key.length >= 4 &&
  !STOPWORDS.has(key) &&
  !GENERIC_NOUNS.has(key) &&
  technologyName(key) === null &&
  (/[\d._-]/.test(key) || key.includes(' ') || lexTag(key) === '' || isNameWord(key));

export const nameWords = (text: string): string[] =>
  [...text.matchAll(/(?<![.!?:]\s|^)\b(\p{Lu}\p{Ll}+)/gu)]
    .map((m) => m[1]!)
    .filter((w) => isNameWord(w.toLowerCase()) && !technologyName(w));

const cleanNlp = (s: string): string =>
  s
    .replace(/^[^\p{L}]+|[^\p{L}\p{N}]+$/gu, '')
    .replace(/['’]s$/, '')
    .trim();

/** A one-word name with the capitalised surname that follows it in `text` ("Stuart" → "Stuart Halloway"). */
export const withSurname = (name: string, text: string): string =>
  name.includes(' ')
    ? name
    : (text.match(new RegExp(`\\b${esc(name)} \\p{Lu}\\p{Ll}+(?=['’]s\\b|\\b)`, 'u'))?.[0] ?? name).replace(
        /\s+\S+$/,
        (sur) => (technologyName(sur.trim()) || STOPWORDS.has(sur.trim().toLowerCase()) ? '' : sur),
      );

/** A detected name that can be a person's: capitalised words, no acronym, technology, organisation or place. */
export const plausiblePersonName = (name: string): boolean => {
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
export const NOT_A_PERSON_CONTEXT = (name: string): RegExp =>
  new RegExp(
    `\\b(?:support for|using|uses|use|via|into|on top of|port of|version of|install|installed|upgrade|upgraded)\\s+${esc(name)}\\b|\\b${esc(name)}(?:['’]s)?\\s+(?:rules?|sessions?|library|lib|engine|version|api|docs?|code|project|repo|app|queries|query|plugin|server|client|build|builds|ci|dsl|syntax|support|release|integration)\\b`,
    'i',
  );

export const isPersonName = (name: string, index: PersonIndex, local: PersonIndex): boolean => {
  const k = normalizeEntityName(name);
  return index.byKey.has(k) || local.byKey.has(k);
};

/** True when `name` is one of `covered` or a word sequence inside one (`Toolbox` in `Keechma Toolbox`). */
export const coveredBy = (name: string, covered: readonly string[]): boolean => {
  const k = ` ${normalizeEntityName(name).replaceAll('/', ' ')} `;
  return covered.some((c) => ` ${normalizeEntityName(c).replaceAll('/', ' ')} `.includes(k));
};

/**
 * People compromise detects (capitalised names only), and the places, organisations and dates it sees, in the
 * sentences of `text` that hold one of `candidates`. compromise's tagger costs ~1 ms per short sentence, so it
 * runs only when there is a candidate (an unexplained proper noun or a first name), on those sentences only.
 */
export const detectNames = (text: string, candidates: readonly string[]): { people: string[]; skip: Set<string> } => {
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
