import { CHITCHAT, STOPWORDS } from './lexicon.js';
import { CODE_PLACEHOLDER } from './markup.js';

/** One candidate unit of a message: a sentence (or a short sentence merged with the next). */
export interface Sentence {
  /** Clean text without `[code]` placeholders. */
  text: string;
  /** Position of the (first) sentence in the message, from 0. */
  index: number;
  /** A fenced code block followed or was inside this sentence. */
  hasCode: boolean;
}

const ABBREVIATION = /\b(e\.g|i\.e|etc|vs|cf|approx|mr|mrs|ms|dr|st|no|fig|incl|resp|aka)\.$/i;

/** Splits one line at `.`, `!`, `?` or `…` followed by space, keeping abbreviations (`e.g.`) and versions intact. */
const splitLine = (line: string): string[] => {
  const parts = line.split(/(?<=[.!?…])\s+/);
  const out: string[] = [];
  for (const part of parts) {
    const prev = out[out.length - 1];
    if (prev !== undefined && (ABBREVIATION.test(prev) || /(^|[\s(])[a-z]\.$/i.test(prev.slice(-3)))) {
      out[out.length - 1] = `${prev} ${part}`;
    } else out.push(part);
  }
  return out;
};

/**
 * Splits clean text into sentences: each line separately (list bullets dropped), then at sentence punctuation.
 * A `[code]` line marks the sentence before it (`hasCode`). Inline code (`inlineCode`, as preprocess lists it) is never
 * split. Returns sentences in order, without empty ones.
 */
export const splitSentences = (text: string, inlineCode: readonly string[] = []): Sentence[] => {
  const out: Sentence[] = [];
  const shielded: string[] = [];
  let src = text;
  for (const code of inlineCode) {
    if (!/[.!?]\s/.test(code) || !src.includes(code)) continue;
    src = src.replaceAll(code, `\uE000${shielded.length}\uE001`);
    shielded.push(code);
  }
  const unshield = (s: string): string => s.replace(/\uE000(\d+)\uE001/g, (_m, i: string) => shielded[Number(i)] ?? '');
  for (const rawLine of src.split('\n')) {
    const hadCode = rawLine.includes(CODE_PLACEHOLDER);
    const line = rawLine
      .replaceAll(CODE_PLACEHOLDER, ' ')
      .replace(/^\s*([-*•·]|\d{1,2}[.)])\s+/, '')
      .trim();
    const last = out[out.length - 1];
    if (hadCode && last) last.hasCode = true;
    for (const s of splitLine(line)) {
      const t = unshield(s.trim());
      if (t.length > 0) out.push({ text: t, index: out.length, hasCode: hadCode && !last });
    }
  }
  return out;
};

/** Lowercase word tokens of a sentence, mentions and links left out. */
export const wordTokens = (s: string): string[] =>
  s
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/(^|\s)[@#][\w.-]+/g, ' ')
    .toLowerCase()
    .match(/[\p{L}\p{N}+][\p{L}\p{N}'’._/+-]*/gu)
    ?.map((w) => w.replace(/’/g, "'").replace(/[._/-]+$/, '')) ?? [];

/** Words that are neither stop words nor chit-chat: the "content" of a sentence. */
export const contentWords = (words: readonly string[]): string[] =>
  words.filter((w) => !STOPWORDS.has(w) && !CHITCHAT.has(w) && !/^\d{1,2}$/.test(w));

const VAGUE = [
  /^(that|this|it)('s| is)? (makes sense|works?|worked|helps?|helped|is (great|cool|nice|awesome|interesting|weird|odd|strange))\b/i,
  /^(i'?ll|i will|let me|i'?m going to|gonna) (try|check|look|have a look|take a look|see|test)( (that|it|this|them|again|out|later|now|into it))*\W*$/i,
  /^(good|great|fair|nice) (point|idea|question|catch|call)\b/i,
  /^(me too|same here|same|i see|got it|never ?mind|nvm|no worries|not sure|i don'?t know|no idea|any ideas?|anyone\??)\W*$/i,
  /^(hope|hopefully) (this|that|it) helps\b/i,
  /^thanks?( you)?( so much| a lot)? for (the|your|all the) (help|info|answer|tip|reply|replies|explanation)s?\W*$/i,
];

/**
 * True when a sentence carries no fact: under 3 words, only stop words and chit-chat ("thanks a lot!",
 * "lol", "+1"), pure emoji/punctuation, or a vague pattern ("that makes sense", "I'll try that", "good point").
 */
export const isNoise = (text: string): boolean => {
  const words = wordTokens(text);
  if (words.length < 3) return true;
  if (VAGUE.some((re) => re.test(text.replace(/^(@[\w.-]+[,:]?\s+)+/, '').trim()))) return true;
  const content = contentWords(words);
  return content.length === 0 || (content.length === 1 && words.length < 5);
};

const CONTINUATION = /^(it|this|which|includes?|including|fixes|adds|supports)\b/i;
const MERGE_MAX = 260;

/**
 * Joins a sentence with the next when the next continues it ("It …", "Includes …", "Which …") or is a bare link
 * (`cited here?` + URL), so that a fact stays self-contained ("Fulcro 2.1.5 released. Includes …"). At most two sentences per unit; questions end a unit.
 */
export const mergeShort = (sentences: readonly Sentence[]): Sentence[] => {
  const out: Sentence[] = [];
  let joined = false;
  for (const s of sentences) {
    const prev = out[out.length - 1];
    if (prev && !joined && joinable(prev.text, s.text)) {
      const sep = /[.!?…:]$/.test(prev.text) ? ' ' : '. ';
      out[out.length - 1] = {
        text: `${prev.text}${sep}${s.text}`,
        index: prev.index,
        hasCode: prev.hasCode || s.hasCode,
      };
      joined = true;
    } else {
      out.push({ ...s });
      joined = false;
    }
  }
  return out;
};

const joinable = (prev: string, next: string): boolean =>
  (/^https?:\/\/\S+$/.test(next) && !isNoise(prev)) ||
  (!/\?$/.test(prev) &&
    prev.length + next.length < MERGE_MAX &&
    CONTINUATION.test(next) &&
    !isNoise(prev) &&
    !isNoise(next));
