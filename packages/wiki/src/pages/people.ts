import { finishPage, PageCitations, type RenderContext } from '../context.js';
import { maxTs } from '../page-text.js';
import type { WikiFact, WikiPage } from '../types.js';
import { type FixedBase, GRAPH_UNAVAILABLE_NOTICE } from './fixed.js';

export function peoplePage(ctx: RenderContext, live: WikiFact[], base: FixedBase): WikiPage {
  const { people, now } = ctx.input;
  const cites = new PageCitations(ctx);
  if (people === null) {
    const content = `# People\n\n${GRAPH_UNAVAILABLE_NOTICE}\n`;
    return finishPage(base('people', 0, now.toISOString()), content, GRAPH_UNAVAILABLE_NOTICE.slice(2), cites);
  }
  const sorted = [...people].sort((a, b) => b.fact_count - a.fact_count || a.name.localeCompare(b.name));
  const summary = sorted.length
    ? `${sorted.length} people in this channel's knowledge graph.`
    : 'No people recorded yet.';
  const lines = ['# People', '', summary, ''];
  const drawn: WikiFact[] = [];
  if (sorted.length) {
    lines.push('| Person | Memories |', '|---|---|');
    for (const p of sorted) lines.push(`| ${p.name.replace(/\|/g, '\\|')} | ${p.fact_count} |`);
    const said: string[] = [];
    for (const p of sorted.slice(0, 15)) {
      const own = live.filter((f) => f.author_name === p.name);
      const [best] = ctx.keyFacts(own, 5);
      const line = best ? cites.claim(best, `**${p.name}**: ${ctx.factText(best)}`) : null;
      if (line && best) {
        said.push(`- ${line}`);
        drawn.push(best);
      }
    }
    if (said.length) lines.push('', '## In their words', '', ...said);
  }
  return finishPage(
    base('people', drawn.length, maxTs(drawn, now.toISOString())),
    `${lines.join('\n')}\n`,
    summary,
    cites,
  );
}
