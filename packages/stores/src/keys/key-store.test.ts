import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabases } from '../testing.js';
import { API_KEY_PREFIX, ApiKeyStore, hashApiKey } from './key-store.js';
import { migrateApiKeys } from './migrations.js';

for (const { name, open } of testDatabases()) {
  describe(`${name}: ApiKeyStore`, () => {
    let h: TestDatabase;
    let store: ApiKeyStore;
    beforeAll(async () => {
      h = await open();
      await migrateApiKeys(h.db);
      await migrateApiKeys(h.db); // idempotent
      store = new ApiKeyStore(h.db);
    });
    afterAll(() => h?.close());

    it('creates a 256-bit key shown once, keeps only its hash, and finds it by the key', async () => {
      expect(await store.countUsable()).toBe(0);
      const { key, secret } = await store.create({ name: 'ci', role: 'reader' });
      expect(secret.startsWith(API_KEY_PREFIX)).toBe(true);
      expect(Buffer.from(secret.slice(API_KEY_PREFIX.length), 'base64url').length).toBe(32);
      expect(key).toMatchObject({ name: 'ci', role: 'reader', prefix: secret.slice(0, 12), revoked_at: null });
      expect(JSON.stringify(await store.list())).not.toContain(secret);
      const raw = await h.db
        .withTables<{ api_keys: { key_hash: string } }>()
        .selectFrom('api_keys')
        .selectAll()
        .execute();
      expect(JSON.stringify(raw)).not.toContain(secret.slice(12));
      expect(raw[0]!.key_hash).toBe(hashApiKey(secret));
      expect(await store.check(secret)).toEqual({ ok: true, key });
      expect(await store.check(`${secret}x`)).toEqual({ ok: false, reason: 'unknown', key_id: null });
      expect(await store.countUsable()).toBe(1);
    });

    it('keeps scope and identity, refuses an expired key and a revoked one', async () => {
      const t0 = new Date('2026-01-01T00:00:00Z');
      const scoped = await store.create(
        {
          name: 'agent',
          role: 'member',
          scope: { connections: null, channels: ['C1'] },
          identity: { platform: 'platform_a', user_id: 'U1' },
          expires_at: '2026-01-02T00:00:00.000Z',
        },
        t0,
      );
      expect(scoped.key.scope).toEqual({ connections: null, channels: ['C1'] });
      expect(scoped.key.identity).toEqual({ platform: 'platform_a', user_id: 'U1' });
      expect((await store.check(scoped.secret, new Date('2026-01-01T12:00:00Z'))).ok).toBe(true);
      expect(await store.check(scoped.secret, new Date('2026-01-02T00:00:00Z'))).toEqual({
        ok: false,
        reason: 'expired',
        key_id: scoped.key.key_id,
      });
      const revoked = await store.revoke(scoped.key.key_id, new Date('2026-01-01T06:00:00Z'));
      expect(revoked?.revoked_at).toBe('2026-01-01T06:00:00.000Z');
      expect((await store.revoke(scoped.key.key_id))?.revoked_at).toBe('2026-01-01T06:00:00.000Z'); // idempotent
      expect((await store.check(scoped.secret, t0)).ok).toBe(false);
      expect(await store.revoke('key_unknown')).toBeNull();
      expect((await store.list()).map((k) => k.name)).not.toContain('agent');
      expect((await store.list({ includeRevoked: true })).map((k) => k.name)).toContain('agent');
      await store.touch(scoped.key.key_id, t0);
      expect((await store.get(scoped.key.key_id))?.last_used_at).toBe(t0.toISOString());
    });
  });
}
