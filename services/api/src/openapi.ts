import { ERROR_STATUS, type ErrorCode } from '@atlas/core';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import apiPackage from '../package.json' with { type: 'json' };
import { routeAccess } from './auth/policy.js';
import {
  AskErrorEventSchema,
  AskStreamEventSchema,
  additionContractOf,
  contractOf,
  DOCUMENTED_ROUTE_ADDITIONS,
  ErrorBodySchema,
  type ResponseContract,
  routeShapeKey,
  StatsExportSchema,
} from './contract/index.js';

/** Where the document and its interactive page are served (docs/openapi.md). */
export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PREFIX = '/api/docs';

/**
 * Error codes a route can answer beyond the ones every route shares (routeErrorCodes), by `METHOD /path` as Fastify
 * registers it (`:param`). Kept true by the route-shape suite: an error it sees that the document does not declare
 * for that route fails it.
 */
const ROUTE_ERROR_CODES: Readonly<Record<string, readonly ErrorCode[]>> = {
  'POST /api/sync': ['CONFLICT', 'PLATFORM_ERROR', 'AUTH_ERROR', 'RATE_LIMIT', 'CHANNEL_NOT_FOUND'],
  'POST /api/channels/:channel_id/sync': ['CONFLICT', 'PLATFORM_ERROR', 'AUTH_ERROR', 'RATE_LIMIT'],
  'POST /api/sync/cancel': ['CONFLICT'],
  'POST /api/connections/:connection_id/validate': ['PLATFORM_ERROR', 'AUTH_ERROR', 'RATE_LIMIT'],
  'GET /api/connections/:connection_id/channels': ['PLATFORM_ERROR', 'AUTH_ERROR', 'RATE_LIMIT'],
  'POST /api/connections': ['PLATFORM_ERROR', 'AUTH_ERROR', 'RATE_LIMIT', 'CONFLICT'],
  'PUT /api/connections/:connection_id': ['PLATFORM_ERROR', 'AUTH_ERROR', 'RATE_LIMIT', 'CONFLICT'],
  'POST /api/wiki/refresh': ['CONFLICT'],
  'POST /api/admin/wiki/rebuild': ['CONFLICT'],
  'POST /api/ask/upload': ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'IMPORT_FAILED'],
  'POST /api/channels/:channel_id/ask/upload': ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'IMPORT_FAILED'],
  'POST /api/admin/dead-letters/:id/redrive': ['CONFLICT'],
  'POST /api/imports': ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'IMPORT_FAILED', 'CONFLICT'],
};

/**
 * The error codes `method route` can answer (route as Fastify registers it, `:param` segments), from what the edge
 * does to every request and what the route takes (docs/http.md, docs/access.md):
 * - every route: INVALID_REQUEST (parameters, body, NUL bytes), NOT_FOUND (an id, channel, session or job that does
 *   not exist or that the caller may not see; declared on every route, a superset for the few that take none),
 *   RATE_LIMIT_EXCEEDED, REQUEST_TIMEOUT, REQUEST_HEADERS_TOO_LARGE, INTERNAL_ERROR, STORE_UNAVAILABLE;
 * - a route that needs a key (not `public` in auth/policy.ts): UNAUTHORIZED, FORBIDDEN;
 * - a body: PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE;
 * - ask, search and the memory search (the embedder, the LLM): PROVIDER_UNAVAILABLE;
 * - and ROUTE_ERROR_CODES' own.
 */
export const routeErrorCodes = (method: string, route: string, takes: { body: boolean }): ErrorCode[] => {
  const codes = new Set<ErrorCode>([
    'INVALID_REQUEST',
    'NOT_FOUND',
    'RATE_LIMIT_EXCEEDED',
    'REQUEST_TIMEOUT',
    'REQUEST_HEADERS_TOO_LARGE',
    'INTERNAL_ERROR',
    'STORE_UNAVAILABLE',
  ]);
  if (routeAccess(method, route) !== 'public') for (const c of ['UNAUTHORIZED', 'FORBIDDEN'] as const) codes.add(c);
  if (takes.body) for (const c of ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const) codes.add(c);
  if (/\/(ask|search)\b/.test(route)) codes.add('PROVIDER_UNAVAILABLE');
  for (const c of ROUTE_ERROR_CODES[`${method} ${route}`] ?? []) codes.add(c);
  return [...codes];
};

/** The shared error body restricted to `codes` (spec "Errors"; contract ErrorBodySchema). */
const errorBody = (codes: readonly ErrorCode[]) =>
  z.strictObject({
    error: ErrorBodySchema.shape.error.extend({ code: z.enum(codes as [ErrorCode, ...ErrorCode[]]) }),
  });

/**
 * One response entry per error status, each with the codes of that status; on an ask stream (`sse`) the error may
 * also come as a stream of one `error` event (routes/ask.ts: invalid body 400, unknown channel 404, 413, 415, 429).
 */
const errorResponses = (codes: readonly ErrorCode[], sse: boolean): Record<string, unknown> => {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) byStatus.set(ERROR_STATUS[c], [...(byStatus.get(ERROR_STATUS[c]) ?? []), c]);
  return Object.fromEntries(
    [...byStatus].map(([status, cs]) => [
      String(status),
      {
        description: `The shared error body: ${cs.join(', ')}`,
        content: {
          'application/json': { schema: errorBody(cs) },
          ...(sse ? { 'text/event-stream': { schema: AskErrorEventSchema } } : {}),
        },
      },
    ]),
  );
};

/** The success response of a contract (contract/routes.ts) as @fastify/swagger reads it (zod schemas converted later). */
const successResponse = (c: ResponseContract): Record<string, unknown> => {
  switch (c.kind) {
    case 'json':
      return { [c.status]: { description: 'Success', content: { 'application/json': { schema: c.schema } } } };
    case 'empty':
      return { 204: z.null().describe('Done; no body') };
    case 'export':
      return {
        200: {
          description: 'The export: JSON by default, CSV with format=csv',
          content: { 'application/json': { schema: StatsExportSchema }, 'text/csv': { schema: z.string() } },
        },
      };
    case 'sse':
      return {
        200: {
          description:
            'The answer as Server-Sent Events (spec "Events → Ask stream"): `token` events, then `citation` events, then one `done`, or an `error` that ends the stream. Each SSE `data:` line is one JSON object of this schema.',
          content: { 'text/event-stream': { schema: AskStreamEventSchema } },
        },
      };
  }
};

/** The success of a documented addition whose body has no schema in the contract yet: a JSON value. */
const UNTYPED_JSON = {
  200: {
    description: 'Success (JSON; described in the docs named above)',
    content: { 'application/json': { schema: z.unknown() } },
  },
};

/** The success responses of the additions that have no schema in the contract. */
const DOCUMENT_RESPONSES: Readonly<Record<string, Record<string, unknown>>> = {
  [`GET ${OPENAPI_PATH}`]: {
    200: {
      description: 'This document (OpenAPI 3.1)',
      content: {
        'application/json': {
          schema: z.looseObject({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) }),
        },
      },
    },
  },
};

const additions = new Map(DOCUMENTED_ROUTE_ADDITIONS.map((a) => [routeShapeKey(a.route), a.documented]));

/**
 * Registers the OpenAPI 3.1 document of the `/api` routes at GET /api/openapi.json and its interactive page (Swagger
 * UI) at GET /api/docs (issue 25 point 1; docs/openapi.md). One source of truth: each operation's parameters and body
 * are the zod schemas the route validates with (fastify-type-provider-zod's jsonSchemaTransform), its success
 * response the contract's schema (contract/routes.ts, the schemas the route-shape suite validates against), its
 * errors the shared error body with the codes the route can answer (routeErrorCodes), its security the API key
 * scheme with the role it needs (auth/policy.ts). Routes outside `/api` (the HTML wiki, `/metrics`) are left out.
 * Call before the routes are registered: the document is collected from their onRoute events.
 */
export const registerOpenApi = async (app: FastifyInstance): Promise<void> => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Atlas API',
        version: apiPackage.version,
        description:
          'Atlas turns chat history into a knowledge base: facts, a knowledge graph, a wiki per channel, hybrid search and answers with citations. Every failure answers the shared error body `{error: {code, message, details?}}`.',
      },
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key: `Authorization: Bearer <key>` (ATLAS_ADMIN_API_KEY, or a key from POST /api/admin/keys). A key holds a role (reader < member < admin) and may be scoped to channels (docs/access.md).',
          },
        },
      },
    },
    hideUntagged: false,
    transformObject: jsonSchemaTransformObject, // shared sub-schemas as components (their $refs resolve)
    transform: (doc) => {
      const { schema, url, route } = doc;
      const method = String(Array.isArray(route.method) ? route.method[0] : route.method);
      if (!url.startsWith('/api/') || url.startsWith(DOCS_PREFIX) || method === 'HEAD')
        return { schema: { ...schema, hide: true }, url };
      const key = `${method} ${url}`;
      const contract = contractOf(key) ?? additionContractOf(key);
      const access = routeAccess(method, url);
      const documented = additions.get(routeShapeKey(key));
      const s = schema ?? {};
      const codes = routeErrorCodes(method, url, { body: 'body' in s && s.body !== undefined });
      return jsonSchemaTransform({
        ...doc,
        schema: {
          ...s,
          tags: [url.split('/')[2] ?? 'api'],
          ...(access === 'public' ? { security: [] } : { security: [{ apiKey: [] }] }),
          description: [
            access === 'public' ? 'Public: no key needed.' : `Needs a key with the role ${access} or above.`,
            documented ? `Beyond the spec's endpoints.txt; documented in ${documented}.` : '',
          ]
            .filter(Boolean)
            .join(' '),
          response: {
            ...(contract ? successResponse(contract.contract) : (DOCUMENT_RESPONSES[key] ?? UNTYPED_JSON)),
            ...errorResponses(codes, contract?.contract.kind === 'sse'),
          },
        },
      });
    },
  });
  app.get(OPENAPI_PATH, async () => app.swagger());
  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX, uiConfig: { deepLinking: true } });
};
