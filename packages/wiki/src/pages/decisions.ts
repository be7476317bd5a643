import { contentTokens } from '../citations.js';
import { finishPage, PageCitations, type RenderContext } from '../context.js';
import { maxTs } from '../page-text.js';
import { KEY_FACTS_MAX } from '../rank.js';
import type { WikiFact, WikiPage } from '../types.js';
import { type FixedBase, GRAPH_UNAVAILABLE_NOTICE } from './fixed.js';

export function overlap(a: Set<string>, b: Set<string>): number {
  let n = 0;
  for (const t of a) if (b.has(t)) n++;
  return n;
}

export function decisionsPage(ctx: RenderContext, facts: WikiFact[], live: WikiFact[], base: FixedBase): WikiPage {
  const { decisions, now } = ctx.input;
  const cites = new PageCitations(ctx);
  const byId = new Map(facts.map((f) => [f.id, f]));
  const decisionFacts = live.filter((f) => f.fact_type === 'decision');
  const drawn: WikiFact[] = [];
  const lines = ['# Decisions', ''];
  let summary: string;
  if (decisions === null) {
    summary = GRAPH_UNAVAILABLE_NOTICE.slice(2);
    lines.push(GRAPH_UNAVAILABLE_NOTICE, '');
  } else {
    const shown: string[] = [];
    let hidden = 0;
    for (const d of decisions) {
      let fact = d.fact_id ? byId.get(d.fact_id) : undefined;
      if (!fact) {
        const want = contentTokens(`${d.name} ${d.context}`);
        let best = 0;
        for (const f of decisionFacts) {
          const o = overlap(want, contentTokens(f.memory_text));
          if (o > best && o >= Math.min(2, want.size)) {
            best = o;
            fact = f;
          }
        }
      }
      const text = `**${ctx.factText({ memory_text: d.name })}** (${d.status}, ${d.date}, decided by ${ctx.factText({ memory_text: d.decided_by })})${d.context ? `: ${ctx.factText({ memory_text: d.context })}` : ''}`;
      const line = fact ? cites.claim(fact, text) : null;
      if (line && fact) {
        shown.push(`- ${line}`);
        drawn.push(fact);
      } else hidden++;
    }
    summary = `${shown.length} decision records from the knowledge graph.`;
    lines.push('## Decision records', '', ...(shown.length ? shown : ['_None recorded._']), '');
    if (hidden) lines.push(`_${hidden} decision records without a verifiable source message are not shown._`, '');
  }
  const inChat = ctx
    .keyFacts(
      decisionFacts.filter((f) => !drawn.includes(f)),
      KEY_FACTS_MAX,
    )
    .map((f) => {
      const line = cites.claim(f);
      if (line) drawn.push(f);
      return line;
    })
    .filter((l): l is string => l !== null);
  lines.push('## Decisions recorded in chat', '', ...(inChat.length ? inChat.map((l) => `- ${l}`) : ['_None._']));
  return finishPage(
    base('decisions', drawn.length, maxTs(drawn, now.toISOString())),
    `${lines.join('\n')}\n`,
    summary,
    cites,
  );
}
