import type { Generated } from 'kysely';

type Time = Date | string;

/**
 * The wiki store's tables (wiki-store.ts, save.ts; migrateWiki creates them). Times as the driver returns them (Date
 * or ISO string). Page, structure and snapshot content is JSON text (migration 0008); `wiki_pages.page` is null since
 * 0005 (the content is in the revision its hash names); `wiki_clusters.centroid` is the pre-0007 jsonb, null since
 * (centroid_f32 holds it). A type, not an interface: `withTables<T>()` takes only types with an implicit index
 * signature.
 */
export type WikiTables = {
  wiki_clusters: {
    channel_id: string;
    id: string;
    centroid: unknown;
    centroid_f32: string | null;
    member_ids: string[];
    coherence: number;
    parent_id: string | null;
    updated_at: Generated<Time>;
  };
  wiki_pages: { channel_id: string; page_id: string; page: unknown; updated_at: Generated<Time>; hash: string | null };
  wiki_page_revisions: { channel_id: string; page_id: string; hash: string; page: string };
  wiki_structures: { channel_id: string; structure: string; updated_at: Generated<Time> };
  wiki_versions: {
    channel_id: string;
    version_number: number;
    generated_at: Time;
    archived_at: Time | null;
    page_count: number;
    model: string;
    snapshot: string;
    metadata: unknown;
  };
  wiki_state: {
    channel_id: string;
    is_generating: Generated<boolean>;
    is_stale: Generated<boolean>;
    last_generated_at: Time | null;
    current_version: number | null;
    last_duration_ms: number | null;
    source_fingerprint: string | null;
    stale_seq: Generated<number>;
  };
  wiki_sources: { channel_id: string; kind: string; id: string; digest: string; body: string };
  wiki_channel_deletions: { channel_id: string; requested_at: Time };
  wiki_jobs: {
    job_id: string;
    channel_id: string;
    mode: string;
    status: string;
    requested_by: string;
    requested_at: Time;
    started_at: Time | null;
    completed_at: Time | null;
    version_number: number | null;
    skipped: boolean;
    facts: number;
    pages_rebuilt: number;
    duration_ms: number | null;
    error_code: string | null;
    error_message: string | null;
  };
};
