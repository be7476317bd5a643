// The ports and results of wiki generation: what generateChannelWiki reads, writes and returns.
import type { AuthorSums } from './author-centring.js';
import type { ClusterStats } from './clusters.js';
import type { RenderMemo } from './memo.js';
import type { WikiSummarizer } from './summarize.js';
import type { TopicCluster, WikiFact, WikiPage, WikiStructure } from './types.js';

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
   * The id of the embedder that made the vectors `vectors.vectorsOf` returns (Embedder.id, the `model` of the
   * stored vectors, e.g. `onnx:e5-small-v2-q`): it picks the clustering's thresholds and the author centring
   * (clusterParamsOf, authorCentringOf), whose cosine scales differ per encoder. Omitted or unknown: the USE-lite
   * values (DEFAULT_CLUSTER_PARAMS, AUTHOR_CENTRING).
   */
  embedderId?: string;
  /**
   * Per channel, the vector sums of its authors' facts (AUTHOR_CENTRING), kept between runs by a long-lived
   * generator (WikiGenerator): an incremental run then reads the vectors of the new facts only, instead of every
   * fact of their authors. Entries are checked against the fact digests of the run (a fact changed or gone: that
   * author's sum is read again). Omitted: every run reads what it needs.
   */
  authorSums?: Map<string, ChannelAuthorSums>;
  /**
   * The render memo tables (RenderMemo), kept between runs by a long-lived generator (WikiGenerator): citations,
   * excerpts and tokens of facts and messages unchanged since an earlier run are not built again. Omitted: each run
   * starts with fresh tables (same pages).
   */
  renderMemo?: RenderMemo;
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
  summaries?: { model: string; summarized: number; failed: number; dropped: number; costUsd: number };
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
