import { contentTokens } from '../citations.js';
import { finishPage, PageCitations, type RenderContext } from '../context.js';
import type { RenderMemo } from '../memo.js';
import { maxTs } from '../page-text.js';
import { factWords, NEAR_DUPLICATE_OVERLAP, wordOverlap } from '../rank.js';
import { threadKey } from '../threads.js';
import type { WikiFact, WikiPage } from '../types.js';
import { overlap } from './decisions.js';
import type { FixedBase } from './fixed.js';

const FAQ_WINDOW_MS = 14 * 86_400_000;

const ANSWER_TYPES = new Set<WikiFact['fact_type']>(['decision', 'observation', 'opinion']);

/**
 * contentTokens of a fact's memory_text, memoised per fact object in `memo` (a fact's text never changes under its
 * object; a generator that keeps its RenderMemo hands the same objects to run after run, so it tokenises each fact once).
 */
function factTokens(memo: RenderMemo, f: WikiFact): Set<string> {
  let t = memo.tokens.get(f);
  if (!t) {
    t = contentTokens(f.memory_text);
    memo.tokens.set(f, t);
  }
  return t;
}

/**
 * Content words that tell facts of a channel apart: contentTokens minus the names of the channel's authors (fact texts
 * name their authors) and minus words found in more than 3% of its facts (at least 2), such as the channel's own
 * subject ("clojure" in #clojure). Two facts sharing only such words are not about the same thing.
 */
function informativeTokens(
  memo: RenderMemo,
  facts: readonly WikiFact[],
): {
  informative: (f: WikiFact) => Set<string>;
  all: (f: WikiFact) => Set<string>;
} {
  const names = new Set<string>();
  for (const f of facts) for (const t of contentTokens(f.author_name)) names.add(t);
  const sets = new Map<string, Set<string>>();
  const df = new Map<string, number>();
  for (const f of facts) {
    const toks = new Set([...factTokens(memo, f)].filter((t) => !names.has(t)));
    sets.set(f.id, toks);
    for (const t of toks) df.set(t, (df.get(t) ?? 0) + 1);
  }
  const limit = Math.max(2, Math.ceil(0.03 * facts.length));
  const cache = new Map<string, Set<string>>();
  const all = (f: WikiFact) => {
    let toks = sets.get(f.id);
    if (!toks) {
      toks = new Set([...factTokens(memo, f)].filter((t) => !names.has(t)));
      sets.set(f.id, toks);
    }
    return toks;
  };
  const informative = (f: WikiFact) => {
    let out = cache.get(f.id);
    if (!out) {
      out = new Set([...all(f)].filter((t) => (df.get(t) ?? 0) <= limit));
      cache.set(f.id, out);
    }
    return out;
  };
  return { informative, all };
}

/**
 * The answer of a question fact among later facts by another author within 14 days: in the question's thread
 * (threadKey) and sharing at least one informative word (informativeTokens) or three content words, preferably soon
 * after it; else, outside
 * the thread, sharing at least 3 informative words (or 2 and a tag). Statements (decision, observation, opinion) are
 * preferred over action items. null when none qualifies (the question is listed as open).
 */
function findAnswer(
  q: WikiFact,
  candidates: readonly AnswerCandidate[],
  tokensOf: ReturnType<typeof informativeTokens>,
): WikiFact | null {
  const qt = Date.parse(q.message_ts);
  const qThread = threadKey(q);
  const qTokens = tokensOf.informative(q);
  const qAll = tokensOf.all(q);
  const qTags = new Set([...q.topic_tags, ...q.entity_tags].map((t) => t.toLowerCase()));
  let best: WikiFact | null = null;
  let bestScore = Number.NEGATIVE_INFINITY;
  let bestIndex = Number.POSITIVE_INFINITY;
  // Candidates are in time order: start at the first one after the question, stop past the window.
  let lo = 0;
  let hi = candidates.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (candidates[mid]!.at <= qt) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < candidates.length; i++) {
    const { fact: a, at, thread, tags: aTags, index } = candidates[i]!;
    if (at - qt > FAQ_WINDOW_MS) break;
    if (a.author_name === q.author_name || a.source_message_id === q.source_message_id) continue;
    const sameThread = thread === qThread ? 1 : 0;
    const o = overlap(qTokens, tokensOf.informative(a));
    const tags = overlap(qTags, aTags);
    if (sameThread ? o === 0 && overlap(qAll, tokensOf.all(a)) < 3 : o < 3 && !(o >= 2 && tags >= 1)) continue;
    const score =
      sameThread * 3 +
      Math.min(o, 5) * 0.2 +
      Math.min(tags, 2) * 0.3 +
      0.5 * a.quality_score +
      (ANSWER_TYPES.has(a.fact_type) ? 0.4 : 0) -
      2 * ((at - qt) / FAQ_WINDOW_MS) ** 0.5;
    // Equal scores: the earlier fact of the pool, as a scan in pool order would pick.
    if (score > bestScore || (score === bestScore && index < bestIndex)) {
      bestScore = score;
      bestIndex = index;
      best = a;
    }
  }
  return best;
}

/** A fact findAnswer may pick, with what it compares computed once: time (ms), thread, lower-cased tags. */
interface AnswerCandidate {
  fact: WikiFact;
  /** Its place in the pool as given. */
  index: number;
  at: number;
  thread: string;
  tags: Set<string>;
}

/**
 * The answer pool as findAnswer reads it: the facts with their features, in time order (ties in pool order); facts
 * with an unreadable time are left out (no window holds them).
 */
function answerCandidates(pool: readonly WikiFact[]): AnswerCandidate[] {
  return pool
    .map((fact, index) => ({
      fact,
      index,
      at: Date.parse(fact.message_ts),
      thread: threadKey(fact),
      tags: new Set([...fact.topic_tags, ...fact.entity_tags].map((t) => t.toLowerCase())),
    }))
    .filter((c) => Number.isFinite(c.at))
    .sort((x, y) => x.at - y.at || x.index - y.index);
}

export function faqPage(ctx: RenderContext, live: WikiFact[], base: FixedBase): WikiPage {
  const { now } = ctx.input;
  const cites = new PageCitations(ctx);
  const questions = live
    .filter((f) => f.fact_type === 'question' && ctx.canCite(f))
    .sort((a, b) => a.message_ts.localeCompare(b.message_ts) || a.id.localeCompare(b.id));
  const answersPool = answerCandidates(live.filter((f) => f.fact_type !== 'question' && ctx.canCite(f)));
  const answered: string[] = [];
  const open: string[] = [];
  const drawn: WikiFact[] = [];
  const tokensOf = informativeTokens(ctx.memo, live);
  const asked: Set<string>[] = [];
  for (const q of questions) {
    // A question asked again in nearly the same words (a repost) is listed once, where it was first asked.
    const w = factWords(q);
    if (asked.some((x) => wordOverlap(x, w) >= NEAR_DUPLICATE_OVERLAP)) continue;
    const qLine = cites.claim(q);
    if (!qLine) continue;
    asked.push(w);
    drawn.push(q);
    const a = findAnswer(q, answersPool, tokensOf);
    const aLine = a ? cites.claim(a, `${ctx.factText(a)} (${a.author_name})`) : null;
    if (a && aLine) {
      drawn.push(a);
      answered.push(`- **Q:** ${qLine}`, `  - **A:** ${aLine}`);
    } else open.push(`- ${qLine}`);
  }
  const summary = `${answered.length / 2} answered and ${open.length} open questions.`;
  const lines = ['# FAQ', '', summary, '', '## Answered', '', ...(answered.length ? answered : ['_None yet._'])];
  lines.push('', '## Open questions', '', ...(open.length ? open : ['_None._']));
  return finishPage(
    base('faq', drawn.length, maxTs(drawn, now.toISOString())),
    `${lines.join('\n')}\n`,
    summary,
    cites,
  );
}
