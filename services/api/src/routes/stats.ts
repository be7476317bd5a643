import { notFound } from '@atlas/core';
import type { LagRow } from '@atlas/eventlog';
import type { ConnectionStore, DocumentStore, GraphStore, StatsStore, VectorStore, WikiStore } from '@atlas/stores';
import type { WikiPage, WikiStructure } from '@atlas/wiki';
import { stringify } from 'csv-stringify/sync';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Telemetry } from '../telemetry.js';
import { channelCheck, unknownChannel } from './known-channel.js';

/**
 * What the stats routes read besides the common ports: the stats projector's store (services/projectors/src/stats.ts,
 * packages/stores/src/stats) and, for the connection entries of the activity feed, the connections store.
 */
export interface StatsPorts {
  store: StatsStore;
  connections?: Pick<ConnectionStore, 'list'> | undefined;
}

/** What the stats routes read; `requests` is the app's request telemetry (registerTelemetry). */
export interface StatsRoutesOptions {
  documents: DocumentStore;
  graph: Pick<GraphStore, 'counts'>;
  wiki: Pick<WikiStore<WikiPage, WikiStructure>, 'pageCount'>;
  /** The vector store (its fact count), or null when search is keyword-only. */
  vectors: { store: Pick<VectorStore, 'count'> } | null;
  /** The event log this deployment runs on, and the lag of every projector's consumer group. */
  eventLog: { kind: 'embedded' | 'kafka'; lag(): Promise<LagRow[]> };
  /**
   * The stats projector's store and the connections (every /api/stats route but health). Absent: those routes answer
   * 404 and GET /api/stats/metrics reports no LLM usage, sync or wiki times.
   */
  stats?: StatsPorts;
  requests: Telemetry;
}

const ChannelParams = z.object({ channel_id: z.string().min(1) });
const Iso = z
  .string()
  .min(1)
  .refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 timestamp')
  .transform((v) => new Date(v).toISOString());
const TopQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(10), // spec Limits: top authors, top topics default 10
  channel_id: z.string().min(1).optional(),
});
const ActivityQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) }); // spec: default 20
const ExportQuery = z.object({
  format: z.enum(['csv', 'json']).default('json'),
  channel_id: z.string().min(1).optional(),
  since: Iso.optional(),
});

/** Columns of the CSV export, in order (the JSON export's `channels` rows have the same keys). */
export const EXPORT_COLUMNS = [
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

/** How many authors the by-path channel stats list (top_authors). */
const CHANNEL_TOP_AUTHORS = 5;

type ActivityEntry = { type: string; timestamp: string } & Record<string, unknown>;

/** A metric's quality band (spec "Metric quality bands"). */
export type Band = 'excellent' | 'good' | 'fair' | 'poor';

/**
 * The spec's metric quality bands, pure: query latency (ms) below 50 excellent, 50-100 good, 100-200 fair, above 200
 * poor; fact quality score above 0.8 excellent, 0.6-0.8 good, 0.4-0.6 fair, below 0.4 poor; sync duration (s) below
 * 60 excellent, 60-120 good, 120-300 fair, above 300 poor. A boundary value takes the better band (50 ms is good,
 * 0.8 is good, 60 s is good). null when there is nothing to rate (no request, fact or completed sync yet).
 */
export const metricBands = (m: {
  avgQueryLatencyMs: number | null;
  avgFactQuality: number | null;
  avgSyncSeconds: number | null;
}): { query_latency: Band | null; fact_quality: Band | null; sync_duration: Band | null } => {
  const lowerIsBetter = (v: number | null, [a, b, c]: [number, number, number]): Band | null =>
    v === null ? null : v < a ? 'excellent' : v <= b ? 'good' : v <= c ? 'fair' : 'poor';
  const q = m.avgFactQuality;
  return {
    query_latency: lowerIsBetter(m.avgQueryLatencyMs, [50, 100, 200]),
    fact_quality: q === null ? null : q > 0.8 ? 'excellent' : q >= 0.6 ? 'good' : q >= 0.4 ? 'fair' : 'poor',
    sync_duration: lowerIsBetter(m.avgSyncSeconds, [60, 120, 300]),
  };
};

/**
 * The stats routes (spec "Stats and health", "Statistics and health objects", "Activity feed"). Figures come from
 * the stats projector's store (messages, authors, facts, decisions, entities, sync jobs, dead letters, LLM usage),
 * the wiki store (pages, versions, generation times) and the connections store; none generates anything.
 *
 * - `GET /api/stats`: system stats {total_facts, total_entities, total_channels, total_decisions, wiki_pages,
 *   total_messages, total_authors} (ints). Messages are live (not deleted) messages; authors are distinct author ids;
 *   decisions are facts of type `decision`; entities are distinct graph entities (per channel, as the graph keeps them);
 *   wiki_pages the pages of every channel's current wiki.
 * - `GET /api/stats/channel/{channel_id}`: channel stats (by id) {channel_id, message_count, fact_count, entity_count,
 *   decision_count, author_count, wiki_page_count, date_range {earliest, latest} (ISO 8601 message times, null when
 *   none), activity {messages_last_7d, messages_last_30d (by message time), facts_added_last_7d,
 *   facts_added_last_30d (by extraction time)}}. Unknown channel: 404 NOT_FOUND.
 * - `GET /api/channels/{channel_id}/stats`: channel stats (by path) {message_count, fact_count, entity_count,
 *   decision_count, author_count, date_range, top_authors [{name, message_count}] (the 5 authors with most messages)}.
 * - `GET /api/stats/activity?limit=20` (1-100): `{activities}` newest first. `fact_extracted` and `entity_created` are
 *   one entry per channel and UTC hour of extraction (channel_id, message_count, fact_count / entity_count);
 *   `sync_completed` one per completed sync job (channel_id, message_count = messages synced, job_id, fact_count,
 *   entity_count); `wiki_generated` one per wiki version (channel_id, page_count, version_number);
 *   `connection_established` one per connection at its creation (connection_id, platform) and `connection_failed` one
 *   per connection whose status is `error`, at its last update (connection_id, platform).
 * - `GET /api/stats/metrics`: see the handler.
 * - `GET /api/stats/top-authors?limit=10&channel_id=`: [{author_id, author_name, message_count, fact_count,
 *   decision_count, channels (channel names)}], most messages first. Unknown channel_id: 404.
 * - `GET /api/stats/top-topics?limit=10&channel_id=`: [{topic, fact_count, channels (names), trend}], most facts
 *   first. trend (StatsStore topicTrend): the facts of the 7 days ending at the scope's newest fact (by message time)
 *   against the 7 days before: `rising` when recent ≥ 1.5 × previous and at least 2 more, `falling` the reverse,
 *   else `stable`.
 * - `GET /api/stats/export?format=json|csv&channel_id=&since=`: a file download (Content-Disposition attachment,
 *   `atlas-stats-<channel id | all>[-since-<YYYYMMDD>]-<YYYYMMDDTHHMMSSZ>.<csv|json>`). One row per channel
 *   (EXPORT_COLUMNS); with `since` (ISO 8601) messages and facts count from that message time on. JSON:
 *   {generated_at, channel_id, since, totals {channels, messages, facts, decisions, entities, wiki_pages}, channels}.
 *   Invalid format or since: 400 INVALID_REQUEST; unknown channel_id: 404.
 */
export const statsRoutes: FastifyPluginAsync<StatsRoutesOptions> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const store = ports.stats?.store;

  const requireStore = (): StatsStore => {
    if (!store) throw notFound('route', 'stats (no stats store configured)');
    return store;
  };
  const known = channelCheck(ports);
  /** The channel's stats row; an unknown channel (docs/conventions.md) or one the stats store has not seen: 404. */
  const requireChannel = async (channelId: string) => {
    await known(channelId);
    const row = await requireStore().channel(channelId);
    if (!row) throw unknownChannel(channelId);
    return row;
  };

  /** A restricted caller's visible channels (visibility.ts): every figure below counts only these; null: all. */
  const visibleOf = (r: FastifyRequest) => r.visibleChannels ?? undefined;
  /** Wiki pages of the visible channels (every channel for an unrestricted caller). */
  const pagesIn = (pages: Map<string, number>, visible: readonly string[] | undefined) =>
    visible ? visible.reduce((n, c) => n + (pages.get(c) ?? 0), 0) : [...pages.values()].reduce((a, b) => a + b, 0);

  app.get('/api/stats', async (request) => {
    const s = requireStore();
    const visible = visibleOf(request);
    const [system, pages] = await Promise.all([s.system(visible), s.wikiPageCounts()]);
    return {
      total_facts: system.total_facts,
      total_entities: system.total_entities,
      total_channels: system.total_channels,
      total_decisions: system.total_decisions,
      wiki_pages: pagesIn(pages, visible),
      total_messages: system.total_messages,
      total_authors: system.total_authors,
    };
  });

  app.get('/api/stats/channel/:channel_id', { schema: { params: ChannelParams } }, async ({ params }) => {
    const c = await requireChannel(params.channel_id);
    return {
      channel_id: c.channel_id,
      message_count: c.message_count,
      fact_count: c.fact_count,
      entity_count: c.entity_count,
      decision_count: c.decision_count,
      author_count: c.author_count,
      wiki_page_count: await ports.wiki.pageCount(c.channel_id),
      date_range: c.date_range,
      activity: c.activity,
    };
  });

  app.get('/api/channels/:channel_id/stats', { schema: { params: ChannelParams } }, async ({ params }) => {
    const c = await requireChannel(params.channel_id);
    const top = await requireStore().topAuthors({ channelId: c.channel_id, limit: CHANNEL_TOP_AUTHORS });
    return {
      message_count: c.message_count,
      fact_count: c.fact_count,
      entity_count: c.entity_count,
      decision_count: c.decision_count,
      author_count: c.author_count,
      date_range: c.date_range,
      top_authors: top.map((a) => ({ name: a.author_name, message_count: a.message_count })),
    };
  });

  app.get('/api/stats/activity', { schema: { querystring: ActivityQuery } }, async (request) => {
    const { query } = request;
    const s = requireStore();
    const visible = visibleOf(request);
    const [own, wiki, connections] = await Promise.all([
      s.activity(query.limit, visible),
      s.wikiVersions(query.limit, visible),
      // Connections are the admins' business: a restricted caller's feed holds its channels' entries only.
      visible ? Promise.resolve([]) : (ports.stats?.connections?.list() ?? Promise.resolve([])),
    ]);
    const entries: ActivityEntry[] = own.map((a) => ({ ...a }));
    for (const v of wiki)
      entries.push({
        type: 'wiki_generated',
        timestamp: v.generated_at,
        channel_id: v.channel_id,
        page_count: v.page_count,
        version_number: v.version_number,
      });
    for (const c of connections) {
      entries.push({
        type: 'connection_established',
        timestamp: c.created_at,
        connection_id: c.id,
        platform: c.platform,
      });
      if (c.status === 'error')
        entries.push({ type: 'connection_failed', timestamp: c.updated_at, connection_id: c.id, platform: c.platform });
    }
    entries.sort((a, b) => b.timestamp.localeCompare(a.timestamp) || a.type.localeCompare(b.type));
    return { activities: entries.slice(0, query.limit) };
  });

  /**
   * GET /api/stats/metrics (spec "Metrics"): performance {avg_query_latency_ms (mean of this process's /api requests),
   * avg_sync_duration_seconds (completed sync jobs), avg_wiki_generation_seconds (mean of each channel's last
   * generation)}; storage {vector_store_objects, document_store_documents (messages + facts), graph_store_nodes,
   * graph_store_relationships}; usage {total_llm_calls, total_llm_tokens, estimated_cost_usd} from the LLM usage
   * ledger (every process's calls through the fallback chains); quality {avg_fact_quality_score,
   * high_importance_facts, decision_count}; plus `bands` (metricBands: the spec's quality band of query latency, fact
   * quality and sync duration, null with nothing to rate), `event_log`: the consumer-group lag per topic and partition
   * (the same figures as `atlas lag` and Prometheus /metrics) and `dead_letters` (depth per group and topic).
   */
  app.get('/api/stats/metrics', async () => {
    const [counts, quality, lag, vectors, graph, usage, syncSeconds, wikiSeconds, deadLetters] = await Promise.all([
      ports.documents.counts(),
      ports.documents.qualityStats(),
      ports.eventLog.lag(),
      ports.vectors ? ports.vectors.store.count() : 0,
      ports.graph.counts(),
      store ? store.llmUsage() : null,
      store ? store.avgSyncDurationSeconds() : 0,
      store ? store.avgWikiGenerationSeconds() : 0,
      store ? store.deadLetters() : [],
    ]);
    return {
      performance: {
        avg_query_latency_ms: ports.requests.avgQueryLatencyMs(),
        avg_sync_duration_seconds: syncSeconds,
        avg_wiki_generation_seconds: wikiSeconds,
      },
      storage: {
        vector_store_objects: vectors,
        document_store_documents: counts.messages + counts.facts,
        graph_store_nodes: graph.nodes,
        graph_store_relationships: graph.relationships,
      },
      usage: {
        total_llm_calls: usage?.total_llm_calls ?? 0,
        total_llm_tokens: usage?.total_llm_tokens ?? 0,
        estimated_cost_usd: usage?.estimated_cost_usd ?? 0,
      },
      quality: {
        avg_fact_quality_score: Math.round(quality.avgQualityScore * 1000) / 1000,
        high_importance_facts: quality.highImportanceFacts,
        decision_count: quality.decisionCount,
      },
      bands: metricBands({
        avgQueryLatencyMs: ports.requests.requestCount() > 0 ? ports.requests.avgQueryLatencyMs() : null,
        avgFactQuality: counts.facts > 0 ? quality.avgQualityScore : null,
        avgSyncSeconds: syncSeconds > 0 ? syncSeconds : null,
      }),
      event_log: {
        kind: ports.eventLog.kind,
        total_lag: lag.reduce((s, r) => s + r.lag, 0),
        consumer_groups: lag.map((r) => ({
          group: r.group,
          topic: r.topic,
          partition: r.partition,
          committed_offset: r.committedOffset,
          end_offset: r.endOffset,
          lag: r.lag,
        })),
      },
      dead_letters: deadLetters,
    };
  });

  app.get('/api/stats/top-authors', { schema: { querystring: TopQuery } }, async (request) => {
    const { query } = request;
    if (query.channel_id) await requireChannel(query.channel_id);
    return requireStore().topAuthors({ channelId: query.channel_id, channels: visibleOf(request), limit: query.limit });
  });

  app.get('/api/stats/top-topics', { schema: { querystring: TopQuery } }, async (request) => {
    const { query } = request;
    if (query.channel_id) await requireChannel(query.channel_id);
    const rows = await requireStore().topTopics({
      channelId: query.channel_id,
      channels: visibleOf(request),
      limit: query.limit,
    });
    return rows.map((r) => ({ topic: r.topic, fact_count: r.fact_count, channels: r.channels, trend: r.trend }));
  });

  app.get('/api/stats/export', { schema: { querystring: ExportQuery } }, async (request, reply) => {
    const { query } = request;
    if (query.channel_id) await requireChannel(query.channel_id);
    const rows = await requireStore().exportRows({
      channelId: query.channel_id,
      channels: visibleOf(request),
      since: query.since,
    });
    const pages = await requireStore().wikiPageCounts();
    const channels = rows.map((r) => ({ ...r, wiki_page_count: pages.get(r.channel_id) ?? 0 }));
    const now = new Date();
    const stamp = now
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z');
    const scope = (query.channel_id ?? 'all').replace(/[^A-Za-z0-9_-]/g, '_');
    const since = query.since ? `-since-${query.since.slice(0, 10).replaceAll('-', '')}` : '';
    const filename = `atlas-stats-${scope}${since}-${stamp}.${query.format}`;
    reply.header('content-disposition', `attachment; filename="${filename}"`);
    if (query.format === 'csv') {
      reply.type('text/csv; charset=utf-8');
      return stringify(channels, { header: true, columns: [...EXPORT_COLUMNS], cast: { number: (v) => String(v) } });
    }
    reply.type('application/json; charset=utf-8');
    const sum = (k: 'message_count' | 'fact_count' | 'decision_count' | 'entity_count' | 'wiki_page_count') =>
      channels.reduce((s, r) => s + r[k], 0);
    return JSON.stringify(
      {
        generated_at: now.toISOString(),
        channel_id: query.channel_id ?? null,
        since: query.since ?? null,
        totals: {
          channels: channels.length,
          messages: sum('message_count'),
          facts: sum('fact_count'),
          decisions: sum('decision_count'),
          entities: sum('entity_count'),
          wiki_pages: sum('wiki_page_count'),
        },
        channels,
      },
      null,
      2,
    );
  });
};
