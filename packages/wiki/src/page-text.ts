// Page text: citation markers, fact text as Markdown, dates and lists as pages write them.
import { renderMarkup } from './citations.js';
import type { RenderMemo } from './memo.js';
import type { WikiFact, WikiPage } from './types.js';

/** Markers `[n]` in Markdown (a backslash-escaped `\[` is literal text, not a marker). */
export const MARKER = /(?<!\\)\[(\d+)\]/g;

/** The `[n]` markers of a Markdown text, in order of first appearance. */
export function citationMarkers(content: string): string[] {
  const seen: string[] = [];
  for (const m of content.matchAll(MARKER)) if (!seen.includes(m[0])) seen.push(m[0]);
  return seen;
}

/** Most entries of a string-keyed memo table (RenderMemo.factTexts, titleCases) before it is cleared. */
export const FACT_TEXT_MAX = 50_000;

/**
 * A fact's text for Markdown: one line, thread-reply context dropped, brackets escaped (no fake markers). Memoised
 * per memory_text in `memo` when given (RenderMemo.factTexts).
 */
export function factText(fact: Pick<WikiFact, 'memory_text'>, memo?: RenderMemo): string {
  if (!memo) return markdownText(fact.memory_text);
  let t = memo.factTexts.get(fact.memory_text);
  if (t === undefined) {
    if (memo.factTexts.size >= FACT_TEXT_MAX) memo.factTexts.clear();
    t = markdownText(fact.memory_text);
    memo.factTexts.set(fact.memory_text, t);
  }
  return t;
}

function markdownText(memoryText: string): string {
  return renderMarkup(memoryText)
    .replace(/\s*\(in reply to [^:"()]{1,80}: ".*$/s, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/([[\]\\])/g, '\\$1');
}

export const isoDate = (ts: string) => ts.slice(0, 10);
export const maxTs = (facts: Iterable<WikiFact>, fallback: string) => {
  let best = '';
  for (const f of facts) if (f.message_ts > best) best = f.message_ts;
  return best || fallback;
};

/** "a", "a and b", "a, b and c". */
export const listOf = (xs: readonly string[]) =>
  xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;

/**
 * The page with its markers renumbered `[1]`, `[2]`, … by first appearance in `content` and its citations reordered
 * and renumbered to match (citations no marker uses are dropped): the invariant finishPage establishes, restored after
 * a summary was replaced (summarize.ts withSummary).
 */
export function renumberCitations(page: WikiPage): WikiPage {
  const used = citationMarkers(page.content);
  const remap = new Map(used.map((m, i) => [m, `[${i + 1}]`]));
  const byId = new Map(page.citations.map((c) => [c.id, c]));
  const rewrite = (s: string) => s.replace(MARKER, (m) => remap.get(m) ?? m);
  const citations = used.flatMap((m) => {
    const c = byId.get(m);
    return c ? [{ ...c, id: remap.get(m)! }] : [];
  });
  return { ...page, content: rewrite(page.content), summary: rewrite(page.summary), citations };
}

export function sentence(line: string): string {
  // "text [n]" → "text [n]." unless the text ends with ? or !
  const m = /^(.*?)([.?!]?)\s(\[\d+\])$/s.exec(line);
  if (!m) return line;
  return m[2] === '?' || m[2] === '!' ? `${m[1]}${m[2]} ${m[3]}` : `${m[1]} ${m[3]}.`;
}
