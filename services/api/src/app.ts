import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { registerBridgeAuth } from './bridge-auth.js';
import { registerErrorHandling } from './errors.js';
import type { ApiPorts } from './ports.js';
import { adminRoutes } from './routes/admin.js';
import { askRoutes } from './routes/ask.js';
import { channelDataRoutes } from './routes/channel-data.js';
import { channelRoutes } from './routes/channels.js';
import { connectionRoutes } from './routes/connections.js';
import { graphRoutes } from './routes/graph.js';
import { healthRoutes } from './routes/health.js';
import { memoryRoutes } from './routes/memories.js';
import { memorySearchRoutes } from './routes/memory-search.js';
import { searchRoutes } from './routes/search.js';
import { statsRoutes } from './routes/stats.js';
import { syncRoutes } from './routes/sync.js';
import { syncScheduleRoutes } from './routes/sync-schedules.js';
import { wikiRoutes } from './routes/wiki.js';
import { registerTelemetry, requestIdOptions } from './telemetry.js';

/**
 * Builds the Fastify query service on the given ports; `listen()` is the caller's (tests use
 * `app.inject`). Credentials are redacted by the logger itself.
 */
export const buildApp = async (ports: ApiPorts, opts: FastifyServerOptions = {}): Promise<FastifyInstance> => {
  const app = Fastify({
    logger: false,
    bodyLimit: 12 * 1024 * 1024,
    ...requestIdOptions, // x-request-id in, or a UUID; logged as reqId and echoed (telemetry.ts)
    ...opts,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app);
  registerBridgeAuth(app, ports.bridgeApiKey); // the bot's shared secret (spec "Authentication" 3)
  const telemetry = registerTelemetry(app, ports);
  await app.register(healthRoutes, ports);
  await app.register(channelRoutes, ports);
  await app.register(channelDataRoutes, ports);
  await app.register(memoryRoutes, ports);
  await app.register(memorySearchRoutes, ports);
  await app.register(searchRoutes, ports);
  await app.register(graphRoutes, ports);
  await app.register(adminRoutes, ports);
  await app.register(wikiRoutes, ports);
  await app.register(askRoutes, ports);
  await app.register(connectionRoutes, ports);
  await app.register(syncRoutes, ports);
  await app.register(syncScheduleRoutes, ports);
  await app.register(statsRoutes, { ...ports, telemetry });
  return app;
};
