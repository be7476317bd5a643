import { z } from 'zod';
import { FreshnessSchema } from './freshness.js';
import { EntityCardSchema, GraphEntityDetailSchema } from './graph.js';
import {
  CitationId,
  Count,
  Id,
  Int,
  NonNegative,
  orNull,
  PageType,
  Platform,
  SectionNumber,
  Timestamp,
  Url,
} from './primitives.js';

/*
 * The wiki (spec "Resources and their fields → Wiki"; "Endpoints → Wiki"; "Wiki generation").
 */

/** A wiki node as the schema reads it (recursive through children). */
export interface WikiNodeShape {
  id: string;
  title: string;
  slug: string;
  section_number: string;
  page_type: 'fixed' | 'topic' | 'sub-topic';
  memory_count: number;
  children: WikiNodeShape[];
}

/** Spec "Wiki" node: id, title, slug, section_number (dotted for children), page_type, memory_count, children (empty for a leaf). */
export const WikiNodeSchema: z.ZodType<WikiNodeShape> = z.lazy(() =>
  z.strictObject({
    id: Id,
    title: z.string().min(1),
    slug: z.string().min(1),
    section_number: SectionNumber,
    page_type: PageType,
    memory_count: Count,
    children: z.array(WikiNodeSchema),
  }),
);
// Recursive: named in zod's global registry, so the OpenAPI document holds it once as a component and refers to it.
z.globalRegistry.add(WikiNodeSchema, { id: 'WikiNode' });

/** Spec "Wiki" structure: channel_id, channel_name, platform, generated_at, is_stale, pages (nodes). */
export const WikiStructureSchema = z.strictObject({
  channel_id: Id,
  channel_name: z.string().min(1),
  platform: Platform,
  generated_at: Timestamp,
  is_stale: z.boolean(),
  pages: z.array(WikiNodeSchema),
});

/** Spec "Wiki citation": id `[n]`, author, channel, timestamp, text_excerpt, permalink, media_type and media_name (or null). */
export const WikiCitationSchema = z.strictObject({
  id: CitationId,
  author: z.string(),
  channel: z.string().min(1),
  timestamp: Timestamp,
  text_excerpt: z.string(),
  permalink: Url,
  media_type: orNull(z.string().min(1)),
  media_name: orNull(z.string().min(1)),
});

/** Spec "Wiki" page: id, slug, title, page_type, parent_id (or null), section_number, content, summary, memory_count, last_updated, citations, children. */
export const WikiPageSchema = z.strictObject({
  id: Id,
  slug: z.string().min(1),
  title: z.string().min(1),
  page_type: PageType,
  parent_id: orNull(Id),
  section_number: SectionNumber,
  content: z.string(),
  summary: z.string(),
  memory_count: Count,
  last_updated: Timestamp,
  citations: z.array(WikiCitationSchema),
  children: z.array(WikiNodeSchema),
});

/** Spec "Version summary": version_number, channel_id, generated_at, archived_at (null for the current version), page_count, model. */
export const WikiVersionSummarySchema = z.strictObject({
  version_number: Int.min(1),
  channel_id: Id,
  generated_at: Timestamp,
  archived_at: orNull(Timestamp),
  page_count: Count,
  model: z.string().min(1),
});

/** Spec "GET /api/wiki/versions": `{versions: [version summary]}`. */
export const WikiVersionsSchema = z.strictObject({ versions: z.array(WikiVersionSummarySchema) });

/**
 * Spec "Version snapshot": the summary plus channel_name, platform, structure, overview, pages, metadata (their
 * shapes not shown; README "Routes that exist today": the structure, the overview page or null, the pages).
 */
export const WikiVersionSnapshotSchema = z.strictObject({
  ...WikiVersionSummarySchema.shape,
  channel_name: z.string().min(1),
  platform: Platform,
  structure: WikiStructureSchema,
  overview: orNull(WikiPageSchema),
  pages: z.array(WikiPageSchema),
  metadata: z.record(z.string(), z.unknown()),
});

/** Spec "Activity entry" (wiki): channel_id, action (`generated`), version_number, page_count, duration_ms, timestamp. */
export const WikiActivitySchema = z.strictObject({
  channel_id: Id,
  action: z.string().min(1),
  version_number: Int.min(1),
  page_count: Count,
  duration_ms: orNull(Count), // null when unknown (README "Routes that exist today")
  timestamp: Timestamp,
});

/** Spec "GET /api/wiki/activity": `{activities: [...]}`. */
export const WikiActivitiesSchema = z.strictObject({ activities: z.array(WikiActivitySchema) });

/** Spec "Wiki sync-history entry" (mode and version_number: documented additions, README "Routes that exist today"). */
export const WikiSyncHistoryEntrySchema = z.strictObject({
  sync_id: Id,
  started_at: Timestamp,
  completed_at: orNull(Timestamp),
  status: z.string().min(1),
  pages_generated: Count,
  facts_processed: Count,
  error: orNull(z.looseObject({})),
  mode: orNull(z.enum(['full', 'incremental'])), // documented addition
  version_number: orNull(Int.min(1)), // documented addition
});

/** Spec "GET /api/wiki/sync-history": `{history: [...]}`. */
export const WikiSyncHistorySchema = z.strictObject({ history: z.array(WikiSyncHistoryEntrySchema) });

/**
 * Spec "Wiki" status: channel_id, is_generating, is_stale, last_generated_at, current_version, page_count,
 * next_generation_scheduled (or null); last_duration_ms and job_id are documented additions (README).
 */
export const WikiStatusSchema = z.strictObject({
  channel_id: Id,
  is_generating: z.boolean(),
  is_stale: z.boolean(),
  last_generated_at: orNull(Timestamp),
  current_version: orNull(Int.min(1)),
  page_count: Count,
  next_generation_scheduled: orNull(Timestamp),
  last_duration_ms: orNull(Count), // documented addition
  job_id: orNull(Id), // documented addition
});

/**
 * Spec "Wiki" metadata: member_count, message_count, memory_count, entity_count, media_count, page_count (int),
 * generation_cost_usd (number), generation_duration_ms (int). The rest are documented additions (README "Routes that
 * exist today": GET /api/wiki/metadata).
 */
export const WikiMetadataSchema = z.strictObject({
  member_count: Count,
  message_count: Count,
  memory_count: Count,
  entity_count: Count,
  media_count: Count,
  page_count: Count,
  generation_cost_usd: NonNegative,
  generation_duration_ms: Count,
  // documented additions
  channel_id: Id,
  channel_name: z.string().min(1),
  platform: Platform,
  generated_at: Timestamp,
  is_stale: z.boolean(),
  is_generating: z.boolean(),
  current_version: orNull(Int.min(1)),
  model: orNull(z.string().min(1)),
  topic_count: Count,
  sub_topic_count: Count,
  citation_count: Count,
  last_duration_ms: orNull(Count),
  generation: z.record(z.string(), z.unknown()),
});

/** Spec "POST /api/wiki/refresh": status `started`, job_id, estimated_duration_seconds (channel_id, mode: documented). */
export const WikiJobStartedSchema = z.strictObject({
  status: z.literal('started'),
  job_id: Id,
  estimated_duration_seconds: Count,
  channel_id: Id, // documented addition
  mode: z.enum(['full', 'incremental']), // documented addition
});

/**
 * POST /api/admin/wiki/rebuild (spec: response not shown; README: the refresh answer for one channel, else
 * `{status, job_id (first or null), estimated_duration_seconds (sum), jobs: [{channel_id, job_id}]}`).
 */
export const WikiRebuildStartedSchema = z.union([
  WikiJobStartedSchema,
  z.strictObject({
    status: z.literal('started'),
    job_id: orNull(Id),
    estimated_duration_seconds: Count,
    jobs: z.array(z.strictObject({ channel_id: Id, job_id: Id })),
  }),
]);

/** GET /api/wiki/{channel_id} (spec: response not shown; README: the structure plus `overview`, the overview page). */
export const WikiChannelSchema = z.strictObject({
  ...WikiStructureSchema.shape,
  overview: WikiPageSchema,
  freshness: FreshnessSchema.optional(), // documented addition (docs/wiki.md "Freshness")
});

/** A stored page as GET /api/wiki/pages/{page_id} and the topic route answer it: the page plus its freshness mark. */
export const WikiPageResponseSchema = z.strictObject({
  ...WikiPageSchema.shape,
  freshness: FreshnessSchema.optional(), // documented addition (docs/wiki.md "Freshness")
});

/**
 * GET /api/wiki/entities/{entity_type}/{entity_id} (spec: not shown; README "Routes that exist today"): an entity page
 * rendered from the graph.
 */
export const WikiEntityPageSchema = z.strictObject({
  id: Id,
  slug: z.string().min(1),
  title: z.string().min(1),
  page_type: z.literal('entity'),
  entity: GraphEntityDetailSchema,
  content: z.string().min(1),
  summary: z.string().min(1),
  memory_count: Count,
  last_updated: Timestamp,
  citations: z.array(WikiCitationSchema),
  card: orNull(EntityCardSchema),
  /** Ours (docs/access.md): mentions in channels the caller cannot see are left out; always false for admins. */
  restricted: z.boolean(),
});

/** One side of a page diff: the version compared, when it was generated, and whether the page existed in it. */
const WikiDiffSideSchema = z.strictObject({
  version_number: Int.min(1),
  generated_at: Timestamp,
  page_exists: z.boolean(),
});

/**
 * GET /api/wiki/pages/{page_id}/diff (issue 27 point 2, a documented addition, docs/wiki.md "History"): the unified
 * line diff of a page between two versions (`diff` empty when unchanged), with the counts of added and removed lines.
 */
export const WikiPageDiffSchema = z.strictObject({
  channel_id: Id,
  page_id: z.string().min(1),
  from: WikiDiffSideSchema,
  to: WikiDiffSideSchema,
  changed: z.boolean(),
  added_lines: Count,
  removed_lines: Count,
  diff: z.string(),
});
