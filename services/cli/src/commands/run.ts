import { apiLoggerOptions, buildApp, HealthMonitor } from '@atlas/api';
import { AtlasError, type Config } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import {
  llmRecoveryDeps,
  reconcileDeps,
  type SyncScheduler,
  type SyncWorker,
  serveMetrics,
  startLlmRecovery,
  startReconcileScheduler,
  startRetentionScheduler,
  startRuntimeSyncWorker,
  startSyncScheduler,
  startWikiScheduler,
  syncSchedulerDepsOf,
} from '@atlas/projectors';
import type { FastifyInstance } from 'fastify';
import { acquireLock } from '../lock.js';
import {
  apiPorts,
  healthChecks,
  openRuntime,
  PROJECTOR_NAMES,
  projectorLag,
  type Runtime,
  startProjector,
  startProjectors,
} from '../runtime.js';
import { botConfigured, runBot, startBotService } from './bot.js';

/**
 * What `atlas run` can run: the query service, one projector, the sync worker (with the sync-jobs and sync-schedules
 * projectors and the sync scheduler) or the sync scheduler alone (with the sync-schedules projector); `atlas start`
 * runs them all in one process.
 */
export const SERVICES = ['api', ...PROJECTOR_NAMES, 'sync-worker', 'scheduler', 'bot'] as const;

/** Fastify's pino logger: JSON lines with reqId, credentials redacted (apiLoggerOptions, services/api/src/telemetry.ts). */
const logger = (cfg: Config) => apiLoggerOptions(cfg.LOG_LEVEL);

/**
 * Runs services in this process until SIGINT/SIGTERM: `all` (= `atlas start`), `api`, or one projector.
 * Holds the data dir lock on the embedded database. Prints one line when ready.
 */
export const runServices = async (cfg: Config, service: string): Promise<void> => {
  if (service !== 'all' && !(SERVICES as readonly string[]).includes(service)) {
    throw new AtlasError('INVALID_REQUEST', `unknown service '${service}' (one of: ${SERVICES.join(', ')})`);
  }
  if (service === 'bot') return runBot(cfg); // no database, no lock: HTTP to the backend, the cache/queue store
  const startedAt = Date.now();
  const serves = service === 'all' || service === 'api';
  const release = cfg.DATABASE_URL
    ? () => undefined
    : acquireLock(cfg.ATLAS_DATA_DIR, {
        command: service === 'all' ? 'start' : `run ${service}`,
        port: serves ? cfg.PORT : undefined,
      });
  let rt: Runtime | undefined;
  try {
    rt = await openRuntime(cfg);
    const running0 = rt;
    let app: FastifyInstance | undefined;
    if (serves) app = await buildApp(apiPorts(rt, startedAt), { logger: logger(cfg) });
    const log = app?.log ?? console;
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
    // Sync jobs (issue 8): a consumer group on atlas.commands; it resumes the jobs a stopped worker left open.
    const syncWorker: SyncWorker | null =
      service === 'all' || service === 'sync-worker'
        ? await startRuntimeSyncWorker(rt, { log: { warn: (o, m) => log.warn(o, m) } })
        : null;
    // Sync schedules: SyncRequested for each enabled schedule when due, beside the worker (idempotent across processes).
    const syncScheduler: SyncScheduler | null =
      service === 'all' || service === 'sync-worker' || service === 'scheduler'
        ? startSyncScheduler(syncSchedulerDepsOf(rt, { log: { info: (m) => log.info(m), warn: (m) => log.warn(m) } }))
        : null;
    // The wiki's triggers run beside the wiki projector: stale wikis regenerated once the projectors are idle, and
    // the daily full rebuild (WIKI_REBUILD_CRON).
    const runsWiki = service === 'all' || service === 'wiki';
    const scheduler =
      runsWiki && rt.wikiGenerator
        ? startWikiScheduler(rt.wikiGenerator, {
            rebuildCron: cfg.WIKI_REBUILD_CRON,
            intervalMs: cfg.WIKI_REFRESH_INTERVAL_MS,
            idle: async () => (await projectorLag(running0)) === 0,
            channels: async () =>
              (await running0.documents.listChannels()).filter((c) => c.fact_count > 0).map((c) => c.id),
            log: { info: (m) => log.info(m), warn: (m) => log.warn(m) },
          })
        : null;
    // Channel retention (settings retention_days): MessageDeleted for expired messages at RETENTION_CRON, beside the wiki's.
    const retention = runsWiki
      ? startRetentionScheduler(rt, {
          cron: cfg.RETENTION_CRON,
          log: { info: (m) => log.info(m), warn: (m) => log.warn(m) },
        })
      : null;
    // The write-intent reconciler's pass every 15 minutes (spec Limits "write reconciler"), beside its projector.
    const reconciler =
      (service === 'all' || service === 'reconciler') && rt.writeIntents
        ? startReconcileScheduler(reconcileDeps(rt), { log: { info: (m) => log.info(m), warn: (m) => log.warn(m) } })
        : null;
    // LLM fact extraction: dead-lettered messages of an LLM outage are re-driven once the model answers again.
    const recoveryDeps = service === 'all' || service === 'facts' ? llmRecoveryDeps(rt) : null;
    const llmRecovery = recoveryDeps
      ? startLlmRecovery(recoveryDeps, {
          intervalMs: cfg.LLM_RECOVERY_INTERVAL_MS,
          log: { info: (m) => log.info(m), warn: (m) => log.warn(m) },
        })
      : null;
    if (app) await app.listen({ port: cfg.PORT, host: cfg.HOST });
    // The chat bot on BOT_PORT beside the API when a platform's secret is configured (`atlas run bot` runs it alone).
    const bot = service === 'all' && botConfigured(cfg) ? await startBotService(cfg) : null;
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
      void refresh();
      setInterval(refresh, 5 * 60_000).unref();
    }
    // Searches are served meanwhile; a channel not yet warm is loaded by its first search.
    if (app && rt.embeddings?.vectors.warm) {
      const started = Date.now();
      void rt.embeddings.vectors
        .warm()
        .then((n) => n > 0 && log.info(`vector index: ${n} channels in memory in ${Date.now() - started} ms`))
        .catch((err: unknown) => log.warn(`vector index warm-up failed: ${String(err)}`));
    }
    const where = `${rt.logKind === 'kafka' ? 'Kafka' : 'embedded log'}, ${cfg.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : cfg.ATLAS_DATA_DIR}`;
    const what = service === 'all' ? 'Atlas' : `Atlas ${service}`;
    const url = app ? ` is serving http://${cfg.HOST}:${cfg.PORT}/api` : ' is running';
    console.log(`${what}${url} (${where}; ready in ${Date.now() - startedAt} ms)`);
    const running = rt;
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      scheduler?.stop();
      retention?.stop();
      reconciler?.stop();
      llmRecovery?.stop();
      monitor?.stop();
      syncScheduler?.stop();
      await bot?.close();
      await app?.close();
      await metricsServer?.close();
      await syncWorker?.stop();
      await Promise.all(subs.map((s) => s.stop()));
      await running.close();
      release();
      process.exit(0);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  } catch (err) {
    await rt?.close().catch(() => undefined);
    release();
    throw err;
  }
};
