/**
 * LoCoMo's answer F1, as its evaluation code computes it (snap-research/locomo, task_eval/evaluation.py:
 * normalize_answer, f1_score, f1 and eval_question_answering), in TypeScript:
 * - normalize_answer: remove commas, lower-case, remove ASCII punctuation (Python's string.punctuation), remove the
 *   words a, an, the and also "and" (the repo's active line removes `a|an|the|and`), collapse whitespace;
 * - f1_score: Porter-stemmed tokens of both sides, bag-of-tokens overlap → precision, recall, F1 (0 with no overlap);
 * - category 1 (multi-hop): f1, i.e. prediction and gold split on commas, the mean over gold parts of the best
 *   f1_score against any prediction part; categories 2, 3, 4: f1_score on the whole strings; category 3's gold is
 *   cut at its first ';' first.
 * The stemmer is the npm `stemmer` package (Porter's 1980 algorithm); NLTK's PorterStemmer (which LoCoMo uses) adds
 * a few extensions of its own, so rare words may stem differently.
 */
import { stemmer } from 'stemmer';

/** LoCoMo's category numbers (locomo10.json, as evaluation.py treats them; also scripts/bench-retrieval.ts). */
export const LOCOMO_CATEGORY: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
};

const PUNCT = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');

export const normalizeAnswer = (s: string): string => {
  const lower = s.replaceAll(',', '').toLowerCase();
  const noPunc = [...lower].filter((ch) => !PUNCT.has(ch)).join('');
  return noPunc
    .replace(/\b(a|an|the|and)\b/g, ' ')
    .split(/\s+/)
    .filter(Boolean)
    .join(' ');
};

const tokens = (s: string): string[] =>
  normalizeAnswer(s)
    .split(' ')
    .filter(Boolean)
    .map((w) => stemmer(w));

/** LoCoMo's f1_score: token F1 of Porter-stemmed normalised tokens. */
export const f1Score = (prediction: string, gold: string): number => {
  const p = tokens(prediction);
  const g = tokens(gold);
  const counts = new Map<string, number>();
  for (const t of g) counts.set(t, (counts.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of p) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      same += 1;
      counts.set(t, c - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / p.length;
  const recall = same / g.length;
  return (2 * precision * recall) / (precision + recall);
};

/** LoCoMo's f1 (multi-answer): comma-separated parts, mean over gold parts of the best prediction part. */
export const f1Multi = (prediction: string, gold: string): number => {
  const preds = prediction.split(',').map((p) => p.trim());
  const golds = gold.split(',').map((g) => g.trim());
  return golds.reduce((sum, g) => sum + Math.max(...preds.map((p) => f1Score(p, g))), 0) / golds.length;
};

/** The score of one answer as eval_question_answering computes it for categories 1 to 4. */
export const locomoF1 = (category: number, prediction: string, goldAnswer: string): number => {
  if (category === 1) return f1Multi(prediction, goldAnswer);
  const gold = category === 3 ? goldAnswer.split(';')[0]!.trim() : goldAnswer;
  return f1Score(prediction, gold);
};
