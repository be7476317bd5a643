import { type ApiPorts, graphExpansion, type HealthCheck } from '@atlas/api';
import { questionEntities } from '@atlas/pipeline';
import {
  backfillEmbeddings,
  backfillRuntimeEntities,
  nextCronRun,
  projectorLagRows,
  type Runtime,
} from '@atlas/projectors';
import { sql } from 'kysely';

export {
  openRuntime,
  PROJECTOR_NAMES,
  PROJECTORS,
  pgliteDir,
  projectorLag,
  projectorLagRows,
  type ReplayResult,
  type Runtime,
  replayProjector,
  startProjector,
  startProjectors,
  waitForProjectors,
} from '@atlas/projectors';

/** The health probes of GET /api/health; dependencies this build does not have yet report `degraded`. */
export const healthChecks = (rt: Runtime): HealthCheck[] => {
  const ping = (q: () => Promise<unknown>) => async () => {
    await q();
    return 'healthy' as const;
  };
  const notYet = (name: string): HealthCheck => ({ name, check: async () => 'degraded' });
  return [
    { name: 'document_store', check: ping(() => sql`select 1`.execute(rt.database.db)) },
    { name: 'event_log', check: ping(() => sql`select count(*) from eventlog_topics`.execute(rt.database.db)) },
    { name: 'keyword_index', check: ping(() => rt.keyword.search({ query: '*', channelId: null, limit: 1 })) },
    rt.embeddings
      ? { name: 'vector_store', check: ping(() => rt.embeddings!.vectors.count()) }
      : notYet('vector_store'), // none: search is keyword-only (spec degraded mode)
    rt.embeddings
      ? { name: 'embedding_provider', check: ping(() => rt.embeddings!.embedder.embed(['health check'])) }
      : notYet('embedding_provider'),
    { name: 'graph_store', check: ping(() => rt.graph.ping()) },
    notYet('llm_provider'), // no provider configured: the offline regex fast path extracts facts
    notYet('web_search_provider'),
  ];
};

/** The query service's ports on a runtime. */
export const apiPorts = (rt: Runtime, startedAt = Date.now()): ApiPorts => ({
  documents: rt.documents,
  keyword: rt.keyword,
  graph: rt.graph,
  graphExpansion: rt.cfg.SEARCH_GRAPH_EXPANSION ? graphExpansion(rt.graph, questionEntities) : null,
  backfillEntities: () => backfillRuntimeEntities(rt),
  health: healthChecks(rt),
  startedAt,
  eventLog: { kind: rt.logKind, lag: () => projectorLagRows(rt) },
  vectors: rt.embeddings && { embedder: rt.embeddings.embedder, store: rt.embeddings.vectors },
  backfillEmbeddings: rt.embeddings && (() => backfillEmbeddings(rt.embeddings!)),
  wiki: rt.wiki,
  generateWiki: rt.wikiGenerator && ((channelId, mode) => rt.wikiGenerator!.generate(channelId, mode)),
  nextWikiRebuild: () => nextCronRun(rt.cfg.WIKI_REBUILD_CRON),
});
