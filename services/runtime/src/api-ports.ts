import type { AppDeps, HealthCheck } from '@atlas/api';
import { healthOfBreakers, TOPICS } from '@atlas/core';
import { questionEntities } from '@atlas/pipeline';
import { platformClient } from '@atlas/platforms';
import {
  appendChannelCommand,
  appendContradictionResolution,
  backfillEmbeddings,
  nextCronRun,
  redriveAllDeadLetters,
  redriveDeadLetter,
  runReconcilePass,
} from '@atlas/projectors';
import { extractUpload } from '@atlas/providers';
import { askLlmOf, graphExpansion } from '@atlas/query';
import { sql } from 'kysely';
import { refreshChannelAccess } from './access-wiring.js';
import { runtimeFreshness } from './freshness.js';
import { serverImports } from './import-wiring.js';
import { projectorLagRows } from './lag.js';
import {
  backfillRuntimeEntities,
  channelCommandDeps,
  embeddingDeps,
  reconcileDeps,
  redriveDeps,
} from './projector-deps.js';
import type { Runtime } from './runtime.js';

/**
 * The checks of GET /api/health and the alert monitor, by the spec's dependency names (spec "Stats and health",
 * "Health status values"). A dependency behind circuit breakers (the runtime's stores, embedder and web search, the
 * LLM chains' providers) is `failing` while its breaker is OPEN and `degraded` while HALF_OPEN (probing), without a
 * probe; CLOSED, a live probe through the guarded port says `healthy` or fails (`failing`, via probeHealth). Not
 * configured: vector store and embedding provider with EMBEDDING_PROVIDER=none, web search without WEB_SEARCH_URL and
 * the LLM without LLM_BASE_URL report `degraded` (their fallbacks serve: keyword-only search, internal-only results,
 * extractive answers).
 */
export const healthChecks = (rt: Runtime): HealthCheck[] => {
  const byBreakers = (dependency: string) =>
    healthOfBreakers(rt.breakers.ofDependency(dependency).map((b) => b.snapshot()));
  /**
   * OPEN: `failing`, no call sent. Else the probe through the guarded port: CLOSED and it answers, `healthy`; HALF_OPEN,
   * the probe is the breaker's one trial call (so an idle dependency that came back is closed by the health checks,
   * and its queued writes are backfilled): it answers, `healthy`; another call is probing, `degraded`; it fails,
   * `failing` (probeHealth).
   */
  const check =
    (dependency: string, probe: () => Promise<unknown>): HealthCheck['check'] =>
    async () => {
      const state = byBreakers(dependency);
      if (state === 'failing') return 'failing';
      try {
        await probe();
      } catch (err) {
        const rejected = (err as { details?: { state?: string } }).details?.state === 'HALF_OPEN';
        if (state === 'degraded' && rejected) return 'degraded';
        throw err;
      }
      return byBreakers(dependency) === 'degraded' ? 'degraded' : 'healthy';
    };
  const notConfigured = (name: string): HealthCheck => ({ name, check: async () => 'degraded' });
  const embeddings = rt.embeddings;
  return [
    { name: 'document_store', check: check('document_store', () => sql`select 1`.execute(rt.database.db)) },
    {
      name: 'event_log',
      check: check('event_log', () => sql`select count(*) from eventlog_topics`.execute(rt.database.db)),
    },
    {
      name: 'keyword_index',
      check: check('keyword_index', () => rt.keyword.search({ query: '*', channelId: null, limit: 1 })),
    },
    embeddings
      ? { name: 'vector_store', check: check('vector_store', () => embeddings.vectors.count()) }
      : notConfigured('vector_store'), // none: search is keyword-only (spec degraded mode)
    embeddings
      ? {
          name: 'embedding_provider',
          // A provider that has not answered yet is not probed (the local model loads on its first real call).
          check: check('embedding_provider', async () => {
            const e = embeddings.embedder as { isWarm?: boolean };
            if (e.isWarm !== false) await embeddings.embedder.embed(['health check']);
          }),
        }
      : notConfigured('embedding_provider'),
    { name: 'graph_store', check: check('graph_store', () => rt.graph.ping()) },
    {
      // Offline (no provider configured): degraded, the regex fast path and extractive answers serve. Configured:
      // healthy while every provider's breaker is closed, failing when all are open, else degraded.
      name: 'llm_provider',
      check: async () =>
        healthOfBreakers([...(rt.llm.fast?.health() ?? []), ...(rt.llm.quality?.health() ?? [])]) ?? 'degraded',
    },
    rt.webSearch
      ? { name: 'web_search_provider', check: async () => byBreakers('web_search_provider') ?? 'healthy' }
      : notConfigured('web_search_provider'),
  ];
};

/** The query service's ports on a runtime. */
export const apiPorts = (rt: Runtime, startedAt = Date.now()): AppDeps => ({
  documents: rt.documents,
  keyword: rt.keyword,
  graph: rt.graph,
  lifecycle: rt.lifecycle,
  graphExpansion: rt.cfg.SEARCH_GRAPH_EXPANSION ? graphExpansion(rt.graph, questionEntities) : null,
  backfillEntities: () => backfillRuntimeEntities(rt),
  refreshAcl: (req) => refreshChannelAccess(rt, req),
  channelAccess: rt.access, // channel membership: which private channels a caller's identity may see
  health: healthChecks(rt),
  startedAt,
  eventLog: { kind: rt.logKind, lag: () => projectorLagRows(rt) },
  freshness: runtimeFreshness(rt), // issue 27 point 3: ask done, search and wiki page marks
  vectors: rt.embeddings && { embedder: rt.embeddings.embedder, store: rt.embeddings.vectors },
  backfillEmbeddings: rt.embeddings && (() => backfillEmbeddings(embeddingDeps(rt))),
  wiki: rt.wiki,
  wikiJobs: rt.wikiJobs,
  requestWiki: rt.wikiGenerator
    ? async (command) => {
        await rt.eventLog.append(TOPICS.commands, [
          { type: 'WikiRefreshRequested', key: command.channelId, data: command },
        ]);
      }
    : null,
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
    webSearch: rt.webSearch,
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
  imports: serverImports(rt), // POST /api/imports: `atlas import` inside the server (docs/import.md)
  channelCommands: { append: (command) => appendChannelCommand(channelCommandDeps(rt), command) },
  // A posted digest needs a connection listing the channel (docs/digests.md "Posted digests").
  canPostTo: async (channelId) => (await rt.connections.connectionsOfChannel(channelId)).length > 0,
  // The contradiction desk's resolutions (ContradictionResolved on atlas.graph; docs/contradictions.md).
  contradictionCommands: { append: (event) => appendContradictionResolution(channelCommandDeps(rt), event) },
  // Write intents (POST /api/admin/reconcile, /api/admin/write-intents) and dead letters (/api/admin/dead-letters).
  admin: {
    reconcile: { run: () => runReconcilePass(reconcileDeps(rt)), intents: rt.intents },
    deadLetters: {
      store: rt.deadLetters,
      redrive: (id) => redriveDeadLetter(redriveDeps(rt), id),
      redriveAll: (filter) => redriveAllDeadLetters(redriveDeps(rt), filter),
    },
  },
  stats: { store: rt.stats, connections: rt.connections },
  bridgeApiKey: rt.cfg.BRIDGE_API_KEY ?? null, // the bot's key (spec "Authentication" 3; docs/access.md)
  apiKeys: rt.apiKeys,
  auth: {
    keys: rt.apiKeys,
    adminKey: rt.cfg.ATLAS_ADMIN_API_KEY ?? null,
    host: rt.cfg.HOST,
    allowedHosts: listOf(rt.cfg.ALLOWED_HOSTS),
    rateLimit: {
      perAddressPerMinute: rt.cfg.RATE_LIMIT_PER_ADDRESS_PER_MIN,
      perKeyPerMinute: rt.cfg.RATE_LIMIT_PER_KEY_PER_MIN,
    },
    redis: rt.redis,
    publicMetrics: rt.cfg.METRICS_PUBLIC,
    // The audit trail (docs/access.md "Audit trail"): AuditRecorded on atlas.audit, appended without waiting.
    audit: rt.auditSink,
  },
  audit: rt.audit, // GET /api/admin/audit reads the audit projector's store
  cors: { origins: listOf(rt.cfg.CORS_ORIGINS ?? ''), credentials: rt.cfg.CORS_CREDENTIALS },
  mcpToolRateLimitPerMinute: rt.cfg.MCP_TOOL_RATE_LIMIT_PER_MINUTE,
  telemetry: {
    registries: [rt.metrics.registry], // projector events, LLM calls / tokens / cost of this process
    // Every breaker of the runtime (stores, embedder, LLM providers, web search), by the dependency it guards.
    breakers: () => rt.breakers.snapshots().map((b) => ({ name: b.name, dependency: b.dependency, state: b.state })),
    deadLetters: () => rt.stats.deadLetters(),
    deadLetterQueue: async () =>
      Object.entries(await rt.deadLetters.counts()).map(([status, count]) => ({ status, count })),
    // Write intents by state (the reconciler projector's store); no series when write intents are off.
    writeIntents: async () =>
      rt.writeIntents
        ? Object.entries(await rt.intents.countByState()).map(([state, count]) => ({ state, count }))
        : [],
  },
});

/** A comma-separated setting (ALLOWED_HOSTS, CORS_ORIGINS) as its trimmed, non-empty items. */
export const listOf = (v: string): string[] =>
  v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
