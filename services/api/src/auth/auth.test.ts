import type { ChannelAccessView, PlatformIdentity } from '@atlas/core';
import { errorBody } from '@atlas/core';
import { ApiKeyStore, migrateApiKeys } from '@atlas/stores';
import { type TestDatabase, testDatabases } from '@atlas/stores/testing';
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keyRoutes } from '../routes/keys.js';
import { type AuditEntry, type AuthOptions, BRIDGE_KEY_HEADER, BRIDGE_USER_HEADER, registerAuth } from './auth.js';
import { isLoopbackHost, startPosture } from './posture.js';
import { registerVisibility } from './visibility.js';

const { open } = testDatabases()[0]!; // the embedded database: the hook's logic, not the store's, is under test here

/** A small app with the auth hook and three routes of each kind (public, reader, admin) plus the key routes. */
const appWith = async (store: ApiKeyStore, opts: Partial<AuthOptions> = {}): Promise<FastifyInstance> => {
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler((err: { statusCode?: number; message: string }, _req, reply) =>
    reply.status(err.statusCode ?? 500).send(errorBody('INVALID_REQUEST', err.message)),
  );
  registerAuth(app, { keys: store, ...opts });
  app.get('/api/health', async () => ({ status: 'healthy' }));
  app.get('/api/channels', async (r) => ({ principal: r.principal }));
  app.post('/api/ask', async (r) => ({ principal: r.principal }));
  app.delete('/api/channels/:channel_id/data', async () => ({ deleted: true }));
  await app.register(keyRoutes, { apiKeys: store });
  return app;
};

describe('the auth hook (services/api/src/auth)', () => {
  let h: TestDatabase;
  let store: ApiKeyStore;
  const apps: FastifyInstance[] = [];
  const make = async (opts: Partial<AuthOptions> = {}) => {
    const app = await appWith(store, opts);
    apps.push(app);
    return app;
  };
  beforeAll(async () => {
    h = await open();
    await migrateApiKeys(h.db);
    store = new ApiKeyStore(h.db);
  });
  afterEach(async () => {
    for (const a of apps.splice(0)) await a.close();
    await h.db.withTables<{ api_keys: { key_id: string } }>().deleteFrom('api_keys').execute();
  });
  afterAll(() => h?.close());

  it('is open to local callers on a loopback HOST with no key, and closes once a key exists', async () => {
    const app = await make({ host: '127.0.0.1' });
    const open = await app.inject({ method: 'DELETE', url: '/api/channels/C1/data' });
    expect(open.statusCode).toBe(200);
    const created = await app.inject({
      method: 'POST',
      url: '/api/admin/keys',
      payload: { name: 'first', role: 'admin' },
    });
    expect(created.statusCode).toBe(201);
    const { secret, key } = created.json();
    expect(secret).toMatch(/^atlas_[A-Za-z0-9_-]{43}$/);
    expect(key).not.toHaveProperty('key_hash');
    await new Promise((r) => setTimeout(r, 2_100)); // the "any key configured" answer is kept 2 s
    const closed = await app.inject({ method: 'GET', url: '/api/channels' });
    expect(closed.statusCode).toBe(401);
    expect(closed.headers['www-authenticate']).toBe('Bearer realm="atlas"');
    expect(closed.json().error.code).toBe('UNAUTHORIZED');
    const withKey = await app.inject({
      method: 'GET',
      url: '/api/channels',
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(withKey.statusCode).toBe(200);
    expect(withKey.json().principal).toMatchObject({ kind: 'key', key_id: key.key_id, role: 'admin' });
    // Revoked through the route: refused from the next request on, and the health route stays public.
    expect(
      (
        await app.inject({
          method: 'DELETE',
          url: `/api/admin/keys/${key.key_id}`,
          headers: { authorization: `Bearer ${secret}` },
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (await app.inject({ method: 'GET', url: '/api/channels', headers: { authorization: `Bearer ${secret}` } }))
        .statusCode,
    ).toBe(401);
    expect(
      (await app.inject({ method: 'GET', url: '/api/health', headers: { authorization: `Bearer ${secret}` } }))
        .statusCode,
    ).toBe(200);
  }, 20_000);

  it('is never open on a non-loopback HOST: no key is 401 even with an empty store', async () => {
    const app = await make({ host: '0.0.0.0' });
    expect((await app.inject({ method: 'GET', url: '/api/channels' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
  });

  it('refuses a Host header outside the allow-list on a loopback HOST (DNS rebinding), and takes ALLOWED_HOSTS', async () => {
    const app = await make({ host: '127.0.0.1', allowedHosts: ['atlas.internal'] });
    const get = (host: string) => app.inject({ method: 'GET', url: '/api/channels', headers: { host } });
    expect((await get('attacker.example:8000')).statusCode).toBe(403);
    expect((await get('attacker.example:8000')).json().error.code).toBe('FORBIDDEN');
    for (const ok of ['localhost:8000', '127.0.0.1', '[::1]:8000', 'atlas.internal:443'])
      expect((await get(ok)).statusCode, ok).toBe(200);
  });

  it('gives reader, member and admin keys what their role allows (403 FORBIDDEN otherwise)', async () => {
    const app = await make({ host: '0.0.0.0' });
    const reader = (await store.create({ name: 'r', role: 'reader' })).secret;
    const member = (await store.create({ name: 'm', role: 'member' })).secret;
    const as = (k: string, method: 'GET' | 'POST' | 'DELETE', url: string) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${k}` } });
    expect((await as(reader, 'GET', '/api/channels')).statusCode).toBe(200);
    expect((await as(reader, 'POST', '/api/ask')).statusCode).toBe(403);
    expect((await as(member, 'POST', '/api/ask')).statusCode).toBe(200);
    expect((await as(member, 'DELETE', '/api/channels/C1/data')).statusCode).toBe(403);
    expect((await as(member, 'GET', '/api/admin/keys')).statusCode).toBe(403);
  });

  it('takes the bridge as a member acting for the invoking user; refuses a wrong or unset bridge key; never takes a bare request for it', async () => {
    const bridged = await make({ host: '0.0.0.0', bridgeKey: 'the-bridge-key' });
    const res = await bridged.inject({
      method: 'POST',
      url: '/api/ask',
      headers: { [BRIDGE_KEY_HEADER]: 'the-bridge-key', [BRIDGE_USER_HEADER]: 'platform_b:80351110224678912' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().principal).toMatchObject({
      kind: 'bridge',
      role: 'member',
      identity: { platform: 'platform_b', user_id: '80351110224678912' },
    });
    expect(
      (
        await bridged.inject({
          method: 'DELETE',
          url: '/api/channels/C1/data',
          headers: { [BRIDGE_KEY_HEADER]: 'the-bridge-key' },
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (await bridged.inject({ method: 'POST', url: '/api/ask', headers: { [BRIDGE_KEY_HEADER]: 'nope' } })).statusCode,
    ).toBe(401);
    expect((await bridged.inject({ method: 'POST', url: '/api/ask' })).statusCode).toBe(401);
    const unset = await make({ host: '127.0.0.1' }); // open loopback default, no BRIDGE_API_KEY: the header is refused
    const r = await unset.inject({ method: 'GET', url: '/api/channels', headers: { [BRIDGE_KEY_HEADER]: 'anything' } });
    expect(r.statusCode).toBe(401);
    expect(r.json().error.message).toMatch(/BRIDGE_API_KEY is not set/);
  });

  it('limits per address before authentication and per key after it: 429 with Retry-After', async () => {
    const app = await make({ host: '0.0.0.0', rateLimit: { perAddressPerMinute: 1000, perKeyPerMinute: 3 } });
    const k = (await store.create({ name: 'busy', role: 'reader' })).secret;
    const codes: number[] = [];
    for (let i = 0; i < 4; i++)
      codes.push(
        (await app.inject({ method: 'GET', url: '/api/channels', headers: { authorization: `Bearer ${k}` } }))
          .statusCode,
      );
    expect(codes).toEqual([200, 200, 200, 429]);
    const limited = await app.inject({
      method: 'GET',
      url: '/api/channels',
      headers: { authorization: `Bearer ${k}` },
    });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json().error).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      details: { retry_after: expect.any(Number) },
    });
    const byAddress = await make({ host: '0.0.0.0', rateLimit: { perAddressPerMinute: 2, perKeyPerMinute: 100 } });
    const anon: number[] = [];
    for (let i = 0; i < 3; i++) anon.push((await byAddress.inject({ method: 'GET', url: '/api/channels' })).statusCode);
    expect(anon).toEqual([401, 401, 429]); // counted before the key is even looked at
  });

  it('records denials, key use (once a minute) and admin actions in the audit trail', async () => {
    const entries: AuditEntry[] = [];
    const app = await make({ host: '0.0.0.0', audit: (e) => entries.push(e) });
    const { secret, key } = await store.create({ name: 'ops', role: 'admin' });
    const auth = { authorization: `Bearer ${secret}` };
    await app.inject({ method: 'GET', url: '/api/channels' });
    await app.inject({ method: 'GET', url: '/api/channels', headers: auth });
    await app.inject({ method: 'GET', url: '/api/channels', headers: auth });
    await app.inject({ method: 'DELETE', url: '/api/channels/C1/data', headers: auth });
    expect(entries.map((e) => e.action)).toEqual(['access_denied', 'key_used', 'admin_action']);
    expect(entries[2]).toMatchObject({
      principal: 'ops',
      key_id: key.key_id,
      method: 'DELETE',
      route: '/api/channels/:channel_id/data',
      status: 200,
    });
    await new Promise((r) => setTimeout(r, 50));
    expect((await store.get(key.key_id))?.last_used_at).not.toBeNull();
  });
});

describe('channel visibility (services/api/src/auth/visibility.ts)', () => {
  let h: TestDatabase;
  let store: ApiKeyStore;
  let app: FastifyInstance;
  /** C1 public, C2 private to U1, C3 private to U2 (what the channel-access read model would answer). */
  const access: ChannelAccessView = {
    hiddenChannels: async (who: PlatformIdentity | null) =>
      new Set(
        ['C2', 'C3'].filter((c) => !(who?.user_id === 'U1' && c === 'C2') && !(who?.user_id === 'U2' && c === 'C3')),
      ),
  };
  beforeAll(async () => {
    h = await open();
    await migrateApiKeys(h.db);
    store = new ApiKeyStore(h.db);
    app = Fastify();
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, _req, reply) =>
      reply
        .status(err.statusCode ?? (err.code === 'NOT_FOUND' ? 404 : 400))
        .send(errorBody('INVALID_REQUEST', err.message)),
    );
    registerAuth(app, { keys: store, host: '0.0.0.0' });
    registerVisibility(app, { access });
    app.get('/api/channels', async () => ['C1', 'C2', 'C3'].map((id) => ({ id })));
    app.get('/api/memories', async (r) => ({ channel_id: (r.query as { channel_id?: string }).channel_id ?? null }));
    app.get('/api/memories/:memory_id', async (r) => ({
      id: (r.params as { memory_id: string }).memory_id,
      channel_id: 'C3',
    }));
  });
  afterAll(async () => {
    await app?.close();
    await h?.close();
  });

  it('hides private channels from keys whose identity is not a member, and limits scoped keys to their scope', async () => {
    const u1 = (await store.create({ name: 'u1', role: 'reader', identity: { platform: 'platform_a', user_id: 'U1' } }))
      .secret;
    const anon = (await store.create({ name: 'no identity', role: 'reader' })).secret;
    const scoped = (
      await store.create({ name: 'c1 only', role: 'reader', scope: { channels: ['C1'], connections: null } })
    ).secret;
    const admin = (await store.create({ name: 'admin', role: 'admin' })).secret;
    const get = async (k: string, url: string) => {
      const r = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${k}` } });
      return { status: r.statusCode, body: r.json() };
    };
    expect((await get(u1, '/api/channels')).body).toEqual([{ id: 'C1' }, { id: 'C2' }]);
    expect((await get(anon, '/api/channels')).body).toEqual([{ id: 'C1' }]);
    expect((await get(scoped, '/api/channels')).body).toEqual([{ id: 'C1' }]);
    expect((await get(admin, '/api/channels')).body).toHaveLength(3);
    expect((await get(u1, '/api/memories?channel_id=C2')).status).toBe(200);
    // A hidden channel answers exactly as an unknown one.
    const hidden = await get(u1, '/api/memories?channel_id=C3');
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.message).toBe("channel 'C3' was not found");
    expect((await get(scoped, '/api/memories?channel_id=C2')).status).toBe(404);
    // Reads across channels need a channel named; a single object of a hidden channel is 404.
    expect((await get(u1, '/api/memories')).status).toBe(400);
    expect((await get(admin, '/api/memories')).status).toBe(200);
    expect((await get(u1, '/api/memories/m1')).status).toBe(404);
    expect((await get(admin, '/api/memories/m1')).status).toBe(200);
  });
});

describe('the start posture', () => {
  it('knows loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.5', 'atlas.example.com']) expect(isLoopbackHost(h), h).toBe(false);
  });
  it('opens a loopback HOST without keys, refuses any other HOST without keys, and refuses CORS * with credentials', () => {
    const base = { adminKey: null, usableKeys: 0, corsOrigins: [], corsCredentials: false };
    expect(startPosture({ ...base, host: '127.0.0.1' }).mode).toBe('open');
    expect(() => startPosture({ ...base, host: '0.0.0.0' })).toThrow(/ATLAS_ADMIN_API_KEY/);
    expect(startPosture({ ...base, host: '0.0.0.0', usableKeys: 1 }).mode).toBe('keys');
    expect(startPosture({ ...base, host: '0.0.0.0', adminKey: 'x'.repeat(32) }).mode).toBe('keys');
    expect(() => startPosture({ ...base, host: '127.0.0.1', corsOrigins: ['*'], corsCredentials: true })).toThrow(
      /CORS/,
    );
    expect(startPosture({ ...base, host: '127.0.0.1', corsOrigins: ['*'], corsCredentials: false }).mode).toBe('open');
  });
});
