import { finishPage, PageCitations, type RenderContext } from '../context.js';
import type { RenderMemo } from '../memo.js';
import { maxTs } from '../page-text.js';
import { personNames } from '../titles.js';
import type { WikiFact, WikiPage } from '../types.js';
import type { FixedBase } from './fixed.js';

const DEFINITION = /\s+(is|are|means|refers|stands|lets|allows|provides|supports|enables|handles|stores|uses)\b/i;

/**
 * How a fact speaks of a glossary term: +0.3 when it defines it (`X is …`, DEFINITION), +0.1 when it names it (word
 * bounded, any case). Memoised in `memo` per fact object and term (facts are immutable under their objects).
 */
function termMatcher(memo: RenderMemo, display: string): (f: WikiFact) => number {
  let re = memo.termPatterns.get(display);
  if (!re) {
    if (memo.termPatterns.size >= 10_000) memo.termPatterns.clear();
    const esc = display.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    re = { named: new RegExp(`\\b${esc}\\b`, 'i'), defines: new RegExp(`\\b${esc}\\b${DEFINITION.source}`, 'i') };
    memo.termPatterns.set(display, re);
  }
  const { named, defines } = re;
  return (f) => {
    let m = memo.termScores.get(f);
    if (!m) {
      m = new Map();
      memo.termScores.set(f, m);
    }
    let v = m.get(display);
    if (v === undefined) {
      v = (defines.test(f.memory_text) ? 0.3 : 0) + (named.test(f.memory_text) ? 0.1 : 0);
      m.set(display, v);
    }
    return v;
  };
}

export function glossaryPage(ctx: RenderContext, live: WikiFact[], base: FixedBase): WikiPage {
  const { now } = ctx.input;
  const cites = new PageCitations(ctx);
  const persons = personNames(ctx.input);
  const terms = new Map<string, { display: string; facts: WikiFact[] }>();
  for (const f of live) {
    for (const raw of new Set(f.entity_tags.map((t) => t.trim()))) {
      const key = raw.toLowerCase();
      if (!key || persons.has(key)) continue;
      const t = terms.get(key) ?? { display: raw, facts: [] };
      t.facts.push(f);
      terms.set(key, t);
    }
  }
  const ranked = [...terms.values()].sort(
    (a, b) => b.facts.length - a.facts.length || a.display.localeCompare(b.display),
  );
  const repeated = ranked.filter((t) => t.facts.length >= 2);
  const chosen = (repeated.length >= 5 ? repeated : ranked.slice(0, 10)).slice(0, 40);
  const usedFacts = new Set<string>();
  const entries: { display: string; line: string }[] = [];
  const drawn: WikiFact[] = [];
  for (const t of chosen) {
    const term = termMatcher(ctx.memo, t.display);
    const candidates = t.facts
      .filter((f) => ctx.canCite(f))
      .map((f) => ({ f, s: ctx.score(f) + term(f) }))
      .sort((a, b) => b.s - a.s || a.f.id.localeCompare(b.f.id));
    // A fact already defining another term is used again only when the term has no other.
    const best = (candidates.find((c) => !usedFacts.has(c.f.id)) ?? candidates[0])?.f;
    if (best) usedFacts.add(best.id);
    const line = best
      ? cites.claim(best, `**${ctx.factText({ memory_text: t.display })}**: ${ctx.factText(best)}`)
      : null;
    if (best && line) {
      entries.push({ display: t.display, line: `- ${line}` });
      drawn.push(best);
    }
  }
  entries.sort((a, b) => a.display.localeCompare(b.display, 'en', { sensitivity: 'base' }));
  const summary = `${entries.length} technologies and terms named in this channel, each with the memory that best describes it.`;
  const lines = ['# Glossary', '', summary, '', ...(entries.length ? entries.map((e) => e.line) : ['_No terms yet._'])];
  return finishPage(
    base('glossary', drawn.length, maxTs(drawn, now.toISOString())),
    `${lines.join('\n')}\n`,
    summary,
    cites,
  );
}
