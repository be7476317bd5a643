import { type ApiPorts, askLlmOf, graphExpansion, type HealthCheck } from '@atlas/api';
import { TOPICS } from '@atlas/core';
import { questionEntities } from '@atlas/pipeline';
import { platformClient } from '@atlas/platforms';
import {
  appendChannelCommand,
  backfillEmbeddings,
  backfillRuntimeEntities,
  nextCronRun,
  projectorLagRows,
  type Runtime,
} from '@atlas/projectors';
import { extractUpload } from '@atlas/providers';
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
    {
      // Offline (no provider configured): degraded, the regex fast path and extractive answers serve. Configured:
      // healthy while every provider's breaker is closed, failing when all are open, else degraded.
      name: 'llm_provider',
      check: async () => {
        const links = [...(rt.llm.fast?.health() ?? []), ...(rt.llm.quality?.health() ?? [])];
        if (links.length === 0) return 'degraded';
        if (links.every((l) => l.state === 'CLOSED')) return 'healthy';
        return links.every((l) => l.state === 'OPEN') ? 'failing' : 'degraded';
      },
    },
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
  extractAttachment: async (file) => {
    const x = await extractUpload(file);
    return x.kind === 'image'
      ? { kind: 'image', name: x.name, contentType: x.contentType, base64: x.base64 }
      : { kind: 'text', name: x.name, mediaType: x.kind === 'pdf' ? 'pdf' : null, text: x.text };
  },
  ask: {
    store: rt.ask,
    llm: {
      quality: rt.llm.quality && askLlmOf(rt.llm.quality),
      fast: rt.llm.fast && askLlmOf(rt.llm.fast),
    },
    graphRetrieval: graphExpansion(rt.graph, questionEntities),
  },
  connections: {
    store: rt.connections,
    platformClient: (credentials) =>
      platformClient(credentials, {
        slackApiUrl: rt.cfg.PLATFORM_A_API_URL,
        discordApiUrl: rt.cfg.PLATFORM_B_API_URL,
        mock: rt.cfg.ADAPTER_MOCK, // the generated mock platform (no credentials needed)
      }),
  },
  sync: {
    store: rt.sync,
    connections: rt.connections,
    command: async (event) => {
      await rt.eventLog.append(TOPICS.commands, [event]);
    },
    maxMessages: rt.cfg.SYNC_MAX_MESSAGES,
  },
  schedules: {
    store: rt.syncSchedules,
    sync: rt.sync,
    connections: rt.connections,
    command: async (event) => {
      await rt.eventLog.append(TOPICS.commands, [event]);
    },
  },
  channelCommands: { append: (command) => appendChannelCommand(rt, command) },
});
