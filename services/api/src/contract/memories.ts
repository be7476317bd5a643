import { z } from 'zod';
import { FreshnessSchema } from './freshness.js';
import {
  Count,
  FactType,
  Id,
  Importance,
  Int,
  NonNegative,
  orNull,
  Platform,
  SearchMethod,
  Timestamp,
  Unit,
  Url,
  Uuid,
} from './primitives.js';

/*
 * Memories and search (spec "Resources and their fields → Memory (atomic fact)", "Search result"; "Endpoints →
 * Memories", "Search").
 */

const memoryCore = {
  id: Uuid,
  memory_text: z.string().min(1),
  quality_score: Unit,
  tier: z.literal('atomic'), // facts: `atomic`
  channel_id: Id,
  author_name: z.string(),
  message_ts: Timestamp,
  topic_tags: z.array(z.string()),
  entity_tags: z.array(z.string()),
  importance: Importance,
  fact_type: FactType,
  source_message_id: Id,
};

/** Spec "Memory (atomic fact)", list form (GET /api/memories): permalink is list form only. */
export const MemorySchema = z.strictObject({ ...memoryCore, permalink: Url });

const detailFields = {
  cluster_id: orNull(Id), // null until the wiki assigned the fact to a cluster
  platform: Platform,
  author_id: Id,
  thread_ts: orNull(z.string().min(1)),
  action_tags: z.array(z.string()),
  graph_entity_ids: z.array(Id),
  thread_context_summary: z.string(),
  valid_at: Timestamp,
  invalid_at: orNull(Timestamp),
  superseded_by: orNull(Id),
  potential_contradiction: z.boolean(),
  source_lang: z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]+)*$/, 'must be a language code'),
};

/** Spec "Memory (atomic fact)", detail form (GET /api/memories/{memory_id}): the detail fields, no permalink. */
export const MemoryDetailSchema = z.strictObject({ ...memoryCore, ...detailFields });

/**
 * The "full memory object" of POST /api/memories/search results (spec "Memories"): the detail form plus permalink
 * (README "Routes that exist today").
 */
export const MemoryFullSchema = z.strictObject({ ...memoryCore, ...detailFields, permalink: Url });

/** Spec "GET /api/memories": `{memories: [list-form memories], total, page, pages}`. */
export const MemoriesPageSchema = z.strictObject({
  memories: z.array(MemorySchema),
  total: Count,
  page: Int.min(1),
  pages: Count,
});

/** Spec "Tag aggregates": a topic entry `{tag, count}`. */
export const TopicTagCountSchema = z.strictObject({ tag: z.string().min(1), count: Count.min(1) });
/** Spec "GET /api/memories/topics": `{topics: [{tag, count}]}`. */
export const MemoryTopicsSchema = z.strictObject({ topics: z.array(TopicTagCountSchema) });
/** Spec "Tag aggregates": an entity-tag entry `{name, count}`. */
export const EntityTagCountSchema = z.strictObject({ name: z.string().min(1), count: Count.min(1) });
/** Spec "GET /api/memories/entities": `{entities: [{name, count}]}`. */
export const MemoryEntitiesSchema = z.strictObject({ entities: z.array(EntityTagCountSchema) });

/** Spec "POST /api/memories/search" response: `{results: [{memory (full), score, highlights}], total, query_time_ms (int)}`. */
export const MemorySearchResponseSchema = z.strictObject({
  results: z.array(z.strictObject({ memory: MemoryFullSchema, score: Unit, highlights: z.array(z.string()) })),
  total: Count,
  query_time_ms: Count,
  freshness: FreshnessSchema.optional(), // documented addition (docs/routes.md "Search")
});

/** Spec "Search result" memory: the nine fields it lists. */
export const SearchMemorySchema = z.strictObject({
  id: Uuid,
  memory_text: z.string().min(1),
  quality_score: Unit,
  author_name: z.string(),
  message_ts: Timestamp,
  fact_type: FactType,
  importance: Importance,
  topic_tags: z.array(z.string()),
  entity_tags: z.array(z.string()),
});

/** Spec "Search result" citation (present when citations are requested). */
export const SearchCitationSchema = z.strictObject({
  id: z.string().regex(/^\[\d+\]$/, 'must be of the form [n]'),
  permalink: Url,
  author: z.string(),
  timestamp: Timestamp,
});

/** Spec "Search result": memory, score 0..1, highlights (matches wrapped in <mark>), citation when requested. */
export const SearchResultSchema = z.strictObject({
  memory: SearchMemorySchema,
  score: Unit,
  highlights: z.array(z.string()),
  citation: SearchCitationSchema.optional(),
});

/** Spec "POST /api/search" response: results, total, query_time_ms (number), search_method; facets when requested. */
export const SearchResponseSchema = z.strictObject({
  results: z.array(SearchResultSchema),
  total: Count,
  query_time_ms: NonNegative,
  search_method: SearchMethod,
  facets: z.partialRecord(z.enum(['fact_type', 'importance', 'topics']), z.record(z.string(), Count)).optional(),
  freshness: FreshnessSchema.optional(), // documented addition (docs/routes.md "Search")
});
