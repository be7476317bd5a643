/**
 * Generates a channel's wiki from the stores (spec "Wiki generation (behaviour)"): reads the channel's facts, their
 * vectors, its messages and, when the graph store answers, its people and decisions; clusters the facts; renders the
 * pages (renderPages: only those rebuilt); saves the clusters and the pages as a new version. The store dependencies are typed
 * structurally so this package does not depend on the services (the runtime's document, vector, graph and wiki
 * stores fit).
 *
 * - `full` (daily rebuild, admin rebuild): clusters from scratch (assignFacts over every fact with a vector, in time
 *   order, then healthPass: split > 100, merge > 0.85, re-cluster < 0.4, delete empty, fold tiny) and renders every page.
 * - `incremental` (after a sync): only facts in no stored cluster are assigned (assignFacts), so only the clusters
 *   they join or seed are touched (plus clusters that lost members because facts went away); re-renders the pages of
 *   touched clusters and, when facts came or went, the fixed pages that read every fact (overview, faq, glossary,
 *   activity, topics), and keeps every other page as stored, byte-identical — except a page whose place in the wiki
 *   changed (renumbered or renamed: see keepable) or whose stored citations no longer verify (a cited message edited).
 */
import {
  assignFacts,
  type ClusterStats,
  clusterStats,
  DEFAULT_CLUSTER_PARAMS,
  type FactVector,
  healthPass,
} from './clusters.js';
import {
  checkWikiCitations,
  GRAPH_UNAVAILABLE_NOTICE,
  renderPages,
  type WikiDecision,
  type WikiPage,
  type WikiPagePlace,
  type WikiPerson,
  type WikiStructure,
} from './render.js';
import { summarizeTopicPages, type WikiSummarizer } from './summarize.js';
import type { SourceMessage, TopicCluster, WikiFact } from './types.js';

/** The document store as the generator reads it (structurally the DocumentStore port). */
export interface WikiDocumentSource {
  getChannel(channelId: string): Promise<{ id: string; name: string; platform: string } | null>;
  listMemories(q: {
    channelId: string;
    page: number;
    limit: number;
  }): Promise<{ rows: { id: string }[]; total: number }>;
  getMemories(ids: readonly string[]): Promise<
    Map<
      string,
      {
        id: string;
        channel_id: string;
        memory_text: string;
        quality_score: number;
        importance: string;
        fact_type: string;
        topic_tags: string[];
        entity_tags: string[];
        author_name: string;
        message_ts: string;
        source_message_id: string;
        permalink: string;
        superseded_by: string | null;
      }
    >
  >;
  listMessages(
    channelId: string,
    q: { limit: number; before?: string | undefined },
  ): Promise<{
    messages: {
      id: string;
      text: string;
      author: { id: string; name: string };
      timestamp: string;
      attachments: { name: string; media_type: string | null }[];
    }[];
    has_more: boolean;
    next_cursor: string | null;
  }>;
}

/** The graph store as the generator reads it (structurally GraphStore.listEntities). */
export interface WikiGraphSource {
  listEntities(q: { channelId: string; type: 'Person' | 'Decision'; limit: number }): Promise<
    {
      name: string;
      properties: Record<string, string>;
      source_fact_ids: string[];
      mention_count: number;
      message_ts: string;
    }[]
  >;
}

/** The wiki store as the generator uses it (structurally WikiStore<WikiPage, WikiStructure>). */
export interface WikiSink {
  clusters(channelId: string): Promise<TopicCluster[]>;
  replaceClusters(channelId: string, clusters: readonly TopicCluster[]): Promise<void>;
  /** Optional (WikiStore.updateClusters): upserts the changed clusters, deletes the removed ones. */
  updateClusters?(channelId: string, changed: readonly TopicCluster[], removedIds: readonly string[]): Promise<void>;
  pages(channelId: string): Promise<WikiPage[]>;
  savePages(
    channelId: string,
    wiki: { structure: WikiStructure; pages: readonly WikiPage[] },
    meta: {
      generatedAt: string;
      model: string;
      durationMs?: number;
      metadata?: Record<string, unknown>;
      sourceFingerprint?: string;
      staleSeq?: number;
    },
  ): Promise<{ version_number: number }>;
  /** Optional (WikiStore.staleSeq): read when a run starts and passed to savePages, so new facts keep it stale. */
  staleSeq?(channelId: string): Promise<number>;
  /** Optional (WikiStore.clearStale): an unchanged channel's wiki is fresh (unless marked again since staleSeq). */
  clearStale?(channelId: string, staleSeq: number): Promise<void>;
  setGenerating(channelId: string, generating: boolean): Promise<void>;
  /**
   * Optional (WikiStore.freshness): the fingerprint of the channel's facts and messages now and the one the current
   * version was generated from, with the current version's summary and metadata. When present, an incremental run
   * whose fingerprints are equal does nothing (no read of facts, no render, no save, no new version).
   */
  freshness?(channelId: string): Promise<{
    fingerprint: string;
    saved: string | null;
    current: { version_number: number; page_count: number; metadata: Record<string, unknown> } | null;
  }>;
}

/** What generateChannelWiki reads and writes. `vectors.vectorsOf` returns unit vectors by fact id. */
export interface WikiGenerateDeps {
  documents: WikiDocumentSource;
  vectors: { vectorsOf(factIds: readonly string[]): Promise<Map<string, number[]>> };
  graph: WikiGraphSource;
  wiki: WikiSink;
  /**
   * Writes topic summaries when an LLM is configured (quality tier): the extractive summary of every topic page this
   * run renders is replaced by a cited model summary (summarize.ts; a failed call keeps the extractive one). Pages
   * kept from the stored version make no call.
   */
  summarizer?: WikiSummarizer | null;
}

export interface WikiGenerateOptions {
  mode: 'full' | 'incremental';
  /** The generation time (key-fact recency, generated_at, version time). Default: now. */
  now?: Date;
}

/** What one generation did. */
export interface WikiGenerateResult {
  /** `incremental` falls back to `full` when the channel has no stored clusters or pages. */
  mode: 'full' | 'incremental';
  /**
   * true when an incremental run found the channel's facts and messages unchanged since the current version
   * (WikiSink.freshness) and did nothing: `version` is the current one, counts and citations are its recorded ones.
   */
  skipped?: boolean;
  version: number;
  /** Pages rendered by this run, and pages kept as stored (incremental only). */
  pagesRebuilt: number;
  pagesKept: number;
  rebuiltPageIds: string[];
  /** All pages of the new version. */
  pages: number;
  /** Facts of the channel (all, superseded included) and those with a vector (full) / in a cluster (incremental). */
  facts: number;
  factsWithVectors: number;
  clusters: TopicCluster[];
  /** Ids of the clusters created or changed by this run (all of them in full mode). */
  touchedClusters: string[];
  stats: ClusterStats;
  /** checkWikiCitations over every page of the new version (kept pages included). */
  citations: { total: number; verified: number };
  /** LLM summaries of this run's topic pages (absent without a summarizer). */
  summaries?: { model: string; summarized: number; failed: number; dropped: number };
  /** false when the graph store threw (People and Decisions say so: spec "Degraded behaviour"). */
  graphAvailable: boolean;
  /**
   * Why pages were rebuilt: `touched` (a touched cluster's page, a fact-dependent fixed page, a new page, or graph
   * availability changed), `moved` (untouched, but renumbered or renamed: see keepable), `stale` (untouched, but a
   * cited message was edited so its stored citations no longer verify).
   */
  rebuiltBecause: { touched: number; moved: number; stale: number };
  /** Wall time per phase, ms: read the stores, cluster, render + check citations, save. */
  phasesMs: { read: number; cluster: number; render: number; save: number };
  /** Wall time of the whole run, ms. */
  durationMs: number;
}

/** Fixed pages an incremental run re-renders when facts came or went: the ones that read every fact of the channel. */
export const FACT_DEPENDENT_FIXED_PAGES: readonly string[] = ['overview', 'faq', 'glossary', 'activity', 'topics'];

const PAGE_SIZE = 1000;
const GRAPH_LIMIT = 10_000;

/**
 * Generates the wiki of one channel and saves it as a new version (WikiStore.savePages; the previous version is
 * archived) with its clusters (replaceClusters). `mode: 'full'` clusters from scratch and renders every page;
 * `mode: 'incremental'` assigns only the facts in no stored cluster and re-renders only the pages of touched clusters
 * plus, when facts came or went, overview, faq, glossary, activity and topics, keeping the other stored pages
 * byte-identical (unless renumbered / renamed, or a cited message was edited; People and Decisions are re-rendered
 * only when the graph's availability changed, so new people and decisions wait for the next full run). The graph store
 * throwing gives degraded People / Decisions pages (never a failed run). is_generating is set for the run's duration.
 * When the sink has `freshness` and the channel's facts and messages are unchanged since the current version, an
 * incremental run returns at once (`skipped`: no read, render or save, the version unchanged).
 * Returns counts, the clusters, clusterStats (assigned share against the facts with vectors) and the citation check.
 */
export async function generateChannelWiki(
  deps: WikiGenerateDeps,
  channelId: string,
  opts: WikiGenerateOptions,
): Promise<WikiGenerateResult> {
  const started = performance.now();
  const now = opts.now ?? new Date();
  const staleSeq = await deps.wiki.staleSeq?.(channelId);
  const fresh = await freshness(deps.wiki, channelId);
  if (
    opts.mode === 'incremental' &&
    fresh?.current &&
    fresh.saved !== null &&
    fresh.saved === fresh.fingerprint &&
    (await graphAnswers(deps.graph, channelId)) === (fresh.current.metadata.graph_available ?? true)
  ) {
    const unchanged = await unchangedResult(deps.wiki, channelId, fresh.current);
    if (unchanged) {
      if (staleSeq !== undefined) await deps.wiki.clearStale?.(channelId, staleSeq);
      const ms = Math.round(performance.now() - started);
      return { ...unchanged, phasesMs: { ...unchanged.phasesMs, read: ms }, durationMs: ms };
    }
  }
  await deps.wiki.setGenerating(channelId, true);
  try {
    const channel = (await deps.documents.getChannel(channelId)) ?? { id: channelId, name: channelId, platform: '' };
    const facts = await readFacts(deps.documents, channelId);
    const { messages, userNames } = await readMessages(deps.documents, channelId, channel.name, facts);
    const { people, decisions } = await readGraph(deps.graph, channelId);
    const stored = opts.mode === 'incremental' ? await deps.wiki.clusters(channelId) : [];
    const storedPages = opts.mode === 'incremental' ? await deps.wiki.pages(channelId) : [];
    const mode = opts.mode === 'incremental' && stored.length > 0 && storedPages.length > 0 ? 'incremental' : 'full';
    // Incremental: vectors of the facts in no stored cluster only (assignFacts needs no member vectors).
    const factIds = new Set(facts.map((f) => f.id));
    const storedMembers = new Set(stored.flatMap((c) => c.member_ids));
    const vectors = await deps.vectors.vectorsOf(
      facts.filter((f) => mode === 'full' || !storedMembers.has(f.id)).map((f) => f.id),
    );
    const tRead = performance.now();

    // Facts to cluster: those with a vector, oldest first (the order a live channel would have seen them).
    const ordered = facts
      .filter((f) => vectors.has(f.id))
      .sort((a, b) => a.message_ts.localeCompare(b.message_ts) || a.id.localeCompare(b.id));
    const fvs: FactVector[] = ordered.map((f) => ({ id: f.id, channel_id: channelId, vector: vectors.get(f.id)! }));

    let clusters: TopicCluster[];
    let touched: Set<string>;
    if (mode === 'full') {
      const assigned = assignFacts([], fvs, DEFAULT_CLUSTER_PARAMS);
      clusters = healthPass(assigned.clusters, vectors, DEFAULT_CLUSTER_PARAMS).clusters;
      touched = new Set(clusters.map((c) => c.id));
    } else {
      // Members whose fact is gone leave their cluster: that cluster is touched, its centroid recomputed.
      touched = new Set<string>();
      const kept: TopicCluster[] = [];
      const shrunk: TopicCluster[] = [];
      for (const c of stored) {
        const live = c.member_ids.filter((id) => factIds.has(id));
        if (live.length === c.member_ids.length) kept.push(c);
        else {
          touched.add(c.id);
          if (live.length > 0) shrunk.push({ ...c, member_ids: live });
        }
      }
      if (shrunk.length > 0) {
        const memberVectors = await deps.vectors.vectorsOf(shrunk.flatMap((c) => c.member_ids));
        for (const c of shrunk) {
          const live = c.member_ids.filter((id) => memberVectors.has(id));
          if (live.length > 0) kept.push(recomputed({ ...c, member_ids: live }, memberVectors));
        }
      }
      const assigned = assignFacts(kept, fvs, DEFAULT_CLUSTER_PARAMS);
      clusters = assigned.clusters;
      for (const id of assigned.touched) touched.add(id);
    }
    const clustered = new Set(clusters.flatMap((c) => c.member_ids)).size;

    const tCluster = performance.now();
    const byId = new Map(facts.map((f) => [f.id, f]));
    const entries = clusters.map((cluster) => ({
      cluster,
      facts: cluster.member_ids.map((id) => byId.get(id)).filter((f): f is WikiFact => f !== undefined),
    }));
    const input = {
      channel: { id: channel.id, name: channel.name, platform: channel.platform },
      clusters: entries,
      facts,
      messages,
      people,
      decisions,
      now,
      user_names: userNames,
    };
    const reasons = { touched: 0, moved: 0, stale: 0 };
    // Incremental: each page is decided from its place before rendering (renderPages), so only the pages rebuilt are
    // rendered; a stored page stands in when its cluster is untouched (fixed: when facts neither came nor went and
    // the graph's availability is unchanged), its place is unchanged and its stored citations still verify.
    const storedById = new Map(storedPages.map((p) => [p.id, p]));
    const graphDown = people === null || decisions === null;
    // The fixed pages that read every fact change only when facts came or went: new facts (with or without a vector)
    // or a touched cluster.
    const factsChanged = touched.size > 0 || facts.some((f) => !storedMembers.has(f.id) && !vectors.has(f.id));
    // The citation check of the kept pages, done while deciding to keep them (not repeated below).
    const keptCitations = { total: 0, verified: 0 };
    const byPermalink = new Map([...messages.values()].map((m) => [m.permalink, m]));
    const keep = (place: WikiPagePlace): WikiPage | null => {
      const old = storedById.get(place.id);
      const untouched =
        place.page_type === 'fixed'
          ? (!factsChanged || !FACT_DEPENDENT_FIXED_PAGES.includes(place.id)) &&
            old?.content.includes(GRAPH_UNAVAILABLE_NOTICE) === graphDown
          : place.cluster_id !== null && !touched.has(place.cluster_id);
      if (!old || !untouched) reasons.touched++;
      else if (!keepable(old, place)) reasons.moved++;
      else {
        // A source message edited since: the stored excerpts no longer verify, so the page is re-rendered.
        // (Checked against the messages it cites only: checkWikiCitations looks messages up by permalink.)
        const cited = old.citations.flatMap((c) => byPermalink.get(c.permalink) ?? []);
        const check = checkWikiCitations([old], cited, { userNames });
        if (check.verified === check.total) {
          keptCitations.total += check.total;
          keptCitations.verified += check.verified;
          return old;
        }
        reasons.stale++;
      }
      return null;
    };
    const rendered = renderPages(input, mode === 'incremental' ? keep : undefined);
    let pages = rendered.pages;
    const rebuilt = rendered.rendered;
    let summaries: WikiGenerateResult['summaries'];
    if (deps.summarizer) {
      const fresh = new Set(rebuilt);
      const done = await summarizeTopicPages(
        pages.filter((p) => fresh.has(p.id)),
        deps.summarizer,
        { channel: channel.name },
      );
      const byId = new Map(done.pages.map((p) => [p.id, p]));
      pages = pages.map((p) => byId.get(p.id) ?? p);
      summaries = {
        model: deps.summarizer.model,
        summarized: done.summarized,
        failed: done.failed,
        dropped: done.dropped,
      };
    }
    if (mode === 'full') reasons.touched = pages.length;

    const renderedIds = new Set(rebuilt);
    const renderedCheck = checkWikiCitations(
      pages.filter((p) => renderedIds.has(p.id)),
      messages,
      { userNames },
    );
    const citations = {
      total: renderedCheck.total + keptCitations.total,
      verified: renderedCheck.verified + keptCitations.verified,
    };
    const stats = clusterStats(clusters, mode === 'full' ? fvs.length : clustered);
    const tRender = performance.now();
    const durationMs = Math.round(performance.now() - started);
    if (mode === 'incremental' && deps.wiki.updateClusters) {
      // Only the clusters that changed are written (an untouched cluster is the stored one, unchanged).
      const storedById = new Map(stored.map((c) => [c.id, c]));
      const same = (a: TopicCluster, b: TopicCluster) =>
        a.coherence === b.coherence &&
        a.parent_id === b.parent_id &&
        a.member_ids.length === b.member_ids.length &&
        a.member_ids.every((id, i) => id === b.member_ids[i]);
      const changed = clusters.filter((c) => {
        const old = storedById.get(c.id);
        return !old || touched.has(c.id) || !same(old, c);
      });
      const ids = new Set(clusters.map((c) => c.id));
      await deps.wiki.updateClusters(
        channelId,
        changed,
        stored.filter((c) => !ids.has(c.id)).map((c) => c.id),
      );
    } else await deps.wiki.replaceClusters(channelId, clusters);
    const version = await deps.wiki.savePages(
      channelId,
      { structure: rendered.structure, pages },
      {
        generatedAt: now.toISOString(),
        model: deps.summarizer?.model ?? 'extractive',
        durationMs,
        ...(fresh ? { sourceFingerprint: fresh.fingerprint } : {}),
        ...(staleSeq === undefined ? {} : { staleSeq }),
        metadata: {
          mode,
          facts: facts.length,
          facts_with_vectors: mode === 'full' ? fvs.length : clustered,
          clusters: clusters.length,
          pages_rebuilt: rebuilt.length,
          pages_kept: pages.length - rebuilt.length,
          citations,
          graph_available: people !== null && decisions !== null,
          stats,
          ...(summaries ? { summaries } : {}),
        },
      },
    );
    return {
      mode,
      version: version.version_number,
      pagesRebuilt: rebuilt.length,
      pagesKept: pages.length - rebuilt.length,
      rebuiltPageIds: rebuilt,
      pages: pages.length,
      facts: facts.length,
      factsWithVectors: mode === 'full' ? fvs.length : clustered,
      clusters,
      touchedClusters: [...touched],
      stats,
      citations,
      graphAvailable: people !== null && decisions !== null,
      ...(summaries ? { summaries } : {}),
      rebuiltBecause: reasons,
      phasesMs: {
        read: Math.round(tRead - started),
        cluster: Math.round(tCluster - tRead),
        render: Math.round(tRender - tCluster),
        save: Math.round(performance.now() - tRender),
      },
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    await deps.wiki.setGenerating(channelId, false);
  }
}

/** WikiSink.freshness when the sink has it and it answers (a sink over another database may not): else null. */
async function freshness(wiki: WikiSink, channelId: string) {
  if (!wiki.freshness) return null;
  try {
    return await wiki.freshness(channelId);
  } catch {
    return null;
  }
}

/** Whether the graph store answers now (one one-row query): a change of availability is something to do. */
async function graphAnswers(graph: WikiGraphSource, channelId: string): Promise<boolean> {
  try {
    await graph.listEntities({ channelId, type: 'Person', limit: 1 });
    return true;
  } catch {
    return false;
  }
}

/**
 * The result of an incremental run that has nothing to do: the current version as recorded (its metadata holds the
 * counts, stats and citation check of the run that generated it) and the stored clusters. null when the metadata
 * lacks them (a version saved by something else): then the run goes on.
 */
async function unchangedResult(
  wiki: WikiSink,
  channelId: string,
  current: { version_number: number; page_count: number; metadata: Record<string, unknown> },
): Promise<Omit<WikiGenerateResult, 'durationMs'> | null> {
  const m = current.metadata as {
    facts?: number;
    facts_with_vectors?: number;
    citations?: { total: number; verified: number };
    graph_available?: boolean;
    stats?: ClusterStats;
  };
  if (m.facts === undefined || !m.citations || !m.stats || m.facts_with_vectors === undefined) return null;
  const clusters = await wiki.clusters(channelId);
  return {
    mode: 'incremental',
    skipped: true,
    version: current.version_number,
    pagesRebuilt: 0,
    pagesKept: current.page_count,
    rebuiltPageIds: [],
    pages: current.page_count,
    facts: m.facts,
    factsWithVectors: m.facts_with_vectors,
    clusters,
    touchedClusters: [],
    stats: m.stats,
    citations: m.citations,
    graphAvailable: m.graph_available ?? true,
    rebuiltBecause: { touched: 0, moved: 0, stale: 0 },
    phasesMs: { read: 0, cluster: 0, render: 0, save: 0 },
  };
}

/**
 * A stored page may stand in for its re-render only when its place in the wiki is unchanged: same id, slug, title,
 * section number, parent and children nodes (a new cluster that outgrows an old one renumbers the topics after it;
 * such a page is re-rendered so that it agrees with the structure).
 */
function keepable(old: WikiPage, fresh: WikiPagePlace): boolean {
  return (
    old.slug === fresh.slug &&
    old.title === fresh.title &&
    old.section_number === fresh.section_number &&
    old.parent_id === fresh.parent_id &&
    canonical(old.children) === canonical(fresh.children)
  );
}

/** JSON with object keys sorted: a stored page comes back from jsonb with its keys reordered. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : x,
  );
}

/** The cluster with centroid and coherence recomputed from its members' vectors. */
function recomputed(c: TopicCluster, vectors: ReadonlyMap<string, readonly number[]>): TopicCluster {
  const dim = vectors.get(c.member_ids[0]!)?.length ?? 0;
  const sum = new Array<number>(dim).fill(0);
  for (const id of c.member_ids) {
    const v = vectors.get(id)!;
    for (let i = 0; i < dim; i++) sum[i]! += v[i]!;
  }
  const n = Math.hypot(...sum) || 1;
  const centroid = sum.map((x) => x / n);
  let cos = 0;
  for (const id of c.member_ids) {
    const v = vectors.get(id)!;
    let d = 0;
    for (let i = 0; i < dim; i++) d += v[i]! * centroid[i]!;
    cos += d;
  }
  return { ...c, centroid, coherence: Math.max(0, Math.min(1, cos / c.member_ids.length)) };
}

/** Every fact of the channel (all pages of listMemories, then their detail for superseded_by). */
/** A memory (detail form plus permalink, as DocumentStore.getMemories answers) as the wiki reads it. */
export const toWikiFact = (m: {
  id: string;
  channel_id: string;
  memory_text: string;
  quality_score: number;
  importance: string;
  fact_type: string;
  topic_tags: string[];
  entity_tags: string[];
  author_name: string;
  message_ts: string;
  source_message_id: string;
  permalink: string;
  superseded_by: string | null;
}): WikiFact => ({
  id: m.id,
  channel_id: m.channel_id,
  memory_text: m.memory_text,
  quality_score: m.quality_score,
  importance: m.importance as WikiFact['importance'],
  fact_type: m.fact_type as WikiFact['fact_type'],
  topic_tags: m.topic_tags,
  entity_tags: m.entity_tags,
  author_name: m.author_name,
  message_ts: m.message_ts,
  source_message_id: m.source_message_id,
  permalink: m.permalink,
  superseded_by: m.superseded_by,
});

async function readFacts(documents: WikiDocumentSource, channelId: string): Promise<WikiFact[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const { rows, total } = await documents.listMemories({ channelId, page, limit: PAGE_SIZE });
    ids.push(...rows.map((r) => r.id));
    if (rows.length < PAGE_SIZE || ids.length >= total) break;
  }
  const out: WikiFact[] = [];
  for (let i = 0; i < ids.length; i += PAGE_SIZE) {
    const detail = await documents.getMemories(ids.slice(i, i + PAGE_SIZE));
    for (const m of detail.values()) out.push(toWikiFact(m));
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * The channel's messages as citation sources, by platform id (every page of listMessages, newest first). A message
 * view has no permalink: it is taken from the facts of that message (messages without facts are never cited).
 */
async function readMessages(
  documents: WikiDocumentSource,
  channelId: string,
  channelName: string,
  facts: readonly WikiFact[],
): Promise<{ messages: Map<string, SourceMessage>; userNames: Map<string, string> }> {
  const permalinks = new Map(facts.map((f) => [f.source_message_id, f.permalink]));
  const messages = new Map<string, SourceMessage>();
  const userNames = new Map<string, string>();
  let before: string | undefined;
  for (;;) {
    const page = await documents.listMessages(channelId, { limit: PAGE_SIZE, before });
    for (const m of page.messages) {
      userNames.set(m.author.id, m.author.name);
      messages.set(m.id, {
        id: m.id,
        channel_id: channelId,
        channel_name: channelName,
        author: m.author.name,
        timestamp: m.timestamp,
        text: m.text,
        permalink: permalinks.get(m.id) ?? '',
        attachments: m.attachments.map((a) => ({ name: a.name, media_type: a.media_type ?? null })),
      });
    }
    if (!page.has_more || !page.next_cursor) break;
    before = page.next_cursor;
  }
  return { messages, userNames };
}

/** People (with their mention counts) and decisions from the graph store; both null when it throws. */
async function readGraph(
  graph: WikiGraphSource,
  channelId: string,
): Promise<{ people: WikiPerson[] | null; decisions: WikiDecision[] | null }> {
  try {
    const [persons, decided] = await Promise.all([
      graph.listEntities({ channelId, type: 'Person', limit: GRAPH_LIMIT }),
      graph.listEntities({ channelId, type: 'Decision', limit: GRAPH_LIMIT }),
    ]);
    return {
      people: persons.map((p) => ({ name: p.name, fact_count: p.mention_count })),
      decisions: decided.map((d) => ({
        name: d.name,
        decided_by: d.properties.decided_by ?? '',
        status: d.properties.superseded_by ? 'superseded' : (d.properties.status ?? 'unknown'),
        date: d.properties.date ?? d.message_ts.slice(0, 10),
        context: d.properties.context ?? '',
        ...(d.source_fact_ids[0] ? { fact_id: d.source_fact_ids[0] } : {}),
      })),
    };
  } catch {
    return { people: null, decisions: null };
  }
}
