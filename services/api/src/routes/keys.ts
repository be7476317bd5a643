import { AtlasError, ROLES } from '@atlas/core';
import type { ApiKeyStore } from '@atlas/stores';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

/** What the key routes read: the API key store. Absent: not registered. */
export interface KeyRoutesOptions {
  apiKeys?: Pick<ApiKeyStore, 'create' | 'list' | 'get' | 'revoke'> | null;
}

const Id = z.string().min(1).max(200);
/** Body of POST /api/admin/keys (docs/access.md "API keys"). */
export const NewKeyBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    role: z.enum(ROLES),
    scope: z
      .object({
        connections: z.array(Id).max(1000).nullable().default(null),
        channels: z.array(Id).max(10_000).nullable().default(null),
      })
      .strict()
      .nullable()
      .default(null)
      .refine((s) => s === null || s.connections !== null || s.channels !== null, {
        message: 'a scope names connections or channels (or is null)',
      }),
    identity: z
      .object({ platform: z.enum(['platform_a', 'platform_b']), user_id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/) })
      .strict()
      .nullable()
      .default(null),
    expires_at: z.iso.datetime({ offset: true }).nullable().default(null),
  })
  .strict();

/**
 * API key management (a documented addition, docs/access.md "API keys"; admins only, policy.ts):
 * - `GET /api/admin/keys` (`include_revoked=true` for revoked ones too): `{keys: [...]}`, never a key or its hash;
 * - `POST /api/admin/keys` {name, role, scope?, identity?, expires_at?}: 201 `{key, secret}`, the only time the key is
 *   shown; an expiry not in the future is 400 INVALID_REQUEST;
 * - `GET /api/admin/keys/{key_id}`: the record, 404 NOT_FOUND;
 * - `DELETE /api/admin/keys/{key_id}`: revokes (idempotent), 200 with the record; 404 NOT_FOUND.
 */
export const keyRoutes: FastifyPluginAsync<KeyRoutesOptions> = async (root, opts) => {
  const keys = opts.apiKeys;
  if (!keys) return;
  const app = root.withTypeProvider<ZodTypeProvider>();
  const notFound = (id: string) => new AtlasError('NOT_FOUND', `no API key ${id}`);

  app.get(
    '/api/admin/keys',
    { schema: { querystring: z.object({ include_revoked: z.enum(['true', 'false']).default('false') }) } },
    async (request) => ({ keys: await keys.list({ includeRevoked: request.query.include_revoked === 'true' }) }),
  );
  app.post('/api/admin/keys', { schema: { body: NewKeyBody } }, async (request, reply) => {
    const b = request.body;
    if (b.expires_at !== null && Date.parse(b.expires_at) <= Date.now())
      throw new AtlasError('INVALID_REQUEST', 'expires_at must lie in the future');
    const created = await keys.create({
      name: b.name,
      role: b.role,
      scope: b.scope,
      identity: b.identity,
      expires_at: b.expires_at === null ? null : new Date(b.expires_at).toISOString(),
    });
    return reply.status(201).send(created);
  });
  app.get('/api/admin/keys/:key_id', { schema: { params: z.object({ key_id: Id }) } }, async (request) => {
    const k = await keys.get(request.params.key_id);
    if (!k) throw notFound(request.params.key_id);
    return k;
  });
  app.delete('/api/admin/keys/:key_id', { schema: { params: z.object({ key_id: Id }) } }, async (request) => {
    const k = await keys.revoke(request.params.key_id);
    if (!k) throw notFound(request.params.key_id);
    return k;
  });
};
