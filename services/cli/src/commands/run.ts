import type { Config } from '@atlas/core';
import type { RunningServices } from '@atlas/runtime';
import { acquireLock } from '../lock.js';
import { SERVICES, unknownService } from '../services.js';
import { listenWhileStarting, type StartingServer } from '../starting-server.js';

export { SERVICES };

/** How often a start that is not ready yet says what it is waiting for (stderr), ms. */
export const SLOW_START_NOTICE_MS = 30_000;

/**
 * Runs services in this process until SIGINT/SIGTERM: `all` (= `atlas start`), `api`, one projector, `sync-worker`,
 * `scheduler` or `bot`. Holds the data dir lock on the embedded database. Prints one line when ready.
 *
 * Order (docs/cli.md "What start does first"): with the API, the HTTP port is opened first, before anything heavy is
 * loaded (listenWhileStarting: /api/health answers, the rest 503 STORE_UNAVAILABLE with Retry-After); then the
 * runtime's modules load and `startServices` (@atlas/runtime) opens the database, hands the port to the API and starts
 * the projectors, the sync worker and the schedulers.
 * Errors: AtlasError INVALID_REQUEST for an unknown service, DATA_DIR_LOCKED, the listen error (EADDRINUSE), and
 * whatever starting the services throws; the port and the lock are released first.
 */
export const runServices = async (cfg: Config, service: string): Promise<void> => {
  const unknown = unknownService(service);
  if (unknown) throw new (await import('@atlas/core')).AtlasError('INVALID_REQUEST', unknown);
  // no database, no lock: HTTP to the backend, the cache/queue store
  if (service === 'bot') return (await import('./bot.js')).runBot(cfg);
  const startedAt = Date.now();
  const serves = service === 'all' || service === 'api';
  const release = cfg.DATABASE_URL
    ? () => undefined
    : acquireLock(cfg.ATLAS_DATA_DIR, {
        command: service === 'all' ? 'start' : `run ${service}`,
        port: serves ? cfg.PORT : undefined,
      });
  let starting: StartingServer | undefined;
  let running: RunningServices;
  // A start that takes long says on stderr what it waits for (joining a consumer group waits for its rebalance).
  const what = service === 'all' ? 'Atlas' : `Atlas ${service}`;
  let step = serves ? 'opening the port' : 'loading the runtime';
  const slow = setInterval(
    () => console.error(`${what} is still starting after ${Math.round((Date.now() - startedAt) / 1000)} s: ${step}`),
    SLOW_START_NOTICE_MS,
  );
  slow.unref();
  try {
    // The early port keeps the configured request timeouts (docs/http.md "Timeouts"); Fastify re-applies them on take-over.
    if (serves)
      starting = await listenWhileStarting({
        port: cfg.PORT,
        host: cfg.HOST,
        startedAt,
        http: {
          requestTimeout: cfg.HTTP_REQUEST_TIMEOUT_MS,
          headersTimeout: cfg.HTTP_HEADERS_TIMEOUT_MS,
          keepAliveTimeout: cfg.HTTP_KEEP_ALIVE_TIMEOUT_MS,
        },
      });
    step = 'loading the runtime';
    const { startServices } = await import('@atlas/runtime');
    running = await startServices(cfg, service, {
      startedAt,
      port: starting,
      onStep: (s) => {
        step = s;
      },
    });
  } catch (err) {
    await starting?.close(); // startServices closed it already when it failed after taking it: closing again is a no-op
    release();
    throw err;
  } finally {
    clearInterval(slow);
  }
  const { rt, app } = running;
  const where = `${rt.logKind === 'kafka' ? 'Kafka' : 'embedded log'}, ${cfg.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : cfg.ATLAS_DATA_DIR}`;
  // The home page (GET /): what the server is, its key routes and the channels' wikis.
  const url = app ? ` is serving http://${cfg.HOST}:${cfg.PORT}/` : ' is running';
  console.log(`${what}${url} (${where}; ready in ${Date.now() - startedAt} ms)`);
  if (running.posture) console.log(`access: ${running.posture.message}`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await running.stop();
    release();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
};
