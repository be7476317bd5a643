import type { Classified } from './classify.js';
import { CHITCHAT, GENERIC_NOUNS, isNameWord, isNounish, lexTag, STOPWORDS, TECH } from './lexicon.js';

/** Tags of one fact (spec "Memory": topic_tags, entity_tags; detail form: action_tags). */
export interface Tags {
  topicTags: string[];
  entityTags: string[];
  actionTags: string[];
  /** Count of specific signals found (tech names, identifiers, names): an input of the quality score. */
  specifics: number;
}

const MAX_TOPICS = 4;
const MAX_ENTITIES = 6;

/** Code-like identifiers in prose: `core.async`, `clojure.core/merge`, `with-parent-context`, `rewrite_data_files`. */
const IDENT = /^(?:[a-z][\w-]*[./][\w.\-/]*\w|[a-z]+(?:-[a-z0-9]+){1,4}|[a-z]+(?:_[a-z0-9]+){1,4}|::?[a-z][\w.\-/]*)$/;
const PREFIXES = new Set(
  'non pre re co self multi sub auto anti semi well high low long short front back built much full open real cross one two three third first second out over under up down in on off end'.split(
    ' ',
  ),
);

/** `front-end`, `self-contained`, `much-longer`: a two-part hyphenated word made of ordinary words. */
const isEnglishCompound = (w: string): boolean => {
  const parts = w.split('-');
  if (parts.length !== 2) return false;
  const [a = '', b = ''] = parts;
  return PREFIXES.has(a) || (lexTag(a) !== '' && lexTag(b) !== '');
};

const ACRONYM_SKIP = new Set(
  'OK LOL IMO IMHO TBH BTW FYI PSA TODO AFAIK IIRC OMG WTF AM PM ETA FAQ TL DR ASAP NB PS'.split(' '),
);

interface Token {
  raw: string;
  lower: string;
  first: boolean;
  /** Only one space separates this token from the previous one (no punctuation between). */
  joined: boolean;
}

/** Word tokens; `first` marks the first word of the sentence or of a clause after `.`/`:` (capitalised anyway). */
const tokenize = (s: string): Token[] => {
  const out: Token[] = [];
  let first = true;
  let end = -1;
  const text = s.replace(/https?:\/\/\S+/g, ' ').replace(/\.{2,}|…/g, ' . ');
  for (const m of text.matchAll(/[@#]?[\p{L}\p{N}:+][\p{L}\p{N}'’._/+#-]*|[.!?:;"“(]/gu)) {
    const raw = m[0].replace(/[._/'’:-]+$/, '');
    if (raw === '' || /^[.!?:;"“(]$/.test(m[0])) {
      first = true;
      continue;
    }
    const joined = end >= 0 && text.slice(end, m.index) === ' ';
    end = m[0] === raw ? m.index + m[0].length : -1;
    if (raw.startsWith('@')) continue;
    out.push({ raw, lower: raw.toLowerCase(), first, joined });
    first = false;
  }
  return out;
};

const techAt = (tokens: readonly Token[], i: number): { name: string; span: number } | null => {
  const t = tokens[i]!;
  const next = tokens[i + 1];
  if (next) {
    const two = TECH.get(`${t.lower} ${next.lower}`);
    if (two && (!two.capitalOnly || /^[A-Z]/.test(t.raw))) return { name: two.name, span: 2 };
  }
  const one = TECH.get(t.lower);
  if (one && (!one.capitalOnly || (/^[A-Z]/.test(t.raw) && !t.first))) return { name: one.name, span: 1 };
  return null;
};

const isProperNoun = (t: Token): boolean => {
  if (t.first || t.raw.length < 2 || STOPWORDS.has(t.lower) || CHITCHAT.has(t.lower)) return false;
  if (/^[A-Z]{2,6}\d?$/.test(t.raw)) return !ACRONYM_SKIP.has(t.raw);
  if (/^[A-Z][a-z]+[A-Z]\w*$/.test(t.raw) || /^[a-z]+[A-Z]\w*$/.test(t.raw)) return true; // CamelCase, camelCase
  if (!/^[A-Z][\p{L}\d]+$/u.test(t.raw)) return false;
  const tag = lexTag(t.lower);
  return tag === '' || isNameWord(t.lower) || /ProperNoun|Place|Country|City/.test(tag);
};

const push = (list: string[], value: string, max: number): void => {
  if (value && list.length < max && !list.some((v) => v.toLowerCase() === value.toLowerCase())) list.push(value);
};

/**
 * Topic, entity and action tags of one sentence (pure, deterministic).
 * Topics (1–4, lowercase): code identifiers, technologies, then noun phrases; `fallbackTopic` (the channel name)
 * when none is found. Entities: mentioned people, technologies, proper nouns and acronyms.
 * Actions: the action verb, the owner's name and the deadline of an action item.
 */
export const extractTags = (
  sentence: string,
  inlineCode: readonly string[],
  cls: Classified,
  people: { author: string; mentions: readonly string[] },
  fallbackTopic: string,
): Tags => {
  const topics: string[] = [];
  const entities: string[] = [];
  let specifics = 0;
  for (const code of inlineCode) {
    if (sentence.includes(code) && /^[\w.\-/:*?!<>+]{2,40}$/.test(code)) {
      push(topics, code.toLowerCase(), MAX_TOPICS);
      specifics++;
    }
  }
  let prose = sentence;
  for (const m of people.mentions) {
    if (prose.includes(`@${m}`)) push(entities, m, MAX_ENTITIES);
    prose = prose.replaceAll(`@${m}`, ' ');
  }
  const tokens = tokenize(prose);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.raw.startsWith('#')) continue;
    const tech = techAt(tokens, i);
    if (tech) {
      push(entities, tech.name, MAX_ENTITIES);
      push(topics, tech.name.toLowerCase(), MAX_TOPICS);
      specifics++;
      i += tech.span - 1;
    } else if (IDENT.test(t.raw) && !STOPWORDS.has(t.lower) && !isEnglishCompound(t.lower)) {
      if (!topics.some((x) => x.includes(t.lower))) push(topics, t.lower, MAX_TOPICS);
      specifics++;
    } else if (isProperNoun(t)) {
      let name = t.raw;
      while (tokens[i + 1]?.joined && /^[A-Z][\p{L}\d]+$/u.test(tokens[i + 1]!.raw) && !techAt(tokens, i + 1)) {
        name += ` ${tokens[++i]!.raw}`;
      }
      push(entities, name, MAX_ENTITIES);
      specifics++;
    }
  }
  for (const phrase of nounPhrases(tokens)) push(topics, phrase, MAX_TOPICS);
  if (topics.length === 0 && fallbackTopic) topics.push(fallbackTopic.toLowerCase());
  return { topicTags: topics, entityTags: entities, actionTags: actionTags(cls, people.author), specifics };
};

const BEFORE_VERB = new Set(
  "to i you we they can will would should could might must don't doesn't didn't just please let's also".split(' '),
);

/** A lone word is a topic when compromise does not know it (jargon) or knows it as a plural or a long noun. */
const topicWord = (w: string): boolean => {
  const tag = lexTag(w);
  return (
    w.length >= 4 && (tag === '' || (/Plural/.test(tag) && w.length >= 6) || (/Singular/.test(tag) && w.length >= 7))
  );
};

/**
 * Idioms whose noun is no subject (`of course`, `in fact`, `by default`): a preposition or `no` and a noun, lower-cased.
 * Their noun never starts a topic tag ("It works, of course" is not about a course).
 */
const IDIOMS = new Set(
  `of_course in_fact at_least at_most at_best at_worst at_first at_last at_all in_general in_particular in_short
  in_total in_practice in_theory in_advance in_addition in_turn in_detail in_person in_time on_time on_purpose
  on_average by_default by_hand by_accident by_chance by_design for_example for_instance for_sure for_now for_real
  for_good in_case in_effect in_mind on_track at_hand of_sorts no_doubt no_idea no_worries no_problem`
    .split(/\s+/)
    .map((p) => p.replace('_', ' ')),
);

/**
 * Common words compromise's lexicon does not hold (so they pass for jargon nouns) that are adjectives, adverbs or verbs
 * in chat: "pretty sure", "it's possible", "a different way", "depending on". Never a topic tag.
 */
const NOT_NOUNS = new Set('pretty possible different similar current crazy anywhere depending thats first'.split(' '));

/** Runs of one or two noun-like words (not stop words, not generic, not an idiom's), longest first, e.g. `exit promise`. */
const nounPhrases = (tokens: readonly Token[]): string[] => {
  const out: string[] = [];
  let run: string[] = [];
  const flush = (): void => {
    if (run.length >= 2) out.push(run.slice(-2).join(' '));
    else if (run.length === 1 && topicWord(run[0]!)) out.push(run[0]!);
    run = [];
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const afterVerbCue = run.length === 0 && BEFORE_VERB.has(tokens[i - 1]?.lower ?? '');
    const ok =
      !afterVerbCue &&
      /^\p{Ll}[\p{Ll}\d]{2,}$/u.test(t.raw) &&
      !/(ly|ed|able)$/.test(t.lower) &&
      isNounish(t.lower) &&
      !GENERIC_NOUNS.has(t.lower) &&
      !CHITCHAT.has(t.lower) &&
      !NOT_NOUNS.has(t.lower) &&
      !IDIOMS.has(`${tokens[i - 1]?.lower ?? ''} ${t.lower}`);
    if (ok) run.push(t.lower);
    else flush();
  }
  flush();
  return out.sort((a, b) => b.split(' ').length - a.split(' ').length);
};

const actionTags = (cls: Classified, author: string): string[] => {
  if (cls.type !== 'action_item') return [];
  const tags: string[] = [];
  if (cls.actionVerb) tags.push(cls.actionVerb);
  const owner = cls.owner === 'self' ? author : cls.owner;
  if (owner && owner !== 'someone') tags.push(owner);
  if (cls.deadline) tags.push(cls.deadline.toLowerCase());
  return tags;
};
