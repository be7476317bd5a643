import path from 'node:path';
import { apiLoggerOptions, buildApp, HealthMonitor, httpServerOptions, httpTimeoutsOf, startPosture } from '@atlas/api';
import type { Config } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import {
  type SyncScheduler,
  type SyncWorker,
  serveMetrics,
  startLlmRecovery,
  startReconcileScheduler,
  startRetentionScheduler,
  startSyncScheduler,
  startWikiScheduler,
} from '@atlas/projectors';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { startRuntimeAclRefresher } from './access-wiring.js';
import { apiPorts, healthChecks, listOf } from './api-ports.js';
import { botConfigured, startBotService } from './bot.js';
import { digestPostDepsOf, startDigestScheduler } from './digest-posts.js';
import { projectorLag } from './lag.js';
import { openRuntime } from './open.js';
import { llmRecoveryDeps, reconcileDeps, retentionDeps } from './projector-deps.js';
import { startProjector, startProjectors } from './run-projectors.js';
import type { Runtime } from './runtime.js';
import { startRuntimeSyncWorker, syncDepsOf, syncSchedulerDepsOf } from './sync-wiring.js';
import { startRuntimeWikiWorker } from './wiki-wiring.js';

/**
 * The query service (services/api) on a runtime: `buildApp` over the runtime's ports (`apiPorts`, /api/health's
 * uptime counted from `startedAt`, ms since the epoch, default now). `fastify` are Fastify's options (logger, HTTP
 * timeouts, serverFactory; none by default). `listen()` is the caller's.
 */
export const buildRuntimeApp = (
  rt: Runtime,
  opts: { startedAt?: number; fastify?: FastifyServerOptions } = {},
): Promise<FastifyInstance> =>
  buildApp({ ...apiPorts(rt, opts.startedAt), webRoot: webRootOf(rt.cfg.WEB_UI_DIR) }, opts.fastify);

/** The web UI's build in this repository (web/dist, written by `npm run build:web` and `npm ci`). */
export const DEFAULT_WEB_ROOT: string = path.resolve(import.meta.dirname, '../../../web/dist');

/** WEB_UI_DIR as a folder: unset, the repository's build (DEFAULT_WEB_ROOT); `off`, none. */
export const webRootOf = (setting: string | undefined): string | null =>
  setting === 'off' ? null : path.resolve(setting ?? DEFAULT_WEB_ROOT);

/**
 * The HTTP port a process opened before loading the runtime (`atlas start`: services/cli listenWhileStarting), which
 * the API takes over once it is built.
 */
export interface EarlyPort {
  /** What the process is doing now (a RuntimeStep, then 'starting the API'): shown until `serve()`. */
  step(step: string): void;
  /** A Fastify serverFactory handing Fastify the listening server. */
  readonly serverFactory: NonNullable<FastifyServerOptions['serverFactory']>;
  /** From now on every request goes to Fastify (after `await app.ready()`). */
  serve(): void;
  /** Stops listening. */
  close(): Promise<void>;
}

/** The services one process runs (startServices), and how to stop them. */
export interface RunningServices {
  rt: Runtime;
  /** The API (when started with a port), else null. */
  app: FastifyInstance | null;
  /** The API's access posture (startPosture: `open` to local callers, or `keys` required) and its one-line account; null without the API. */
  posture: { mode: 'open' | 'keys'; message: string } | null;
  /**
   * Stops the schedulers, the health monitor, the bot, the API, the early port, the metrics server, the sync worker
   * and the projectors, in that order, then closes the runtime. Call it once.
   */
  stop(): Promise<void>;
}

/**
 * Opens the runtime and starts `service` on it (`atlas start` = `all`, `atlas run <service>`): `all`, `api`, one
 * projector by name, `sync-worker` (the sync worker with the sync-jobs and sync-schedules projectors and the sync
 * scheduler) or `scheduler` (the sync scheduler with the sync-schedules projector). The bot alone is not started here
 * (`@atlas/runtime/bot`, no database).
 *
 * Order (docs/cli.md "What start does first"): the database opens and migrates (each RuntimeStep shown through
 * `port.step`), the API is built and takes `port` over (only when a port is given: the cli passes it for `all` and
 * `api`), and only then do the projectors, the sync worker and the schedulers start. Projection shares the event loop
 * with the API in time slices (PROJECTION_SLICE_MS): the projectors, the sync worker, the schedulers, the statistics
 * refresh and the vector warm-up run as the time slicer's background work. With `all`, the bot starts beside the API
 * when a platform's secret is configured (botConfigured). A process without the API serves its own Prometheus
 * /metrics when METRICS_PORT is set; the API process runs the health monitor (alerts).
 *
 * Errors: AtlasError INVALID_REQUEST for a projector name not in PROJECTOR_NAMES, and whatever opening the runtime,
 * the API or a part throws; the port and the runtime are closed first.
 */
export const startServices = async (
  cfg: Config,
  service: string,
  opts: { startedAt: number; port?: EarlyPort | undefined; onStep?: (step: string) => void },
): Promise<RunningServices> => {
  const { startedAt, port } = opts;
  const step = (s: string) => {
    port?.step(s);
    opts.onStep?.(s);
  };
  let rt: Runtime | undefined;
  try {
    rt = await openRuntime(cfg, {}, { onStep: step, createCredentialKey: true });
    const running0 = rt;
    let app: FastifyInstance | null = null;
    let posture: RunningServices['posture'] = null;
    if (port) {
      // Identity and access (docs/access.md): a non-loopback HOST with no key configured refuses to start.
      posture = startPosture({
        host: cfg.HOST,
        adminKey: cfg.ATLAS_ADMIN_API_KEY,
        usableKeys: await rt.apiKeys.countUsable(),
        corsOrigins: listOf(cfg.CORS_ORIGINS ?? ''),
        corsCredentials: cfg.CORS_CREDENTIALS,
      });
      step('starting the API');
      app = await buildRuntimeApp(rt, {
        startedAt,
        fastify: {
          // Fastify's pino logger: readable lines on a terminal, JSON lines otherwise (LOG_FORMAT), reqId on a
          // request's lines, credentials redacted.
          logger: apiLoggerOptions(cfg.LOG_LEVEL, { format: cfg.LOG_FORMAT }),
          ...httpServerOptions(httpTimeoutsOf(cfg)), // HTTP_*_TIMEOUT_MS (docs/http.md "Timeouts")
          serverFactory: port.serverFactory, // the port open since the start
        },
      });
      await app.ready();
      port.serve();
    }
    const log = app?.log ?? console;
    const bg = <T>(fn: () => T): T => running0.slicer.background(fn);
    // Joining a consumer group waits for the group's rebalance (and, on Kafka, for its coordinator).
    if (service !== 'api')
      step(
        service === 'all' || service === 'sync-worker' || service === 'scheduler'
          ? 'starting the projectors (joining their consumer groups)'
          : `starting the ${service} projector (joining its consumer group)`,
      );
    const subs: Subscription[] =
      service === 'all'
        ? await startProjectors(rt, app?.log)
        : service === 'api'
          ? []
          : service === 'sync-worker'
            ? [
                await startProjector(rt, 'sync-jobs', { warn: log.warn, error: log.error }), // the worker's read store
                await startProjector(rt, 'sync-schedules', { warn: log.warn, error: log.error }), // the scheduler's
              ]
            : service === 'scheduler'
              ? [await startProjector(rt, 'sync-schedules', { warn: log.warn, error: log.error })]
              : [await startProjector(rt, service, { warn: log.warn, error: log.error })];
    // `atlas run wiki`: the wiki worker (refresh and rebuild jobs) beside the wiki projector (startProjectors has it).
    const wikiWorker = service === 'wiki' ? await startRuntimeWikiWorker(rt, { warn: log.warn }) : null;
    if (wikiWorker) subs.push(wikiWorker);
    // Sync jobs: a consumer group on atlas.commands; it resumes the jobs a stopped worker left open.
    if (service === 'all' || service === 'sync-worker') step('starting the sync worker (joining its consumer group)');
    const syncWorker: SyncWorker | null =
      service === 'all' || service === 'sync-worker'
        ? await bg(() => startRuntimeSyncWorker(running0, { log: { warn: (o, m) => log.warn(o, m) } }))
        : null;
    // Sync schedules: SyncRequested for each enabled schedule when due, beside the worker (idempotent across processes).
    const syncScheduler: SyncScheduler | null =
      service === 'all' || service === 'sync-worker' || service === 'scheduler'
        ? bg(() =>
            startSyncScheduler(
              syncSchedulerDepsOf(running0, { log: { info: (m) => log.info(m), warn: (m) => log.warn(m) } }),
            ),
          )
        : null;
    // Channel access: every selected channel's platform membership read again each ACL_REFRESH_INTERVAL_MS (and at
    // start), beside the sync scheduler (docs/access.md "Channel access").
    const aclRefresher =
      service === 'all' || service === 'sync-worker' || service === 'scheduler'
        ? bg(() => startRuntimeAclRefresher(running0, { log: { info: (m) => log.info(m), warn: (m) => log.warn(m) } }))
        : null;
    // The wiki's triggers run beside the wiki projector: stale wikis regenerated once the projectors are idle, and
    // the daily full rebuild (WIKI_REBUILD_CRON).
    const runsWiki = service === 'all' || service === 'wiki';
    const wikiGenerator = rt.wikiGenerator;
    const scheduler =
      runsWiki && wikiGenerator
        ? bg(() =>
            startWikiScheduler(wikiGenerator, {
              rebuildCron: cfg.WIKI_REBUILD_CRON,
              intervalMs: cfg.WIKI_REFRESH_INTERVAL_MS,
              idle: async () => (await projectorLag(running0)) === 0,
              channels: async () =>
                (await running0.documents.listChannels()).filter((c) => c.fact_count > 0).map((c) => c.id),
              log: { info: (m) => log.info(m), warn: (m) => log.warn(m) },
            }),
          )
        : null;
    // Channel retention (settings retention_days): MessageDeleted for expired messages at RETENTION_CRON, beside the wiki's.
    const retention = runsWiki
      ? bg(() =>
          startRetentionScheduler(retentionDeps(running0), {
            cron: cfg.RETENTION_CRON,
            log: { info: (m) => log.info(m), warn: (m) => log.warn(m) },
          }),
        )
      : null;
    // The posted digest (docs/digests.md): channels that opt in get theirs every digest_days, at DIGEST_CRON.
    const digests = runsWiki
      ? bg(() =>
          startDigestScheduler(
            digestPostDepsOf(running0, syncDepsOf(running0).platformClient, {
              info: (m) => log.info(m),
              warn: (m) => log.warn(m),
            }),
            { cron: cfg.DIGEST_CRON },
          ),
        )
      : null;
    // The write-intent reconciler's pass every 15 minutes (spec Limits "write reconciler"), beside its projector.
    const reconciler =
      (service === 'all' || service === 'reconciler') && rt.writeIntents
        ? bg(() =>
            startReconcileScheduler(reconcileDeps(running0), {
              log: { info: (m) => log.info(m), warn: (m) => log.warn(m) },
            }),
          )
        : null;
    // LLM fact extraction: dead-lettered messages of an LLM outage are re-driven once the model answers again.
    const recoveryDeps = service === 'all' || service === 'facts' ? llmRecoveryDeps(rt) : null;
    const llmRecovery = recoveryDeps
      ? bg(() =>
          startLlmRecovery(recoveryDeps, {
            intervalMs: cfg.LLM_RECOVERY_INTERVAL_MS,
            log: { info: (m) => log.info(m), warn: (m) => log.warn(m) },
          }),
        )
      : null;
    // The chat bot on BOT_PORT beside the API when a platform's secret is configured (`atlas run bot` runs it alone).
    const bot = service === 'all' && botConfigured(cfg) ? await startBotService(cfg) : null;
    if (bot) rt.breakers.add(bot.store.breaker); // its cache_queue breaker on /metrics beside the runtime's
    // A process without the API serves its own Prometheus /metrics when METRICS_PORT is set (projector and LLM counters).
    const metricsServer =
      !app && cfg.METRICS_PORT !== undefined
        ? await serveMetrics(rt.metrics.registry, { port: cfg.METRICS_PORT, host: cfg.HOST })
        : null;
    // Alerts (spec "Alerts (operational)"): the API process watches its dependencies' health and alerts on changes.
    const monitor = app
      ? new HealthMonitor(healthChecks(rt), {
          log: app.log,
          webhookUrl: cfg.ALERT_WEBHOOK_URL,
          intervalMs: cfg.HEALTH_CHECK_INTERVAL_MS,
        })
      : null;
    monitor?.start();
    // PGlite has no autovacuum: refresh the planner's statistics now and every 5 minutes as the stores grow.
    if (rt.database.kind === 'pglite') {
      const db = rt.database;
      const refresh = () =>
        db.refreshStatistics().catch((err: unknown) => log.warn(`statistics refresh failed: ${String(err)}`));
      bg(() => {
        void refresh();
        setInterval(refresh, 5 * 60_000).unref();
      });
    }
    // Searches are served meanwhile; a channel not yet warm is loaded by its first search.
    if (app && rt.embeddings?.vectors.warm) {
      const started = Date.now();
      const vectors = rt.embeddings.vectors;
      void bg(() => vectors.warm!())
        .then((n) => n > 0 && log.info(`vector index: ${n} channels in memory in ${Date.now() - started} ms`))
        .catch((err: unknown) => log.warn(`vector index warm-up failed: ${String(err)}`));
    }
    const api = app;
    return {
      rt,
      app,
      posture,
      stop: async () => {
        scheduler?.stop();
        retention?.stop();
        digests?.stop();
        reconciler?.stop();
        llmRecovery?.stop();
        monitor?.stop();
        syncScheduler?.stop();
        aclRefresher?.stop();
        await bot?.close();
        await api?.close();
        await port?.close(); // Fastify closes only a server it listened on itself
        await metricsServer?.close();
        await syncWorker?.stop();
        await Promise.all(subs.map((s) => s.stop()));
        await running0.close();
      },
    };
  } catch (err) {
    await port?.close();
    await rt?.close().catch(() => undefined);
    throw err;
  }
};
