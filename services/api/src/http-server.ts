import { randomUUID } from 'node:crypto';
import { maxHeaderSize, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { type ErrorCode, errorBody, HTTP_TIMEOUT_DEFAULTS } from '@atlas/core';
import type { FastifyHttpOptions, FastifyInstance } from 'fastify';

/** The HTTP server's timeouts, ms (config HTTP_REQUEST_TIMEOUT_MS, HTTP_HEADERS_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS). */
export interface HttpTimeouts {
  /** The whole request (headers and body) must have arrived within this of its first byte. */
  requestMs: number;
  /** Its headers within this (at most requestMs). A connection that sends nothing is closed after it too. */
  headersMs: number;
  /** An idle keep-alive connection (between two requests) is closed after this. */
  keepAliveMs: number;
}

/** The defaults of the HTTP_* timeout variables (packages/core/src/config.ts). */
export const HTTP_TIMEOUTS_DEFAULT: HttpTimeouts = {
  requestMs: HTTP_TIMEOUT_DEFAULTS.HTTP_REQUEST_TIMEOUT_MS,
  headersMs: HTTP_TIMEOUT_DEFAULTS.HTTP_HEADERS_TIMEOUT_MS,
  keepAliveMs: HTTP_TIMEOUT_DEFAULTS.HTTP_KEEP_ALIVE_TIMEOUT_MS,
};

/** The timeouts of a Config (its HTTP_* variables). */
export const httpTimeoutsOf = (cfg: {
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_HEADERS_TIMEOUT_MS: number;
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number;
}): HttpTimeouts => ({
  requestMs: cfg.HTTP_REQUEST_TIMEOUT_MS,
  headersMs: cfg.HTTP_HEADERS_TIMEOUT_MS,
  keepAliveMs: cfg.HTTP_KEEP_ALIVE_TIMEOUT_MS,
});

/**
 * How often Node's http server looks for requests past their timeout, ms: a tenth of the shorter timeout, between
 * 25 ms and 1 s (Node's default is 30 s, which would let a 10 s headers timeout run to 40 s).
 */
export const checkingIntervalMs = (t: HttpTimeouts): number =>
  Math.min(1000, Math.max(25, Math.floor(Math.min(t.requestMs, t.headersMs) / 10)));

/** In-flight responses and the id of their request, for the 408 written on the socket (clientErrorHandler). */
const requestIds = new WeakMap<ServerResponse, string>();

/** Remembers each request's id by its response, so that a timeout answered on the raw socket carries it. */
export const registerRequestIdTracking = (app: FastifyInstance): void => {
  app.addHook('onRequest', async (request, reply) => {
    requestIds.set(reply.raw, request.id);
  });
};

/** A Node http parser or timeout error as status, code and message. */
const clientFailure = (
  err: NodeJS.ErrnoException,
  t: HttpTimeouts,
  bodyPhase: boolean,
): { status: number; code: ErrorCode; message: string } => {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return bodyPhase
      ? {
          status: 408,
          code: 'REQUEST_TIMEOUT',
          message: `the request did not arrive in full within ${t.requestMs} ms (HTTP_REQUEST_TIMEOUT_MS); the connection is closed`,
        }
      : {
          status: 408,
          code: 'REQUEST_TIMEOUT',
          message: `the request headers did not arrive within ${t.headersMs} ms (HTTP_HEADERS_TIMEOUT_MS); the connection is closed`,
        };
  if (err.code === 'HPE_HEADER_OVERFLOW')
    return {
      status: 431,
      code: 'REQUEST_HEADERS_TOO_LARGE',
      message: `the request headers are over ${maxHeaderSize} bytes`,
    };
  return { status: 400, code: 'INVALID_REQUEST', message: `malformed HTTP request (${err.code ?? 'parse error'})` };
};

/**
 * Fastify server options that bound how long receiving a request may take (docs/http.md "Timeouts"):
 * - `requestMs`: Node's requestTimeout (and Fastify's, which would otherwise set 0: no limit) over headers and body;
 * - `headersMs`: Node's headersTimeout;
 * - `keepAliveMs`: the idle time of a keep-alive connection between requests;
 * - Node checks for expired requests every checkingIntervalMs, so a timeout fires within that much after its limit;
 * - no socket inactivity timeout: a response (the ask stream, a slow answer) is not bounded by these.
 * On a request timeout or a malformed request Node calls `clientErrorHandler` instead of writing its bare
 * `408`/`400` without a body: it writes the status with the shared error body (REQUEST_TIMEOUT 408,
 * REQUEST_HEADERS_TOO_LARGE 431, INVALID_REQUEST 400), `x-request-id` and details.request_id (the request's id when
 * its headers had arrived, else a new one), `Connection: close`, and closes the socket. When a response had already
 * started (a refused upload still streaming in), nothing more is written and the socket is closed.
 */
export const httpServerOptions = (t: HttpTimeouts = HTTP_TIMEOUTS_DEFAULT): FastifyHttpOptions<Server> => ({
  requestTimeout: t.requestMs,
  keepAliveTimeout: t.keepAliveMs,
  connectionTimeout: 0,
  http: {
    requestTimeout: t.requestMs,
    headersTimeout: t.headersMs,
    keepAliveTimeout: t.keepAliveMs,
    connectionsCheckingInterval: checkingIntervalMs(t),
  },
  clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket) {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? null;
    const requestId = (res && requestIds.get(res)) ?? randomUUID();
    const f = clientFailure(err, t, res !== null);
    this.log.info(
      { reqId: requestId, code: f.code, reason: err.code },
      `client error answered ${f.status}: ${f.message}`,
    );
    if (socket.writable && !res?.headersSent) {
      const body = JSON.stringify(errorBody(f.code, f.message, { request_id: requestId }));
      socket.write(
        `HTTP/1.1 ${f.status} ${STATUS_CODES[f.status]}\r\n` +
          'content-type: application/json; charset=utf-8\r\n' +
          `content-length: ${Buffer.byteLength(body)}\r\n` +
          `x-request-id: ${requestId}\r\n` +
          'connection: close\r\n\r\n' +
          body,
      );
    }
    socket.destroy(err);
  },
});
