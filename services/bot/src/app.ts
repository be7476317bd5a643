import type { KeyObject } from 'node:crypto';
import { errorBody } from '@atlas/core';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { BackendClient } from './backend.js';
import type { BotStore } from './intake.js';
import { healthRoutes } from './routes/health.js';
import { platformARoutes } from './routes/platform-a.js';
import { platformBRoutes } from './routes/platform-b.js';

/** What the bot's HTTP app needs: its guarded cache/queue store, the backend client and the platforms' secrets. */
export interface BotAppDeps {
  store: BotStore;
  backend: BackendClient;
  /** platform_a's signing secret (PLATFORM_A_SIGNING_SECRET); null: the platform_a route is not registered. */
  platformA: { signingSecret: string } | null;
  /** platform_b's public key (PLATFORM_B_PUBLIC_KEY); null: the platform_b route is not registered. */
  platformB: { publicKey: KeyObject } | null;
  startedAt?: number;
  /** The clock of platform_a's replay window (epoch ms); tests move it. */
  now?: () => number;
}

/**
 * The bot's Fastify app (spec "What the service does" 9 "Bot"): GET /health, POST /platform_a/commands and POST
 * /platform_b/interactions (each when its secret is configured). Errors use the API's body `{error: {code, message}}`;
 * unknown routes 404 NOT_FOUND. `listen()` is the caller's (startBot), tests use `inject` or listen on port 0.
 */
export const buildBotApp = async (deps: BotAppDeps, opts: FastifyServerOptions = {}): Promise<FastifyInstance> => {
  const app = Fastify({ logger: false, ...opts });
  app.setErrorHandler((err: { statusCode?: number; message: string }, request, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) request.log.error({ err }, 'unhandled error');
    return reply
      .status(status)
      .send(
        errorBody(
          status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 500 ? 'INTERNAL_ERROR' : 'INVALID_REQUEST',
          status === 500 ? 'internal server error' : err.message,
        ),
      );
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(errorBody('NOT_FOUND', `route ${request.method} ${request.url.split('?')[0]} does not exist`)),
  );
  await app.register(healthRoutes, {
    store: deps.store,
    backend: deps.backend,
    platforms: { platform_a: deps.platformA !== null, platform_b: deps.platformB !== null },
    startedAt: deps.startedAt ?? Date.now(),
  });
  if (deps.platformA)
    await app.register(platformARoutes, {
      store: deps.store,
      signingSecret: deps.platformA.signingSecret,
      ...(deps.now ? { now: deps.now } : {}),
    });
  if (deps.platformB) await app.register(platformBRoutes, { store: deps.store, publicKey: deps.platformB.publicKey });
  return app;
};
