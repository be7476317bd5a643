/**
 * Renders a channel's wiki (spec "Wiki": structure, node, page, citation shapes; fixed pages and their
 * section numbers; topic ids and slugs) from facts, topic clusters, source messages and, when the graph
 * store answers, people and decisions. Pure: no I/O, no LLM call (summaries are extractive).
 *
 * Citation rule: every `[n]` in a page's content is one entry of the page's `citations`, built by
 * citationFor from the fact's source message and checked by verifyCitation before the claim is written;
 * a claim that cannot be cited is left out, never shown uncited.
 */
import {
  type CitationOptions,
  citationFor,
  contentTokens,
  renderMarkup,
  verifyCitation,
  type WikiCitation,
} from './citations.js';
import {
  codeLike,
  factWords,
  KEY_FACTS_MAX,
  KEY_FACTS_MIN,
  keyFactScore,
  keyFacts,
  NEAR_DUPLICATE_OVERLAP,
  wordOverlap,
} from './rank.js';
import type { SourceMessage, TopicCluster, WikiFact } from './types.js';

/** Spec "Wiki" node. */
export interface WikiNode {
  id: string;
  title: string;
  slug: string;
  /** Dotted for children: `7`, `7.1`, `7.1.2`. */
  section_number: string;
  page_type: 'fixed' | 'topic' | 'sub-topic';
  memory_count: number;
  children: WikiNode[];
}

/** Spec "Wiki" structure. */
export interface WikiStructure {
  channel_id: string;
  channel_name: string;
  platform: string;
  /** ISO 8601 UTC. */
  generated_at: string;
  is_stale: boolean;
  pages: WikiNode[];
}

/** Spec "Wiki" page. `children` are the child pages' nodes. */
export interface WikiPage {
  id: string;
  slug: string;
  title: string;
  page_type: 'fixed' | 'topic' | 'sub-topic';
  parent_id: string | null;
  section_number: string;
  /** Markdown. Every `[n]` marker is one entry of `citations`. */
  content: string;
  summary: string;
  memory_count: number;
  /** ISO 8601 UTC. */
  last_updated: string;
  citations: WikiCitation[];
  children: WikiNode[];
}

/** A person as the graph store reports one (spec "Graph entity" Person, with its fact count). */
export interface WikiPerson {
  name: string;
  fact_count: number;
}

/** Spec "Decision record" (plus the id of the fact it came from, when known). */
export interface WikiDecision {
  name: string;
  decided_by: string;
  status: string;
  /** YYYY-MM-DD. */
  date: string;
  context: string;
  fact_id?: string;
}

/** Input of renderChannelWiki. */
export interface RenderInput {
  channel: { id: string; name: string; platform: string };
  /** Topic clusters of the channel with their member facts (a child names its parent in parent_id). */
  clusters: { cluster: TopicCluster; facts: WikiFact[] }[];
  /** All facts of the channel. */
  facts: WikiFact[];
  /** Source messages by platform message id. */
  messages: ReadonlyMap<string, SourceMessage>;
  /** null when the graph store is unavailable (spec "Degraded behaviour"). */
  people: WikiPerson[] | null;
  /** null when the graph store is unavailable (spec "Degraded behaviour"). */
  decisions: WikiDecision[] | null;
  now: Date;
  /** Platform user ids to names, to render mentions in excerpts (`<@U1>` → `@Ann`). */
  user_names?: ReadonlyMap<string, string>;
  /** Fact id → times cited elsewhere (ask answers, earlier versions): the ranking's citation factor. */
  citation_counts?: ReadonlyMap<string, number>;
  /**
   * Fact id → bestExcerpt of the fact in its source message, known from an earlier run in which neither changed
   * (generate.ts keeps them with its sources): used instead of computing the excerpt again. Every citation built
   * from one is still verified against the message.
   */
  excerpts?: ReadonlyMap<string, string | null>;
}

/** The fixed pages (spec "Wiki": always present, with these section numbers). */
export const FIXED_PAGES = [
  { id: 'overview', title: 'Overview', section: '1' },
  { id: 'people', title: 'People', section: '2' },
  { id: 'decisions', title: 'Decisions', section: '3' },
  { id: 'faq', title: 'FAQ', section: '4' },
  { id: 'glossary', title: 'Glossary', section: '5' },
  { id: 'activity', title: 'Activity', section: '6' },
  { id: 'topics', title: 'Topics', section: '7' },
] as const;

/** What the People and Decisions pages say when the graph store is down (spec "Degraded behaviour"). */
export const GRAPH_UNAVAILABLE_NOTICE =
  '> The knowledge graph is temporarily unavailable, so this page cannot be built from it right now. It will be regenerated once the graph store recovers.';

/** Markers `[n]` in Markdown (a backslash-escaped `\[` is literal text, not a marker). */
const MARKER = /(?<!\\)\[(\d+)\]/g;

/** The `[n]` markers of a Markdown text, in order of first appearance. */
export function citationMarkers(content: string): string[] {
  const seen: string[] = [];
  for (const m of content.matchAll(MARKER)) if (!seen.includes(m[0])) seen.push(m[0]);
  return seen;
}

/** Per message, the user ids its text mentions without a label (`<@U123>`, `<@!123>`, `<@&123>`), as renderMarkup reads them. */
const MENTIONED = new WeakMap<SourceMessage, string[]>();

/**
 * A short key of the display names a message's excerpts render with: the names (from `names`) of the users its text
 * mentions without a label, the only part of a citation that user names change (citations.ts renderMarkup). A
 * memoised citation of the message is reused only under an equal key, so a user whose name became known since
 * invalidates the citations of the messages that mention them, and no others. '' when it mentions nobody.
 */
function mentionKey(msg: SourceMessage, names: ReadonlyMap<string, string> | undefined): string {
  let ids = MENTIONED.get(msg);
  if (!ids) {
    const found = new Set<string>();
    for (const m of (msg.text ?? '').matchAll(/<([^<>\s][^<>]*)>/g)) {
      const inner = m[1]!;
      if (inner.startsWith('@') && !inner.includes('|')) found.add(inner.replace(/^@[!&]?/, ''));
    }
    ids = [...found];
    MENTIONED.set(msg, ids);
  }
  return ids.map((id) => `${id}\u0000${names?.get(id) ?? ''}`).join('\u0001');
}

/**
 * Citations across runs, per fact object: the citation (or null) built for it against `msg` under user names `names`
 * (mentionKey). Facts and messages are immutable under their objects, and a long-lived generator hands the same objects
 * to run after run (its cached sources), so an incremental run builds and verifies only the citations of facts or
 * messages that are new or changed; a new object (a changed fact or message, another process) misses.
 */
const CITED = new WeakMap<
  WikiFact,
  { msg: SourceMessage; names: string; citation: WikiCitation | null; excerpt: string | null }
>();

/** Citations verified against a message object under user names (mentionKey), per citation object (see CITED). */
const VERIFIED = new WeakMap<WikiCitation, { msg: SourceMessage; names: string }>();

/** verifyCitation, memoised per (citation object, message object, user names) when it passed. */
function verifiedCitation(c: WikiCitation, msg: SourceMessage, opts: CitationOptions): boolean {
  const names = mentionKey(msg, opts.userNames);
  const seen = VERIFIED.get(c);
  if (seen && seen.msg === msg && seen.names === names) return true;
  const ok = verifyCitation(c, msg, opts);
  if (ok) VERIFIED.set(c, { msg, names });
  return ok;
}

/** Shared per-render context. */
class Context {
  readonly opts: CitationOptions;
  /** Fact id → its verified citation (id `[1]`), or null when it cannot be cited; computed once per run. */
  private readonly cited = new Map<string, WikiCitation | null>();
  /** Fact id → the excerpt used (or null): what renderPages hands back for the next run's `excerpts`. */
  readonly excerpts = new Map<string, string | null>();
  constructor(readonly input: RenderInput) {
    this.opts = input.user_names ? { userNames: input.user_names } : {};
  }
  /**
   * The fact's verified citation (numbered `[1]`; the page renumbers it), or null when it cannot be cited. Reuses
   * the citation of an earlier run for the same fact and message objects under the same user names (CITED).
   */
  citation(fact: WikiFact): WikiCitation | null {
    let c = this.cited.get(fact.id);
    if (c === undefined) {
      const msg = this.input.messages.get(fact.source_message_id);
      const memo = msg ? CITED.get(fact) : undefined;
      const names = msg ? mentionKey(msg, this.input.user_names) : '';
      if (msg && memo && memo.msg === msg && memo.names === names) {
        c = memo.citation;
        this.excerpts.set(fact.id, memo.excerpt);
      } else {
        const known = this.input.excerpts?.get(fact.id);
        const built = msg ? citationFor(1, fact, msg, this.opts, known) : null;
        c = msg && built && verifyCitation(built, msg, this.opts) ? built : null;
        if (c && msg) VERIFIED.set(c, { msg, names });
        if (msg) {
          const excerpt = built?.text_excerpt ?? null;
          this.excerpts.set(fact.id, excerpt);
          CITED.set(fact, { msg, names, citation: c, excerpt });
        }
      }
      this.cited.set(fact.id, c);
    }
    return c;
  }
  /** Whether a verified citation can be built for the fact. */
  canCite(fact: WikiFact): boolean {
    return this.citation(fact) !== null;
  }
  score(fact: WikiFact): number {
    return keyFactScore(fact, { now: this.input.now, citationCount: this.input.citation_counts?.get(fact.id) ?? 0 });
  }
  /** rank.ts keyFacts over the facts that can be cited; `onTopic` as there (a topic page's relevance test). */
  keyFacts(
    facts: readonly WikiFact[],
    n: number,
    onTopic?: (fact: WikiFact) => boolean,
    titled?: (fact: WikiFact) => boolean,
  ): WikiFact[] {
    return keyFacts(
      facts.filter((f) => this.canCite(f)),
      n,
      {
        now: this.input.now,
        ...(this.input.citation_counts ? { citationCounts: this.input.citation_counts } : {}),
        ...(onTopic ? { onTopic } : {}),
        ...(titled ? { titled } : {}),
      },
    );
  }
}

/** Citations of one page under construction. */
class PageCitations {
  readonly list: WikiCitation[] = [];
  readonly facts = new Map<string, WikiFact>();
  private readonly byKey = new Map<string, string>();
  constructor(private readonly ctx: Context) {}
  /** The marker citing `fact`, or null when it cannot be cited (the claim must then be left out). */
  cite(fact: WikiFact): string | null {
    const verified = this.ctx.citation(fact);
    if (!verified) return null;
    const c = { ...verified, id: `[${this.list.length + 1}]` };
    this.facts.set(fact.id, fact);
    const key = `${c.permalink}\u0000${c.text_excerpt}`;
    const existing = this.byKey.get(key);
    if (existing) return existing;
    this.byKey.set(key, c.id);
    this.list.push(c);
    return c.id;
  }
  /** `text` as one cited Markdown line ending with its marker, or null when uncitable. */
  claim(fact: WikiFact, text = factText(fact)): string | null {
    const marker = this.cite(fact);
    return marker ? `${text} ${marker}` : null;
  }
}

/** factText per memory_text (bounded: cleared past FACT_TEXT_MAX entries). */
const FACT_TEXTS = new Map<string, string>();
const FACT_TEXT_MAX = 50_000;

/** A fact's text for Markdown: one line, thread-reply context dropped, brackets escaped (no fake markers). Memoised. */
export function factText(fact: Pick<WikiFact, 'memory_text'>): string {
  let t = FACT_TEXTS.get(fact.memory_text);
  if (t === undefined) {
    if (FACT_TEXTS.size >= FACT_TEXT_MAX) FACT_TEXTS.clear();
    t = markdownText(fact.memory_text);
    FACT_TEXTS.set(fact.memory_text, t);
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
function titleCase(tag: string): string {
  let t = TITLE_CASES.get(tag);
  if (t === undefined) {
    if (TITLE_CASES.size >= FACT_TEXT_MAX) TITLE_CASES.clear();
    t = /[_/.\d]/.test(tag)
      ? tag
      : tag.replace(/(^|\s)(\p{Ll})/gu, (_m, sep: string, c: string) => sep + c.toUpperCase());
    TITLE_CASES.set(tag, t);
  }
  return t;
}
/** titleCase per tag (bounded like FACT_TEXTS). */
const TITLE_CASES = new Map<string, string>();

/** Lower-cased names of people (fact authors, graph people, known user names): not used as topic or glossary terms. */
function personNames(input: RenderInput): Set<string> {
  const persons = new Set<string>();
  for (const f of input.facts) persons.add(f.author_name.toLowerCase());
  for (const p of input.people ?? []) persons.add(p.name.toLowerCase());
  for (const n of input.user_names?.values() ?? []) persons.add(n.toLowerCase());
  return persons;
}

const isoDate = (ts: string) => ts.slice(0, 10);
const maxTs = (facts: Iterable<WikiFact>, fallback: string) => {
  let best = '';
  for (const f of facts) if (f.message_ts > best) best = f.message_ts;
  return best || fallback;
};

interface Named {
  entry: { cluster: TopicCluster; facts: WikiFact[] };
  title: string;
  slug: string;
  children: Named[];
}

interface RankedTag {
  key: string;
  display: string;
  count: number;
  entity: boolean;
}
/** rankedTags per facts array (a render asks for a cluster's tags several times: naming, coverage, on-topic test). */
const RANKED_TAGS = new WeakMap<readonly WikiFact[], RankedTag[]>();

/**
 * Tags of a cluster's facts, most common first (entity-tag casing preferred), ties alphabetical. Memoised per array:
 * the caller must not change the array afterwards.
 */
function rankedTags(facts: readonly WikiFact[]): RankedTag[] {
  const memo = RANKED_TAGS.get(facts);
  if (memo) return memo;
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
        if (!cur) counts.set(key, { display: entity ? tag : titleCase(tag), count: 1, entity });
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
  RANKED_TAGS.set(facts, ranked);
  return ranked;
}

/**
 * Tags that say nothing about one topic of a channel: its own name (`clojure` in #clojure) and, in a channel of 50
 * facts or more, tags on at least a fifth of its facts.
 */
function weakTags(channel: { name: string; facts: readonly WikiFact[] }): (key: string) => boolean {
  const channelKey = slugify(channel.name);
  const generic = new Set(
    rankedTags(channel.facts)
      .filter((t) => channel.facts.length >= 50 && t.count >= 0.2 * channel.facts.length)
      .map((t) => t.key),
  );
  return (key) => generic.has(key) || slugify(key) === channelKey;
}

/** "a", "a and b", "a, b and c". */
const listOf = (xs: readonly string[]) =>
  xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;

/**
 * What a topic covers besides its title, and who speaks in it: "Covers JSON, Fressian and Nippy, mostly from
 * alexmiller and noisesmith." (`covered`: the topic's coveredTags; "mostly from" the one or two commonest authors
 * when they wrote at least half of 4 or more facts). Empty when there is nothing to say. Counts only: nothing in it
 * needs a citation.
 */
function coverage(facts: readonly WikiFact[], covered: readonly { display: string }[]): string {
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
const titleKeys = (title: string): string[] =>
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
function coveredTags(
  facts: readonly WikiFact[],
  title: string,
  weak: (key: string) => boolean,
  persons: ReadonlySet<string>,
): RankedTag[] {
  const keys = titleKeys(title);
  const out: RankedTag[] = [];
  for (const t of rankedTags(facts)) {
    if (out.length >= 3) break;
    if (t.count < 2 || weak(t.key) || persons.has(t.key) || !titleWorthy(t.key)) continue;
    if (keys.some((k) => tagVariant(k, t.key))) continue;
    if (out.some((o) => tagVariant(o.key, t.key))) continue;
    out.push(t);
  }
  return out;
}

/** Memoised lower-cased tags and text of a fact (the on-topic test). */
const FACT_TERMS = new WeakMap<WikiFact, { tags: string[]; text: string }>();
const termsOf = (f: WikiFact) => {
  let t = FACT_TERMS.get(f);
  if (!t) {
    t = {
      tags: [...f.topic_tags, ...f.entity_tags].map((x) => x.trim().toLowerCase()),
      text: f.memory_text.toLowerCase(),
    };
    FACT_TERMS.set(f, t);
  }
  return t;
};

/**
 * Whether a fact is about its topic: one of its tags is the title's tag or a covered tag (or a spelling of one:
 * tagVariant), or its text names one of them (a one-word anchor as a whole word: factWords; others as written). A
 * topic page's key facts and summary lead come from these first (keyFacts onTopic), so a fact the cluster caught by
 * accident (a remark that shares words, not the subject) does not lead the page.
 */
function onTopicTest(anchors: readonly string[]): (f: WikiFact) => boolean {
  const long = anchors.filter((a) => a.length >= 3);
  const single = long.filter((a) => /^[\p{L}\p{N}]+$/u.test(a));
  const phrases = long.filter((a) => !single.includes(a));
  return (f) => {
    const { tags, text } = termsOf(f);
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
function nameClusters(
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
  const tagsOf = new Map(entries.map((e) => [e.cluster.id, rankedTags(e.facts)]));
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

/** Renumbers the markers of a page by first appearance in `content`, keeping only citations used. */
function finishPage(
  base: Omit<WikiPage, 'citations' | 'content' | 'summary'>,
  content: string,
  summary: string,
  cites: PageCitations,
): WikiPage {
  const used = citationMarkers(content);
  const remap = new Map(used.map((m, i) => [m, `[${i + 1}]`]));
  const byId = new Map(cites.list.map((c) => [c.id, c]));
  const rewrite = (s: string) => s.replace(MARKER, (m) => remap.get(m) ?? m);
  const citations = used.map((m) => ({ ...byId.get(m)!, id: remap.get(m)! }));
  return { ...base, content: rewrite(content), summary: rewrite(summary), citations };
}

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

function sentence(line: string): string {
  // "text [n]" → "text [n]." unless the text ends with ? or !
  const m = /^(.*?)([.?!]?)\s(\[\d+\])$/s.exec(line);
  if (!m) return line;
  return m[2] === '?' || m[2] === '!' ? `${m[1]}${m[2]} ${m[3]}` : `${m[1]} ${m[3]}.`;
}

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
 */
export function renderPages(
  input: RenderInput,
  keep: (place: WikiPagePlace) => WikiPage | null = () => null,
): { structure: WikiStructure; pages: WikiPage[]; rendered: string[]; excerpts: Map<string, string | null> } {
  const renderedTopics: string[] = [];
  const renderedFixed: string[] = [];
  const ctx = new Context(input);
  const generatedAt = input.now.toISOString();
  const facts = input.facts.filter((f) => f.channel_id === input.channel.id || !f.channel_id);
  const live = facts.filter((f) => !f.superseded_by);
  const persons = personNames(input);
  const weak = weakTags({ name: input.channel.name, facts: live });
  const named = nameClusters(input.clusters, persons, weak);
  // Per topic, once: the tags it covers besides its title, and whether a fact is about it (it names the title's
  // tag or a covered one: onTopicTest).
  const topics = new Map<
    Named,
    { covered: RankedTag[]; test: (f: WikiFact) => boolean; titled: (f: WikiFact) => boolean }
  >();
  const topicOf = (n: Named) => {
    let t = topics.get(n);
    if (!t) {
      const covered = coveredTags(n.entry.facts, n.title, weak, persons);
      t = {
        covered,
        test: onTopicTest([...titleKeys(n.title), ...covered.map((c) => c.key)]),
        titled: onTopicTest(titleKeys(n.title)),
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

type FixedBase = (
  id: (typeof FIXED_PAGES)[number]['id'],
  memoryCount: number,
  lastUpdated: string,
) => Omit<WikiPage, 'citations' | 'content' | 'summary'>;

/**
 * Overview (section 1): the channel's counts, then its highlights: the best key fact about each of its largest topics
 * (by topic order, one per topic, bolded with the topic's title), up to 5, filled from the channel's best facts when
 * it has fewer topics; then the topic list. The summary is the counts and the first two highlights.
 */
function overviewPage(
  ctx: Context,
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

function peoplePage(ctx: Context, live: WikiFact[], base: FixedBase): WikiPage {
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
      const line = best ? cites.claim(best, `**${p.name}**: ${factText(best)}`) : null;
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

function overlap(a: Set<string>, b: Set<string>): number {
  let n = 0;
  for (const t of a) if (b.has(t)) n++;
  return n;
}

function decisionsPage(ctx: Context, facts: WikiFact[], live: WikiFact[], base: FixedBase): WikiPage {
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
      const text = `**${factText({ memory_text: d.name })}** (${d.status}, ${d.date}, decided by ${factText({ memory_text: d.decided_by })})${d.context ? `: ${factText({ memory_text: d.context })}` : ''}`;
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

const FAQ_WINDOW_MS = 14 * 86_400_000;

/**
 * The thread a fact's message belongs to: the `thread_ts` query parameter of its permalink (workplace
 * chat replies), else its own message id (a thread root, or a platform without threads in permalinks).
 */
/**
 * Facts (best first) regrouped by conversation: each thread's facts (threadKey) together, in message time order, at
 * the place of the thread's best fact. A problem and its fix then read in order instead of apart.
 */
export function byThread(facts: readonly WikiFact[]): WikiFact[] {
  const groups = new Map<string, WikiFact[]>();
  for (const f of facts) {
    const k = threadKey(f);
    const g = groups.get(k);
    if (g) g.push(f);
    else groups.set(k, [f]);
  }
  return [...groups.values()].flatMap((g) =>
    g.length < 2 ? g : [...g].sort((a, b) => a.message_ts.localeCompare(b.message_ts) || a.id.localeCompare(b.id)),
  );
}

export function threadKey(fact: Pick<WikiFact, 'permalink' | 'source_message_id'>): string {
  const m = /[?&]thread_ts=([^&#]+)/.exec(fact.permalink ?? '');
  return m ? decodeURIComponent(m[1]!) : fact.source_message_id;
}

const ANSWER_TYPES = new Set<WikiFact['fact_type']>(['decision', 'observation', 'opinion']);

/**
 * contentTokens of a fact's memory_text, memoised per fact object (a fact's text never changes under its object; the
 * generator's cache hands the same objects to run after run, so a long-lived process tokenises each fact once).
 */
const TOKENS = new WeakMap<WikiFact, Set<string>>();
function factTokens(f: WikiFact): Set<string> {
  let t = TOKENS.get(f);
  if (!t) {
    t = contentTokens(f.memory_text);
    TOKENS.set(f, t);
  }
  return t;
}

/**
 * Content words that tell facts of a channel apart: contentTokens minus the names of the channel's authors (fact texts
 * name their authors) and minus words found in more than 3% of its facts (at least 2), such as the channel's own
 * subject ("clojure" in #clojure). Two facts sharing only such words are not about the same thing.
 */
function informativeTokens(facts: readonly WikiFact[]): {
  informative: (f: WikiFact) => Set<string>;
  all: (f: WikiFact) => Set<string>;
} {
  const names = new Set<string>();
  for (const f of facts) for (const t of contentTokens(f.author_name)) names.add(t);
  const sets = new Map<string, Set<string>>();
  const df = new Map<string, number>();
  for (const f of facts) {
    const toks = new Set([...factTokens(f)].filter((t) => !names.has(t)));
    sets.set(f.id, toks);
    for (const t of toks) df.set(t, (df.get(t) ?? 0) + 1);
  }
  const limit = Math.max(2, Math.ceil(0.03 * facts.length));
  const cache = new Map<string, Set<string>>();
  const all = (f: WikiFact) => {
    let toks = sets.get(f.id);
    if (!toks) {
      toks = new Set([...factTokens(f)].filter((t) => !names.has(t)));
      sets.set(f.id, toks);
    }
    return toks;
  };
  const informative = (f: WikiFact) => {
    let out = cache.get(f.id);
    if (!out) {
      out = new Set([...all(f)].filter((t) => (df.get(t) ?? 0) <= limit));
      cache.set(f.id, out);
    }
    return out;
  };
  return { informative, all };
}

/**
 * The answer of a question fact among later facts by another author within 14 days: in the question's thread
 * (threadKey) and sharing at least one informative word (informativeTokens) or three content words, preferably soon
 * after it; else, outside
 * the thread, sharing at least 3 informative words (or 2 and a tag). Statements (decision, observation, opinion) are
 * preferred over action items. null when none qualifies (the question is listed as open).
 */
function findAnswer(
  q: WikiFact,
  candidates: readonly AnswerCandidate[],
  tokensOf: ReturnType<typeof informativeTokens>,
): WikiFact | null {
  const qt = Date.parse(q.message_ts);
  const qThread = threadKey(q);
  const qTokens = tokensOf.informative(q);
  const qAll = tokensOf.all(q);
  const qTags = new Set([...q.topic_tags, ...q.entity_tags].map((t) => t.toLowerCase()));
  let best: WikiFact | null = null;
  let bestScore = Number.NEGATIVE_INFINITY;
  let bestIndex = Number.POSITIVE_INFINITY;
  // Candidates are in time order: start at the first one after the question, stop past the window.
  let lo = 0;
  let hi = candidates.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (candidates[mid]!.at <= qt) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < candidates.length; i++) {
    const { fact: a, at, thread, tags: aTags, index } = candidates[i]!;
    if (at - qt > FAQ_WINDOW_MS) break;
    if (a.author_name === q.author_name || a.source_message_id === q.source_message_id) continue;
    const sameThread = thread === qThread ? 1 : 0;
    const o = overlap(qTokens, tokensOf.informative(a));
    const tags = overlap(qTags, aTags);
    if (sameThread ? o === 0 && overlap(qAll, tokensOf.all(a)) < 3 : o < 3 && !(o >= 2 && tags >= 1)) continue;
    const score =
      sameThread * 3 +
      Math.min(o, 5) * 0.2 +
      Math.min(tags, 2) * 0.3 +
      0.5 * a.quality_score +
      (ANSWER_TYPES.has(a.fact_type) ? 0.4 : 0) -
      2 * ((at - qt) / FAQ_WINDOW_MS) ** 0.5;
    // Equal scores: the earlier fact of the pool, as a scan in pool order would pick.
    if (score > bestScore || (score === bestScore && index < bestIndex)) {
      bestScore = score;
      bestIndex = index;
      best = a;
    }
  }
  return best;
}

/** A fact findAnswer may pick, with what it compares computed once: time (ms), thread, lower-cased tags. */
interface AnswerCandidate {
  fact: WikiFact;
  /** Its place in the pool as given. */
  index: number;
  at: number;
  thread: string;
  tags: Set<string>;
}

/**
 * The answer pool as findAnswer reads it: the facts with their features, in time order (ties in pool order); facts
 * with an unreadable time are left out (no window holds them).
 */
function answerCandidates(pool: readonly WikiFact[]): AnswerCandidate[] {
  return pool
    .map((fact, index) => ({
      fact,
      index,
      at: Date.parse(fact.message_ts),
      thread: threadKey(fact),
      tags: new Set([...fact.topic_tags, ...fact.entity_tags].map((t) => t.toLowerCase())),
    }))
    .filter((c) => Number.isFinite(c.at))
    .sort((x, y) => x.at - y.at || x.index - y.index);
}

function faqPage(ctx: Context, live: WikiFact[], base: FixedBase): WikiPage {
  const { now } = ctx.input;
  const cites = new PageCitations(ctx);
  const questions = live
    .filter((f) => f.fact_type === 'question' && ctx.canCite(f))
    .sort((a, b) => a.message_ts.localeCompare(b.message_ts) || a.id.localeCompare(b.id));
  const answersPool = answerCandidates(live.filter((f) => f.fact_type !== 'question' && ctx.canCite(f)));
  const answered: string[] = [];
  const open: string[] = [];
  const drawn: WikiFact[] = [];
  const tokensOf = informativeTokens(live);
  const asked: Set<string>[] = [];
  for (const q of questions) {
    // A question asked again in nearly the same words (a repost) is listed once, where it was first asked.
    const w = factWords(q);
    if (asked.some((x) => wordOverlap(x, w) >= NEAR_DUPLICATE_OVERLAP)) continue;
    const qLine = cites.claim(q);
    if (!qLine) continue;
    asked.push(w);
    drawn.push(q);
    const a = findAnswer(q, answersPool, tokensOf);
    const aLine = a ? cites.claim(a, `${factText(a)} (${a.author_name})`) : null;
    if (a && aLine) {
      drawn.push(a);
      answered.push(`- **Q:** ${qLine}`, `  - **A:** ${aLine}`);
    } else open.push(`- ${qLine}`);
  }
  const summary = `${answered.length / 2} answered and ${open.length} open questions.`;
  const lines = ['# FAQ', '', summary, '', '## Answered', '', ...(answered.length ? answered : ['_None yet._'])];
  lines.push('', '## Open questions', '', ...(open.length ? open : ['_None._']));
  return finishPage(
    base('faq', drawn.length, maxTs(drawn, now.toISOString())),
    `${lines.join('\n')}\n`,
    summary,
    cites,
  );
}

const DEFINITION = /\s+(is|are|means|refers|stands|lets|allows|provides|supports|enables|handles|stores|uses)\b/i;

/**
 * How a fact speaks of a glossary term: +0.3 when it defines it (`X is …`, DEFINITION), +0.1 when it names it (word
 * bounded, any case). Memoised per fact object and term (facts are immutable under their objects).
 */
const TERM_SCORES = new WeakMap<WikiFact, Map<string, number>>();
const TERM_PATTERNS = new Map<string, { named: RegExp; defines: RegExp }>();
function termMatcher(display: string): (f: WikiFact) => number {
  let re = TERM_PATTERNS.get(display);
  if (!re) {
    if (TERM_PATTERNS.size >= 10_000) TERM_PATTERNS.clear();
    const esc = display.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    re = { named: new RegExp(`\\b${esc}\\b`, 'i'), defines: new RegExp(`\\b${esc}\\b${DEFINITION.source}`, 'i') };
    TERM_PATTERNS.set(display, re);
  }
  const { named, defines } = re;
  return (f) => {
    let m = TERM_SCORES.get(f);
    if (!m) {
      m = new Map();
      TERM_SCORES.set(f, m);
    }
    let v = m.get(display);
    if (v === undefined) {
      v = (defines.test(f.memory_text) ? 0.3 : 0) + (named.test(f.memory_text) ? 0.1 : 0);
      m.set(display, v);
    }
    return v;
  };
}

function glossaryPage(ctx: Context, live: WikiFact[], base: FixedBase): WikiPage {
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
    const term = termMatcher(t.display);
    const candidates = t.facts
      .filter((f) => ctx.canCite(f))
      .map((f) => ({ f, s: ctx.score(f) + term(f) }))
      .sort((a, b) => b.s - a.s || a.f.id.localeCompare(b.f.id));
    // A fact already defining another term is used again only when the term has no other.
    const best = (candidates.find((c) => !usedFacts.has(c.f.id)) ?? candidates[0])?.f;
    if (best) usedFacts.add(best.id);
    const line = best ? cites.claim(best, `**${factText({ memory_text: t.display })}**: ${factText(best)}`) : null;
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

/** weekStart per UTC day (YYYY-MM-DD prefix of an ISO timestamp). */
const WEEK_STARTS = new Map<string, string>();

/** Monday (UTC) of the ISO week of a timestamp, as YYYY-MM-DD. Memoised per day for ISO 8601 UTC timestamps. */
export function weekStart(ts: string): string {
  const day = /^\d{4}-\d{2}-\d{2}T.*Z$/.test(ts) ? ts.slice(0, 10) : null;
  const known = day ? WEEK_STARTS.get(day) : undefined;
  if (known) return known;
  const w = mondayOf(ts);
  if (day) {
    if (WEEK_STARTS.size >= 100_000) WEEK_STARTS.clear();
    WEEK_STARTS.set(day, w);
  }
  return w;
}

function mondayOf(ts: string): string {
  const d = new Date(ts);
  const day = (d.getUTCDay() + 6) % 7;
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day)).toISOString().slice(0, 10);
}

function activityPage(ctx: Context, facts: WikiFact[], base: FixedBase): WikiPage {
  const { messages, now } = ctx.input;
  const cites = new PageCitations(ctx);
  const weeks = new Map<string, number>();
  for (const f of facts) {
    const w = weekStart(f.message_ts);
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

function topicsPage(
  ctx: Context,
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

/**
 * Whether every citation of a stored page still verifies against its source message now (by permalink; a missing
 * message fails), under `opts` (user names: a user whose name became known changes how mentions render, so an
 * excerpt quoting `@U123` no longer verifies). Memoised per citation and message object (a kept page costs nothing
 * when neither changed). The generator re-renders a page for which this is false.
 */
export function citationsHold(
  page: Pick<WikiPage, 'citations'>,
  byPermalink: ReadonlyMap<string, SourceMessage>,
  opts: CitationOptions = {},
): boolean {
  return page.citations.every((c) => {
    const msg = byPermalink.get(c.permalink);
    return msg !== undefined && verifiedCitation(c, msg, opts);
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
      if (used.has(id) && cs.length === 1 && c && msg && verifiedCitation(c, msg, opts)) verified++;
    }
  }
  return { total, verified };
}
