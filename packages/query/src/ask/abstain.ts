import { factText } from '@atlas/wiki';
import type { AskSource } from './types.js';

/**
 * The raw cosine of the query to its best source below which ask abstains (says the knowledge base holds nothing
 * relevant instead of listing unrelated facts), per embedder id. The signal is the cosine the embedder gives the
 * search query and a source's stored vector (VectorStore.similarities), not search's fused hybrid score, so it does
 * not move when the hybrid weights are retuned; it depends only on the embedder, hence one value per embedder id.
 *
 * Calibrated with scripts/calibrate-abstention.ts on LoCoMo dev (../shared/data/locomo: 3 conversations, 1,218
 * facts since answers to a question are kept, the same floors as with the earlier 1,070; each question retrieved for in a conversation's channel as ask retrieves, max_results 10). The criterion,
 * fixed before looking at the unanswerable questions: the largest floor (steps of 0.01) at which at most 5 % of the
 * answerable questions (categories 1-4, 383) are wrongly abstained on under `abstains` (with KEYWORD_KEEP 0.5).
 * Measured at that floor (share abstained on: LoCoMo category 5 | answerable, wrongly | cross-conversation):
 * - `use-lite-512@energetic-ai-0.2.0` 0.52: 2.7 % | 4.4 % | 85.1 % (best-source cosine p50: answerable 0.591,
 *   category 5 0.580, cross-conversation 0.429); at 0.54: 3.6 % | 6.3 % | 88.0 %; at 0.57: 8.9 % | 7.8 % | 91.6 %.
 * - `onnx:e5-small-v2-q` 0.83: 0.9 % | 3.9 % | 92.4 % (p50: 0.867, 0.853, 0.796; e5's cosines are compressed, so its
 *   floor is high); at 0.84: 3.6 % | 6.3 % | 94.5 %; at 0.85: 7.1 % | 8.9 % | 94.8 %.
 * Category 5 (112 questions) is adversarial: each asks about a real event of the conversation with the wrong person,
 * so its sources match about as well as an answerable question's and few are abstained on at any floor that keeps
 * answers; cross-conversation (each answerable question asked in another conversation's channel, where it has no
 * answer) is the case the floor is for: a question about something the scope never discussed. Without the keyword
 * keep, use-lite's criterion floor is 0.43 and abstains on 52.0 % of cross-conversation questions (names it embeds
 * poorly: "When was Jon in Rome?" has 0.28). The floor suits channels of a few hundred facts like LoCoMo's; over many
 * more facts the best source of an off-topic question comes closer by chance, so fewer of them are abstained on.
 */
export const ABSTAIN_COSINE_FLOOR: Readonly<Record<string, number>> = {
  'use-lite-512@energetic-ai-0.2.0': 0.52,
  'onnx:e5-small-v2-q': 0.83,
};

/**
 * What ask knows of how well its sources match the question, for the abstention decision (`abstains`).
 * `bestCosine`: the highest raw cosine of the query vector to a source's vector, null when there was no vector
 * signal (no embedder, or the embedder or vector store down); `embedderId`: the embedder that made it (null without);
 * `termCoverage`: the highest share, over the sources, of the query's content terms (`contentTerms`) that the
 * source's text contains, 0 to 1 (1 when the query has no content term).
 */
export interface AskEvidence {
  embedderId: string | null;
  bestCosine: number | null;
  termCoverage: number;
  /** The person the question asks about whom its best sources do not concern (`personMismatch`), or absent. */
  personMismatch?: PersonMismatch | null;
}

/**
 * A question about one person answered only by other people's words: `asked` is the person the question names (an
 * author of the sources, as written there), `found` the authors of its best sources (none of them `asked`, and none
 * of those sources names `asked`).
 */
export interface PersonMismatch {
  asked: string;
  found: string[];
}

/**
 * How many of the best-ranked sources `personMismatch` looks at. Chosen with scripts/calibrate-abstention.ts on
 * LoCoMo dev (see ABSTAIN_COSINE_FLOOR) among 1, 2, 3 and 5: the fewest (the most abstentions) with at most 5 % of
 * the answerable questions wrongly abstained on in all, beside the cosine floor. With e5-small-v2 at 0.83 (share
 * abstained on: category 5 | answerable, wrongly; 1,218 facts): 1: 48.2 % | 8.9 %; 2: 32.1 % | 5.2 %; 3: 17.0 % |
 * 3.9 %; 5: 5.4 % | 3.9 %; the floor alone 0.9 % | 3.9 % (on the earlier 1,070 facts 3 gave 24.1 % | 4.2 %). Counting
 * a vocative as a mention, 3 gave 2.7 % | 3.9 %. With USE-lite at 0.52, 3 gives 17.9 % | 5.2 % (5: 6.3 % | 4.4 %);
 * one value for every embedder, chosen on the default.
 */
export const PERSON_TOP = 3;

/** A name's words as matched in text: lower case, letters and digits (`O'Brien` → `o`, `brien`). */
const nameWords = (name: string): string[] => name.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * Whether a question names `person`: the person's whole name (2+ words, any case), or a one-word form (a one-word
 * name, or the first word of a longer one, of 3+ letters and not a STOP word) written as a name: capitalised and not
 * the question's first word ("Will Smith" is not named by "When will we ship?" nor by "Will it ship?"). A possessive
 * `'s` counts: "Melanie's".
 */
const questionNames = (question: string, person: string): boolean => {
  const ws = nameWords(person);
  if (ws.length === 0) return false;
  const tokens = question.replace(/['’]s\b/gu, '').match(/[\p{L}\p{N}]+/gu) ?? [];
  const lower = tokens.map((t) => t.toLowerCase());
  if (ws.length > 1 && lower.some((_, i) => ws.every((w, j) => lower[i + j] === w))) return true;
  const one = ws[0]!;
  if (one.length < 3 || STOP.has(one)) return false;
  return tokens.some((t, i) => i > 0 && lower[i] === one && /^\p{Lu}/u.test(t));
};

/**
 * Whether `text` names `person` other than by addressing them: a whole-word occurrence of the person's whole name,
 * or of its first word when that has 3+ letters, that is not a vocative. A vocative is an occurrence followed by `,`,
 * `!`, `?` or the end of the text, without a possessive `'s` ("Caroline, since we last chatted", "proud of you,
 * Caroline!"): in a chat people address each other by name, which says nothing of what the text is about.
 */
export const mentionsBeyondAddress = (text: string, person: string): boolean => {
  const ws = nameWords(person);
  if (ws.length === 0) return false;
  // nameWords are letters and digits only: nothing to escape in a pattern.
  const forms = [ws.join('[^\\p{L}\\p{N}]+'), ...(ws.length > 1 && ws[0]!.length >= 3 ? [ws[0]!] : [])];
  for (const form of forms) {
    const re = new RegExp(`(?<![\\p{L}\\p{N}])${form}(?![\\p{L}\\p{N}])(['’]s(?![\\p{L}\\p{N}]))?`, 'giu');
    for (const m of text.matchAll(re)) {
      const after = text.slice(m.index + m[0].length);
      if (m[1] || !/^\s*(?:[,!?]|$)/u.test(after)) return true;
    }
  }
  return false;
};

/**
 * The person check of ask's abstention: the question names exactly one person among the sources' authors, and none
 * of its `top` best-ranked sources was written by that person or names them other than by addressing them
 * (`mentionsBeyondAddress`). Then the sources are about someone else ("What did Caroline realize after her charity
 * race?" when only Melanie ran one), and listing them would answer a question about one person with another's words.
 * Reads no cosine, only ranks, so it holds for every embedder (PERSON_TOP). Null otherwise: no author named, two or more named (a question
 * about people together), or a best source concerns the person named.
 * `question` is the user's question as asked; `sources` in rank order (AskSource.fact.author_name, memory_text and
 * the citation's excerpt are read).
 */
export function personMismatch(
  question: string,
  sources: readonly AskSource[],
  top = PERSON_TOP,
): PersonMismatch | null {
  const authors = [...new Set(sources.map((s) => s.fact.author_name.trim()).filter((a) => nameWords(a).length > 0))];
  const asked = authors.filter((a) => questionNames(question, a));
  if (asked.length !== 1) return null;
  const person = asked[0]!;
  const best = sources.slice(0, top);
  if (best.length === 0) return null;
  const concerns = (s: AskSource) =>
    s.fact.author_name.trim() === person ||
    mentionsBeyondAddress(s.fact.memory_text, person) ||
    mentionsBeyondAddress(s.citation.text_excerpt, person);
  if (best.some(concerns)) return null;
  return { asked: person, found: [...new Set(best.map((s) => s.fact.author_name.trim()))] };
}

/** Words too common to be keyword evidence (English function words; the question words are already gone). */
const STOP = new Set(
  `and but not nor for yet the that this then than there their them they from into onto with without within about
  above below over under after before again once all any both each few more most other some such only own same very
  just also too can will would should could may might must shall been being have has had does did doing done are was
  were you your yours our ours his her hers its who whom what which when where why how`.split(/\s+/),
);

/**
 * A word's crude stem, the same for its plural and verb forms: lower case, a final `'s`, `ing`, `ed`, `es` or `s`
 * cut, then a final `e` cut and `y` written `i` (`race`, `races`, `raced`, `racing` → `rac`; `painted` → `paint`;
 * `party`, `parties` → `parti`); a stem under 3 characters keeps the word.
 */
const stem = (word: string): string => {
  const w = word.toLowerCase();
  const s = w
    .replace(/(?:'s|ing|ed|es|s)$/u, '')
    .replace(/e$/u, '')
    .replace(/y$/u, 'i');
  return s.length >= 3 ? s : w;
};

/**
 * The content terms of a search query as stems: its words of 3+ letters or digits that are not STOP words
 * (`retrievalQuery` has already dropped the question's wording).
 */
export const contentTerms = (query: string): string[] => [
  ...new Set((query.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []).filter((w) => !STOP.has(w)).map(stem)),
];

/** The highest share of `terms` (stems) that one source's text contains (1 for no terms, 0 for no sources). */
export const termCoverage = (terms: readonly string[], sources: readonly AskSource[]): number => {
  if (terms.length === 0) return 1;
  let best = 0;
  for (const s of sources) {
    const words = new Set(
      (`${factText(s.fact)} ${s.citation.text_excerpt}`.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []).map(stem),
    );
    best = Math.max(best, terms.filter((t) => words.has(t)).length / terms.length);
  }
  return best;
};

/** The abstention floor of an embedder (ABSTAIN_COSINE_FLOOR), or null when none is calibrated for it. */
export const abstainFloorOf = (embedderId: string): number | null => ABSTAIN_COSINE_FLOOR[embedderId] ?? null;

/**
 * Whether ask abstains: no source at all, a person mismatch (`evidence.personMismatch`: the question asks about one
 * person and its best sources are other people's words), or the best source's raw cosine to the query is below the
 * embedder's calibrated floor (ABSTAIN_COSINE_FLOOR) while no source holds KEYWORD_KEEP of the query's content terms
 * (keyword evidence that a name or identifier the embedder places poorly is there keeps the answer). Without a cosine (no
 * vector signal) or without a calibrated floor for the embedder, only "no source" abstains: an uncalibrated threshold
 * could hide answers.
 */
export function abstains(evidence: AskEvidence, sourceCount: number): boolean {
  if (sourceCount === 0) return true;
  if (evidence.personMismatch) return true;
  if (evidence.bestCosine === null || evidence.embedderId === null) return false;
  const floor = abstainFloorOf(evidence.embedderId);
  if (floor === null) return false;
  return evidence.bestCosine < floor && evidence.termCoverage < KEYWORD_KEEP;
}

/**
 * Sources holding at least this share of the query's content terms (in one source) are kept even below the cosine
 * floor: the keyword evidence of a name or identifier the embedder places poorly. Chosen with
 * scripts/calibrate-abstention.ts among 0.5, 0.6, 0.75, 1 and none, each at its own criterion floor: 0.5 abstains
 * on the most cross-conversation questions with use-lite (83.6 %, against 79.4 % for 0.6 and 52.0 % for none); with
 * e5, 0.6 abstains on a few more (95.6 % against 93.0 %, at 5.0 % wrongly abstained on answerable ones against 3.9).
 */
export const KEYWORD_KEEP = 0.5;

/** The first sentence of every abstaining answer (benchmarks and clients can recognise an abstention by it). */
export const ABSTENTION_LEAD = 'The knowledge base holds nothing relevant to this question.';

/** What an abstaining answer says was searched: the query, the channels (names) and how many facts they hold. */
export interface SearchedScope {
  query: string;
  channels: readonly string[];
  facts: number;
}

/**
 * The text of an abstaining answer: that the knowledge base holds nothing relevant, what was searched (the query,
 * the channels: up to three names, then how many more, or "every channel" for a global ask over more than three;
 * the facts they hold) and, when sources were found but too weak, how close the best one came. No `[n]` marker: an
 * abstention cites nothing.
 */
export function abstentionText(scope: SearchedScope, evidence: AskEvidence, global: boolean): string {
  const n = scope.channels.length;
  const names = scope.channels.slice(0, 3).map((c) => `#${c}`);
  const where =
    n === 0
      ? 'no channel'
      : global && n > 3
        ? `every channel (${n})`
        : n > 3
          ? `${names.join(', ')} and ${n - 3} more channel${n - 3 === 1 ? '' : 's'}`
          : names.join(n === 2 ? ' and ' : ', ');
  const facts = `${scope.facts.toLocaleString('en-US')} ${scope.facts === 1 ? 'memory' : 'memories'}`;
  const query = scope.query.replace(/\s+/g, ' ').trim();
  const mismatch = evidence.personMismatch;
  const closest = mismatch
    ? ` The closest memories are from ${listOf(mismatch.found)} and do not mention ${mismatch.asked}, so none is listed.`
    : evidence.bestCosine !== null && evidence.embedderId !== null && abstainFloorOf(evidence.embedderId) !== null
      ? ` The closest memory had a similarity of ${evidence.bestCosine.toFixed(2)} to the question, below the ${abstainFloorOf(evidence.embedderId)!.toFixed(2)} that counts as relevant, so none is listed.`
      : '';
  return `${ABSTENTION_LEAD} I searched ${facts} in ${where} for "${escapeBrackets(query)}".${closest}`;
}

/** Names joined for a sentence: `A`, `A and B`, `A, B and C`. */
const listOf = (xs: readonly string[]): string =>
  xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;

/** Square brackets of a quoted query as `\[`/`\]`: the only `[n]` in an answer are citation markers. */
const escapeBrackets = (t: string): string => t.replace(/\[(\d{1,3})\]/g, '\\[$1\\]');
