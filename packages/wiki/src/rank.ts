/**
 * Key-fact ranking for topic pages (spec "Wiki generation (behaviour)": "Key-fact ranking factors:
 * quality score, temporal decay (recent facts boosted; decisions, architecture and policies decay
 * slowly; high or critical importance does not decay), citation count, importance"; spec "Limits":
 * key facts per cluster 5 to 10).
 */
import type { WikiFact } from './types.js';

/**
 * Weights of the four ranking factors; they sum to 1 so a score lies in [0, 1].
 * - quality (0.40): the fact's quality_score, already in [0, 1] (spec "Memory" quality bands).
 * - recency (0.25): temporal decay factor, 1 for a fact written now, halving every half-life.
 * - importance (0.20): low / medium / high mapped by IMPORTANCE_VALUE.
 * - citations (0.15): citation count, saturating at CITATION_SATURATION.
 * Quality leads because it already folds in density, actionability and specificity.
 */
export const RANK_WEIGHTS = { quality: 0.4, recency: 0.25, importance: 0.2, citations: 0.15 } as const;

/**
 * Half-lives of the recency factor, in days. Ordinary facts (observations, opinions, questions,
 * action items) lose half their recency boost every 30 days; decisions and facts about architecture or
 * policy ("decay slowly") every 365 days. Facts of high importance do not decay at all (factor 1).
 */
export const HALF_LIFE_DAYS = { default: 30, slow: 365 } as const;

/** Importance mapped to [0, 1]. */
export const IMPORTANCE_VALUE: Record<WikiFact['importance'], number> = { low: 0.2, medium: 0.5, high: 1 };

/** The citation factor reaches 1 at this many citations (log scale: 1 citation ≈ 0.32, 3 ≈ 0.63). */
export const CITATION_SATURATION = 8;

/**
 * Lower bound of the medium quality band (spec "Memory": 0.0 to 0.5 low, general or ambiguous
 * statements). keyFacts takes low-band facts only to reach the minimum of 5.
 */
export const LOW_QUALITY_BAND_MAX = 0.5;

/** Minimum and maximum key facts per cluster (spec "Limits": key facts per cluster 5 to 10). */
export const KEY_FACTS_MIN = 5;
export const KEY_FACTS_MAX = 10;

/** At most this many key facts come from one source message (variety). */
export const MAX_KEY_FACTS_PER_MESSAGE = 2;

/**
 * Words that mark a topic or entity tag as architecture (tags are lower-cased and split on spaces,
 * dashes, underscores and slashes before matching).
 */
export const ARCHITECTURE_WORDS: readonly string[] = [
  'architecture',
  'architectural',
  'design',
  'schema',
  'infrastructure',
  'infra',
  'topology',
  'deployment',
  'datamodel',
  'protocol',
];

/** Words that mark a topic or entity tag as policy (same matching as ARCHITECTURE_WORDS). */
export const POLICY_WORDS: readonly string[] = [
  'policy',
  'policies',
  'guideline',
  'guidelines',
  'convention',
  'conventions',
  'rule',
  'rules',
  'process',
  'procedure',
  'compliance',
  'security',
  'governance',
  'standard',
  'standards',
  'sla',
  'license',
  'licensing',
];

const DAY_MS = 86_400_000;
const SLOW_WORDS = new Set([...ARCHITECTURE_WORDS, ...POLICY_WORDS]);

/**
 * True when a fact decays slowly: a decision (fact_type), or a fact whose topic or entity tags name
 * architecture or policy (a tag word in ARCHITECTURE_WORDS or POLICY_WORDS).
 */
export function isSlowDecay(fact: Pick<WikiFact, 'fact_type' | 'topic_tags' | 'entity_tags'>): boolean {
  if (fact.fact_type === 'decision') return true;
  // Memoised per fact object (a fact's tags do not change; the generator hands the same objects to run after run).
  const known = SLOW_TAGS.get(fact);
  if (known !== undefined) return known;
  let slow = false;
  for (const tag of [...fact.topic_tags, ...fact.entity_tags]) {
    for (const word of tag.toLowerCase().split(/[\s\-_/.]+/)) if (SLOW_WORDS.has(word)) slow = true;
    if (slow) break;
  }
  SLOW_TAGS.set(fact, slow);
  return slow;
}
const SLOW_TAGS = new WeakMap<object, boolean>();

/**
 * Recency factor in (0, 1]: 0.5^(age / half-life), age in days from message_ts to now (a fact dated
 * after now counts as age 0). 1 for high importance (no decay).
 */
export function recencyFactor(fact: WikiFact, now: Date): number {
  if (fact.importance === 'high') return 1;
  const ts = Date.parse(fact.message_ts);
  const ageDays = Number.isFinite(ts) ? Math.max(0, (now.getTime() - ts) / DAY_MS) : 0;
  const halfLife = isSlowDecay(fact) ? HALF_LIFE_DAYS.slow : HALF_LIFE_DAYS.default;
  return 0.5 ** (ageDays / halfLife);
}

/** Citation factor in [0, 1]: log2(1 + count) / log2(1 + CITATION_SATURATION), capped at 1. */
export function citationFactor(citationCount: number): number {
  if (!(citationCount > 0)) return 0;
  return Math.min(1, Math.log2(1 + citationCount) / Math.log2(1 + CITATION_SATURATION));
}

/**
 * Key-fact score of one fact, in [0, 1] (spec "Wiki generation (behaviour)", ranking factors):
 * RANK_WEIGHTS-weighted sum of quality_score (clamped to [0, 1]), recencyFactor (at `now`),
 * IMPORTANCE_VALUE and citationFactor(citationCount). `citationCount` is how many times the fact has
 * been cited (e.g. by ask answers or earlier wiki versions); 0 when unknown.
 */
export function keyFactScore(fact: WikiFact, opts: { now: Date; citationCount?: number }): number {
  const quality = Math.min(1, Math.max(0, Number.isFinite(fact.quality_score) ? fact.quality_score : 0));
  return (
    RANK_WEIGHTS.quality * quality +
    RANK_WEIGHTS.recency * recencyFactor(fact, opts.now) +
    RANK_WEIGHTS.importance * (IMPORTANCE_VALUE[fact.importance] ?? 0) +
    RANK_WEIGHTS.citations * citationFactor(opts.citationCount ?? 0)
  );
}

/** Facts sorted by keyFactScore, best first; ties broken by newer message_ts, then id (deterministic). */
export function rankFacts(
  facts: readonly WikiFact[],
  opts: { now: Date; citationCounts?: ReadonlyMap<string, number> },
): { fact: WikiFact; score: number }[] {
  return facts
    .map((fact) => ({
      fact,
      score: keyFactScore(fact, { now: opts.now, citationCount: opts.citationCounts?.get(fact.id) ?? 0 }),
    }))
    .sort(
      (a, b) =>
        b.score - a.score || b.fact.message_ts.localeCompare(a.fact.message_ts) || a.fact.id.localeCompare(b.fact.id),
    );
}

/** Words too common to tell two statements apart (near-duplicate checks), besides those under 3 characters. */
const COMMON_WORDS = new Set(
  "the and for with that this then than but not are was were has have had can could would should will just also from into about there their they them what when where which who why how any all some one does did you your its it's asked says said thinks think".split(
    ' ',
  ),
);

/**
 * Lower-cased words of 3+ letters or digits of a text, common words left out (for near-duplicate checks:
 * wordOverlap).
 */
export const words = (text: string): Set<string> =>
  new Set((text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []).filter((w) => !COMMON_WORDS.has(w)));

/**
 * Share of the smaller word set found in the larger (0 to 1): 1 when one text's words are all in the other's.
 * Texts of fewer than 4 such words never count as near duplicates (0).
 */
export function wordOverlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  if (small.size < 4) return 0;
  let shared = 0;
  for (const w of small) if (large.has(w)) shared++;
  return shared / small.size;
}

/** words() of a fact's text, per fact object. */
const FACT_WORDS = new WeakMap<WikiFact, Set<string>>();
/** words() of a fact's memory_text, memoised per fact object. */
export function factWords(fact: WikiFact): Set<string> {
  let w = FACT_WORDS.get(fact);
  if (!w) {
    w = words(fact.memory_text);
    // The author's name is in most of their facts ("roelof asked: …"): it says nothing about what they said.
    for (const a of words(fact.author_name)) w.delete(a);
    FACT_WORDS.set(fact, w);
  }
  return w;
}

/** Two key facts whose words overlap this much (wordOverlap) say the same thing: the lower-ranked one is left out. */
export const NEAR_DUPLICATE_OVERLAP = 0.7;

/**
 * Whether a statement ends by pointing at something it does not contain ("… sees the following.", "… like this:"):
 * the code or output it introduced stayed in the message, so on a page it reads unfinished.
 */
export function pointsAway(text: string): boolean {
  return /(?::|\b(?:the following|as follows|like this|like so|below|this one))\s*[.:]?\s*$/i.test(text.trim());
}

/**
 * Whether a fact's text is a code fragment rather than a statement: it opens with code punctuation (`:require [...]`,
 * `(defn ...`) or fewer than half of its characters are letters. Such a fact names its topic without saying anything
 * about it, so it does not get the place of a fact about the title.
 */
export function codeLike(text: string): boolean {
  const t = text.trim();
  if (/^[:([{#'`@]/.test(t)) return true;
  const letters = t.match(/\p{L}/gu)?.length ?? 0;
  return letters < 0.5 * t.length;
}

/**
 * The key facts of a cluster (spec: "the top 5 to 10 key facts per cluster"): `n` is clamped to
 * [KEY_FACTS_MIN, KEY_FACTS_MAX] (default 10). Superseded facts (superseded_by set) are dropped; at most
 * MAX_KEY_FACTS_PER_MESSAGE facts per source message; facts with the same text, or nearly the same words as a fact
 * already taken (NEAR_DUPLICATE_OVERLAP), are kept once. Facts of the low quality band (< LOW_QUALITY_BAND_MAX) and
 * facts that point at what they do not contain (pointsAway) are taken only to reach KEY_FACTS_MIN. `opts.onTopic` (a topic page: whether a fact is about the topic) puts the facts
 * it accepts first: the others are taken only to reach KEY_FACTS_MIN; `opts.titled` (whether a fact names the topic's
 * title, not only a tag it covers) goes before those, code fragments (codeLike) excepted, so a Leiningen page leads
 * with Leiningen and not with the CIDER facts its cluster caught. Returns fewer than 5 only when fewer eligible
 * facts exist. Order: as taken (titled, then on-topic, then the rest), best first within each tier.
 */
export function keyFacts(
  facts: readonly WikiFact[],
  n: number = KEY_FACTS_MAX,
  opts: {
    now?: Date;
    citationCounts?: ReadonlyMap<string, number>;
    onTopic?: (fact: WikiFact) => boolean;
    titled?: (fact: WikiFact) => boolean;
  } = {},
): WikiFact[] {
  const want = Math.min(KEY_FACTS_MAX, Math.max(KEY_FACTS_MIN, Math.floor(Number.isFinite(n) ? n : KEY_FACTS_MAX)));
  const now = opts.now ?? new Date();
  const ranked = rankFacts(
    facts.filter((f) => !f.superseded_by),
    { now, ...(opts.citationCounts ? { citationCounts: opts.citationCounts } : {}) },
  );
  const picked: WikiFact[] = [];
  const pickedWords: Set<string>[] = [];
  const perMessage = new Map<string, number>();
  const texts = new Set<string>();
  const take = (pool: typeof ranked, limit: number) => {
    for (const { fact } of pool) {
      if (picked.length >= limit) return;
      if (picked.includes(fact)) continue;
      const used = perMessage.get(fact.source_message_id) ?? 0;
      const text = fact.memory_text.trim().toLowerCase();
      if (used >= MAX_KEY_FACTS_PER_MESSAGE || texts.has(text)) continue;
      const w = factWords(fact);
      if (pickedWords.some((p) => wordOverlap(p, w) >= NEAR_DUPLICATE_OVERLAP)) continue;
      picked.push(fact);
      pickedWords.push(w);
      perMessage.set(fact.source_message_id, used + 1);
      texts.add(text);
    }
  };
  const good = ranked.filter((r) => r.fact.quality_score >= LOW_QUALITY_BAND_MAX && !pointsAway(r.fact.memory_text));
  const onTopic = opts.onTopic;
  const titled = opts.titled;
  if (onTopic) {
    if (titled)
      take(
        good.filter((r) => titled(r.fact) && !codeLike(r.fact.memory_text)),
        want,
      );
    take(
      good.filter((r) => onTopic(r.fact)),
      want,
    );
    take(good, KEY_FACTS_MIN);
  } else take(good, want);
  if (picked.length < KEY_FACTS_MIN) take(ranked, KEY_FACTS_MIN);
  return picked;
}
