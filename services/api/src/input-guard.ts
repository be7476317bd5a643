import { AtlasError } from '@atlas/core';
import type { FastifyInstance } from 'fastify';

/**
 * The dotted path of the first string (or object key) holding a NUL character (U+0000) in `value`, prefixed by
 * `where` (`body.question`, `params.memory_id`, `querystring.channel_id`, `body.attachments.0.name`); null when there
 * is none. Walks objects and arrays iteratively (any depth; Buffers and other non-plain values are skipped).
 */
export const findNul = (value: unknown, where: string): string | null => {
  const stack: [unknown, string][] = [[value, where]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return at;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${at}.${i}`]);
    } else if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v) && !ArrayBuffer.isView(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (k.includes('\u0000')) return `${at}.${k.replaceAll('\u0000', '\\u0000')}`;
        stack.push([x, `${at}.${k}`]);
      }
    }
  }
  return null;
};

/**
 * Throws AtlasError INVALID_REQUEST (400) when `value` holds a NUL character anywhere (findNul): PostgreSQL refuses
 * NUL in text, so such input would fail deep in a store as a 500. details.issues names the field, like a validation
 * failure: `[{path, message}]`.
 */
export const assertNoNul = (value: unknown, where: string): void => {
  const at = findNul(value, where);
  if (at)
    throw new AtlasError('INVALID_REQUEST', `invalid ${where}: ${at} contains a NUL character (\\u0000)`, {
      details: { issues: [{ path: at, message: 'must not contain a NUL character (\\u0000)' }] },
    });
};

/**
 * Refuses NUL characters at the edge, once for every route: a preValidation hook checks the path
 * parameters, the query string and the parsed body (JSON strings and keys at any depth, a text body) before any
 * schema or handler sees them; 400 INVALID_REQUEST (on an ask stream route: a 400 stream of one error event).
 * Multipart fields are read by their route (POST /api/ask/upload), which passes them to assertNoNul.
 */
export const registerInputGuard = (app: FastifyInstance): void => {
  app.addHook('preValidation', async (request) => {
    assertNoNul(request.params, 'params');
    assertNoNul(request.query, 'querystring');
    assertNoNul(request.body, 'body');
  });
};
