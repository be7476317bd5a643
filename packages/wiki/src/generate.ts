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
import { authorCentred, authorCentringOf } from './author-centring.js';
import {
  assignFacts,
  type ClusterParams,
  clusterParamsOf,
  clusterStats,
  type FactVector,
  healthPass,
} from './clusters.js';
import {
  authorVectors,
  diffSources,
  graphSourceRows,
  indexSources,
  keepable,
  readGraph,
  readSources,
  sourceFingerprint,
  sourceUpsert,
  unchangedResult,
} from './generate-sources.js';
import {
  FACT_DEPENDENT_FIXED_PAGES,
  type WikiGenerateDeps,
  type WikiGenerateOptions,
  type WikiGenerateResult,
  type WikiSink,
} from './generate-types.js';
import { RenderMemo } from './memo.js';
import { checkWikiCitations, citationsHold, renderPages, type WikiPagePlace } from './render.js';
import { summarizeTopicPages } from './summarize.js';
import type { TopicCluster, WikiFact, WikiPage } from './types.js';

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
 * stored clusters, pages or sources runs as `full`, and so does one whose current version clustered the vectors of
 * another model than `deps.embedderId` (its `metadata.embedder`: a vector space switch, docs/models.md).
 * Returns counts, the clusters, clusterStats (assigned share against the facts with vectors) and the citation check.
 */
export async function generateChannelWiki(
  deps: WikiGenerateDeps,
  channelId: string,
  opts: WikiGenerateOptions,
): Promise<WikiGenerateResult> {
  const started = performance.now();
  const now = opts.now ?? new Date();
  const renderMemo = deps.renderMemo ?? new RenderMemo();
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
  // The stored clusters' centroids are of the vectors of the model that made them (metadata.embedder; a version
  // from before it was recorded counts as another model): after a vector space switch an incremental run is full.
  const sameSpace = current === null || (current.metadata.embedder ?? null) === (deps.embedderId ?? null);
  const incremental = opts.mode === 'incremental' && sameSpace;
  // Nothing changed since the current version (its recorded fingerprint): nothing to read, render or save.
  if (incremental && current && current.source_fingerprint === fingerprint) {
    const unchanged = await unchangedResult(deps.wiki, channelId, current);
    if (unchanged) {
      if (staleSeq !== undefined) await deps.wiki.clearStale?.(channelId, staleSeq);
      if (begun) await deps.wiki.setGenerating(channelId, false);
      const ms = Math.round(performance.now() - started);
      return { ...unchanged, channelId, phasesMs: { ...unchanged.phasesMs, read: ms }, durationMs: ms };
    }
  }
  const snap = indexSources(incremental ? await deps.wiki.sources(channelId) : []);
  const delta = diffSources(digests, snap, graphRows);
  if (!begun) await deps.wiki.setGenerating(channelId, true);
  let saved = false;
  try {
    const channel = digests.channel ?? { id: channelId, name: channelId, platform: '' };
    const stored = incremental ? await deps.wiki.clusters(channelId) : [];
    const storedPages = incremental ? await deps.wiki.pages(channelId) : [];
    const mode =
      incremental && stored.length > 0 && storedPages.length > 0 && snap.graph.size > 0 ? 'incremental' : 'full';
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
      authorCentringOf(deps.embedderId),
      sums,
    );
    const tRead = performance.now();

    const { clusters, touched, fvs, clustered } = clusterStep(
      mode,
      channelId,
      facts,
      vectors,
      stored,
      delta.changedFacts,
      clusterParamsOf(deps.embedderId),
    );

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
        !citationsHold(old, messagesByPermalink, { userNames }, renderMemo)
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
    const rendered = renderPages(input, mode === 'incremental' ? keep : undefined, renderMemo);
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
        costUsd: done.costUsd,
      };
    }
    if (mode === 'full') reasons.touched = pages.length;

    // Every page of the version is checked against the source messages: the rendered ones and the kept ones.
    const citations = checkWikiCitations(pages, messages, { userNames }, renderMemo);
    const stats = clusterStats(clusters, mode === 'full' ? fvs.length : clustered);
    const tRender = performance.now();
    const durationMs = Math.round(performance.now() - started);
    // The clusters are saved with the pages (one transaction). Incremental: only the clusters that changed (an
    // untouched cluster is the stored one, unchanged).
    const clusterWrite = clusterWriteOf(mode, stored, clusters, touched);
    const renderedIds = new Set(rebuilt);
    const upsert = sourceUpsert(sourceUpdate.upsert, rendered.excerpts, knownExcerpts, byId, digests.facts);
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
          // The model of the vectors clustered (WikiGenerateDeps.embedderId): the next incremental run compares it.
          embedder: deps.embedderId ?? null,
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
 * The cluster step: the facts with a vector, oldest first, as FactVectors (`fvs`); full mode assigns them from
 * scratch then runs healthPass (every cluster touched); incremental mode drops the members whose fact is gone (a
 * cluster left empty goes; either way, and when a member's fact is in `changedFacts`, the cluster is touched) and
 * assigns the facts to the stored clusters. `clustered`: facts in some cluster.
 */
function clusterStep(
  mode: 'full' | 'incremental',
  channelId: string,
  facts: readonly WikiFact[],
  vectors: ReadonlyMap<string, number[]>,
  stored: readonly TopicCluster[],
  changedFacts: ReadonlySet<string>,
  params: ClusterParams,
): { clusters: TopicCluster[]; touched: Set<string>; fvs: FactVector[]; clustered: number } {
  // Facts to cluster: those with a vector, oldest first (the order a live channel would have seen them).
  const ordered = facts
    .filter((f) => vectors.has(f.id))
    .sort((a, b) => a.message_ts.localeCompare(b.message_ts) || a.id.localeCompare(b.id));
  const fvs: FactVector[] = ordered.map((f) => ({ id: f.id, channel_id: channelId, vector: vectors.get(f.id)! }));

  const factIds = new Set(facts.map((f) => f.id));
  let clusters: TopicCluster[];
  let touched: Set<string>;
  if (mode === 'full') {
    const assigned = assignFacts([], fvs, params);
    clusters = healthPass(assigned.clusters, vectors, params).clusters;
    touched = new Set(clusters.map((c) => c.id));
  } else {
    // Members whose fact is gone leave their cluster (centroid kept until the daily rebuild); a cluster left empty
    // goes. Either way, and when a member's fact changed, the cluster is touched (its page shows the facts).
    touched = new Set<string>();
    const kept: TopicCluster[] = [];
    for (const c of stored) {
      const live = c.member_ids.filter((id) => factIds.has(id));
      if (live.length !== c.member_ids.length || c.member_ids.some((id) => changedFacts.has(id))) touched.add(c.id);
      if (live.length > 0) kept.push(live.length === c.member_ids.length ? c : { ...c, member_ids: live });
    }
    const assigned = assignFacts(kept, fvs, params);
    clusters = assigned.clusters;
    for (const id of assigned.touched) touched.add(id);
  }
  const clustered = new Set(clusters.flatMap((c) => c.member_ids)).size;
  return { clusters, touched, fvs, clustered };
}

/**
 * The clusters saved with the version (WikiSaveMeta.clusters): full mode replaces them all; incremental mode writes
 * only those new, touched or changed (coherence, parent, members) against `stored`, and removes those gone.
 */
function clusterWriteOf(
  mode: 'full' | 'incremental',
  stored: readonly TopicCluster[],
  clusters: TopicCluster[],
  touched: ReadonlySet<string>,
): NonNullable<Parameters<WikiSink['savePages']>[2]['clusters']> {
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
    return { replace: false, changed, removedIds: stored.filter((c) => !ids.has(c.id)).map((c) => c.id) };
  }
  return { replace: true, clusters };
}
