import { randomUUID } from 'node:crypto';
import type { ChannelMembershipObserved, StoredEvent } from '@atlas/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabases } from '../testing.js';
import { ChannelAccessStore } from './access-store.js';
import { migrateAccess } from './migrations.js';

const HOUR = 3_600_000;
const NOW = new Date('2026-03-01T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
let offset = 0;
const observed = (
  over: Partial<ChannelMembershipObserved> & { channelId: string },
): StoredEvent<'ChannelMembershipObserved'> => ({
  type: 'ChannelMembershipObserved',
  key: over.channelId,
  data: {
    connectionId: 'conn-1',
    platform: 'platform_a',
    isPrivate: true,
    members: ['U1', 'U2'],
    source: 'sync',
    observedAt: ago(60_000),
    ...over,
  },
  topic: 'atlas.access',
  partition: 0,
  offset: offset++,
  timestamp: Date.now(),
});
const ch = () => `C${randomUUID().slice(0, 8)}`;
const alice = { platform: 'platform_a', user_id: 'U1' } as const;
const carol = { platform: 'platform_a', user_id: 'U3' } as const;

for (const { name, open } of testDatabases()) {
  describe(`${name}: ChannelAccessStore`, () => {
    let db: TestDatabase;
    let store: ChannelAccessStore;
    beforeAll(async () => {
      db = await open();
      await migrateAccess(db.db);
      await migrateAccess(db.db); // idempotent
      store = new ChannelAccessStore(db.db, { refreshIntervalMs: HOUR });
    });
    afterAll(() => db.close());

    it('a private channel is visible only to its members; public and unknown channels are never hidden', async () => {
      const priv = ch();
      const pub = ch();
      await store.apply([observed({ channelId: priv }), observed({ channelId: pub, isPrivate: false, members: null })]);
      expect((await store.hiddenChannels(alice, NOW)).has(priv)).toBe(false);
      expect((await store.hiddenChannels(carol, NOW)).has(priv)).toBe(true);
      expect((await store.hiddenChannels(null, NOW)).has(priv)).toBe(true);
      for (const who of [alice, carol, null]) expect((await store.hiddenChannels(who, NOW)).has(pub)).toBe(false);
      expect(await store.visiblePrivateChannels(alice, NOW)).toContain(priv);
      expect(await store.visiblePrivateChannels(carol, NOW)).not.toContain(priv);
    });

    it('an identity of the other platform with the same user id is not a member', async () => {
      const priv = ch();
      await store.apply([observed({ channelId: priv })]);
      expect((await store.hiddenChannels({ platform: 'platform_b', user_id: 'U1' }, NOW)).has(priv)).toBe(true);
    });

    it('fails closed: private membership older than two refresh periods hides the channel from its members too', async () => {
      const fresh = ch();
      const stale = ch();
      await store.apply([
        observed({ channelId: fresh, observedAt: ago(2 * HOUR - 1000) }),
        observed({ channelId: stale, observedAt: ago(2 * HOUR + 1000) }),
      ]);
      const hidden = await store.hiddenChannels(alice, NOW);
      expect(hidden.has(fresh)).toBe(false);
      expect(hidden.has(stale)).toBe(true);
    });

    it('a private channel without a member list is hidden from everyone', async () => {
      const priv = ch();
      await store.apply([observed({ channelId: priv, members: null })]);
      expect((await store.hiddenChannels(alice, NOW)).has(priv)).toBe(true);
      expect((await store.get(priv))?.members).toBeNull();
    });

    it('keeps the latest observation: a removed member loses access; an older one arriving later changes nothing', async () => {
      const priv = ch();
      await store.apply([observed({ channelId: priv, observedAt: ago(120_000) })]);
      await store.apply([observed({ channelId: priv, observedAt: ago(60_000), members: ['U2'], source: 'refresh' })]);
      expect((await store.hiddenChannels(alice, NOW)).has(priv)).toBe(true);
      await store.apply([observed({ channelId: priv, observedAt: ago(90_000), members: ['U1', 'U2'] })]);
      expect(await store.get(priv)).toEqual({
        channel_id: priv,
        platform: 'platform_a',
        connection_id: 'conn-1',
        is_private: true,
        members: ['U2'],
        source: 'refresh',
        observed_at: ago(60_000),
      });
    });

    it('is idempotent: the same event twice ends as once; a private channel made public loses its member rows', async () => {
      const priv = ch();
      const e = observed({ channelId: priv, members: ['U2', 'U1', 'U1'] });
      await store.apply([e, e]);
      expect((await store.get(priv))?.members).toEqual(['U1', 'U2']);
      await store.apply([observed({ channelId: priv, isPrivate: false, members: null, observedAt: ago(1000) })]);
      expect(await store.get(priv)).toMatchObject({ is_private: false, members: null });
      expect((await store.hiddenChannels(null, NOW)).has(priv)).toBe(false);
    });

    it('an import never replaces what a connection read from the platform; a sync replaces an import', async () => {
      const priv = ch();
      await store.apply([observed({ channelId: priv, observedAt: ago(60_000) })]);
      await store.apply([
        observed({
          channelId: priv,
          source: 'import',
          connectionId: null,
          isPrivate: false,
          members: null,
          observedAt: ago(1000),
        }),
      ]);
      expect(await store.get(priv)).toMatchObject({ source: 'sync', is_private: true });
      const imported = ch();
      await store.apply([
        observed({ channelId: imported, source: 'import', connectionId: null, observedAt: ago(60_000) }),
      ]);
      await store.apply([observed({ channelId: imported, members: ['U3'], source: 'refresh', observedAt: ago(1000) })]);
      expect(await store.get(imported)).toMatchObject({ source: 'refresh', members: ['U3'] });
    });

    it('holds a large member list (more rows than one insert)', async () => {
      const priv = ch();
      const members = Array.from({ length: 4500 }, (_, i) => `U${String(i).padStart(5, '0')}`);
      await store.apply([observed({ channelId: priv, members })]);
      expect((await store.get(priv))?.members).toHaveLength(4500);
      expect((await store.hiddenChannels({ platform: 'platform_a', user_id: 'U04499' }, NOW)).has(priv)).toBe(false);
    });

    it('truncate empties it', async () => {
      const other = new ChannelAccessStore(db.db, { refreshIntervalMs: HOUR });
      await other.truncate();
      expect(await other.hiddenChannels(null, NOW)).toEqual(new Set());
    });
  });
}
