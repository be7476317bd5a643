import { AtlasError } from '@atlas/core';
import type { FastifyPluginAsync } from 'fastify';

/**
 * `GET /api/me` (a documented addition, docs/access.md "Who am I"): the caller as the API sees it, so a client (the
 * web UI's sign-in) can check a key and show only what its role allows: `{name, kind, role, key_id, scope, identity}`
 * (packages/core Principal; `kind` `local` on the open loopback default, where no key is needed). Any role may ask;
 * without a valid key on a server that needs one, 401 UNAUTHORIZED like every route.
 */
export const meRoutes: FastifyPluginAsync = async (app) => {
  app.get('/api/me', async (request) => {
    const p = request.principal;
    if (!p) throw new AtlasError('UNAUTHORIZED', 'an API key is required: send "Authorization: Bearer <API key>"');
    return {
      name: p.name,
      kind: p.kind,
      role: p.role,
      key_id: p.key_id,
      scope: p.scope,
      identity: p.identity,
    };
  });
};
