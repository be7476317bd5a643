/** A topic cluster as stored (structurally the wiki's TopicCluster). */
export interface StoredWikiCluster {
  id: string;
  channel_id: string;
  /** Unit-length mean of the members' unit vectors. */
  centroid: number[];
  member_ids: string[];
  /** Mean cosine of the members to the centroid, in [0, 1]. */
  coherence: number;
  parent_id: string | null;
}

/** Spec "Wiki" version summary. Times ISO 8601 UTC; archived_at is null for the current version. */
export interface WikiVersionSummary {
  version_number: number;
  channel_id: string;
  generated_at: string;
  archived_at: string | null;
  page_count: number;
  model: string;
}

/** A version with its snapshot: the structure, the pages and the generation metadata as saved. */
export interface WikiVersion<P, S> extends WikiVersionSummary {
  structure: S;
  pages: P[];
  metadata: Record<string, unknown>;
}

/** Per-channel generation state (spec "Wiki generation" flags, plus the last run). Times ISO 8601 UTC. */
export interface WikiStatus {
  channel_id: string;
  is_generating: boolean;
  is_stale: boolean;
  last_generated_at: string | null;
  current_version: number | null;
  last_duration_ms: number | null;
}

/** What savePages records with a version. */
export interface WikiSaveMeta {
  /** ISO 8601 UTC: the version's generated_at (and the previous version's archived_at). */
  generatedAt: string;
  /** Model that wrote the summaries (`extractive` when no LLM was used). */
  model: string;
  /** Duration of the generation, in ms. */
  durationMs?: number;
  /** Free-form generation metadata kept in the snapshot (mode, counts, stats). */
  metadata?: Record<string, unknown>;
  /**
   * What the version was generated from (wiki_sources): `replace` drops the channel's stored sources first (a full
   * run); `upsert` writes rows by (kind, id); `remove` deletes rows. Written in the same transaction as the version.
   */
  sources?: { replace: boolean; upsert: readonly WikiSourceRow[]; remove: readonly { kind: string; id: string }[] };
  /** The digest of all the version's sources (recorded in the state; currentVersion returns it). */
  sourceFingerprint?: string;
  /**
   * The version's topic clusters, written in the same transaction as its pages (so a failed save changes neither):
   * `replace` writes the channel's clusters as `clusters` (a full run); otherwise `changed` are upserted by id and
   * `removedIds` deleted, the others left as stored (an incremental run).
   */
  clusters?:
    | { replace: true; clusters: readonly StoredWikiCluster[] }
    | { replace: false; changed: readonly StoredWikiCluster[]; removedIds: readonly string[] };
  /**
   * Ids of pages passed unchanged from the channel's current pages (an incremental run's kept pages): their stored
   * hash is reused instead of hashing them again.
   */
  unchangedPageIds?: readonly string[];
  /**
   * staleSeq() as read when the generation started: is_stale is cleared only when it is still the channel's
   * stale_seq (a markStale during the run keeps the wiki stale). Omitted: is_stale is cleared.
   */
  staleSeq?: number;
}

/** One thing a version was generated from (wiki_sources): a fact, a source message or a graph list, with its digest. */
export interface WikiSourceRow {
  kind: 'fact' | 'message' | 'graph';
  id: string;
  /** sourceDigests' digest for facts and messages; the generator's own for graph rows. */
  digest: string;
  body: unknown;
}

/**
 * Digests of what a channel's wiki is generated from, now (WikiStore.sourceDigests): per fact (every field the wiki
 * reads, supersessions included), per source message of a fact (content hash, edit, deletion, author, time,
 * attachments), and the channel's authors (platform user id → name, for mentions in excerpts).
 */
export interface WikiSourceDigests {
  /** The channel's name and platform as the document store has them (null: unknown channel). */
  channel: { id: string; name: string; platform: string } | null;
  facts: Map<string, string>;
  messages: Map<string, string>;
  authors: Map<string, string>;
}
