import { METHODS, STATUS_CODES } from 'node:http';
import { AtlasError, ERROR_STATUS, type ErrorCode, errorBody } from '@atlas/core';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route answers with the ask stream (spec "Events → Ask stream"): its errors are a text/event-stream holding
     * one `error` event instead of the JSON error body (registerErrorHandling).
     */
    askStream?: boolean;
  }
}

/** What a caller is answered for a failure: status, code and message (the shared body), details. */
export interface HttpFailure {
  status: number;
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
  /** A 5xx: the error goes to the log (under the request id) and the body carries none of it. */
  internal: boolean;
}

/** The code a framework or Node status is answered with (each status of ERROR_STATUS that one code owns). */
const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'INVALID_REQUEST',
  401: 'UNAUTHORIZED',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'UNSUPPORTED_MEDIA_TYPE', // @fastify/multipart: "the request is not multipart"
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMIT_EXCEEDED',
  431: 'REQUEST_HEADERS_TOO_LARGE',
};

/**
 * What a 5xx body says instead of the error's own message (which may quote a store address, SQL or a driver): one
 * sentence per code, with the request id in details (docs/http.md "Errors").
 */
export const SAFE_5XX_MESSAGE: Partial<Record<ErrorCode, string>> = {
  INTERNAL_ERROR: 'internal server error',
  STORE_UNAVAILABLE: 'a data store Atlas depends on is unavailable; retry later',
  PROVIDER_UNAVAILABLE:
    'a provider Atlas depends on (embeddings, language model, platform API) is unavailable; retry later',
};

/** Fastify's and @fastify/multipart's own errors, by their code: the message the caller reads. */
const FRAMEWORK_MESSAGE: Record<string, (err: FastifyError, request: FastifyRequest) => string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (_e, r) =>
    `content type '${r.headers['content-type'] ?? ''}' is not accepted by ${r.method} ${routeOf(r)}: send application/json`,
  FST_ERR_CTP_BODY_TOO_LARGE: (_e, r) =>
    `the request body is over the limit of ${r.routeOptions.bodyLimit ?? 'this route'} bytes of ${r.method} ${routeOf(r)}`,
  FST_ERR_CTP_EMPTY_JSON_BODY: () => 'the body is empty but the content type is application/json: send a JSON body',
  FST_ERR_CTP_INVALID_JSON_BODY: () => 'the body is not valid JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => 'the request body does not match its Content-Length',
  FST_INVALID_MULTIPART_CONTENT_TYPE: () => 'the request is not multipart/form-data',
  FST_REQ_FILE_TOO_LARGE: () => 'a file of the multipart body is over the upload limit',
  FST_FILES_LIMIT: () => 'the multipart body has more files than this route takes',
  FST_FIELDS_LIMIT: () => 'the multipart body has more fields than this route takes',
  FST_PARTS_LIMIT: () => 'the multipart body has more parts than this route takes',
  FST_PROTO_VIOLATION: () => 'a multipart field is named __proto__ or constructor, which is not allowed',
  FST_ERR_BAD_URL: () => 'the URL has a malformed percent-encoding',
  FST_ERR_MAX_PARAM_LENGTH: () => 'a path parameter is longer than 100 characters',
};

const routeOf = (r: FastifyRequest): string => r.routeOptions.url ?? r.url.split('?')[0] ?? r.url;

/**
 * Any error thrown while answering `request`, as what the caller is answered (docs/http.md "Errors"):
 * - an AtlasError: its code's status, message and details, except that a 5xx not marked `expose` shows
 *   SAFE_5XX_MESSAGE of its code;
 * - a schema validation failure: 400 INVALID_REQUEST with the failing fields in details.issues;
 * - Fastify's own 4xx (body parsing, content type, body size) and @fastify/multipart's: the code of their status
 *   (CODE_OF_STATUS; 406 "not multipart" is 415), a sentence saying what to send; an unknown 4xx status is 400
 *   INVALID_REQUEST;
 * - anything else (a bug, a driver error): 500 INTERNAL_ERROR with SAFE_5XX_MESSAGE.
 * A 5xx has `internal: true`: its body carries no message of the error, and details holds `request_id`.
 */
export const failureOf = (err: unknown, request: FastifyRequest): HttpFailure => {
  const withId = (f: Omit<HttpFailure, 'internal'>): HttpFailure =>
    f.status >= 500
      ? { ...f, internal: true, details: { ...f.details, request_id: request.id } }
      : { ...f, internal: false };
  if (err instanceof AtlasError) {
    const exposed = err.expose || err.status < 500;
    return withId({
      status: err.status,
      code: err.code,
      message: exposed ? err.message : (SAFE_5XX_MESSAGE[err.code] ?? STATUS_CODES[err.status] ?? 'server error'),
      ...(exposed && err.details ? { details: err.details } : {}),
    });
  }
  const e = err as Partial<FastifyError>;
  if (e.validation) {
    const context = e.validationContext ?? 'request';
    const issues = e.validation.map((v) => ({
      path: `${context}${v.instancePath ? v.instancePath.replaceAll('/', '.') : ''}`,
      message: v.message ?? 'invalid',
    }));
    const message = `invalid ${context}: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`;
    return withId({ status: 400, code: 'INVALID_REQUEST', message, details: { issues } });
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code = CODE_OF_STATUS[status] ?? 'INVALID_REQUEST';
    const framework = e.code ? FRAMEWORK_MESSAGE[e.code] : undefined;
    const message = framework
      ? framework(e as FastifyError, request)
      : (e.message ?? STATUS_CODES[status] ?? 'invalid request');
    return withId({ status: ERROR_STATUS[code], code, message });
  }
  return withId({ status: 500, code: 'INTERNAL_ERROR', message: SAFE_5XX_MESSAGE.INTERNAL_ERROR! });
};

/** The ask stream's error codes (spec "Stream errors"): 429 rate limit, another 4xx invalid request, a 5xx internal. */
const streamCode = (status: number) =>
  status === 429 ? 'RATE_LIMIT_EXCEEDED' : status >= 500 ? 'INTERNAL_ERROR' : 'INVALID_REQUEST';

/**
 * A failure as one `error` event of the ask stream (spec "Events → Ask stream"): `{type: 'error', code, error}` with
 * code one of the spec's three, and details (a 5xx: request_id) as the JSON body would carry them.
 */
export const streamErrorEvent = (f: HttpFailure) => ({
  type: 'error' as const,
  code: streamCode(f.status),
  error: f.message,
  ...(f.details ? { details: f.details } : {}),
});

/**
 * Sends `f` as the shared JSON body, or on an ask stream route as a stream of one error event. A 404 NOT_FOUND (the
 * channel of a channel-scoped ask is unknown, docs/conventions.md "Unknown channel") stays the JSON body on every
 * route: the spec's stream error codes have no NOT_FOUND, and nothing is streamed about what does not exist.
 */
export const sendFailure = (request: FastifyRequest, reply: FastifyReply, f: HttpFailure): FastifyReply => {
  reply.status(f.status);
  if (request.routeOptions.config?.askStream && f.code !== 'NOT_FOUND')
    return reply
      .header('cache-control', 'no-cache, no-transform')
      .type('text/event-stream; charset=utf-8')
      .send(`data: ${JSON.stringify(streamErrorEvent(f))}\n\n`);
  return reply.send(errorBody(f.code, f.message, f.details));
};

/**
 * Fastify's `frameworkErrors` option: failures before routing (a malformed percent-encoding in the URL, a path
 * parameter over maxParamLength, 100 characters) answered like every other error (400 INVALID_REQUEST, the shared
 * body, `x-request-id`) instead of Fastify's own body. No hook has run for such a request.
 */
export const frameworkErrorHandler = (err: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
  const f = failureOf(err, request);
  request.log.debug({ status: f.status, code: f.code }, `request refused: ${f.message}`);
  void sendFailure(request, reply.header('x-request-id', request.id), f);
};

/**
 * The one HTTP error handler (ARCHITECTURE.md "Errors", docs/http.md "Errors"): every failure becomes
 * `{error: {code, message, details?}}` with the status of its code (failureOf), or on an ask stream route one error
 * event (sendFailure). A 5xx is logged at error level with the whole error (message, stack, cause) under the
 * request's id, which its body carries as details.request_id (also the `x-request-id` header); a 4xx is logged at
 * debug. A request whose connection is already gone (the client left, or the request timed out) is logged at debug.
 * Unknown routes: 405 METHOD_NOT_ALLOWED with an `Allow` header when the path exists under other methods, else
 * 404 NOT_FOUND.
 */
export const registerErrorHandling = (app: FastifyInstance): void => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (request.raw.socket?.destroyed && (err.code === 'ECONNRESET' || err.code === 'ERR_STREAM_PREMATURE_CLOSE')) {
      // The body stopped arriving: the client left, or the request timed out (answered 408 by clientErrorHandler).
      request.log.debug({ code: err.code }, `the connection closed mid-request: ${err.message}`);
      return reply.status(400).send(errorBody('INVALID_REQUEST', 'the connection closed before the request arrived'));
    }
    const f = failureOf(err, request);
    if (f.internal) request.log.error({ err, code: f.code }, `request failed: ${f.code}`);
    else request.log.debug({ status: f.status, code: f.code }, `request refused: ${f.message}`);
    return sendFailure(request, reply, f);
  });

  // Every route registered on the app, to tell "no such path" (404) from "not with this method" (405).
  const routes = FindMyWay();
  const seen = new Set<string>();
  // The web UI's catch-all (`GET /*`, routes/web.ts) is left out: a path it does not serve is no route at all.
  app.addHook('onRoute', (route) => {
    if (route.url === '/*') return;
    for (const method of [route.method].flat()) {
      const key = `${method} ${route.url}`;
      if (seen.has(key)) continue;
      seen.add(key);
      routes.on(method as FindMyWay.HTTPMethod, route.url, () => undefined);
    }
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    // HEAD is served only where GET is: a GET that found nothing (a missing file of a GET route) is a 404, not 405.
    const allowed = METHODS.filter(
      (m) =>
        m !== request.method &&
        !(m === 'HEAD' && request.method === 'GET') &&
        routes.find(m as FindMyWay.HTTPMethod, path),
    );
    if (allowed.length > 0)
      return sendFailure(request, reply.header('allow', allowed.join(', ')), {
        status: 405,
        code: 'METHOD_NOT_ALLOWED',
        message: `${request.method} is not allowed on ${path}: use ${allowed.join(', ')}`,
        details: { allow: allowed },
        internal: false,
      });
    return sendFailure(request, reply, {
      status: 404,
      code: 'NOT_FOUND',
      message: `route ${request.method} ${path} does not exist`,
      internal: false,
    });
  });
};
