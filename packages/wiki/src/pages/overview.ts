import { finishPage, PageCitations, type RenderContext } from '../context.js';
import { isoDate, maxTs, sentence } from '../page-text.js';
import { codeLike, KEY_FACTS_MIN } from '../rank.js';
import type { Named } from '../titles.js';
import type { WikiFact, WikiNode, WikiPage } from '../types.js';
import type { FixedBase } from './fixed.js';

/**
 * Overview (section 1): the channel's counts, then its highlights: the best key fact about each of its largest topics
 * (by topic order, one per topic, bolded with the topic's title), up to 5, filled from the channel's best facts when
 * it has fewer topics; then the topic list. The summary is the counts and the first two highlights.
 */
export function overviewPage(
  ctx: RenderContext,
  facts: WikiFact[],
  live: WikiFact[],
  topics: WikiNode[],
  base: FixedBase,
  named: readonly Named[],
  topicTest: (n: Named) => (f: WikiFact) => boolean,
  titledTest: (n: Named) => (f: WikiFact) => boolean,
): WikiPage {
  const { channel, messages, now } = ctx.input;
  const cites = new PageCitations(ctx);
  const authors = new Set(facts.map((f) => f.author_name));
  const dates = facts.map((f) => f.message_ts).sort();
  const span = dates.length ? `, ${isoDate(dates[0]!)} to ${isoDate(dates[dates.length - 1]!)}` : '';
  const stats = `#${channel.name} (${channel.platform}): ${facts.length} memories from ${messages.size} messages by ${authors.size} people${span}.`;
  const used = new Set<WikiFact>();
  const highlights: { claim: string; topic: string | null }[] = [];
  for (const n of named) {
    if (highlights.length >= OVERVIEW_HIGHLIGHTS) break;
    // The topic's best fact that names its title, else its best fact about it (as its page leads).
    const test = topicTest(n);
    const titled = titledTest(n);
    const key = ctx.keyFacts(n.entry.facts, KEY_FACTS_MIN, test, titled);
    const best =
      key.find((f) => !used.has(f) && titled(f) && !codeLike(f.memory_text)) ??
      key.find((f) => !used.has(f) && test(f));
    const claim = best && cites.claim(best);
    if (!best || !claim) continue;
    used.add(best);
    highlights.push({ claim, topic: n.title });
  }
  for (const f of ctx.keyFacts(live, OVERVIEW_HIGHLIGHTS + used.size)) {
    if (highlights.length >= OVERVIEW_HIGHLIGHTS) break;
    const claim = used.has(f) ? null : cites.claim(f);
    if (!claim) continue;
    used.add(f);
    highlights.push({ claim, topic: null });
  }
  const summary = [stats, ...highlights.slice(0, 2).map((h) => sentence(h.claim))].join(' ');
  const lines = [`# ${channel.name}`, '', summary, '', '## Highlights', ''];
  lines.push(
    ...(highlights.length
      ? highlights.map((h) => (h.topic ? `- **${h.topic}:** ${h.claim}` : `- ${h.claim}`))
      : ['_No memory could be cited yet._']),
  );
  lines.push('', '## Topics', '');
  lines.push(
    ...(topics.length
      ? topics.map((t) => `- [${t.section_number} ${t.title}](${t.slug}) (${t.memory_count} memories)`)
      : ['_No topics yet._']),
  );
  return finishPage(
    base('overview', facts.length, maxTs(facts, now.toISOString())),
    `${lines.join('\n')}\n`,
    summary,
    cites,
  );
}

/** Highlights on the overview page. */
const OVERVIEW_HIGHLIGHTS = 5;
