import { z } from 'zod';
import { Count, Id, Int, NonNegative, orNull, Platform, Timestamp, Unit } from './primitives.js';

/*
 * Statistics and health (spec "Statistics and health objects", "Health status values"; "Endpoints → Stats and
 * health"; "Events → Activity feed").
 */

/** Spec "System stats": total_facts, total_entities, total_channels, total_decisions, wiki_pages, total_messages, total_authors (all int). */
export const SystemStatsSchema = z.strictObject({
  total_facts: Count,
  total_entities: Count,
  total_channels: Count,
  total_decisions: Count,
  wiki_pages: Count,
  total_messages: Count,
  total_authors: Count,
});

/** Spec date_range {earliest, latest} (null while the channel has no message: the null convention). */
export const DateRangeSchema = z.strictObject({ earliest: orNull(Timestamp), latest: orNull(Timestamp) });

const channelCounts = {
  message_count: Count,
  fact_count: Count,
  entity_count: Count,
  decision_count: Count,
  author_count: Count,
};

/** Spec "Channel stats (by id)" (GET /api/stats/channel/{channel_id}). */
export const ChannelStatsByIdSchema = z.strictObject({
  channel_id: Id,
  ...channelCounts,
  wiki_page_count: Count,
  date_range: DateRangeSchema,
  activity: z.strictObject({
    messages_last_7d: Count,
    messages_last_30d: Count,
    facts_added_last_7d: Count,
    facts_added_last_30d: Count,
  }),
});

/** Spec "Channel stats (by channel path)" (GET /api/channels/{channel_id}/stats). */
export const ChannelStatsByPathSchema = z.strictObject({
  ...channelCounts,
  date_range: DateRangeSchema,
  top_authors: z.array(z.strictObject({ name: z.string(), message_count: Count })),
});

/**
 * Spec "Activity entry": type, timestamp, plus channel_id, message_count, page_count or connection_id depending on
 * type. The per-type extras (job_id, fact_count, entity_count, version_number, platform) are documented additions
 * (README "Stats and metrics").
 */
export const ActivityEntrySchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('sync_completed'),
    timestamp: Timestamp,
    channel_id: Id,
    message_count: Count,
    job_id: Id,
    fact_count: Count,
    entity_count: Count,
  }),
  z.strictObject({
    type: z.literal('wiki_generated'),
    timestamp: Timestamp,
    channel_id: Id,
    page_count: Count,
    version_number: Int.min(1),
  }),
  z.strictObject({
    type: z.literal('connection_established'),
    timestamp: Timestamp,
    connection_id: Id,
    platform: Platform,
  }),
  z.strictObject({ type: z.literal('connection_failed'), timestamp: Timestamp, connection_id: Id, platform: Platform }),
  z.strictObject({
    type: z.literal('fact_extracted'),
    timestamp: Timestamp,
    channel_id: Id,
    message_count: Count,
    fact_count: Count,
  }),
  z.strictObject({
    type: z.literal('entity_created'),
    timestamp: Timestamp,
    channel_id: Id,
    message_count: Count,
    entity_count: Count,
  }),
]);

/** Spec "GET /api/stats/activity": `{activities: [...]}` of the six activity types. */
export const ActivitiesSchema = z.strictObject({ activities: z.array(ActivityEntrySchema) });

const Band = orNull(z.enum(['excellent', 'good', 'fair', 'poor']));

/**
 * Spec "Metrics": performance, storage, usage, quality; bands, event_log and dead_letters are documented additions
 * (README "Stats and metrics").
 */
export const MetricsSchema = z.strictObject({
  performance: z.strictObject({
    avg_query_latency_ms: NonNegative,
    avg_sync_duration_seconds: NonNegative,
    avg_wiki_generation_seconds: NonNegative,
  }),
  storage: z.strictObject({
    vector_store_objects: Count,
    document_store_documents: Count,
    graph_store_nodes: Count,
    graph_store_relationships: Count,
  }),
  usage: z.strictObject({ total_llm_calls: Count, total_llm_tokens: Count, estimated_cost_usd: NonNegative }),
  quality: z.strictObject({ avg_fact_quality_score: Unit, high_importance_facts: Count, decision_count: Count }),
  bands: z.strictObject({ query_latency: Band, fact_quality: Band, sync_duration: Band }), // documented addition
  event_log: z.strictObject({
    // documented addition
    kind: z.enum(['embedded', 'kafka']),
    total_lag: Count,
    consumer_groups: z.array(
      z.strictObject({
        group: z.string().min(1),
        topic: z.string().min(1),
        partition: Count,
        committed_offset: Int,
        end_offset: Int,
        lag: Count,
      }),
    ),
  }),
  dead_letters: z.array(z.looseObject({})), // documented addition
});

/** Spec "Top author": author_id, author_name, message_count, fact_count, decision_count, channels. */
export const TopAuthorSchema = z.strictObject({
  author_id: Id,
  author_name: z.string(),
  message_count: Count,
  fact_count: Count,
  decision_count: Count,
  channels: z.array(z.string()),
});

/** Spec "Top topic": topic, fact_count, channels, trend (`rising` seen; README: `rising`, `falling`, `stable`). */
export const TopTopicSchema = z.strictObject({
  topic: z.string().min(1),
  fact_count: Count,
  channels: z.array(z.string()),
  trend: z.enum(['rising', 'falling', 'stable']),
});

/** Spec "Health (stats)" component: {status (`up` or other), latency_ms}. */
export const HealthComponentSchema = z.strictObject({
  status: z.enum(['up', 'degraded', 'down']),
  latency_ms: NonNegative,
});

/**
 * Spec "Health (stats)" (GET /api/stats/health): status (`healthy`, `degraded`, `unhealthy`), components
 * {vector_store, document_store, graph_store, llm_provider}, checked_at.
 */
export const StatsHealthSchema = z.strictObject({
  status: z.enum(['healthy', 'degraded', 'unhealthy']),
  components: z.strictObject({
    vector_store: HealthComponentSchema,
    document_store: HealthComponentSchema,
    graph_store: HealthComponentSchema,
    llm_provider: HealthComponentSchema,
  }),
  checked_at: Timestamp,
});

/** The spec's dependencies of GET /api/health (event_log and keyword_index: documented additions, README). */
export const HEALTH_DEPENDENCIES = [
  'vector_store',
  'graph_store',
  'document_store',
  'llm_provider',
  'embedding_provider',
  'web_search_provider',
] as const;
const DependencyStatus = z.enum(['healthy', 'failing', 'degraded']);

/**
 * Spec "GET /api/health" (service health): status, dependencies (each `healthy`, `failing` or `degraded`), uptime,
 * degraded_since (present when degraded).
 */
export const ServiceHealthSchema = z
  .strictObject({
    status: z.enum(['healthy', 'degraded', 'unhealthy']),
    dependencies: z.strictObject({
      ...Object.fromEntries(HEALTH_DEPENDENCIES.map((d) => [d, DependencyStatus])),
      event_log: DependencyStatus.optional(), // documented addition
      keyword_index: DependencyStatus.optional(), // documented addition
    }),
    uptime: NonNegative,
    degraded_since: Timestamp.optional(),
  })
  .refine(
    (h) => (h.status === 'healthy') === (h.degraded_since === undefined),
    'degraded_since is present when not healthy',
  );

/** Columns of GET /api/stats/export?format=csv (spec: not shown; README "Stats and metrics"). */
export const STATS_EXPORT_COLUMNS = [
  'channel_id',
  'channel_name',
  'platform',
  'message_count',
  'author_count',
  'fact_count',
  'decision_count',
  'high_importance_facts',
  'avg_fact_quality_score',
  'entity_count',
  'wiki_page_count',
  'earliest_message',
  'latest_message',
] as const;

/** One row of the stats export (README "Stats and metrics"). */
export const StatsExportRowSchema = z.strictObject({
  channel_id: Id,
  channel_name: z.string().min(1),
  platform: Platform,
  message_count: Count,
  author_count: Count,
  fact_count: Count,
  decision_count: Count,
  high_importance_facts: Count,
  avg_fact_quality_score: Unit,
  entity_count: Count,
  wiki_page_count: Count,
  earliest_message: orNull(Timestamp),
  latest_message: orNull(Timestamp),
});

/** GET /api/stats/export?format=json (spec: keys not shown; README "Stats and metrics"). */
export const StatsExportSchema = z.strictObject({
  generated_at: Timestamp,
  channel_id: orNull(Id),
  since: orNull(Timestamp),
  totals: z.strictObject({
    channels: Count,
    messages: Count,
    facts: Count,
    decisions: Count,
    entities: Count,
    wiki_pages: Count,
  }),
  channels: z.array(StatsExportRowSchema),
});
