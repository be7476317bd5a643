import type { FactType, Importance } from '@atlas/core';
import type { Classified } from './classify.js';
import { HIGH_IMPACT, isNameWord, lexTag, STOPWORDS } from './lexicon.js';
import { ELIDED_SELF, MEDIA_CAPTION, stripOpeners } from './rewrite.js';
import { contentWords, wordTokens } from './sentences.js';

/** The signals the quality score reads, all measured on the source sentence (not the rewritten text). */
export interface ScoreInput {
  sentence: string;
  cls: Classified;
  /** Specific signals from tagging: technologies, identifiers, proper nouns. */
  specifics: number;
  links: number;
  hasCode: boolean;
  /** Share of the sentence's characters inside inline code, in [0, 1]: mostly-code sentences are not prose facts. */
  codeShare: number;
  /** The sentence was given thread context (it answers a known root). */
  hasContext: boolean;
  /**
   * The message answers a question asked just before it by someone else (ExtractionInput.answers): what it says was
   * asked for, so it counts as context (spec "Memory": 0.5-0.8 observations, opinions, context) unless it asks back.
   */
  answers?: boolean;
  isBot: boolean;
  lang: string;
}

/** Starting score per fact type, before density, specificity and penalties (spec "Memory" bands). */
export const TYPE_BASE: Record<FactType, number> = {
  decision: 0.62,
  action_item: 0.58,
  observation: 0.4,
  opinion: 0.4,
  question: 0.3,
};
/** Highest score per type: questions stay medium at best. */
const TYPE_CAP: Record<FactType, number> = {
  decision: 1,
  action_item: 0.95,
  observation: 0.92,
  opinion: 0.79,
  question: 0.72,
};

/**
 * Added to a sentence of a message that answers a question asked just before it (ScoreInput.answers). Measured on
 * LoCoMo (bench:retrieval) and the real exports: see docs/benchmarks.md#benchretrieval.
 */
export const ANSWER_BONUS = 0.2;

const VERSION = /\bv?\d+\.\d+(\.\d+)?(-[\w.]+)?\b/g;
const NUMBER = /(?<![\w.])\d+([.,]\d+)?(%|ms|s|k|m|gb|mb|kb|x)?(?![\w.])/gi;
const VERSION_ONE = /\bv?\d+\.\d+/;
const VAGUE_START = /^(it|this|that|they|those|these|he|she|there)\b/i;
const VAGUE_OBJECT = /\b(this|that|it|them|things?|stuff)\b/i;

const AUX =
  /\b(is|are|was|were|be|been|has|have|had|do|does|did|can|could|will|would|should|must|may|might|isn't|aren't|wasn't|doesn't|don't|didn't|can't|won't|'s|'re|'ve|'ll|'d)\b/i;

/** True when some word is a verb: an auxiliary, or a word compromise tags as a verb form. */
const hasVerb = (s: string): boolean =>
  AUX.test(s.replace(/’/g, "'")) ||
  wordTokens(s).some((w) => /Infinitive|PresentTense|PastTense|Gerund|Participle/.test(lexTag(w)));

const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/**
 * quality_score in [0, 1] (spec "Memory": information density, actionability, specificity), rounded to 0.01.
 * score = base(type) + density (≤ 0.16) + specificity (≤ 0.26) + actionability (−0.08…0.1) + technical claim (0.06)
 * − penalties (see packages/pipeline/README.md), capped per type (questions ≤ 0.72, opinions ≤ 0.8). Pure; never throws.
 */
export const qualityScore = (x: ScoreInput): number => {
  const words = wordTokens(x.sentence);
  const content = contentWords(words);
  const density = words.length ? content.length / words.length : 0;
  const versions = x.sentence.match(VERSION)?.length ?? 0;
  const numbers = x.sentence.replace(VERSION, ' ').match(NUMBER)?.length ?? 0;
  const signals = x.specifics + 2 * versions + Math.min(numbers, 2) + Math.min(x.links, 1) + (x.hasCode ? 1 : 0);
  let score = TYPE_BASE[x.cls.type];
  score += 0.16 * clamp((density - 0.3) / 0.35, 0, 1);
  score += Math.min(0.26, 0.065 * signals);
  score += actionability(x.cls, content.length);
  const habit = HABIT.test(x.sentence);
  const self =
    x.cls.type === 'observation' || x.cls.type === 'opinion' ? personal(x.sentence, content.length, habit) : 0;
  score += self;
  if (x.cls.type === 'observation' && x.specifics > 0 && CLAIM.test(x.sentence)) score += 0.06;
  if (x.answers && x.cls.type !== 'question') score += ANSWER_BONUS;
  const prose = stripOpeners(x.sentence)
    .text.replace(/(^|\s)@[\w.-]+|https?:\/\/\S+/g, ' ')
    .trim();
  score -= penalties(x, prose.length, words.length, self, habit);
  return Math.round(clamp(score, 0, TYPE_CAP[x.cls.type]) * 100) / 100;
};

/** The speaker says something about themselves: their life, plans, likes, people, work. */
const SELF = /\b(I|I'm|I've|I'd|I'll|my|me|we|we're|we've|our|us)\b/i;
/** A time anchor: when the stated thing happened or will happen. */
const WHEN =
  /\b(yesterday|today|tonight|tomorrow|ago|recently|last (night|week|weekend|month|year|summer|winter|spring|fall|time)|next (week|weekend|month|year|summer)|this (morning|week|weekend|month|year|summer)|(january|february|march|april|may|june|july|august|september|october|november|december)|(monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(19|20)\d\d)\b/i;
/** Verbs of a concrete personal event or state (did, went, started, bought, joined, adopted, love, plan …). */
const EVENT =
  /\b(went|go(ing)?|visited|started|finished|joined|left|moved|bought|got|made|took|ran|painted|wrote|read|saw|met|adopted|married|graduated|learned|played|won|lost|signed|built|planned|plan(ning)?|decided|want(ed)? to|love[ds]?|like[ds]?|enjoy(ed|s)?|keen on|working (on|as|at)|work(ed)? (at|as|on)|studying|volunteer(ed|ing)?|attend(ed|ing)?|celebrat(ed|ing)|thinking (about|of)|excited (about|for)|thrilled|proud|lucky to have|special to|(big )?fan of|dream (of|to)|gift from|(I'm|I am|we're|we are) \w+ing|(I|we) had (a|an))\b/i;

/**
 * A first-person clause: "I"/"we" (through auxiliaries and adverbs: "I've been", "we just") followed by
 * a content word, which after a subject is the verb or the state ("I play", "I was so happy"); or
 * "my/our X" with a verb ("my kids are", "our team shipped").
 */
const SELF_CLAUSE =
  /\b(?:I|we)(?:'(?:ve|m|d|ll)|\s+(?:have|had|am|was|were|will|would|also|just|really|finally|recently|always|never|still|usually|even|actually|totally|so|been|got|get|can|could|should|did|do))*\s+([a-z]+)|\b(?:my|our)\s+[a-z]+\s+(?:is|are|was|were|has|have|had|\w+ed)\b/gi;

/**
 * A present-tense statement of what the speaker does or has: a habit, a pastime, a home, a possession ("I play
 * clarinet", "I go running every morning", "we live in Boston", "I have a guinea pig"). Short, but a fact to keep.
 */
const HABIT =
  /\b(?:I|we)\s+(?:usually\s+|often\s+|also\s+|still\s+|now\s+|actually\s+)?(?:play|go|run|paint|draw|write|cook|bake|swim|hike|teach|work|study|live|own|collect|volunteer|practi[cs]e|have\s+(?!(?:a|an|any|some|no|the)\s+(?:question|problem|issue|doubt|idea|feeling|look|go|try|clue)\b))\s+[\w-]+/i;

/** Showing something of one's own: "Here's a pic of my family camping at the beach", "Check out my painting". */
const SHARING = /\b(?:here's|here is|check out|take a look at|look at|this is)\b.*\b(?:my|our)\s+\w+/i;

/** Who or what something is called: a name given to a person, pet, place or thing. */
const NAMING = /\b(?:name is|names are|named|called)\s+["“']?[A-Z][\w'-]+/;

const selfClause = (sentence: string): boolean => {
  if (ELIDED_SELF.test(sentence)) return true;
  for (const m of sentence.replace(/’/g, "'").matchAll(SELF_CLAUSE)) {
    const word = m[1]?.toLowerCase();
    if (word === undefined || (!STOPWORDS.has(word) && word !== 'not')) return true;
  }
  return false;
};

/**
 * Personal facts (spec "Memory": observations and context, 0.5-0.8): a first-person statement of a
 * concrete event or state, more so with a time anchor. Technical chat rarely trips it; conversational
 * memory (who did what, when) depends on it. A known event verb gives 0.18, another first-person clause
 * 0.14, a sentence that only mentions the speaker 0.04-0.08; a time anchor adds 0.08.
 */
const personal = (sentence: string, content: number, habit: boolean): number => {
  if (NAMING.test(sentence) && content >= 2) return 0.18; // "Her name is Shadow!", "our son, named Kyle"
  if ((MEDIA_CAPTION.test(sentence.trim()) || SHARING.test(sentence)) && content >= 3) return 0.14;
  if (!(SELF.test(sentence) || ELIDED_SELF.test(sentence)) || content < (habit ? 2 : 3)) return 0;
  const clause =
    EVENT.test(sentence) || NAMING.test(sentence) || habit
      ? 0.18
      : selfClause(sentence)
        ? 0.14
        : content >= 5
          ? 0.08
          : 0.04;
  return clause + (WHEN.test(sentence) ? 0.08 : 0);
};

const CLAIM =
  /\b(is|are|isn't|aren't|does|doesn't|can|can't|cannot|will|won't|returns?|supports?|requires?|uses?|works with|means|lets you|allows?|provides?|contains?|depends on|fixes|fixed|causes?|because)\b/i;

const actionability = (cls: Classified, content: number): number => {
  if (cls.type === 'decision') return cls.isRelease ? 0.08 : cls.collective ? 0.04 : -0.08;
  if (cls.type !== 'action_item') return 0;
  return (cls.deadline ? 0.06 : 0) + (cls.owner && cls.owner !== 'someone' ? 0.02 : 0) + (content >= 3 ? 0.02 : 0);
};

/** Words of pleasantries, praise and reactions: they carry tone, not facts. */
const PLEASANTRY = new Set(
  `wow woah whoa aww yay woohoo hey hi hello thanks thank cool great awesome amazing glad sweet nice love loved lovely
  congrats congratulations good luck yeah yep yup yes sure totally definitely haha lol omg fun happy excited proud
  inspiring wonderful fantastic beautiful cute incredible impressive brave best rock rocks appreciate appreciated
  support supportive kind care caring hug hugs wish wishing hope hoping keep up work job doing look looks looking
  sounds sound awesome right true agree agreed thing things stuff lot lots much pretty really kinda gonna wanna
  feel feeling feels`.split(/\s+/),
);

/**
 * A pleasantry, praise or reaction: fewer than three words remain once stop words, pleasantry words and
 * names are gone ("Wow, that's so cool, Caroline!", "You're doing an awesome job!", "Thanks, glad you like it").
 */
const phatic = (sentence: string): boolean =>
  contentWords(wordTokens(sentence)).filter((w) => !PLEASANTRY.has(w) && !/^[A-Z]/.test(w) && !isNameWord(w)).length <
  3;

/** A sentence that stops mid-thought: "… and got.", "… with the:", "… do lein new ....." */
const DANGLING = /\b(and|or|but|got|to|the|a|an|with|of|for|like)\W*$|[:;,]\s*$|(\.{2,}|…)\s*$/i;

const penalties = (x: ScoreInput, chars: number, words: number, self: number, habit: boolean): number => {
  let p = 0;
  // Short is vague, unless it is a release headline or a dated personal event ("I painted that lake last year").
  const datedEvent = self >= 0.26 && words >= 7;
  // A short first-person statement of 6+ words, or of a habit or possession (HABIT), that does not trail off
  // ("I'm planning a trip to the East Coast.", "I play clarinet!").
  const selfStatement = self >= 0.14 && (words >= 6 || habit) && !DANGLING.test(x.sentence);
  if (chars < 40) p += (x.cls.isRelease && VERSION_ONE.test(x.sentence)) || datedEvent || selfStatement ? 0.1 : 0.36;
  else if (chars < 60) p += 0.08;
  if (x.cls.type === 'action_item' && x.specifics === 0 && VAGUE_OBJECT.test(x.sentence)) p += 0.1;
  if (chars > 260 || words > 50) p += 0.06;
  const symbols = x.sentence.match(/[=(){}[\];<>_$]/g)?.length ?? 0;
  if (x.codeShare > 0.6 || symbols / Math.max(1, x.sentence.length) > 0.06) p += 0.3;
  if (/[:;,]$/.test(x.sentence) || /\b(the following|like this|this one|as follows)\b/i.test(x.sentence)) p += 0.1;
  if (x.cls.hedged) p += x.cls.type === 'opinion' ? 0.05 : 0.12;
  if (VAGUE_START.test(x.sentence) && !x.hasContext) p += 0.1;
  if (x.isBot) p += 0.1;
  if (!habit && !hasVerb(x.sentence)) p += 0.1; // HABIT's verb may be tagged a noun ("play")
  if (x.lang !== 'en') p += 0.25;
  if (!habit && phatic(x.sentence)) p += 0.15;
  return p;
};

/**
 * importance: high for group decisions and releases scoring ≥ 0.8 and for any non-question on a breaking change,
 * security issue, outage or deprecation scoring ≥ 0.5; medium for action items, or any fact scoring ≥ 0.7; otherwise low.
 */
export const importanceOf = (cls: Classified, score: number, sentence: string): Importance => {
  const type = cls.type;
  const impactful = score >= 0.5 && type !== 'question' && HIGH_IMPACT.test(sentence);
  if ((type === 'decision' && cls.collective && score >= 0.8) || impactful) {
    return 'high';
  }
  if (type === 'action_item' || score >= 0.7) return 'medium';
  return 'low';
};
