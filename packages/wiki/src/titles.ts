// Topic titles and slugs: tags ranked per cluster, which tags can title a topic, and the naming of the clusters.

import type { RankedTag, RenderMemo } from './memo.js';
import { FACT_TEXT_MAX, listOf } from './page-text.js';
import { factWords } from './rank.js';
import type { RenderInput, TopicCluster, WikiFact } from './types.js';

/** Lower-case, ASCII, dash-separated slug (at most 60 characters); `topic` when nothing is left. */
export function slugify(text: string): string {
  const s = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return s || 'topic';
}

/** Capitalises the words of a plain tag (`sync modes` → `Sync Modes`); identifiers (`_olake_id`, `v0.7.3`) stay as they are. */
function titleCase(memo: RenderMemo, tag: string): string {
  let t = memo.titleCases.get(tag);
  if (t === undefined) {
    if (memo.titleCases.size >= FACT_TEXT_MAX) memo.titleCases.clear();
    t = /[_/.\d]/.test(tag)
      ? tag
      : tag.replace(/(^|\s)(\p{Ll})/gu, (_m, sep: string, c: string) => sep + c.toUpperCase());
    memo.titleCases.set(tag, t);
  }
  return t;
}

/** Lower-cased names of people (fact authors, graph people, known user names): not used as topic or glossary terms. */
export function personNames(input: RenderInput): Set<string> {
  const persons = new Set<string>();
  for (const f of input.facts) persons.add(f.author_name.toLowerCase());
  for (const p of input.people ?? []) persons.add(p.name.toLowerCase());
  for (const n of input.user_names?.values() ?? []) persons.add(n.toLowerCase());
  return persons;
}

export interface Named {
  entry: { cluster: TopicCluster; facts: WikiFact[] };
  title: string;
  slug: string;
  children: Named[];
}

/**
 * Tags of a cluster's facts, most common first (entity-tag casing preferred), ties alphabetical. Memoised per array in `memo`:
 * the caller must not change the array afterwards.
 */
function rankedTags(memo: RenderMemo, facts: readonly WikiFact[]): RankedTag[] {
  const known = memo.rankedTags.get(facts);
  if (known) return known;
  const counts = new Map<string, { display: string; count: number; entity: boolean }>();
  for (const f of facts) {
    const seen = new Set<string>();
    for (const [tags, entity] of [
      [f.topic_tags, false],
      [f.entity_tags, true],
    ] as const) {
      for (const raw of tags) {
        const tag = raw.trim();
        const key = tag.toLowerCase();
        if (!key) continue;
        const cur0 = counts.get(key);
        if (seen.has(key)) {
          if (entity && cur0 && !cur0.entity) Object.assign(cur0, { display: tag, entity: true });
          continue;
        }
        seen.add(key);
        const cur = counts.get(key);
        if (!cur) counts.set(key, { display: entity ? tag : titleCase(memo, tag), count: 1, entity });
        else {
          cur.count++;
          if (entity && !cur.entity) Object.assign(cur, { display: tag, entity: true });
        }
      }
    }
  }
  const ranked = [...counts.entries()]
    .map(([key, v]) => ({ key, display: v.display, count: v.count, entity: v.entity }))
    .sort((a, b) => b.count - a.count || a.key.localeCompare(b.key));
  memo.rankedTags.set(facts, ranked);
  return ranked;
}

/**
 * Tags that say nothing about one topic of a channel: its own name (`clojure` in #clojure) and, in a channel of 50
 * facts or more, tags on at least a fifth of its facts.
 */
export function weakTags(
  memo: RenderMemo,
  channel: { name: string; facts: readonly WikiFact[] },
): (key: string) => boolean {
  const channelKey = slugify(channel.name);
  const generic = new Set(
    rankedTags(memo, channel.facts)
      .filter((t) => channel.facts.length >= 50 && t.count >= 0.2 * channel.facts.length)
      .map((t) => t.key),
  );
  return (key) => generic.has(key) || slugify(key) === channelKey;
}

/**
 * What a topic covers besides its title, and who speaks in it: "Covers JSON, Fressian and Nippy, mostly from
 * alexmiller and noisesmith." (`covered`: the topic's coveredTags; "mostly from" the one or two commonest authors
 * when they wrote at least half of 4 or more facts). Empty when there is nothing to say. Counts only: nothing in it
 * needs a citation.
 */
export function coverage(facts: readonly WikiFact[], covered: readonly { display: string }[]): string {
  const tags = covered.map((t) => t.display);
  const byAuthor = new Map<string, number>();
  for (const f of facts) byAuthor.set(f.author_name, (byAuthor.get(f.author_name) ?? 0) + 1);
  const top = [...byAuthor].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  let who = '';
  if (facts.length >= 4 && top.length > 1) {
    const one = top[0]!;
    const two = top.slice(0, 2);
    if (one[1] >= facts.length / 2) who = `mostly from ${one[0]}`;
    else if (two[0]![1] + two[1]![1] >= facts.length / 2) who = `mostly from ${listOf(two.map((x) => x[0]))}`;
  }
  if (tags.length && who) return `Covers ${listOf(tags)}, ${who}.`;
  if (tags.length) return `Covers ${listOf(tags)}.`;
  return who ? `${who.charAt(0).toUpperCase()}${who.slice(1)}.` : '';
}

/** The keys a topic's title is made of (`Java and tools.reader` → `java`, `tools.reader`), lower-cased. */
export const titleKeys = (title: string): string[] =>
  title
    .toLowerCase()
    .replace(/\s+\(\d+\)$/, '')
    .split(/\s+and\s+/);

/**
 * Whether tag `a` is a shortened or lengthened spelling of `b` (`lein` and `leiningen`): one starts with the other, the
 * shorter has 3+ characters and the rest is letters only (so `react` and `react-dom` stay apart).
 */
export function tagVariant(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return short.length >= 3 && long.startsWith(short) && /^\p{L}+$/u.test(long.slice(short.length));
}

/**
 * The other tags a topic covers besides its title (coverage line, on-topic test): tags on two or more of its facts,
 * at most 3, most common first, passing over weak tags, people, tags that could not title a topic (titleWorthy: code
 * keywords, links, numbers) and spellings of the title's own tags or of one already taken (tagVariant).
 */
export function coveredTags(
  memo: RenderMemo,
  facts: readonly WikiFact[],
  title: string,
  weak: (key: string) => boolean,
  persons: ReadonlySet<string>,
): RankedTag[] {
  const keys = titleKeys(title);
  const out: RankedTag[] = [];
  for (const t of rankedTags(memo, facts)) {
    if (out.length >= 3) break;
    if (t.count < 2 || weak(t.key) || persons.has(t.key) || !titleWorthy(t.key)) continue;
    if (keys.some((k) => tagVariant(k, t.key))) continue;
    if (out.some((o) => tagVariant(o.key, t.key))) continue;
    out.push(t);
  }
  return out;
}

/** Lower-cased tags and text of a fact (the on-topic test), memoised in `memo`. */
const termsOf = (memo: RenderMemo, f: WikiFact) => {
  let t = memo.factTerms.get(f);
  if (!t) {
    t = {
      tags: [...f.topic_tags, ...f.entity_tags].map((x) => x.trim().toLowerCase()),
      text: f.memory_text.toLowerCase(),
    };
    memo.factTerms.set(f, t);
  }
  return t;
};

/**
 * Whether a fact is about its topic: one of its tags is the title's tag or a covered tag (or a spelling of one:
 * tagVariant), or its text names one of them (a one-word anchor as a whole word: factWords; others as written). A
 * topic page's key facts and summary lead come from these first (keyFacts onTopic), so a fact the cluster caught by
 * accident (a remark that shares words, not the subject) does not lead the page.
 */
export function onTopicTest(memo: RenderMemo, anchors: readonly string[]): (f: WikiFact) => boolean {
  const long = anchors.filter((a) => a.length >= 3);
  const single = long.filter((a) => /^[\p{L}\p{N}]+$/u.test(a));
  const phrases = long.filter((a) => !single.includes(a));
  return (f) => {
    const { tags, text } = termsOf(memo, f);
    if (tags.some((t) => anchors.some((a) => tagVariant(a, t)))) return true;
    if (single.length) {
      const w = factWords(f);
      if (single.some((a) => w.has(a))) return true;
    }
    return phrases.some((p) => text.includes(p));
  };
}

/**
 * Whether a tag can title a topic: not a code keyword (`:start`, `:person/name`), a link (`<http://…>`, `https://…`), a
 * path (`/usr/local/bin/lein`), a bare number or version, or shorter than 2 characters. Such tags still count
 * elsewhere (the glossary, weak tags); they just make poor headings and coverage lines.
 */
export function titleWorthy(key: string): boolean {
  const k = key.trim();
  return (
    k.length >= 2 &&
    !k.startsWith(':') &&
    !k.startsWith('<') &&
    !k.startsWith('/') &&
    !/^[a-z][a-z0-9+.-]*:\/\//i.test(k) &&
    !/^[\d\s.,:/-]+$/.test(k) &&
    // Abbreviations written with a slash (`b/c`, `and/or`, `w/o`) are not subjects.
    !/^[a-z]{1,3}\/[a-z]{1,3}$/i.test(k) &&
    /\p{L}/u.test(k)
  );
}

/**
 * Names the clusters: titles from the topic/entity tags of their members, the most distinctive first. A tag's
 * distinctiveness in a cluster is its count there times log(1 + clusters / clusters carrying it) (class-based TF-IDF
 * over the channel's clusters), so a tag all over the channel (`leiningen` in a third of #clojure's topics) loses to
 * one particular to the cluster. Tags on two or more members go before tags on one; tags that say nothing about one
 * topic (`weak`: weakTags) and tags that cannot title a topic (titleWorthy: code keywords, links, paths, numbers) go
 * last; ties keep the most-common-first order. Slugs are unique within the channel (a taken slug gets the next tag
 * appended, then a number). Deterministic for the same members: clusters are named in order of size, then of their
 * sorted member ids.
 */
export function nameClusters(
  memo: RenderMemo,
  entries: RenderInput['clusters'],
  persons: ReadonlySet<string>,
  weak: (key: string) => boolean,
): Named[] {
  const byId = new Map(entries.map((e) => [e.cluster.id, e]));
  const memberKey = (e: RenderInput['clusters'][number]) => [...e.cluster.member_ids].sort().join(',');
  const order = (a: RenderInput['clusters'][number], b: RenderInput['clusters'][number]) =>
    b.facts.length - a.facts.length ||
    memberKey(a).localeCompare(memberKey(b)) ||
    a.cluster.id.localeCompare(b.cluster.id);
  const used = new Set<string>();
  const named = new Map<string, Named>();
  const tagsOf = new Map(entries.map((e) => [e.cluster.id, rankedTags(memo, e.facts)]));
  const df = new Map<string, number>();
  for (const tags of tagsOf.values()) for (const t of tags) df.set(t.key, (df.get(t.key) ?? 0) + 1);
  const idf = (key: string) => Math.log(1 + entries.length / (df.get(key) ?? 1));
  const name = (e: RenderInput['clusters'][number], exclude: Set<string>): Named => {
    const tags = tagsOf
      .get(e.cluster.id)!
      .filter((t) => !exclude.has(t.key) && !persons.has(t.key))
      .map((t, i) => ({
        t,
        i,
        // Shared tags first; among tags on one member, a named thing (an entity tag: a technology, a project)
        // before a topic word (a loose cluster titled `Fussy` or `Badgering` by its one odd tag says nothing).
        rank: weak(t.key) || !titleWorthy(t.key) ? 3 : t.count >= 2 ? 0 : t.entity ? 1 : 2,
        score: t.count * idf(t.key),
      }))
      .sort((a, b) => a.rank - b.rank || b.score - a.score || a.i - b.i)
      .map((x) => x.t);
    const first = tags[0];
    let title = first ? first.display : 'Miscellaneous';
    let slug = slugify(title);
    // A taken title gets a second tag that can title a topic, and not a spelling of the first (`Leiningen and Lein`
    // says nothing more): one on two or more facts, else a named thing on one; without one, a number.
    const second = (t: RankedTag) => titleWorthy(t.key) && !weak(t.key) && !tagVariant(t.key, first!.key);
    // Then a named thing on one fact (`Leiningen and CIDER` says more than `Leiningen (2)`), not a code identifier
    // (`getName`).
    const seconds = [
      ...tags.slice(1).filter((t) => t.count >= 2 && second(t)),
      ...tags.slice(1).filter((t) => t.count < 2 && t.entity && second(t) && !/^[a-z]+[A-Z]/.test(t.display)),
    ];
    for (let i = 0; used.has(slug) && i < Math.min(seconds.length, 3); i++) {
      title = `${first!.display} and ${seconds[i]!.display}`;
      slug = slugify(title);
    }
    const base = slug;
    for (let k = 2; used.has(slug); k++) slug = `${base}-${k}`;
    if (slug !== base) title = `${title} (${slug.slice(base.length + 1)})`;
    used.add(slug);
    return { entry: e, title, slug, children: [] };
  };
  // Depth-first from the roots, so a parent is named before its children.
  const childrenOf = new Map<string, RenderInput['clusters']>();
  const roots: RenderInput['clusters'] = [];
  for (const e of entries) {
    const p = e.cluster.parent_id;
    if (p && p !== e.cluster.id && byId.has(p)) childrenOf.set(p, [...(childrenOf.get(p) ?? []), e]);
    else roots.push(e);
  }
  const visit = (list: RenderInput['clusters'], exclude: Set<string>, depth: number): Named[] =>
    [...list].sort(order).map((e) => {
      const n = name(e, exclude);
      named.set(e.cluster.id, n);
      const ex = new Set(exclude);
      ex.add(n.title.toLowerCase());
      for (const t of tagsOf
        .get(e.cluster.id)!
        .filter((x) => !persons.has(x.key))
        .slice(0, 1))
        ex.add(t.key);
      if (depth < 8) n.children = visit(childrenOf.get(e.cluster.id) ?? [], ex, depth + 1);
      return n;
    });
  return visit(roots, new Set(), 0);
}
