import type { FreshnessPort } from '@atlas/core';
import cors from '@fastify/cors';
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { type AuthOptions, registerAuth } from './auth/auth.js';
import { registerVisibility, type VisibilityPorts } from './auth/visibility.js';
import { frameworkErrorHandler, registerErrorHandling } from './errors.js';
import { httpServerOptions, registerRequestIdTracking } from './http-server.js';
import { registerInputGuard } from './input-guard.js';
import { registerOpenApi } from './openapi.js';
import { type AclRoutesOptions, aclRoutes } from './routes/acl.js';
import { type AdminRoutesOptions, adminRoutes } from './routes/admin.js';
import { type AskRoutesOptions, askRoutes } from './routes/ask.js';
import { type AuditRoutesOptions, auditRoutes } from './routes/audit.js';
import { type ChannelDataRoutesOptions, channelDataRoutes } from './routes/channel-data.js';
import { type ChannelRoutesOptions, channelRoutes } from './routes/channels.js';
import { type ConnectionPorts, connectionRoutes } from './routes/connections.js';
import { type ContradictionRoutesOptions, contradictionRoutes } from './routes/contradictions.js';
import { type DecisionRoutesOptions, decisionRoutes } from './routes/decisions.js';
import { type DigestRoutesOptions, digestRoutes } from './routes/digests.js';
import { type GraphRoutesOptions, graphRoutes } from './routes/graph.js';
import { type HealthRoutesOptions, healthRoutes } from './routes/health.js';
import { type HomeRoutesOptions, homeRoutes } from './routes/home.js';
import { type ImportRoutesOptions, importRoutes } from './routes/imports.js';
import { type KeyRoutesOptions, keyRoutes } from './routes/keys.js';
import { mcpRoutes } from './routes/mcp.js';
import { meRoutes } from './routes/me.js';
import { type MemoryRoutesOptions, memoryRoutes } from './routes/memories.js';
import { type MemorySearchRoutesOptions, memorySearchRoutes } from './routes/memory-search.js';
import { type SearchRoutesOptions, searchRoutes } from './routes/search.js';
import { type StatsRoutesOptions, statsRoutes } from './routes/stats.js';
import { type SyncPorts, syncRoutes } from './routes/sync.js';
import { type SchedulePorts, syncScheduleRoutes } from './routes/sync-schedules.js';
import { type WebRoutesOptions, webRoutes, webUiAvailable } from './routes/web.js';
import { type WikiRoutesOptions, wikiRoutes } from './routes/wiki.js';
import { wikiHistoryRoutes } from './routes/wiki-history.js';
import { type WikiHtmlRoutesOptions, wikiHtmlRoutes } from './routes/wiki-html.js';
import { registerTelemetry, requestIdOptions, type TelemetrySources } from './telemetry.js';

/**
 * What buildApp needs: the union of its route plugins' options (each plugin is registered with only its own slice),
 * plus the edge's: the sources of Prometheus /metrics besides the request histogram and the lag (TelemetrySources),
 * identity and access (`auth`: the key store, ATLAS_ADMIN_API_KEY, HOST, ALLOWED_HOSTS, rate limits, the audit sink;
 * absent: no stored keys on a loopback HOST, the open local default), BRIDGE_API_KEY (`bridgeApiKey`) and CORS_ORIGINS
 * (`cors`; absent or empty: no CORS headers). Optional members name parts a deployment may leave out; their routes are
 * then not registered.
 */
export type AppDeps = HomeRoutesOptions &
  WebRoutesOptions &
  WikiHtmlRoutesOptions &
  HealthRoutesOptions &
  ChannelRoutesOptions &
  ChannelDataRoutesOptions &
  ContradictionRoutesOptions &
  MemoryRoutesOptions &
  MemorySearchRoutesOptions &
  SearchRoutesOptions &
  GraphRoutesOptions &
  DecisionRoutesOptions &
  AdminRoutesOptions &
  AclRoutesOptions &
  WikiRoutesOptions &
  AskRoutesOptions &
  KeyRoutesOptions &
  ImportRoutesOptions &
  AuditRoutesOptions &
  Pick<DigestRoutesOptions, 'lifecycle'> &
  Omit<StatsRoutesOptions, 'requests'> & {
    /** Connections (spec "Connections"): the store and the platform client. Absent: not registered. */
    connections?: ConnectionPorts;
    /** Sync jobs (spec "Sync"): the job store, commands, connections. Absent: not registered. */
    sync?: SyncPorts;
    /** Sync schedules (spec "Sync schedule"): the store, last syncs, connections, commands. Absent: not registered. */
    schedules?: SchedulePorts;
    telemetry?: TelemetrySources;
    bridgeApiKey?: string | null;
    auth?: Omit<AuthOptions, 'bridgeKey'>;
    /** Channel membership (the channel-access read model); absent: no private channel is hidden by membership. */
    channelAccess?: VisibilityPorts['access'];
    /** Calls of one MCP tool per caller per minute (MCP_TOOL_RATE_LIMIT_PER_MINUTE; routes/mcp.ts). */
    mcpToolRateLimitPerMinute?: number;
    /** Freshness marks of ask, search and wiki pages (issue 27 point 3; docs/ask.md "Freshness"); absent: none. */
    freshness?: FreshnessPort | null;
    /** CORS_ORIGINS (exact origins; `*` only without credentials, startPosture refuses it with them). */
    cors?: { origins: readonly string[]; credentials: boolean };
  };

/**
 * Builds the Fastify query service on the given deps (AppDeps); `listen()` is the caller's (tests use
 * `app.inject`). `opts` override the defaults: no logger, the HTTP timeouts of httpServerOptions (HTTP_* defaults;
 * `atlas start` passes the configured ones), Fastify's per-request log lines off (registerTelemetry logs one per
 * request at debug).
 * Registered at the edge, before every route (docs/http.md): the error handler (every 4xx/5xx as the shared error
 * body; unknown routes 404/405), the NUL guard on params, query and body, CORS, identity and access (auth/auth.ts:
 * Host allow-list, rate limits, API keys and the bridge key, roles), telemetry with request ids. Then `GET /` (home), the HTML wiki under `/wiki`, and the `/api` routes. Credentials are redacted by
 * the logger itself.
 */
export const buildApp = async (deps: AppDeps, opts: FastifyServerOptions = {}): Promise<FastifyInstance> => {
  const app = Fastify({
    logger: false,
    bodyLimit: 12 * 1024 * 1024,
    logController: new LogController({ disableRequestLogging: true }),
    frameworkErrors: frameworkErrorHandler, // bad URLs and over-long path parameters: the shared error body
    ...httpServerOptions(),
    ...requestIdOptions, // x-request-id in, or a UUID; logged as reqId and echoed (telemetry.ts)
    ...opts,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app);
  registerRequestIdTracking(app);
  registerInputGuard(app);
  if (deps.cors && deps.cors.origins.length > 0)
    await app.register(cors, {
      origin: deps.cors.origins.includes('*') ? '*' : [...deps.cors.origins],
      credentials: deps.cors.credentials,
      exposedHeaders: ['retry-after', 'x-request-id', 'www-authenticate'],
    });
  registerAuth(app, { keys: null, ...deps.auth, bridgeKey: deps.bridgeApiKey ?? null });
  registerVisibility(app, {
    access: deps.channelAccess ?? null,
    connections: deps.connections?.store ?? null,
    documents: deps.documents,
  });
  const requests = registerTelemetry(app, { eventLog: deps.eventLog, sources: deps.telemetry });
  await registerOpenApi(app); // before the routes: it collects them as they register
  const { documents, keyword, vectors, graph, wiki, connections } = deps;
  const freshness = deps.freshness ?? null; // issue 27 point 3: ask, search and wiki page marks
  // The web UI at `/` when its build is there (routes/web.ts), else the home page.
  // With the UI, `/wiki/{channel_id}` (the bot's wiki link) is the UI's too: it opens the channel's wiki screen.
  if (webUiAvailable(deps.webRoot)) await app.register(webRoutes, { webRoot: deps.webRoot });
  else {
    await app.register(homeRoutes, { documents, wiki });
    await app.register(wikiHtmlRoutes, { documents, wiki });
  }
  await app.register(meRoutes);
  await app.register(healthRoutes, { health: deps.health, startedAt: deps.startedAt });
  await app.register(channelRoutes, { documents, wiki, connections });
  await app.register(channelDataRoutes, {
    documents,
    graph,
    wiki,
    channelCommands: deps.channelCommands,
    ...(deps.canPostTo ? { canPostTo: deps.canPostTo } : {}),
  });
  await app.register(memoryRoutes, { documents, wiki });
  await app.register(contradictionRoutes, { documents, contradictionCommands: deps.contradictionCommands });
  await app.register(digestRoutes, { documents, lifecycle: deps.lifecycle });
  await app.register(memorySearchRoutes, {
    documents,
    keyword,
    vectors,
    graphExpansion: deps.graphExpansion,
    wiki,
    freshness,
  });
  await app.register(searchRoutes, { documents, keyword, vectors, graphExpansion: deps.graphExpansion, freshness });
  await app.register(graphRoutes, { graph, documents, wiki, lifecycle: deps.lifecycle });
  await app.register(decisionRoutes, { documents, lifecycle: deps.lifecycle });
  await app.register(adminRoutes, {
    backfillEntities: deps.backfillEntities,
    backfillEmbeddings: deps.backfillEmbeddings,
    admin: deps.admin,
  });
  await app.register(aclRoutes, { refreshAcl: deps.refreshAcl });
  await app.register(wikiRoutes, {
    wiki,
    documents,
    graph,
    wikiJobs: deps.wikiJobs,
    requestWiki: deps.requestWiki,
    ...(deps.settleMs === undefined ? {} : { settleMs: deps.settleMs }),
    nextWikiRebuild: deps.nextWikiRebuild,
    freshness,
  });
  await app.register(wikiHistoryRoutes, { wiki, documents }); // issue 27 point 2: page diff between versions or dates
  await app.register(askRoutes, {
    documents,
    keyword,
    vectors,
    wiki,
    ask: deps.ask,
    extractAttachment: deps.extractAttachment,
    freshness,
  });
  await app.register(connectionRoutes, { connections });
  await app.register(keyRoutes, { apiKeys: deps.apiKeys });
  await app.register(importRoutes, { imports: deps.imports });
  await app.register(auditRoutes, { audit: deps.audit });
  await app.register(mcpRoutes, {
    inject: app.inject.bind(app),
    toolRateLimitPerMinute: deps.mcpToolRateLimitPerMinute,
  });
  await app.register(syncRoutes, { documents, sync: deps.sync });
  await app.register(syncScheduleRoutes, { documents, schedules: deps.schedules });
  await app.register(statsRoutes, {
    documents,
    graph,
    wiki,
    vectors,
    eventLog: deps.eventLog,
    stats: deps.stats,
    requests,
  });
  return app;
};
