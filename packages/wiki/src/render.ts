/**
 * Renders a channel's wiki (spec "Wiki": structure, node, page, citation shapes; fixed pages and their
 * section numbers; topic ids and slugs) from facts, topic clusters, source messages and, when the graph
 * store answers, people and decisions. Pure: no I/O, no LLM call (summaries are extractive).
 *
 * Citation rule: every `[n]` in a page's content is one entry of the page's `citations`, built by
 * citationFor from the fact's source message and checked by verifyCitation before the claim is written;
 * a claim that cannot be cited is left out, never shown uncited.
 */
import type { CitationOptions } from './citations.js';
import { finishPage, PageCitations, RenderContext, verifiedCitation } from './context.js';
import { type RankedTag, RenderMemo } from './memo.js';
import { citationMarkers, isoDate, maxTs, sentence } from './page-text.js';
import { activityPage } from './pages/activity.js';
import { decisionsPage } from './pages/decisions.js';
import { faqPage } from './pages/faq.js';
import { FIXED_PAGES } from './pages/fixed.js';
import { glossaryPage } from './pages/glossary.js';
import { overviewPage } from './pages/overview.js';
import { peoplePage } from './pages/people.js';
import { topicsPage } from './pages/topics.js';
import { KEY_FACTS_MAX } from './rank.js';
import { byThread } from './threads.js';
import {
  coverage,
  coveredTags,
  type Named,
  nameClusters,
  onTopicTest,
  personNames,
  titleKeys,
  weakTags,
} from './titles.js';
import type { RenderInput, SourceMessage, WikiCitation, WikiFact, WikiNode, WikiPage, WikiStructure } from './types.js';

/**
 * Renders the whole wiki of one channel (spec "Wiki"): `structure` (the seven fixed pages as nodes,
 * topic pages as children of Topics, section numbers `7.<i>` and `7.<i>.<j>`) and `pages` (every fixed,
 * topic and sub-topic page). Topic page: id `topic-{slug}`, slug `topic/{slug}`, parent_id `topics`;
 * sub-topic: id `topic-{slug}--{sub-slug}`, slug `topic/{slug}/{sub-slug}`, parent_id its topic page.
 * A topic page holds an extractive summary (its top facts, cited) and its 5 to 10 key facts (rank.ts)
 * as cited bullets. People and Decisions say the graph is unavailable when `people` / `decisions` is
 * null (spec "Degraded behaviour"). Every `[n]` resolves to a verified citation (checkWikiCitations).
 */
export function renderChannelWiki(input: RenderInput): { structure: WikiStructure; pages: WikiPage[] } {
  const { structure, pages } = renderPages(input);
  return { structure, pages };
}

/** A page's place in the wiki, known before it is rendered (its cluster for a topic / sub-topic page). */
export type WikiPagePlace = Pick<
  WikiPage,
  'id' | 'slug' | 'title' | 'page_type' | 'parent_id' | 'section_number' | 'children'
> & { cluster_id: string | null };

/**
 * Partial render: the wiki of renderChannelWiki, where `keep(place)` may stand a stored page in for a page before it
 * is rendered (returning it; null renders the page). Every page not kept is rendered exactly as renderChannelWiki
 * renders it (same structure, numbering and content); `rendered` lists their ids in page order; `excerpts` holds the
 * excerpt of every fact a citation was built for (to pass as the next run's input.excerpts). The structure's
 * fixed nodes take their memory_count from the page used (kept or rendered). Without `keep`, every page is rendered.
 * `memo`: the memo tables to reuse (a long-lived generator keeps one across runs); default: fresh ones.
 */
export function renderPages(
  input: RenderInput,
  keep: (place: WikiPagePlace) => WikiPage | null = () => null,
  memo: RenderMemo = new RenderMemo(),
): { structure: WikiStructure; pages: WikiPage[]; rendered: string[]; excerpts: Map<string, string | null> } {
  const renderedTopics: string[] = [];
  const renderedFixed: string[] = [];
  const ctx = new RenderContext(input, memo);
  const generatedAt = input.now.toISOString();
  const facts = input.facts.filter((f) => f.channel_id === input.channel.id || !f.channel_id);
  const live = facts.filter((f) => !f.superseded_by);
  const persons = personNames(input);
  const weak = weakTags(memo, { name: input.channel.name, facts: live });
  const named = nameClusters(memo, input.clusters, persons, weak);
  // Per topic, once: the tags it covers besides its title, and whether a fact is about it (it names the title's
  // tag or a covered one: onTopicTest).
  const topics = new Map<
    Named,
    { covered: RankedTag[]; test: (f: WikiFact) => boolean; titled: (f: WikiFact) => boolean }
  >();
  const topicOf = (n: Named) => {
    let t = topics.get(n);
    if (!t) {
      const covered = coveredTags(memo, n.entry.facts, n.title, weak, persons);
      t = {
        covered,
        test: onTopicTest(memo, [...titleKeys(n.title), ...covered.map((c) => c.key)]),
        titled: onTopicTest(memo, titleKeys(n.title)),
      };
      topics.set(n, t);
    }
    return t;
  };
  const topicTest = (n: Named) => topicOf(n).test;

  // Topic and sub-topic pages.
  const topicPages: WikiPage[] = [];
  const toNode = (n: Named, section: string, id: string, slug: string, depth: number): WikiNode => {
    const children = n.children.map((c, j) =>
      toNode(c, `${section}.${j + 1}`, `${id}--${c.slug}`, `${slug}/${c.slug}`, depth + 1),
    );
    return {
      id,
      title: n.title,
      slug,
      section_number: section,
      page_type: depth === 0 ? 'topic' : 'sub-topic',
      memory_count: n.entry.facts.length,
      children,
    };
  };
  const topicNodes = named.map((n, i) => toNode(n, `7.${i + 1}`, `topic-${n.slug}`, `topic/${n.slug}`, 0));
  const renderTopic = (n: Named, node: WikiNode, parentId: string) => {
    const place = {
      id: node.id,
      slug: node.slug,
      title: node.title,
      page_type: node.page_type,
      parent_id: parentId,
      section_number: node.section_number,
      children: node.children,
    };
    const kept = keep({ ...place, cluster_id: n.entry.cluster.id });
    if (kept) {
      topicPages.push(kept);
      for (const [j, c] of n.children.entries()) renderTopic(c, node.children[j]!, node.id);
      return;
    }
    renderedTopics.push(node.id);
    const cites = new PageCitations(ctx);
    const members = n.entry.facts;
    const key = ctx.keyFacts(members, KEY_FACTS_MAX, topicTest(n), topicOf(n).titled);
    const claims = new Map(key.map((f) => [f, cites.claim(f)]));
    const cited = (fs: readonly WikiFact[]) => fs.map((f) => claims.get(f)).filter((l): l is string => l != null);
    // Listed thread by thread (a question, then its answers), led by the best; the summary takes the best.
    const bullets = cited(byThread(key));
    const short = cited(key).filter((b) => b.length <= 240);
    // A line on what the topic covers and who speaks in it, then its best short key fact.
    const covers = coverage(members, topicOf(n).covered);
    const summaryLines = [
      ...(covers ? [covers] : []),
      ...(short.length ? short : cited(key)).slice(0, 1).map(sentence),
    ];
    const summary = bullets.length ? summaryLines.join(' ') : 'No memory of this topic could be cited yet.';
    const authors = new Set(members.map((f) => f.author_name));
    const msgs = new Set(members.map((f) => f.source_message_id));
    const dates = members.map((f) => f.message_ts).sort();
    const lines = [`# ${n.title}`, '', summary, ''];
    if (members.length)
      lines.push(
        `_${members.length} memories from ${msgs.size} messages by ${authors.size} people, ${isoDate(dates[0]!)} to ${isoDate(dates[dates.length - 1]!)}._`,
        '',
      );
    lines.push('## Key facts', '');
    lines.push(...(bullets.length ? bullets.map((b) => `- ${b}`) : ['_No key fact could be cited._']));
    if (node.children.length) {
      lines.push('', '## Sub-topics', '');
      for (const c of node.children)
        lines.push(`- [${c.section_number} ${c.title}](${c.slug}) (${c.memory_count} memories)`);
    }
    topicPages.push(
      finishPage(
        { ...place, memory_count: members.length, last_updated: maxTs(members, generatedAt) },
        `${lines.join('\n')}\n`,
        summary,
        cites,
      ),
    );
    for (const [j, c] of n.children.entries()) renderTopic(c, node.children[j]!, node.id);
  };
  for (const [i, n] of named.entries()) renderTopic(n, topicNodes[i]!, 'topics');

  const fixedBase = (id: (typeof FIXED_PAGES)[number]['id'], memoryCount: number, lastUpdated: string) => {
    const f = FIXED_PAGES.find((p) => p.id === id)!;
    return {
      id,
      slug: id,
      title: f.title,
      page_type: 'fixed' as const,
      parent_id: null,
      section_number: f.section,
      memory_count: memoryCount,
      last_updated: lastUpdated,
      children: id === 'topics' ? topicNodes : [],
    };
  };
  const fixedRenders: Record<(typeof FIXED_PAGES)[number]['id'], () => WikiPage> = {
    overview: () => overviewPage(ctx, facts, live, topicNodes, fixedBase, named, topicTest, (n) => topicOf(n).titled),
    people: () => peoplePage(ctx, live, fixedBase),
    decisions: () => decisionsPage(ctx, facts, live, fixedBase),
    faq: () => faqPage(ctx, live, fixedBase),
    glossary: () => glossaryPage(ctx, live, fixedBase),
    activity: () => activityPage(ctx, facts, fixedBase),
    topics: () => topicsPage(ctx, topicNodes, input.clusters, fixedBase, generatedAt),
  };
  const fixed: WikiPage[] = FIXED_PAGES.map(({ id }) => {
    const { memory_count: _m, last_updated: _l, ...place } = fixedBase(id, 0, generatedAt);
    const kept = keep({ ...place, cluster_id: null });
    if (kept) return kept;
    renderedFixed.push(id);
    return fixedRenders[id]();
  });
  const structure: WikiStructure = {
    channel_id: input.channel.id,
    channel_name: input.channel.name,
    platform: input.channel.platform,
    generated_at: generatedAt,
    is_stale: false,
    pages: fixed.map((p) => ({
      id: p.id,
      title: p.title,
      slug: p.slug,
      section_number: p.section_number,
      page_type: 'fixed',
      memory_count: p.memory_count,
      children: p.children,
    })),
  };
  return {
    structure,
    pages: [...fixed, ...topicPages],
    rendered: [...renderedFixed, ...renderedTopics],
    excerpts: ctx.excerpts,
  };
}

/**
 * Whether every citation of a stored page still verifies against its source message now (by permalink; a missing
 * message fails), under `opts` (user names: a user whose name became known changes how mentions render, so an
 * excerpt quoting `@U123` no longer verifies). Memoised in `memo` per citation and message object (a kept page
 * costs nothing when neither changed and the caller keeps its RenderMemo). The generator re-renders a page for which this is false.
 */
export function citationsHold(
  page: Pick<WikiPage, 'citations'>,
  byPermalink: ReadonlyMap<string, SourceMessage>,
  opts: CitationOptions = {},
  memo: RenderMemo = new RenderMemo(),
): boolean {
  return page.citations.every((c) => {
    const msg = byPermalink.get(c.permalink);
    return msg !== undefined && verifiedCitation(memo, c, msg, opts);
  });
}

/**
 * Checks the citations of rendered pages against the source messages: for each page, every marker used in
 * `content` and every listed citation counts once (`total`); it is `verified` when it is both used and
 * listed and verifyCitation passes against the message with that permalink. 100% means every `[n]`
 * resolves to exactly one verifying citation and no citation is unused.
 */
export function checkWikiCitations(
  pages: readonly WikiPage[],
  messages: ReadonlyMap<string, SourceMessage> | Iterable<SourceMessage>,
  opts: CitationOptions = {},
  memo: RenderMemo = new RenderMemo(),
): { total: number; verified: number } {
  const byPermalink = new Map<string, SourceMessage>();
  const list = messages instanceof Map ? messages.values() : (messages as Iterable<SourceMessage>);
  for (const m of list) byPermalink.set(m.permalink, m);
  let total = 0;
  let verified = 0;
  for (const page of pages) {
    const used = new Set(citationMarkers(page.content));
    const listed = new Map<string, WikiCitation[]>();
    for (const c of page.citations) listed.set(c.id, [...(listed.get(c.id) ?? []), c]);
    const ids = new Set([...used, ...listed.keys()]);
    for (const id of ids) {
      total++;
      const cs = listed.get(id) ?? [];
      const c = cs[0];
      const msg = c ? byPermalink.get(c.permalink) : undefined;
      if (used.has(id) && cs.length === 1 && c && msg && verifiedCitation(memo, c, msg, opts)) verified++;
    }
  }
  return { total, verified };
}
