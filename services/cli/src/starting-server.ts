import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';

type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The options Fastify hands a serverFactory (those it would otherwise apply to the server it creates). */
interface FactoryOptions {
  http?: ServerOptions | null;
  keepAliveTimeout?: number;
  requestTimeout?: number;
  connectionTimeout?: number;
  maxRequestsPerSocket?: number;
}

/** The HTTP port of `atlas start` from its first second on, before the API exists (docs/cli.md "What start does first"). */
export interface StartingServer {
  readonly server: Server;
  /** What the process is doing now: named by GET /api/health and in the 503 bodies until `serve()`. */
  step(step: string): void;
  /**
   * A Fastify `serverFactory` (pass it in the options of `Fastify()` / buildApp): Fastify gets this server, already
   * listening, with the timeouts Fastify would set on a server of its own (keepAliveTimeout, requestTimeout, headers
   * timeout, connection timeout, requests per socket) applied to it. Do not call `app.listen()`: call `serve()`.
   */
  readonly serverFactory: (handler: RequestHandler, opts: FactoryOptions) => Server;
  /** From now on every request goes to Fastify (after `await app.ready()`). */
  serve(): void;
  /** Stops listening (when the start fails before `serve()`). */
  close(): Promise<void>;
}

/**
 * Listens on `port` at `host` at once, before the runtime and the API are loaded. Until `serve()`:
 * - `GET /api/health` answers 200 `{status: 'degraded', dependencies: {}, uptime, degraded_since, starting}`: nothing
 *   has been probed yet, `degraded_since` is the start and `starting` the current step (a documented addition);
 * - every other request answers 503 with the error body `{error: {code: 'STORE_UNAVAILABLE', message, details:
 *   {starting, request_id}}}`, `Retry-After: 1` and `x-request-id`.
 * Errors: rejects with the listen error (EADDRINUSE when the port is taken, EACCES).
 * `http` are the options of the node:http server (default: connections checked for request timeouts every second).
 */
export const listenWhileStarting = async (opts: {
  port: number;
  host: string;
  /** When the process started (ms since the epoch): uptime and degraded_since count from it. */
  startedAt: number;
  http?: ServerOptions;
}): Promise<StartingServer> => {
  let current = 'loading';
  let fastify: RequestHandler | null = null;
  let serving = false;
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    req.resume(); // a body is not read: discard it
    const requestId = (req.headers['x-request-id'] as string | undefined) ?? randomUUID();
    const health = (req.method === 'GET' || req.method === 'HEAD') && req.url?.split('?')[0] === '/api/health';
    const body = health
      ? {
          status: 'degraded',
          dependencies: {},
          uptime: Math.round((Date.now() - opts.startedAt) / 100) / 10,
          degraded_since: new Date(opts.startedAt).toISOString(),
          starting: current,
        }
      : {
          error: {
            code: 'STORE_UNAVAILABLE',
            message: `Atlas is starting (${current}); retry in a moment`,
            details: { starting: current, request_id: requestId },
          },
        };
    const text = JSON.stringify(body);
    res.writeHead(health ? 200 : 503, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'x-request-id': requestId,
      ...(health ? {} : { 'retry-after': '1' }),
    });
    res.end(req.method === 'HEAD' ? undefined : text);
  };
  const server = createServer({ connectionsCheckingInterval: 1000, ...opts.http }, (req, res) =>
    serving && fastify ? fastify(req, res) : answer(req, res),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: opts.port, host: opts.host }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    step: (step) => {
      current = step;
    },
    serverFactory: (handler, o) => {
      fastify = handler;
      // As Fastify's own server (fastify lib/server.js getServerInstance): the http options, then its overrides.
      const h = o.http ?? {};
      if (h.headersTimeout !== undefined) server.headersTimeout = h.headersTimeout;
      if (h.requestTimeout !== undefined) server.requestTimeout = h.requestTimeout;
      if (h.keepAliveTimeout !== undefined) server.keepAliveTimeout = h.keepAliveTimeout;
      if (o.keepAliveTimeout !== undefined) server.keepAliveTimeout = o.keepAliveTimeout;
      if (o.requestTimeout !== undefined) server.requestTimeout = o.requestTimeout;
      server.setTimeout(o.connectionTimeout ?? 0);
      if ((o.maxRequestsPerSocket ?? 0) > 0) server.maxRequestsPerSocket = o.maxRequestsPerSocket!;
      return server;
    },
    serve: () => {
      if (!fastify) throw new Error('serve() before Fastify took the server (pass serverFactory to Fastify)');
      serving = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
