import { createHash, timingSafeEqual } from 'node:crypto';
import { errorBody } from '@atlas/core';
import type { FastifyInstance } from 'fastify';

/** The header the bot sends BRIDGE_API_KEY in (spec "Authentication" 3: the bot and the backend share a secret). */
export const BRIDGE_KEY_HEADER = 'x-atlas-bridge-key';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The backend's side of the bridge key (spec "Authentication" 3): with `key` (BRIDGE_API_KEY) set, a request that
 * carries `x-atlas-bridge-key` with another value is answered 401 `{error: {code: UNAUTHORIZED}}` before any route
 * runs (constant-time comparison of SHA-256 digests). A request without the header is an ordinary API caller and
 * passes (this build has no caller authentication: spec "Authentication" 5 leaves the scheme open). No key: no check.
 */
export const registerBridgeAuth = (app: FastifyInstance, key: string | null | undefined): void => {
  if (!key) return;
  const want = digest(key);
  app.addHook('onRequest', async (request, reply) => {
    const got = request.headers[BRIDGE_KEY_HEADER];
    if (got === undefined) return;
    if (!timingSafeEqual(digest(Array.isArray(got) ? got.join(',') : got), want))
      return reply
        .status(401)
        .send(errorBody('UNAUTHORIZED', `the ${BRIDGE_KEY_HEADER} header does not match BRIDGE_API_KEY`));
  });
};
