import { finishPage, PageCitations, type RenderContext } from '../context.js';
import { maxTs } from '../page-text.js';
import type { RenderInput, WikiNode, WikiPage } from '../types.js';
import type { FixedBase } from './fixed.js';

export function topicsPage(
  ctx: RenderContext,
  topics: WikiNode[],
  clusters: RenderInput['clusters'],
  base: FixedBase,
  generatedAt: string,
): WikiPage {
  const members = clusters.flatMap((c) => c.facts);
  const ids = new Set(members.map((f) => f.id));
  const summary = `${topics.length} topics covering ${ids.size} memories.`;
  const lines = ['# Topics', '', summary, ''];
  const list = (nodes: WikiNode[], indent: string) => {
    for (const n of nodes) {
      lines.push(`${indent}- [${n.section_number} ${n.title}](${n.slug}) (${n.memory_count} memories)`);
      list(n.children, `${indent}  `);
    }
  };
  list(topics, '');
  if (!topics.length) lines.push('_No topics yet._');
  return finishPage(
    base('topics', ids.size, maxTs(members, generatedAt)),
    `${lines.join('\n')}\n`,
    summary,
    new PageCitations(ctx),
  );
}
