import Fastify from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AclRefreshResultSchema, ErrorBodySchema } from './contract/index.js';
import { registerErrorHandling } from './errors.js';
import { type AclRefreshBody, aclRoutes } from './routes/acl.js';

describe('POST /api/admin/acl/refresh (routes/acl.ts)', () => {
  const asked: AclRefreshBody[] = [];
  const app = Fastify();
  beforeAll(async () => {
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    registerErrorHandling(app);
    await app.register(aclRoutes, {
      refreshAcl: async (req) => {
        asked.push(req);
        return {
          user_id: req.user_id,
          refreshed_at: '2026-03-01T12:00:00.000Z',
          channels_checked: 3,
          private_channels: 1,
          visible_private_channels: ['C1'],
          failed: [{ channel_id: 'C3', code: 'CHANNEL_NOT_FOUND' }],
          caught_up: true,
        };
      },
    });
  });
  afterAll(() => app.close());

  it('answers the refresh result for a user_id (the documented shape)', async () => {
    const r = await app.inject({ method: 'POST', url: '/api/admin/acl/refresh', payload: { user_id: ' U1 ' } });
    expect(r.statusCode).toBe(200);
    expect(AclRefreshResultSchema.parse(r.json())).toMatchObject({ user_id: 'U1', visible_private_channels: ['C1'] });
    expect(asked.at(-1)).toEqual({ user_id: 'U1' });
    await app.inject({
      method: 'POST',
      url: '/api/admin/acl/refresh',
      payload: { user_id: '123456789012345678', platform: 'platform_b' },
    });
    expect(asked.at(-1)).toEqual({ user_id: '123456789012345678', platform: 'platform_b' });
  });

  it.each([
    ['no body', undefined],
    ['no user_id', {}],
    ['an empty user_id', { user_id: '  ' }],
    ['a user_id that is not a string', { user_id: 42 }],
    ['an unknown platform', { user_id: 'U1', platform: 'irc' }],
    ['an unknown field', { user_id: 'U1', everyone: true }],
  ])('400 INVALID_REQUEST with the shared error body for %s', async (_, payload) => {
    const n = asked.length;
    const r = await app.inject({
      method: 'POST',
      url: '/api/admin/acl/refresh',
      ...(payload === undefined ? {} : { payload }),
    });
    expect(r.statusCode).toBe(400);
    expect(ErrorBodySchema.parse(r.json()).error.code).toBe('INVALID_REQUEST');
    expect(asked.length).toBe(n);
  });

  it('is not registered without a refresh port', async () => {
    const bare = Fastify();
    await bare.register(aclRoutes, {});
    expect(
      (await bare.inject({ method: 'POST', url: '/api/admin/acl/refresh', payload: { user_id: 'U1' } })).statusCode,
    ).toBe(404);
    await bare.close();
  });
});
