import type { FastifyPluginAsync } from 'fastify';
import type { ApiPorts } from '../ports.js';
import type { Telemetry } from '../telemetry.js';

/**
 * GET /api/stats/metrics (spec "Statistics and health objects": Metrics), plus `event_log`: the
 * consumer-group lag per topic and partition (the same figures as `atlas lag` and Prometheus /metrics).
 * Figures of parts not built yet are zero: no sync job, wiki, graph or LLM call exists.
 */
export const statsRoutes: FastifyPluginAsync<ApiPorts & { telemetry: Telemetry }> = async (app, ports) => {
  app.get('/api/stats/metrics', async () => {
    const [counts, quality, lag, vectors] = await Promise.all([
      ports.documents.counts(),
      ports.documents.qualityStats(),
      ports.eventLog.lag(),
      ports.vectors ? ports.vectors.store.count() : 0,
    ]);
    return {
      performance: {
        avg_query_latency_ms: ports.telemetry.avgQueryLatencyMs(),
        avg_sync_duration_seconds: 0,
        avg_wiki_generation_seconds: 0,
      },
      storage: {
        vector_store_objects: vectors,
        document_store_documents: counts.messages + counts.facts,
        graph_store_nodes: 0,
        graph_store_relationships: 0,
      },
      usage: { total_llm_calls: 0, total_llm_tokens: 0, estimated_cost_usd: 0 },
      quality: {
        avg_fact_quality_score: Math.round(quality.avgQualityScore * 1000) / 1000,
        high_importance_facts: quality.highImportanceFacts,
        decision_count: quality.decisionCount,
      },
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
    };
  });
};
