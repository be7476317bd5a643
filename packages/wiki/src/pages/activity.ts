import { finishPage, PageCitations, type RenderContext } from '../context.js';
import type { RenderMemo } from '../memo.js';
import { maxTs } from '../page-text.js';
import type { WikiFact, WikiPage } from '../types.js';
import type { FixedBase } from './fixed.js';

/**
 * Monday (UTC) of the ISO week of a timestamp, as YYYY-MM-DD. Memoised per day in `memo` (RenderMemo.weekStarts) for
 * ISO 8601 UTC timestamps.
 */
export function weekStart(ts: string, memo?: RenderMemo): string {
  const day = memo && /^\d{4}-\d{2}-\d{2}T.*Z$/.test(ts) ? ts.slice(0, 10) : null;
  const known = day ? memo!.weekStarts.get(day) : undefined;
  if (known) return known;
  const w = mondayOf(ts);
  if (day) {
    if (memo!.weekStarts.size >= 100_000) memo!.weekStarts.clear();
    memo!.weekStarts.set(day, w);
  }
  return w;
}

function mondayOf(ts: string): string {
  const d = new Date(ts);
  const day = (d.getUTCDay() + 6) % 7;
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day)).toISOString().slice(0, 10);
}

export function activityPage(ctx: RenderContext, facts: WikiFact[], base: FixedBase): WikiPage {
  const { messages, now } = ctx.input;
  const cites = new PageCitations(ctx);
  const weeks = new Map<string, number>();
  for (const f of facts) {
    const w = weekStart(f.message_ts, ctx.memo);
    weeks.set(w, (weeks.get(w) ?? 0) + 1);
  }
  const authors = new Map<string, { facts: number; messages: number }>();
  for (const f of facts) {
    const a = authors.get(f.author_name) ?? { facts: 0, messages: 0 };
    a.facts++;
    authors.set(f.author_name, a);
  }
  for (const m of messages.values()) {
    const a = authors.get(m.author) ?? { facts: 0, messages: 0 };
    a.messages++;
    authors.set(m.author, a);
  }
  const types = new Map<string, number>();
  for (const f of facts) types.set(f.fact_type, (types.get(f.fact_type) ?? 0) + 1);
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const summary = `${facts.length} memories over ${weeks.size} weeks from ${[...authors.values()].filter((a) => a.facts > 0).length} authors.`;
  const lines = ['# Activity', '', summary, '', '## Memories per week', '', '| Week of | Memories |', '|---|---|'];
  for (const [w, n] of [...weeks.entries()].sort()) lines.push(`| ${w} | ${n} |`);
  lines.push('', '## Most active authors', '', '| Author | Memories | Messages |', '|---|---|---|');
  const top = [...authors.entries()]
    .sort((a, b) => b[1].facts - a[1].facts || b[1].messages - a[1].messages || a[0].localeCompare(b[0]))
    .slice(0, 10);
  for (const [name, a] of top) lines.push(`| ${cell(name)} | ${a.facts} | ${a.messages} |`);
  lines.push('', '## Memory types', '', '| Type | Memories |', '|---|---|');
  for (const [t, n] of [...types.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])))
    lines.push(`| ${t} | ${n} |`);
  return finishPage(
    base('activity', facts.length, maxTs(facts, now.toISOString())),
    `${lines.join('\n')}\n`,
    summary,
    cites,
  );
}
