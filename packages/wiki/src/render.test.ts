import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { citationFor, verifyCitation } from './citations.js';
import { clusterOf, sourceMessage, wikiFact } from './fixtures.test-support.js';
import { toWikiFact } from './generate-sources.js';
import {
  byThread,
  checkWikiCitations,
  citationMarkers,
  citationsHold,
  FIXED_PAGES,
  GRAPH_UNAVAILABLE_NOTICE,
  type RenderInput,
  renderChannelWiki,
  renderPages,
  tagVariant,
  titleWorthy,
  type WikiPage,
} from './index.js';
import { factWords, NEAR_DUPLICATE_OVERLAP, rankFacts, wordOverlap } from './rank.js';
import type { SourceMessage, TopicCluster, WikiFact } from './types.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');

/** The columns of the document store's `messages` table this test reads. */
interface MessageRow {
  channel_id: string;
  id: string;
  text: string;
  author_id: string;
  author_name: string;
  ts: Date | string;
  permalink: string | null;
  attachments: unknown[] | null;
  deleted_at: Date | null;
}

/** A bullet line is cited when it ends with one or more `[n]` markers. */
const CITED = /(?<!\\)\[\d+\](\s*(?<!\\)\[\d+\])*$/;
/** Navigation bullets (links to topic pages) carry no claim. */
const NAV = /^\s*- \[\d+(\.\d+)* [^\]]+\]\([^)]+\) \(\d+ memories\)$/;

function assertPageInvariants(page: WikiPage) {
  const used = citationMarkers(page.content);
  // citations lists exactly the markers used, numbered from 1 in order of first use.
  expect(page.citations.map((c) => c.id)).toEqual(used);
  expect(used).toEqual(used.map((_, i) => `[${i + 1}]`));
  for (const m of citationMarkers(page.summary)) expect(used).toContain(m);
  for (const line of page.content.split('\n')) {
    if (/^\s*- /.test(line) && !NAV.test(line)) expect(line, `${page.id}: uncited bullet`).toMatch(CITED);
  }
}

/** Facts grouped by their first topic tag (a stand-in for the clustering module), plus one sub-topic. */
function placeholderClusters(channelId: string, facts: WikiFact[]): RenderInput['clusters'] {
  const groups = new Map<string, WikiFact[]>();
  for (const f of facts) {
    const tag = f.topic_tags[0]?.toLowerCase();
    if (tag) groups.set(tag, [...(groups.get(tag) ?? []), f]);
  }
  const cluster = (id: string, members: WikiFact[], parent: string | null): TopicCluster => ({
    id,
    channel_id: channelId,
    centroid: [1],
    member_ids: members.map((f) => f.id),
    coherence: 1,
    parent_id: parent,
  });
  const out = [...groups.entries()].map(([tag, members]) => ({
    cluster: cluster(`c-${tag}`, members, null),
    facts: members,
  }));
  // The largest cluster gets a sub-topic: its members whose second topic tag is the most common one.
  const largest = [...out].sort((a, b) => b.facts.length - a.facts.length)[0]!;
  const second = new Map<string, WikiFact[]>();
  for (const f of largest.facts) {
    const t = f.topic_tags[1]?.toLowerCase();
    if (t) second.set(t, [...(second.get(t) ?? []), f]);
  }
  const [subTag, sub] = [...second.entries()].sort((a, b) => b[1].length - a[1].length)[0] ?? [];
  if (subTag && sub)
    out.push({ cluster: cluster(`c-${largest.cluster.id}-${subTag}`, sub, largest.cluster.id), facts: sub });
  return out;
}

describe('renderChannelWiki on real data (slack-olake, 302 messages)', () => {
  let rt: Runtime;
  const inputs = new Map<string, RenderInput>();

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none' }));
    await appendPlan(rt, await planImport(OLAKE));
    await drainProjectors(rt, 0, false);
    // The stored messages (with permalinks), read by SQL as the wiki projector will.
    const db = rt.database.db as unknown as Kysely<{ messages: MessageRow }>;
    const rows = await db.selectFrom('messages').selectAll().where('deleted_at', 'is', null).execute();
    const userNames = new Map(rows.map((r) => [r.author_id, r.author_name]));
    for (const channel of await rt.documents.listChannels()) {
      const { rows: list } = await rt.documents.listMemories({ channelId: channel.id, page: 1, limit: 10_000 });
      const detail = await rt.documents.getMemories(list.map((m) => m.id));
      const facts: WikiFact[] = [...detail.values()].map(toWikiFact);
      const messages = new Map<string, SourceMessage>();
      for (const r of rows.filter((r) => r.channel_id === channel.id)) {
        const attachments = (r.attachments ?? []) as { name: string; mediaType: string | null }[];
        messages.set(r.id, {
          id: r.id,
          channel_id: r.channel_id,
          channel_name: channel.name,
          author: r.author_name,
          timestamp: new Date(r.ts).toISOString(),
          text: r.text,
          permalink: r.permalink ?? '',
          attachments: attachments.map((a) => ({ name: a.name, media_type: a.mediaType ?? null })),
        });
      }
      const authors = new Map<string, number>();
      for (const f of facts) authors.set(f.author_name, (authors.get(f.author_name) ?? 0) + 1);
      const last =
        facts
          .map((f) => f.message_ts)
          .sort()
          .at(-1) ?? '1970-01-01T00:00:00Z';
      inputs.set(channel.name, {
        channel: { id: channel.id, name: channel.name, platform: channel.platform },
        clusters: placeholderClusters(channel.id, facts),
        facts,
        messages,
        people: [...authors.entries()].map(([name, fact_count]) => ({ name, fact_count })),
        decisions: facts
          .filter((f) => f.fact_type === 'decision')
          .map((f) => ({
            name: f.topic_tags[0] ?? 'decision',
            decided_by: f.author_name,
            status: 'implemented',
            date: f.message_ts.slice(0, 10),
            context: f.memory_text,
            fact_id: f.id,
          })),
        now: new Date(Date.parse(last) + 86_400_000),
        user_names: userNames,
      });
    }
  });
  afterAll(async () => {
    await rt?.close();
  });

  it('#help: fixed pages, topic pages with 5 to 10 cited key facts, every citation verified', () => {
    const input = inputs.get('help')!;
    expect(input.facts.length).toBeGreaterThan(150);
    const { structure, pages } = renderChannelWiki(input);
    if (process.env.ATLAS_WIKI_DUMP)
      writeFileSync(process.env.ATLAS_WIKI_DUMP, JSON.stringify({ structure, pages }, null, 2));

    // The seven fixed pages with the spec ids and section numbers, in order.
    expect(structure.pages.map((n) => [n.id, n.section_number])).toEqual(FIXED_PAGES.map((p) => [p.id, p.section]));
    for (const p of FIXED_PAGES) expect(pages.find((x) => x.id === p.id)?.section_number).toBe(p.section);
    expect(pages.find((p) => p.id === 'overview')!.slug).toBe('overview');
    expect(structure.channel_name).toBe('help');

    // One topic page per cluster; ids, slugs and dotted sections; slugs unique.
    const topics = pages.filter((p) => p.page_type !== 'fixed');
    expect(topics).toHaveLength(input.clusters.length);
    const topicsNode = structure.pages.find((n) => n.id === 'topics')!;
    expect(topicsNode.children.length).toBe(input.clusters.filter((c) => !c.cluster.parent_id).length);
    topicsNode.children.forEach((n, i) => {
      expect(n.section_number).toBe(`7.${i + 1}`);
      expect(n.id).toBe(`topic-${n.slug.slice('topic/'.length)}`);
    });
    const sub = topics.find((p) => p.page_type === 'sub-topic')!;
    expect(sub.section_number).toMatch(/^7\.\d+\.1$/);
    const parent = pages.find((p) => p.id === sub.parent_id)!;
    expect(sub.id).toMatch(new RegExp(`^${parent.id}--[a-z0-9-]+$`));
    expect(sub.slug.startsWith(`${parent.slug}/`)).toBe(true);
    expect(parent.children.map((c) => c.id)).toContain(sub.id);
    expect(new Set(topics.map((p) => p.slug)).size).toBe(topics.length);

    // 5 to 10 key facts when the cluster has that many usable facts (live, citable, distinct text and words, at
    // most 2 per source message); all of them when it has fewer. Near duplicates are counted as keyFacts takes them:
    // in rank order, a fact whose words overlap one taken before is left out.
    const opts = { userNames: input.user_names! };
    const usable = (facts: WikiFact[]) => {
      const perMessage = new Map<string, number>();
      const texts = new Set<string>();
      const taken: Set<string>[] = [];
      for (const { fact: f } of rankFacts(facts, { now: input.now })) {
        const msg = input.messages.get(f.source_message_id);
        const c = msg && citationFor(1, f, msg, opts);
        const text = f.memory_text.trim().toLowerCase();
        if (f.superseded_by || !msg || !c || !verifyCitation(c, msg, opts) || texts.has(text)) continue;
        const n = perMessage.get(f.source_message_id) ?? 0;
        if (n >= 2) continue;
        const w = factWords(f);
        if (taken.some((t) => wordOverlap(t, w) >= NEAR_DUPLICATE_OVERLAP)) continue;
        perMessage.set(f.source_message_id, n + 1);
        texts.add(text);
        taken.push(w);
      }
      return texts.size;
    };
    let withFive = 0;
    for (const page of topics) {
      const permalinks = new Set(page.citations.map((c) => c.permalink));
      const entry = input.clusters.find(
        (c) =>
          c.facts.length === page.memory_count &&
          [...permalinks].every((p) => c.facts.some((f) => input.messages.get(f.source_message_id)?.permalink === p)),
      )!;
      expect(entry, page.id).toBeDefined();
      const keySection = page.content.split('## Key facts')[1]!.split('\n## ')[0]!;
      const bullets = keySection.split('\n').filter((l) => l.startsWith('- '));
      const available = usable(entry.facts);
      if (available >= 5) {
        withFive++;
        expect(bullets.length, page.id).toBeGreaterThanOrEqual(5);
        expect(bullets.length, page.id).toBeLessThanOrEqual(10);
      } else expect(bullets.length, page.id).toBe(available);
      expect(page.summary.length).toBeGreaterThan(0);
    }
    expect(withFive).toBeGreaterThanOrEqual(3);
    const citable = input.facts.filter((f) => {
      const msg = input.messages.get(f.source_message_id);
      const c = msg && citationFor(1, f, msg, opts);
      return Boolean(msg && c && verifyCitation(c, msg, opts));
    }).length;
    console.log(`#help facts citable from their source message: ${citable}/${input.facts.length}`);

    for (const page of pages) assertPageInvariants(page);
    const check = checkWikiCitations(pages, input.messages, { userNames: input.user_names! });
    expect(check.total).toBeGreaterThan(50);
    expect(check.verified).toBe(check.total);
    console.log(`#help citations: ${check.verified}/${check.total} verified on ${pages.length} pages`);
  });

  it('every channel: 100% of citations verify, and a forged excerpt is caught', () => {
    let total = 0;
    let verified = 0;
    for (const input of inputs.values()) {
      const { pages } = renderChannelWiki(input);
      expect(pages.filter((p) => p.page_type === 'fixed')).toHaveLength(7);
      for (const page of pages) assertPageInvariants(page);
      const check = checkWikiCitations(pages, input.messages, { userNames: input.user_names! });
      total += check.total;
      verified += check.verified;
      const withCitation = pages.find((p) => p.citations.length > 0);
      if (withCitation) {
        const forged = pages.map((p) =>
          p === withCitation
            ? {
                ...p,
                citations: p.citations.map((c, i) =>
                  i === 0 ? { ...c, text_excerpt: `${c.text_excerpt} indeed` } : c,
                ),
              }
            : p,
        );
        const bad = checkWikiCitations(forged, input.messages, { userNames: input.user_names! });
        expect(bad.verified).toBe(check.verified - 1);
      }
    }
    expect(verified).toBe(total);
    console.log(`all channels: ${verified}/${total} citations verified`);
  });

  it('degraded: without the graph store People and Decisions say it is unavailable', () => {
    const input = { ...inputs.get('help')!, people: null, decisions: null };
    const { pages } = renderChannelWiki(input);
    for (const id of ['people', 'decisions'])
      expect(pages.find((p) => p.id === id)!.content).toContain(GRAPH_UNAVAILABLE_NOTICE);
    for (const page of pages) assertPageInvariants(page);
    const check = checkWikiCitations(pages, input.messages, { userNames: input.user_names! });
    expect(check.verified).toBe(check.total);
  });

  it('drops a claim whose source message is missing or does not support it', () => {
    const input = inputs.get('help')!;
    const victim = input.clusters[0]!.facts[0]!;
    const messages = new Map(input.messages);
    messages.delete(victim.source_message_id);
    const { pages } = renderChannelWiki({ ...input, messages });
    for (const page of pages) {
      for (const c of page.citations)
        expect(c.permalink).not.toBe(input.messages.get(victim.source_message_id)!.permalink);
      assertPageInvariants(page);
    }
    const msg = input.messages.get(victim.source_message_id)!;
    const c = renderChannelWiki(input)
      .pages.flatMap((p) => p.citations)
      .find((x) => x.permalink === msg.permalink);
    if (c)
      expect(verifyCitation({ ...c, text_excerpt: victim.memory_text }, msg)).toBe(
        victim.memory_text === c.text_excerpt,
      );
  });

  it('renderPages: the pages it renders equal the full render, the kept ones are the stored ones', () => {
    const input = inputs.get('help')!;
    const full = renderChannelWiki(input);
    const byId = new Map(full.pages.map((p) => [p.id, p]));
    // Keep every other page (as a stored copy, marked), render the rest.
    const keepIds = new Set(full.pages.filter((_, i) => i % 2 === 0).map((p) => p.id));
    const places: string[] = [];
    const partial = renderPages(input, (place) => {
      places.push(place.id);
      const p = byId.get(place.id)!;
      expect(place).toMatchObject({
        slug: p.slug,
        title: p.title,
        section_number: p.section_number,
        parent_id: p.parent_id,
        children: p.children,
      });
      return keepIds.has(place.id) ? { ...p, summary: `kept ${p.summary}` } : null;
    });
    expect(places.sort()).toEqual(full.pages.map((p) => p.id).sort());
    expect(partial.pages.map((p) => p.id)).toEqual(full.pages.map((p) => p.id));
    expect(partial.rendered).toEqual(full.pages.filter((p) => !keepIds.has(p.id)).map((p) => p.id));
    for (const p of partial.pages)
      if (keepIds.has(p.id)) expect(p.summary).toBe(`kept ${byId.get(p.id)!.summary}`);
      else expect(p).toEqual(byId.get(p.id));
    expect(partial.structure).toEqual(full.structure);
    expect(renderPages(input).rendered).toEqual(full.pages.map((p) => p.id));
  });
});

describe('renderChannelWiki (handcrafted)', () => {
  const msgAt = (id: string, text: string) => msg(id, text);
  // The day of January is the id's last digit.
  const msg = (id: string, text: string, author = 'Ann'): SourceMessage =>
    sourceMessage(id, Number(id.slice(-1)), text, author);
  const fact = wikiFact;
  const m1 = msg('m1', 'We store events in Postgres [2] since March.');
  const m2 = msg('m2', 'Kafka carries the change stream to the sink.', 'Bob');
  const m3 = msg('m3', 'lunch?', 'Cid');
  const facts = [
    fact('f1', m1, 'Events are stored in Postgres [2].', ['postgres']),
    fact('f2', m2, 'Kafka carries the change stream.', ['kafka']),
    fact('f3', m3, 'The team decided to migrate to Oracle.', ['postgres'], { fact_type: 'decision' }),
  ];
  const cluster = (id: string, members: WikiFact[]) => clusterOf(id, members);

  const input = (clusters: RenderInput['clusters']): RenderInput => ({
    channel: { id: 'C1', name: 'dev', platform: 'platform_a' },
    clusters,
    facts,
    messages: new Map([m1, m2, m3].map((m) => [m.id, m])),
    people: null,
    decisions: null,
    now: new Date('2026-02-01T00:00:00Z'),
  });

  it('escapes bracketed numbers in fact text and drops a claim its source message does not support', () => {
    const { pages } = renderChannelWiki(input([cluster('a', [facts[0]!, facts[2]!]), cluster('b', [facts[1]!])]));
    const pg = pages.find((p) => p.id === 'topic-postgres')!;
    expect(pg.content).toContain('Events are stored in Postgres \\[2\\]. [1]');
    expect(pg.citations.map((c) => c.id)).toEqual(['[1]']);
    // f3's message ("lunch?") shares no word with it: the claim is left out everywhere.
    for (const p of pages) expect(p.content).not.toContain('Oracle');
    expect(checkWikiCitations(pages, input([]).messages)).toEqual({ total: 4, verified: 4 }); // two topic pages and the overview's two highlights
  });

  it('names topics from their tags, uniquely and independently of cluster order and ids', () => {
    const a = renderChannelWiki(input([cluster('a', [facts[0]!]), cluster('b', [facts[1]!])])).structure;
    const b = renderChannelWiki(input([cluster('z', [facts[1]!]), cluster('y', [facts[0]!])])).structure;
    const ids = (s: typeof a) =>
      s.pages
        .find((n) => n.id === 'topics')!
        .children.map((n) => n.id)
        .sort();
    expect(ids(a)).toEqual(['topic-kafka', 'topic-postgres']);
    expect(ids(b)).toEqual(ids(a));
    const twin = renderChannelWiki(
      input([cluster('a', [facts[0]!]), cluster('b', [{ ...facts[0]!, id: 'f9' }])]),
    ).structure;
    expect(ids(twin)).toEqual(['topic-postgres', 'topic-postgres-2']);
  });

  it('FAQ: a same-thread reply answers only when it shares a telling word, not just the channel subject or a name', () => {
    const thread = (id: string, text: string, author: string, day: number): SourceMessage => ({
      ...msg(id, text, author),
      timestamp: `2026-01-0${day}T1${id.length % 10}:00:00.000Z`,
      permalink: `https://x.slack.com/archives/C1/p${id}?thread_ts=100.1`,
    });
    const q1 = thread('q1', 'Can a Postgres replica lag behind during vacuum?', 'Ann', 2);
    const a1 = thread('a1', 'Yes, replica lag grows during vacuum on big tables.', 'Bob', 3);
    const q2 = thread('q2', 'Does anyone use Postgres with Ann?', 'Cid', 4);
    const a2 = thread('a2', 'Postgres is what Ann set up for the team.', 'Bob', 5);
    const at1 = (id: string, text: string) => ({ ...msg(id, text), timestamp: '2026-01-01T08:00:00.000Z' });
    // A channel about Postgres: the word is on most facts, so it tells nothing.
    const filler = Array.from({ length: 40 }, (_, i) =>
      fact(`p${i}`, at1(`pm${i}`, `Postgres note ${i}`), `Postgres note ${i}.`, ['postgres']),
    );
    const faqFacts = [
      fact('fq1', q1, 'Ann asked: "Can a Postgres replica lag behind during vacuum?"', ['postgres'], {
        fact_type: 'question',
      }),
      fact('fa1', a1, 'Replica lag grows during vacuum on big tables.', ['postgres']),
      fact('fq2', q2, 'Cid asked: "Does anyone use Postgres with Ann?"', ['postgres'], { fact_type: 'question' }),
      fact('fa2', a2, 'Postgres is what Ann set up for the team.', ['postgres']),
    ];
    const all = [...faqFacts, ...filler];
    const { pages } = renderChannelWiki({
      ...input([]),
      facts: all,
      messages: new Map(
        [q1, a1, q2, a2, ...filler.map((f) => at1(f.source_message_id, f.memory_text))].map((m) => [m.id, m]),
      ),
    });
    const faq = pages.find((p) => p.id === 'faq')!.content;
    const answered = faq.split('## Open questions')[0]!;
    const open = faq.split('## Open questions')[1]!;
    expect(answered).toContain('Can a Postgres replica lag behind during vacuum?');
    expect(answered).toContain('Replica lag grows during vacuum on big tables. (Bob)');
    // q2 shares only "postgres" (on most facts) and a person's name with the reply: left open, not mis-answered.
    expect(open).toContain('Does anyone use Postgres with Ann?');
    expect(answered).not.toContain('what Ann set up');
  });

  it('names a topic after a telling tag, not the channel itself or a tag on most of its facts', () => {
    const msg = (id: string, text: string) => ({ ...msgAt(id, text), timestamp: '2026-01-01T08:00:00.000Z' });
    const many = Array.from({ length: 60 }, (_, i) =>
      fact(`g${i}`, msg(`gm${i}`, `Dev note ${i} about kafka`), `Dev note ${i} about kafka.`, ['dev', 'kafka']),
    );
    const members = [
      fact('h1', msg('hm1', 'Kafka retention is seven days for logs'), 'Kafka retention is seven days.', [
        'dev',
        'kafka',
        'retention',
      ]),
      fact('h2', msg('hm2', 'Kafka retention moved to size based'), 'Kafka retention moved to size based.', [
        'dev',
        'kafka',
        'retention',
      ]),
    ];
    const all = [...many, ...members];
    const { structure } = renderChannelWiki({
      ...input([cluster('r', members)]),
      facts: all,
      messages: new Map([...all].map((f) => [f.source_message_id, msg(f.source_message_id, f.memory_text)])),
    });
    const topics = structure.pages.find((n) => n.id === 'topics')!.children;
    // "dev" is the channel, "kafka" is on every fact: the topic is Retention.
    expect(topics.map((n) => n.title)).toEqual(['Retention']);
  });

  it('titles a topic by its most distinctive tag: not one all over the channel, never a code keyword or a link', () => {
    const msg = (id: string, text: string) => ({ ...msgAt(id, text), timestamp: '2026-01-01T08:00:00.000Z' });
    const f = (id: string, tags: string[]) => fact(id, msg(`m${id}`, `Note ${id} on the build`), `Note ${id}.`, tags);
    // Three topics about Leiningen; the second is really about deps.edn, the third about collections (and `:start`,
    // a Clojure keyword on more of its facts, is no title).
    const lein = [f('a1', ['leiningen', 'upgrade']), f('a2', ['leiningen', 'upgrade']), f('a3', ['leiningen'])];
    const deps = [
      f('b1', ['leiningen', 'deps.edn']),
      f('b2', ['leiningen', 'deps.edn']),
      f('b3', ['leiningen', 'deps.edn']),
      f('b4', ['leiningen']),
    ];
    const coll = [
      f('c1', [':start', 'collection', 'leiningen']),
      f('c2', [':start', 'collection']),
      f('c3', [':start', '<http://tryclj.com/>']),
    ];
    const all = [...lein, ...deps, ...coll];
    const { structure } = renderChannelWiki({
      ...input([cluster('d', deps), cluster('l', lein), cluster('c', coll)]),
      facts: all,
      messages: new Map(all.map((x) => [x.source_message_id, msg(x.source_message_id, x.memory_text)])),
    });
    const titles = structure.pages.find((n) => n.id === 'topics')!.children.map((n) => n.title);
    expect(titles).toEqual(['deps.edn', 'Upgrade', 'Collection']);
    expect(titleWorthy(':person/name')).toBe(false);
    expect(titleWorthy('https://clojure.org')).toBe(false);
    expect(titleWorthy('/usr/local/bin/lein')).toBe(false);
    expect(titleWorthy('1.9')).toBe(false);
    expect(titleWorthy('core.async')).toBe(true);
    expect(titleWorthy('b/c')).toBe(false);
    expect(titleWorthy('and/or')).toBe(false);
    expect(titleWorthy('clojure/clojurescript')).toBe(true);
  });

  it('a loose topic whose tags are each on one fact is titled by a named thing, not by its odd topic word', () => {
    const msg = (id: string, text: string) => ({ ...msgAt(id, text), timestamp: '2026-01-01T08:00:00.000Z' });
    const f = (id: string, tags: string[], entities: string[]) => ({
      ...fact(id, msg(`m${id}`, `Note ${id} on the build`), `Note ${id}.`, tags),
      entity_tags: entities,
    });
    // Every tag is on one fact: `badgering` (a topic word, rarer in the channel) must not win over `Nexus`.
    const loose = [f('x1', ['badgering'], ['Nexus']), f('x2', ['connection'], []), f('x3', ['lag'], [])];
    const other = [f('y1', ['nexus', 'upgrade'], []), f('y2', ['upgrade'], [])];
    const all = [...loose, ...other];
    const { structure } = renderChannelWiki({
      ...input([cluster('l', loose), cluster('o', other)]),
      facts: all,
      messages: new Map(all.map((x) => [x.source_message_id, msg(x.source_message_id, x.memory_text)])),
    });
    const titles = structure.pages.find((n) => n.id === 'topics')!.children.map((n) => n.title);
    expect(titles).toEqual(['Nexus', 'Upgrade']);
  });

  it('a second topic with the same title takes a named thing of one of its facts before a number', () => {
    const msg = (id: string, text: string) => ({ ...msgAt(id, text), timestamp: '2026-01-01T08:00:00.000Z' });
    const f = (id: string, tags: string[], entities: string[] = []) => ({
      ...fact(id, msg(`m${id}`, `Note ${id} on the build`), `Note ${id}.`, tags),
      entity_tags: entities,
    });
    const a = [f('a1', ['leiningen']), f('a2', ['leiningen']), f('a3', ['leiningen'])];
    const b = [f('b1', ['leiningen'], ['CIDER', 'getName']), f('b2', ['leiningen'])];
    const c = [f('c1', ['leiningen'], ['getName']), f('c2', ['leiningen'])];
    const all = [...a, ...b, ...c];
    const { structure } = renderChannelWiki({
      ...input([cluster('a', a), cluster('b', b), cluster('c', c)]),
      facts: all,
      messages: new Map(all.map((x) => [x.source_message_id, msg(x.source_message_id, x.memory_text)])),
    });
    const titles = structure.pages.find((n) => n.id === 'topics')!.children.map((n) => n.title);
    // A code identifier (`getName`) is no second tag: the third one gets a number.
    expect(titles).toEqual(['Leiningen', 'Leiningen and CIDER', 'Leiningen (2)']);
  });

  it('the overview highlights a topic with its best fact that names the title, before a better one about a covered tag', () => {
    const msg = (id: string, text: string) => ({ ...msgAt(id, text), timestamp: '2026-01-01T08:00:00.000Z' });
    const texts: [string, string, string[], number][] = [
      ['l1', 'Leiningen upgrade 2.7.1 fixes the https error', ['leiningen'], 0.6],
      ['l2', 'Leiningen keeps self-installs of every version', ['leiningen'], 0.6],
      ['l3', 'Leiningen profiles merge left to right', ['leiningen'], 0.6],
      ['c1', 'CIDER menus show only in clojure buffers', ['cider'], 0.95],
      ['c2', 'CIDER jack-in starts an nREPL server', ['cider'], 0.95],
    ];
    const members = texts.map(([id, text, tags, q]) => ({
      ...fact(id, msg(`m${id}`, text), `${text}.`, tags),
      quality_score: q,
    }));
    const { pages } = renderChannelWiki({
      ...input([cluster('l', members)]),
      facts: members,
      messages: new Map(
        members.map((x) => [x.source_message_id, msg(x.source_message_id, x.memory_text.slice(0, -1))]),
      ),
    });
    const overview = pages.find((p) => p.id === 'overview')!.content;
    const line = overview.split('\n').find((l) => l.startsWith('- **Leiningen:**'))!;
    expect(line).toMatch(/Leiningen (upgrade|keeps|profiles)/);
    // Its page leads with the three Leiningen facts, the CIDER ones after.
    const page = pages.find((p) => p.id === 'topic-leiningen')!.content;
    const bullets = page
      .split('## Key facts')[1]!
      .split('\n')
      .filter((l) => l.startsWith('- '));
    expect(bullets.slice(0, 3).every((b) => b.startsWith('- Leiningen'))).toBe(true);
  });

  it("a topic's summary says what else it covers and who speaks in it, then cites its best short key fact", () => {
    const ms = [
      msg('k1', 'Kafka retention is seven days for logs', 'Bob'),
      msg('k2', 'Kafka retention moved to size based', 'Bob'),
      msg('k3', 'Kafka compaction keeps the last value per key', 'Bob'),
      msg('k4', 'Kafka compaction runs in the log cleaner', 'Ann'),
    ];
    const members = [
      fact('c1', ms[0]!, 'Kafka retention is seven days for logs.', ['kafka', 'retention']),
      fact('c2', ms[1]!, 'Kafka retention moved to size based.', ['kafka', 'retention']),
      fact('c3', ms[2]!, 'Kafka compaction keeps the last value per key.', ['kafka', 'compaction']),
      fact('c4', ms[3]!, 'Kafka compaction runs in the log cleaner.', ['kafka', 'compaction']),
    ];
    const { pages } = renderChannelWiki({
      ...input([cluster('k', members)]),
      facts: members,
      messages: new Map(ms.map((m) => [m.id, m])),
    });
    const page = pages.find((p) => p.id === 'topic-kafka')!;
    expect(page.summary).toMatch(/^Covers Compaction and Retention, mostly from Bob\. .+ \[1\]\.$/);
    expect(page.content.split('\n')[2]).toBe(page.summary);
    expect(checkWikiCitations([page], new Map(ms.map((m) => [m.id, m]))).verified).toBe(page.citations.length);
  });

  it('a topic leads with facts about it: an off-topic member with a higher rank comes after, variants of the title are not listed as covered', () => {
    const ms = [
      msg('l1', 'nippy freezes jodatime intervals out of the box', 'Jo'),
      msg('l2', 'run lein upgrade 2.7.1 to get back to the old leiningen', 'Nat'),
      msg('l3', 'leiningen installed from brew is version 2.5.3', 'Tat'),
      msg('l4', 'lein upgrade works without uninstalling anything', 'Nat'),
      msg('l5', 'leiningen needs java on the path first', 'Ann'),
      msg('l6', 'brew installs leiningen under usr local', 'Tat'),
    ];
    const members = [
      fact('n1', ms[0]!, 'nippy freezes jodatime intervals out of the box.', ['nippy', 'jodatime'], {
        quality_score: 1,
        importance: 'high',
      }),
      fact('n2', ms[1]!, 'Run lein upgrade 2.7.1 to get back to the old leiningen.', ['leiningen', 'lein']),
      fact('n3', ms[2]!, 'Leiningen installed from brew is version 2.5.3.', ['leiningen', 'brew']),
      fact('n4', ms[3]!, 'lein upgrade works without uninstalling anything.', ['lein']),
      fact('n5', ms[4]!, 'Leiningen needs java on the path first.', ['leiningen']),
      fact('n6', ms[5]!, 'Brew installs leiningen under usr local.', ['brew', 'leiningen']),
    ];
    const messages = new Map(ms.map((m) => [m.id, m]));
    const { pages } = renderChannelWiki({ ...input([cluster('l', members)]), facts: members, messages });
    const page = pages.find((p) => p.id === 'topic-leiningen')!;
    const bullets = page.content
      .split('## Key facts')[1]!
      .split('\n')
      .filter((l) => l.startsWith('- '));
    // Five on-topic facts first; the off-topic one, though ranked best, is not needed to reach five.
    expect(bullets).toHaveLength(5);
    expect(bullets.some((b) => b.includes('nippy'))).toBe(false);
    expect(page.summary).not.toContain('nippy');
    // `lein` is a spelling of the title's tag: not listed as something else the topic covers.
    expect(page.summary).toMatch(/^Covers Brew[.,] /);
    expect(checkWikiCitations([page], messages).verified).toBe(page.citations.length);
  });

  it('tagVariant: a shortened spelling, not a different word', () => {
    expect(tagVariant('lein', 'leiningen')).toBe(true);
    expect(tagVariant('leiningen', 'lein')).toBe(true);
    expect(tagVariant('react', 'react-dom')).toBe(false);
    expect(tagVariant('go', 'gopher')).toBe(false);
    expect(tagVariant('kafka', 'kafka')).toBe(true);
  });

  it("byThread: a thread's facts together in time order, at the place of its best fact", () => {
    const t = (id: string, ts: string, thread: string | null) =>
      fact(id, msg(`m${id}`, 'x'), `fact ${id}`, [], {
        message_ts: ts,
        permalink: thread ? `https://x/p${id}?thread_ts=${thread}` : `https://x/p${id}`,
      });
    const a2 = t('a2', '2026-01-02T00:00:00Z', '1.0');
    const b = t('b', '2026-01-03T00:00:00Z', null);
    const a1 = t('a1', '2026-01-01T00:00:00Z', '1.0');
    expect(byThread([a2, b, a1]).map((f) => f.id)).toEqual(['a1', 'a2', 'b']);
    expect(byThread([b, a2]).map((f) => f.id)).toEqual(['b', 'a2']);
  });
});

describe('citationsHold (a stored page kept by an incremental run)', () => {
  it('holds while message and user names are unchanged, fails once a mentioned user gets a name, and when the message is gone', () => {
    const m = sourceMessage('1700000000.000100', 3, 'I pinged <@U07FP7QJ0> about the logs frontend yesterday');
    const fact = wikiFact('f1', m, 'Someone pinged a user about the logs frontend', ['logs']);
    const before = new Map<string, string>();
    const c = citationFor(1, fact, m, { userNames: before });
    expect(c?.text_excerpt).toContain('@U07FP7QJ0');
    const page = { citations: [c!] };
    const byPermalink = new Map([[m.permalink, m]]);
    expect(citationsHold(page, byPermalink, { userNames: before })).toBe(true);
    // Memoised: a second check with an equal (new) map gives the same answer.
    expect(citationsHold(page, byPermalink, { userNames: new Map() })).toBe(true);
    // The user posted since: mentions now render as @martinklepsch, so the stored excerpt no longer verifies.
    const after = new Map([['U07FP7QJ0', 'martinklepsch']]);
    expect(citationsHold(page, byPermalink, { userNames: after })).toBe(false);
    expect(citationsHold(page, new Map(), { userNames: before })).toBe(false);
  });

  it('a name that became known for a user the message does not mention leaves its citations holding', () => {
    const m = sourceMessage('1700000000.000200', 4, 'the logs frontend now streams from the collector');
    const fact = wikiFact('f2', m, 'The logs frontend streams from the collector', ['logs']);
    const c = citationFor(1, fact, m, { userNames: new Map() });
    const page = { citations: [c!] };
    const byPermalink = new Map([[m.permalink, m]]);
    expect(citationsHold(page, byPermalink, { userNames: new Map() })).toBe(true);
    expect(citationsHold(page, byPermalink, { userNames: new Map([['U07FP7QJ0', 'martinklepsch']]) })).toBe(true);
    // A forged excerpt still fails, whatever the names.
    const forged = { citations: [{ ...c!, text_excerpt: 'the logs frontend was dropped' }] };
    expect(citationsHold(forged, byPermalink, { userNames: new Map([['U1', 'x']]) })).toBe(false);
  });
});
