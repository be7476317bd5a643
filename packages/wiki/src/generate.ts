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
import { createHash } from 'node:crypto';
import {
  AUTHOR_CENTRING,
  type AuthorSums,
  addToSum,
  assignFacts,
  authorCentred,
  type ClusterStats,
  clusterStats,
  DEFAULT_CLUSTER_PARAMS,
  type FactVector,
  healthPass,
} from './clusters.js';
import {
  checkWikiCitations,
  citationsHold,
  renderPages,
  type WikiDecision,
  type WikiPage,
  type WikiPagePlace,
  type WikiPerson,
  type WikiStructure,
} from './render.js';
import { summarizeTopicPages, type WikiSummarizer } from './summarize.js';
import type { SourceMessage, TopicCluster, WikiFact } from './types.js';

/**
 * A memory as DocumentStore.getMemories answers it (detail form plus permalink), the fields the wiki reads: WikiFact
 * with importance and fact_type as the store's strings.
 */
export type MemoryRecord = Omit<WikiFact, 'importance' | 'fact_type'> & { importance: string; fact_type: string };

/** The document store as the generator reads it (structurally the DocumentStore port). */
export interface WikiDocumentSource {
  listMemories(q: {
    channelId: string;
    page: number;
    limit: number;
  }): Promise<{ rows: { id: string }[]; total: number }>;
  getMemories(ids: readonly string[]): Promise<Map<string, MemoryRecord>>;
  /** The channel's messages with these platform ids (deleted ones left out), as DocumentStore.getMessages. */
  getMessages(
    channelId: string,
    ids: readonly string[],
  ): Promise<
    {
      id: string;
      text: string;
      author: { id: string; name: string };
      timestamp: string;
      attachments: { name: string; media_type: string | null }[];
    }[]
  >;
  /** Optional batch form of getMessages (DocumentStore.getMessagesIn): several channels' messages in one read. */
  getMessagesIn?(keys: readonly { channelId: string; id: string }[]): Promise<
    {
      channelId: string;
      message: Awaited<ReturnType<WikiDocumentSource['getMessages']>>[number];
    }[]
  >;
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
  /** Optional batch form (GraphStore.listEntitiesMany): several queries in one read, answered in order. */
  listEntitiesMany?(
    queries: readonly Parameters<WikiGraphSource['listEntities']>[0][],
  ): Promise<Awaited<ReturnType<WikiGraphSource['listEntities']>>[]>;
}

/** The wiki store as the generator uses it (structurally WikiStore<WikiPage, WikiStructure>). */
export interface WikiSink {
  clusters(channelId: string): Promise<TopicCluster[]>;
  pages(channelId: string): Promise<WikiPage[]>;
  savePages(
    channelId: string,
    wiki: { structure: WikiStructure; pages: readonly WikiPage[] },
    meta: {
      generatedAt: string;
      model: string;
      durationMs?: number;
      metadata?: Record<string, unknown>;
      staleSeq?: number;
      sources?: { replace: boolean; upsert: readonly SourceRow[]; remove: readonly { kind: string; id: string }[] };
      sourceFingerprint?: string;
      unchangedPageIds?: readonly string[];
      /** The version's clusters, saved with its pages (WikiSaveMeta.clusters): all of them, or the changes. */
      clusters?:
        | { replace: true; clusters: readonly TopicCluster[] }
        | { replace: false; changed: readonly TopicCluster[]; removedIds: readonly string[] };
    },
  ): Promise<{ version_number: number }>;
  /** Optional (WikiStore.staleSeq): read when a run starts and passed to savePages, so new facts keep it stale. */
  staleSeq?(channelId: string): Promise<number>;
  /**
   * Optional (WikiStore.beginGeneration): sets is_generating and returns staleSeq in one call, when a run starts.
   * savePages then clears is_generating (a run that saves nothing calls setGenerating(false)).
   */
  beginGeneration?(channelId: string): Promise<number>;
  /** Optional (WikiStore.clearStale): an unchanged channel's wiki is fresh (unless marked again since staleSeq). */
  clearStale?(channelId: string, staleSeq: number): Promise<void>;
  setGenerating(channelId: string, generating: boolean): Promise<void>;
  /** Digests of the channel's facts, source messages and authors now (WikiStore.sourceDigests). */
  sourceDigests(channelId: string): Promise<{
    channel: { id: string; name: string; platform: string } | null;
    facts: Map<string, string>;
    messages: Map<string, string>;
    authors: Map<string, string>;
  }>;
  /** What the current version was generated from (WikiStore.sources): rows written through savePages meta.sources. */
  sources(channelId: string): Promise<SourceRow[]>;
  /** The current version's number, page count and metadata, without its pages (WikiStore.currentVersion). */
  currentVersion(channelId: string): Promise<{
    version_number: number;
    page_count: number;
    metadata: Record<string, unknown>;
    source_fingerprint: string | null;
  } | null>;
  /**
   * Optional batch forms (WikiStore.beginGenerations, sourceDigestsMany, currentVersions, savePagesMany), used by
   * batchedDeps when concurrent runs make the same call: several channels in one statement (one transaction for
   * the saves; a per-item Error is that item's failure).
   */
  beginGenerations?(channelIds: readonly string[]): Promise<Map<string, number>>;
  sourceDigestsMany?(
    channelIds: readonly string[],
  ): Promise<Map<string, Awaited<ReturnType<WikiSink['sourceDigests']>>>>;
  currentVersions?(
    channelIds: readonly string[],
  ): Promise<Map<string, NonNullable<Awaited<ReturnType<WikiSink['currentVersion']>>>>>;
  savePagesMany?(
    items: readonly {
      channelId: string;
      wiki: Parameters<WikiSink['savePages']>[1];
      meta: Parameters<WikiSink['savePages']>[2];
    }[],
  ): Promise<(Awaited<ReturnType<WikiSink['savePages']>> | Error)[]>;
}

/**
 * One thing a version was generated from, as the wiki store keeps it: a fact (body WikiFact), a cited source message
 * (body SourceMessage) or a graph list (`people`, `decisions`: body WikiPerson[] / WikiDecision[], null while the graph
 * store is down), with its digest.
 */
export interface SourceRow {
  kind: 'fact' | 'message' | 'graph';
  id: string;
  digest: string;
  body: unknown;
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
  /**
   * Per channel, the vector sums of its authors' facts (AUTHOR_CENTRING), kept between runs by a long-lived
   * generator (WikiGenerator): an incremental run then reads the vectors of the new facts only, instead of every
   * fact of their authors. Entries are checked against the fact digests of the run (a fact changed or gone: that
   * author's sum is read again). Omitted: every run reads what it needs.
   */
  authorSums?: Map<string, ChannelAuthorSums>;
}

/** What WikiGenerateDeps.authorSums keeps for one channel: per author, the sum and the facts summed (id → digest). */
export interface ChannelAuthorSums {
  sums: AuthorSums;
  members: Map<string, Map<string, string>>;
}

export interface WikiGenerateOptions {
  mode: 'full' | 'incremental';
  /** The generation time (key-fact recency, generated_at, version time). Default: now. */
  now?: Date;
}

/** What one generation did. */
export interface WikiGenerateResult {
  /** The channel generated. */
  channelId: string;
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
  /**
   * Pages of `moved` that were not rendered: only renumbered (same title and slug, no sub-topics), the stored page
   * stands in with its new section number (a new revision; pagesKept does not count them).
   */
  renumberedPageIds: string[];
  /**
   * Wall time per phase, ms: read the stores, cluster, render + check citations, save. Runs made together
   * (WikiGenerator.generateStale through batchedDeps) overlap: their phases include the waits for the shared calls.
   */
  phasesMs: { read: number; cluster: number; render: number; save: number };
  /** Wall time of the whole run, ms (runs made together: from its start to its save, the others' work included). */
  durationMs: number;
}

/**
 * Fixed pages an incremental run re-renders when facts came, went or changed: every fixed page reads the channel's
 * facts (People and Decisions are also re-rendered when the graph's people or decisions changed).
 */
export const FACT_DEPENDENT_FIXED_PAGES: readonly string[] = [
  'overview',
  'people',
  'decisions',
  'faq',
  'glossary',
  'activity',
  'topics',
];

const PAGE_SIZE = 1000;
const GRAPH_LIMIT = 10_000;

/**
 * Generates the wiki of one channel and saves it as a new version (WikiStore.savePages; the previous version is
 * archived) with its clusters and its sources (what it was generated from). `mode: 'full'` reads every fact and
 * source message, clusters from scratch and renders every page; `mode: 'incremental'` compares the digests of the
 * channel's facts and source messages now (WikiSink.sourceDigests, one query) with the stored sources and reads from
 * the document store only the facts and messages that are new or changed; it assigns only the facts in no stored
 * cluster and re-renders only the pages of touched clusters plus, when facts came, went or changed, the fixed pages
 * (People and Decisions also when the graph's people or decisions changed), keeping every other page byte-identical
 * (unless renumbered / renamed, or a cited message changed). Nothing changed at all: returns at once (`skipped`: no
 * render, no save, the version unchanged, the stale flag cleared). The graph store throwing gives degraded People /
 * Decisions pages (never a failed run). is_generating is set for the run's duration. An incremental run without
 * stored clusters, pages or sources runs as `full`.
 * Returns counts, the clusters, clusterStats (assigned share against the facts with vectors) and the citation check.
 */
export async function generateChannelWiki(
  deps: WikiGenerateDeps,
  channelId: string,
  opts: WikiGenerateOptions,
): Promise<WikiGenerateResult> {
  const started = performance.now();
  const now = opts.now ?? new Date();
  // is_generating is set from the start when the sink can do it with the stale_seq read (one statement).
  const begun = deps.wiki.beginGeneration !== undefined;
  const staleSeq = begun ? await deps.wiki.beginGeneration!(channelId) : await deps.wiki.staleSeq?.(channelId);
  const [digests, graph, current] = await Promise.all([
    deps.wiki.sourceDigests(channelId),
    readGraph(deps.graph, channelId),
    opts.mode === 'incremental' ? deps.wiki.currentVersion(channelId) : Promise.resolve(null),
  ]);
  const graphRows = graphSourceRows(graph);
  const fingerprint = sourceFingerprint(digests, graphRows);
  // Nothing changed since the current version (its recorded fingerprint): nothing to read, render or save.
  if (opts.mode === 'incremental' && current && current.source_fingerprint === fingerprint) {
    const unchanged = await unchangedResult(deps.wiki, channelId, current);
    if (unchanged) {
      if (staleSeq !== undefined) await deps.wiki.clearStale?.(channelId, staleSeq);
      if (begun) await deps.wiki.setGenerating(channelId, false);
      const ms = Math.round(performance.now() - started);
      return { ...unchanged, channelId, phasesMs: { ...unchanged.phasesMs, read: ms }, durationMs: ms };
    }
  }
  const snap = indexSources(opts.mode === 'incremental' ? await deps.wiki.sources(channelId) : []);
  const delta = diffSources(digests, snap, graphRows);
  if (!begun) await deps.wiki.setGenerating(channelId, true);
  let saved = false;
  try {
    const channel = digests.channel ?? { id: channelId, name: channelId, platform: '' };
    const stored = opts.mode === 'incremental' ? await deps.wiki.clusters(channelId) : [];
    const storedPages = opts.mode === 'incremental' ? await deps.wiki.pages(channelId) : [];
    const mode =
      opts.mode === 'incremental' && stored.length > 0 && storedPages.length > 0 && snap.graph.size > 0
        ? 'incremental'
        : 'full';
    const { facts, messages, sourceUpdate } = await readSources(
      deps.documents,
      channel,
      digests,
      mode === 'incremental' ? { snap, delta } : null,
      graphRows,
    );
    const { people, decisions } = graph;
    const userNames = digests.authors;
    // Incremental: vectors of the facts in no stored cluster, and the vector sums of their authors (for the author
    // means of AUTHOR_CENTRING; kept between runs in deps.authorSums); assignFacts needs no member vectors.
    const factIds = new Set(facts.map((f) => f.id));
    const storedMembers = new Set(stored.flatMap((c) => c.member_ids));
    const fresh = facts.filter((f) => mode === 'full' || !storedMembers.has(f.id));
    const authorOf = new Map(facts.map((f) => [f.id, f.author_name]));
    const { vectors: rawVectors, sums } = await authorVectors(
      deps,
      channelId,
      mode,
      facts,
      fresh.map((f) => f.id),
      digests.facts,
    );
    const vectors = authorCentred(
      fresh.map((f) => f.id),
      rawVectors,
      authorOf,
      AUTHOR_CENTRING,
      sums,
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
      // Members whose fact is gone leave their cluster (centroid kept until the daily rebuild); a cluster left empty
      // goes. Either way, and when a member's fact changed, the cluster is touched (its page shows the facts).
      touched = new Set<string>();
      const kept: TopicCluster[] = [];
      for (const c of stored) {
        const live = c.member_ids.filter((id) => factIds.has(id));
        if (live.length !== c.member_ids.length || c.member_ids.some((id) => delta.changedFacts.has(id)))
          touched.add(c.id);
        if (live.length > 0) kept.push(live.length === c.member_ids.length ? c : { ...c, member_ids: live });
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
    // Excerpts known from the stored sources, for facts whose text and source message are both unchanged.
    const knownExcerpts = new Map<string, string | null>();
    if (mode === 'incremental')
      for (const [id, s] of snap.facts)
        if (
          s.excerpt !== undefined &&
          !delta.changedFacts.has(id) &&
          !delta.changedMessages.has(s.fact.source_message_id)
        )
          knownExcerpts.set(id, s.excerpt);
    const input = {
      excerpts: knownExcerpts,
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
    // rendered; a stored page stands in when its cluster is untouched (fixed: when no fact came, went or changed, and
    // for People / Decisions the graph's list is unchanged), its place is unchanged and it cites no changed message.
    const storedById = new Map(storedPages.map((p) => [p.id, p]));
    const factsChanged = touched.size > 0 || delta.changedFacts.size > 0 || delta.removedFacts.length > 0;
    const changedPermalinks = new Set(
      [...delta.changedMessages].flatMap((id) => messages.get(id)?.permalink ?? snap.messages.get(id)?.permalink ?? []),
    );
    const replaced = new Set<string>();
    const messagesByPermalink = new Map([...messages.values()].map((m) => [m.permalink, m]));
    const keep = (place: WikiPagePlace): WikiPage | null => {
      const old = storedById.get(place.id);
      const untouched =
        place.page_type === 'fixed'
          ? !(factsChanged && FACT_DEPENDENT_FIXED_PAGES.includes(place.id)) && !delta.changedGraph.has(place.id)
          : place.cluster_id !== null && !touched.has(place.cluster_id);
      if (!old || !untouched) reasons.touched++;
      // A source message edited since, or a user's name that became known since (mentions render differently): the
      // stored excerpts may no longer verify, so the page is re-rendered.
      else if (
        old.citations.some((c) => changedPermalinks.has(c.permalink)) ||
        !citationsHold(old, messagesByPermalink, { userNames })
      )
        reasons.stale++;
      else if (!keepable(old, place)) {
        reasons.moved++;
        // Only renumbered (same title and slug, no children: its content names no section number): the stored page
        // with its new number stands in; its content is unchanged, but it is a new revision.
        if (old.slug === place.slug && old.title === place.title && !old.children.length && !place.children.length) {
          replaced.add(place.id);
          return { ...old, section_number: place.section_number, parent_id: place.parent_id };
        }
      } else return old;
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

    // Every page of the version is checked against the source messages: the rendered ones and the kept ones.
    const citations = checkWikiCitations(pages, messages, { userNames });
    const stats = clusterStats(clusters, mode === 'full' ? fvs.length : clustered);
    const tRender = performance.now();
    const durationMs = Math.round(performance.now() - started);
    // The clusters are saved with the pages (one transaction). Incremental: only the clusters that changed (an
    // untouched cluster is the stored one, unchanged).
    let clusterWrite: NonNullable<Parameters<WikiSink['savePages']>[2]['clusters']>;
    if (mode === 'incremental') {
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
      clusterWrite = { replace: false, changed, removedIds: stored.filter((c) => !ids.has(c.id)).map((c) => c.id) };
    } else clusterWrite = { replace: true, clusters };
    const renderedIds = new Set(rebuilt);
    // Fact rows carry the excerpt the render used: rows of new or changed facts, and of facts whose excerpt is new.
    const factRows = new Map(
      sourceUpdate.upsert.filter((r) => r.kind === 'fact').map((r) => [r.id, r.body as WikiFact]),
    );
    for (const [id, excerpt] of rendered.excerpts)
      if (!factRows.has(id) && knownExcerpts.get(id) !== excerpt && byId.has(id)) factRows.set(id, byId.get(id)!);
    const upsert = [
      ...sourceUpdate.upsert.filter((r) => r.kind !== 'fact'),
      ...[...factRows].flatMap(([id, fact]) => {
        const digest = digests.facts.get(id);
        const excerpt = rendered.excerpts.has(id) ? rendered.excerpts.get(id) : knownExcerpts.get(id);
        if (!digest) return [];
        const body = excerpt === undefined ? fact : { ...fact, excerpt };
        // The next run's indexSources splits this body back into this very fact object (FACT_BODIES), so the
        // render's per-fact memos (render.ts CITED: the verified citation) carry over to it.
        FACT_BODIES.set(body, { fact, excerpt });
        return [{ kind: 'fact' as const, id, digest, body }];
      }),
    ];
    const version = await deps.wiki.savePages(
      channelId,
      { structure: rendered.structure, pages },
      {
        generatedAt: now.toISOString(),
        model: deps.summarizer?.model ?? 'extractive',
        durationMs,
        sources: { ...sourceUpdate, upsert },
        sourceFingerprint: fingerprint,
        unchangedPageIds: pages.filter((p) => !renderedIds.has(p.id) && !replaced.has(p.id)).map((p) => p.id),
        clusters: clusterWrite,
        ...(staleSeq === undefined ? {} : { staleSeq }),
        metadata: {
          mode,
          facts: facts.length,
          facts_with_vectors: mode === 'full' ? fvs.length : clustered,
          clusters: clusters.length,
          pages_rebuilt: rebuilt.length,
          pages_kept: pages.length - rebuilt.length - replaced.size,
          pages_renumbered: replaced.size,
          citations,
          graph_available: people !== null && decisions !== null,
          stats,
          ...(summaries ? { summaries } : {}),
        },
      },
    );
    saved = true;
    return {
      channelId,
      mode,
      version: version.version_number,
      pagesRebuilt: rebuilt.length,
      pagesKept: pages.length - rebuilt.length - replaced.size,
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
      renumberedPageIds: [...replaced],
      phasesMs: {
        read: Math.round(tRead - started),
        cluster: Math.round(tCluster - tRead),
        render: Math.round(tRender - tCluster),
        save: Math.round(performance.now() - tRender),
      },
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    // savePages cleared is_generating; a run that failed before or in it clears it here.
    if (!saved) await deps.wiki.setGenerating(channelId, false);
  }
}

/**
 * The raw vectors a run needs and its authors' sums. Full: every fact's vector (the sums are taken from them and
 * cached). Incremental: the vectors of the `fresh` facts, plus those of the facts of their authors that the cached
 * sums (deps.authorSums) do not hold yet; an author whose cached facts changed or went is summed again from all of
 * their facts. Without a cache: the fresh facts' authors' vectors, all of them (sums undefined: authorCentred sums).
 */
async function authorVectors(
  deps: WikiGenerateDeps,
  channelId: string,
  mode: 'full' | 'incremental',
  facts: readonly WikiFact[],
  freshIds: readonly string[],
  factDigests: ReadonlyMap<string, string>,
): Promise<{ vectors: Map<string, number[]>; sums: AuthorSums | undefined }> {
  const cache = deps.authorSums;
  const byAuthor = new Map<string, string[]>();
  for (const f of facts) {
    const ids = byAuthor.get(f.author_name);
    if (ids) ids.push(f.id);
    else byAuthor.set(f.author_name, [f.id]);
  }
  const authorOf = new Map(facts.map((f) => [f.id, f.author_name]));
  const freshAuthors = new Set(freshIds.map((id) => authorOf.get(id)!));
  const cached = mode === 'incremental' ? cache?.get(channelId) : undefined;
  if (!cached) {
    const ids = mode === 'full' ? facts.map((f) => f.id) : [...freshAuthors].flatMap((a) => byAuthor.get(a) ?? []);
    const vectors = await deps.vectors.vectorsOf(ids);
    if (!cache) return { vectors, sums: undefined };
    const entry: ChannelAuthorSums = { sums: new Map(), members: new Map() };
    for (const [id, v] of vectors) {
      const a = authorOf.get(id)!;
      addToSum(entry.sums, a, v);
      const m = entry.members.get(a) ?? new Map<string, string>();
      m.set(id, factDigests.get(id) ?? '');
      entry.members.set(a, m);
    }
    cache.set(channelId, entry);
    return { vectors, sums: entry.sums };
  }
  const need = new Set(freshIds);
  const add: string[] = [];
  for (const a of freshAuthors) {
    const ids = byAuthor.get(a) ?? [];
    const held = cached.members.get(a);
    const valid = held !== undefined && [...held].every(([id, d]) => factDigests.get(id) === d);
    if (!valid) {
      cached.sums.delete(a);
      cached.members.delete(a);
    }
    for (const id of ids)
      if (!valid || !held.has(id)) {
        need.add(id);
        add.push(id);
      }
  }
  const vectors = await deps.vectors.vectorsOf([...need]);
  for (const id of add) {
    const v = vectors.get(id);
    if (!v) continue;
    const a = authorOf.get(id)!;
    addToSum(cached.sums, a, v);
    const m = cached.members.get(a) ?? new Map<string, string>();
    m.set(id, factDigests.get(id) ?? '');
    cached.members.set(a, m);
  }
  return { vectors, sums: cached.sums };
}

/** The digest of every source digest (facts, messages, graph lists): equal fingerprints, nothing to regenerate. */
function sourceFingerprint(
  digests: { facts: Map<string, string>; messages: Map<string, string> },
  graphRows: readonly SourceRow[],
): string {
  const h = createHash('sha1');
  for (const [kind, m] of [
    ['f', digests.facts],
    ['m', digests.messages],
  ] as const)
    for (const [id, d] of [...m].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)))
      h.update(`${kind}:${id}:${d}\n`);
  for (const r of graphRows) h.update(`g:${r.id}:${r.digest}\n`);
  return h.digest('hex');
}

/** Stored sources by kind and id. */
interface SourceIndex {
  /** `excerpt`: the fact's bestExcerpt in its message when the run that stored it built one (undefined: never). */
  facts: Map<string, { digest: string; fact: WikiFact; excerpt: string | null | undefined }>;
  messages: Map<string, { digest: string; message: SourceMessage; permalink: string }>;
  graph: Map<string, string>;
}

/**
 * A stored fact row's body split into the fact and its excerpt, memoised per body object: the generator's cached
 * sources hand the same bodies to run after run, and the same fact object lets the render reuse its memoised tokens
 * and citation (render.ts CITED). A run registers the bodies it saves with the fact objects it rendered, so the
 * run after it (a full run's first incremental included) renders those same objects.
 */
const FACT_BODIES = new WeakMap<object, { fact: WikiFact; excerpt: string | null | undefined }>();

function indexSources(rows: readonly SourceRow[]): SourceIndex {
  const out: SourceIndex = { facts: new Map(), messages: new Map(), graph: new Map() };
  for (const r of rows) {
    if (r.kind === 'fact') {
      const body = r.body as WikiFact & { excerpt?: string | null };
      let split = FACT_BODIES.get(body);
      if (!split) {
        const { excerpt, ...fact } = body;
        split = { fact, excerpt };
        FACT_BODIES.set(body, split);
      }
      out.facts.set(r.id, { digest: r.digest, fact: split.fact, excerpt: split.excerpt });
    } else if (r.kind === 'message') {
      const message = r.body as SourceMessage;
      out.messages.set(r.id, { digest: r.digest, message, permalink: message.permalink });
    } else out.graph.set(r.id, r.digest);
  }
  return out;
}

/** What changed between the digests now and the stored sources. */
interface SourceDelta {
  /** Facts new or changed (by digest), and facts stored but gone. */
  changedFacts: Set<string>;
  removedFacts: string[];
  /** Source messages new or changed, and stored but gone (deleted, or no fact cites them any more). */
  changedMessages: Set<string>;
  removedMessages: string[];
  /** Fixed page ids (`people`, `decisions`) whose graph list changed. */
  changedGraph: Set<string>;
  unchanged: boolean;
}

function diffSources(
  digests: { facts: Map<string, string>; messages: Map<string, string> },
  snap: SourceIndex,
  graphRows: readonly SourceRow[],
): SourceDelta {
  const changed = (now: Map<string, string>, stored: Map<string, { digest: string }>) =>
    new Set([...now].filter(([id, d]) => stored.get(id)?.digest !== d).map(([id]) => id));
  const changedFacts = changed(digests.facts, snap.facts);
  const removedFacts = [...snap.facts.keys()].filter((id) => !digests.facts.has(id));
  const changedMessages = changed(digests.messages, snap.messages);
  const removedMessages = [...snap.messages.keys()].filter((id) => !digests.messages.has(id));
  const changedGraph = new Set(graphRows.filter((r) => snap.graph.get(r.id) !== r.digest).map((r) => r.id));
  return {
    changedFacts,
    removedFacts,
    changedMessages,
    removedMessages,
    changedGraph,
    unchanged:
      changedFacts.size + removedFacts.length + changedMessages.size + removedMessages.length + changedGraph.size === 0,
  };
}

/** The graph's people and decisions as source rows (digest: sha-free canonical JSON; `unavailable` when down). */
function graphSourceRows(graph: { people: WikiPerson[] | null; decisions: WikiDecision[] | null }): SourceRow[] {
  return (['people', 'decisions'] as const).map((id) => {
    const body = graph[id];
    return { kind: 'graph', id, digest: body === null ? 'unavailable' : canonical(body), body };
  });
}

/**
 * The channel's facts and source messages for this run, and the update of the stored sources. Full (`incremental`
 * null): every fact (listMemories, getMemories) and every message a fact came from (getMessages); the sources are
 * replaced. Incremental: the stored facts and messages whose digest is unchanged, plus the new or changed ones read
 * from the document store; the sources get the changed rows and lose the removed ones.
 */
async function readSources(
  documents: WikiDocumentSource,
  channel: { id: string; name: string },
  digests: { facts: Map<string, string>; messages: Map<string, string> },
  incremental: { snap: SourceIndex; delta: SourceDelta } | null,
  graphRows: readonly SourceRow[],
): Promise<{
  facts: WikiFact[];
  messages: Map<string, SourceMessage>;
  sourceUpdate: { replace: boolean; upsert: SourceRow[]; remove: { kind: string; id: string }[] };
}> {
  const facts: WikiFact[] = [];
  const messages = new Map<string, SourceMessage>();
  let factIds: string[];
  let messageIds: string[];
  if (incremental) {
    const { snap, delta } = incremental;
    for (const [id, s] of snap.facts) if (digests.facts.has(id) && !delta.changedFacts.has(id)) facts.push(s.fact);
    for (const [id, s] of snap.messages)
      if (digests.messages.has(id) && !delta.changedMessages.has(id)) messages.set(id, s.message);
    factIds = [...delta.changedFacts];
    messageIds = [...delta.changedMessages];
  } else {
    factIds = await listFactIds(documents, channel.id);
    messageIds = [...digests.messages.keys()];
  }
  const fresh: WikiFact[] = [];
  for (let i = 0; i < factIds.length; i += PAGE_SIZE) {
    const detail = await documents.getMemories(factIds.slice(i, i + PAGE_SIZE));
    for (const m of detail.values()) fresh.push(toWikiFact(m));
  }
  facts.push(...fresh);
  // A message view has no permalink: it is taken from the facts of that message.
  const permalinks = new Map(facts.map((f) => [f.source_message_id, f.permalink]));
  const freshMessages: SourceMessage[] = [];
  for (const m of await documents.getMessages(channel.id, messageIds)) {
    const message: SourceMessage = {
      id: m.id,
      channel_id: channel.id,
      channel_name: channel.name,
      author: m.author.name,
      timestamp: m.timestamp,
      text: m.text,
      permalink: permalinks.get(m.id) ?? '',
      attachments: m.attachments.map((a) => ({ name: a.name, media_type: a.media_type ?? null })),
    };
    messages.set(m.id, message);
    freshMessages.push(message);
  }
  facts.sort((a, b) => a.id.localeCompare(b.id));
  const upsert: SourceRow[] = [
    ...fresh.flatMap((f) => {
      const digest = digests.facts.get(f.id);
      return digest ? [{ kind: 'fact' as const, id: f.id, digest, body: f }] : [];
    }),
    ...freshMessages.flatMap((m) => {
      const digest = digests.messages.get(m.id);
      return digest ? [{ kind: 'message' as const, id: m.id, digest, body: m }] : [];
    }),
    ...graphRows.filter((r) => !incremental || incremental.delta.changedGraph.has(r.id)),
  ];
  const remove = incremental
    ? [
        ...incremental.delta.removedFacts.map((id) => ({ kind: 'fact', id })),
        ...incremental.delta.removedMessages.map((id) => ({ kind: 'message', id })),
      ]
    : [];
  return { facts, messages, sourceUpdate: { replace: !incremental, upsert, remove } };
}

/** Ids of every fact of the channel (all pages of listMemories). */
async function listFactIds(documents: WikiDocumentSource, channelId: string): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const { rows, total } = await documents.listMemories({ channelId, page, limit: PAGE_SIZE });
    ids.push(...rows.map((r) => r.id));
    if (rows.length < PAGE_SIZE || ids.length >= total) break;
  }
  return ids;
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
): Promise<Omit<WikiGenerateResult, 'durationMs' | 'channelId'> | null> {
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
    renumberedPageIds: [],
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

/** A memory (detail form plus permalink, as DocumentStore.getMemories answers) as the wiki reads it. */
export const toWikiFact = (m: MemoryRecord): WikiFact => ({
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
