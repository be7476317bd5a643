import { hostname } from 'node:os';
import type { BreakerLogger, Config } from '@atlas/core';
import { createCacheQueue, guardCacheQueue, RedisCacheQueue } from '@atlas/stores';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { buildBotApp } from './app.js';
import { BackendClient } from './backend.js';
import type { BotStore } from './intake.js';
import { BotJob, COMMAND_QUEUE, runJob } from './jobs.js';
import { platformBPublicKey } from './signatures.js';
import { BotWorker } from './worker.js';

export interface StartBotOptions {
  /** Fastify options (the logger); default none. */
  fastify?: FastifyServerOptions;
  /** Breaker settings of the cache/queue store (tests shorten `resetMs`); default the spec's (2 s, 3 failures, 30 s). */
  breaker?: { resetMs?: number; timeoutMs?: number; failureThreshold?: number };
  /** Redis key prefix (default `atlas:`); tests give each run its own. */
  keyPrefix?: string;
  /** This process's queue consumer name (default `<hostname>:<BOT_PORT>`). */
  consumer?: string;
  /** Where breaker openings and closings go (info level); default the app's logger. */
  breakerLog?: BreakerLogger | null;
}

/** A running bot: its app (listening), its address, the worker and the guarded store; `close` stops all. */
export interface RunningBot {
  app: FastifyInstance;
  url: string;
  store: BotStore;
  worker: BotWorker;
  close(): Promise<void>;
}

/**
 * The backend address the bot calls: ATLAS_API_URL, else http://HOST:PORT of this configuration (127.0.0.1 when the
 * API listens on every interface), so `atlas start --port 9000` and a bot started with it agree.
 */
export const backendUrlOf = (cfg: Config): string =>
  cfg.ATLAS_API_URL ?? `http://${cfg.HOST === '0.0.0.0' || cfg.HOST === '::' ? '127.0.0.1' : cfg.HOST}:${cfg.PORT}`;

/**
 * Starts the bot (spec "What the service does" 9; ARCHITECTURE.md `services/bot/`): its cache/queue store (REDIS_URL:
 * Redis, else in process) behind the `cache_queue` breaker (2 s), the backend client (backendUrlOf, BRIDGE_API_KEY,
 * PUBLIC_URL), the HTTP app on BOT_PORT at HOST, and the queue worker. Redis being down at start does not stop it: it
 * starts offline (health 503, commands answered "temporarily offline") and comes online when Redis answers.
 * Throws when the port cannot be bound.
 */
export const startBot = async (cfg: Config, opts: StartBotOptions = {}): Promise<RunningBot> => {
  const raw = createCacheQueue({
    redisUrl: cfg.REDIS_URL,
    ...(opts.keyPrefix === undefined ? {} : { keyPrefix: opts.keyPrefix }),
  });
  let app: FastifyInstance | undefined;
  // Breaker openings and closings are info log entries (spec "Alerts"), on the app's logger unless given.
  const breakerLog: BreakerLogger = opts.breakerLog ?? {
    info: (obj, msg) =>
      typeof obj === 'string'
        ? app?.log.info({ component: 'breaker' }, obj)
        : app?.log.info({ component: 'breaker', ...obj }, msg),
  };
  const guarded = guardCacheQueue(raw, {
    name: cfg.REDIS_URL ? 'cache_queue:redis' : 'cache_queue:memory',
    logger: breakerLog,
    breaker: { resetMs: cfg.BREAKER_RESET_MS, ...opts.breaker },
  });
  const store: BotStore = { ...guarded, kind: raw instanceof RedisCacheQueue ? 'redis' : 'memory' };
  if (raw instanceof RedisCacheQueue) await raw.connect(2_000).catch(() => undefined); // offline until it answers
  const apiUrl = backendUrlOf(cfg);
  const backend = new BackendClient({
    apiUrl,
    bridgeKey: cfg.BRIDGE_API_KEY ?? null,
    publicUrl: cfg.PUBLIC_URL ?? apiUrl,
  });
  app = await buildBotApp(
    {
      store,
      backend,
      platformA: cfg.PLATFORM_A_SIGNING_SECRET ? { signingSecret: cfg.PLATFORM_A_SIGNING_SECRET } : null,
      platformB: cfg.PLATFORM_B_PUBLIC_KEY ? { publicKey: platformBPublicKey(cfg.PLATFORM_B_PUBLIC_KEY) } : null,
    },
    opts.fastify,
  );
  const running = app;
  const log = { warn: (obj: object, msg: string) => running.log.warn(obj, msg) };
  const worker = new BotWorker({
    store: store.port,
    breaker: store.breaker,
    queue: COMMAND_QUEUE,
    consumer: opts.consumer ?? `${hostname()}:${cfg.BOT_PORT}`,
    log,
    handle: async (payload) => {
      const job = BotJob.safeParse(JSON.parse(payload));
      if (!job.success)
        return log.warn({ component: 'bot', issues: job.error.issues }, 'bot: a queued command is malformed');
      await runJob(job.data, { backend, store: store.port, platformBApiUrl: cfg.PLATFORM_B_API_URL, log });
    },
  });
  try {
    await running.listen({ port: cfg.BOT_PORT, host: cfg.HOST });
  } catch (err) {
    await raw.close();
    store.breaker.shutdown();
    throw err;
  }
  worker.start();
  const address = running.server.address();
  const port = typeof address === 'object' && address ? address.port : cfg.BOT_PORT;
  return {
    app: running,
    url: `http://${cfg.HOST.includes(':') ? `[${cfg.HOST}]` : cfg.HOST}:${port}`,
    store,
    worker,
    close: async () => {
      await running.close();
      await worker.stop();
      await raw.close();
      store.breaker.shutdown();
    },
  };
};
