import { randomUUID } from 'node:crypto';
import { CredentialCipher, CredentialDecryptionError } from '@atlas/core';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabases } from '../testing.js';
import { type ConnectionChannel, ConnectionStore, DEFAULT_CONNECTION_SETTINGS } from './connection-store.js';
import { migrateConnections } from './migrations.js';

const TOKEN = 'xoxb-store-test-7f3a9c';
const cipher = new CredentialCipher('3c'.repeat(32));
const creds = { bot_token: TOKEN, signing_secret: 'sig-5e1d' };

const channel = (id: string, sync_enabled: boolean, name = `#${id}`): ConnectionChannel => ({
  id,
  name,
  is_private: false,
  member_count: 3,
  sync_enabled,
});

for (const { name, open } of testDatabases()) {
  describe(`${name}: ConnectionStore`, () => {
    let h: TestDatabase;
    let store: ConnectionStore;
    beforeAll(async () => {
      h = await open();
      await migrateConnections(h.db);
      await migrateConnections(h.db); // idempotent
      store = new ConnectionStore(h.db, cipher);
    });
    afterAll(async () => {
      await h?.close();
    });

    it('create → get/list: the view has every spec field and no credentials; defaults applied', async () => {
      const now = new Date('2026-03-01T10:00:00.000Z');
      const c = await store.create({ name: 'Acme', platform: 'platform_a', credentials: creds }, now);
      expect(c).toEqual({
        id: expect.any(String),
        name: 'Acme',
        platform: 'platform_a',
        status: 'connected',
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
        last_sync: null,
        validated_at: null,
        channel_count: 0,
        settings: DEFAULT_CONNECTION_SETTINGS,
      });
      expect(await store.get(c.id)).toEqual(c);
      expect((await store.list()).map((x) => x.id)).toContain(c.id);
      expect(JSON.stringify(await store.list())).not.toContain(TOKEN);
      expect(await store.get(randomUUID())).toBeNull();
    });

    it('credentials are stored as a v2 envelope (own data key) only; credentials() decrypts them for internal use', async () => {
      const c = await store.create({
        name: 'B',
        platform: 'platform_b',
        credentials: { bot_token: TOKEN, guild_id: 'g1' },
      });
      const raw = await sql<{ credentials: string }>`select credentials from connections where id = ${c.id}`.execute(
        h.db,
      );
      expect(raw.rows[0]!.credentials).toMatch(/^v2:[0-9a-f]{16}:/);
      expect(raw.rows[0]!.credentials).not.toContain(TOKEN);
      expect(await store.credentials(c.id)).toEqual({
        platform: 'platform_b',
        credentials: { bot_token: TOKEN, guild_id: 'g1' },
      });
      expect(await store.credentials(randomUUID())).toBeNull();
    });

    it('another master key cannot read the credentials (clear error), nor can a copied envelope', async () => {
      const c = await store.create({ name: 'K', platform: 'platform_a', credentials: creds });
      const other = new ConnectionStore(h.db, new CredentialCipher('4d'.repeat(32)));
      await expect(other.credentials(c.id)).rejects.toThrow(/not in the credential keyring/);
      expect(await other.get(c.id)).toMatchObject({ id: c.id }); // views need no key
      const d = await store.create({ name: 'D', platform: 'platform_a', credentials: { ...creds, bot_token: 'x' } });
      await sql`update connections set credentials = (select credentials from connections where id = ${c.id})
        where id = ${d.id}`.execute(h.db);
      const err = await store.credentials(d.id).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CredentialDecryptionError);
      expect((err as CredentialDecryptionError).reason).toBe('wrong_key'); // the data key is another connection's
    });

    it('replace and delete drop the old data keys (crypto-shredding); the table is rewritten', async () => {
      const c = await store.create({ name: 'R', platform: 'platform_a', credentials: { bot_token: 'token-A' } });
      const envelopeOf = async (id: string) =>
        (await sql<{ credentials: string }>`select credentials from connections where id = ${id}`.execute(h.db)).rows[0]
          ?.credentials;
      const oldEnv = (await envelopeOf(c.id))!;
      const oldDek = oldEnv.split(':')[1]!;
      expect(store.keyring.cipher(oldDek, c.id)).not.toBeNull();
      await store.update(c.id, { credentials: { bot_token: 'token-B' } });
      const newEnv = (await envelopeOf(c.id))!;
      expect(newEnv.split(':')[1]).not.toBe(oldDek);
      expect(store.keyring.cipher(oldDek, c.id)).toBeNull();
      expect(store.keyring.entries().filter((e) => e.connectionId === c.id)).toHaveLength(1);
      expect((await store.credentials(c.id))!.credentials).toEqual({ bot_token: 'token-B' });
      // An update without credentials keeps the key.
      await store.update(c.id, { name: 'R2' });
      expect((await store.credentials(c.id))!.credentials).toEqual({ bot_token: 'token-B' });
      expect(await store.delete(c.id)).toBe(true);
      expect(store.keyring.entries().filter((e) => e.connectionId === c.id)).toEqual([]);
      await sql`vacuum full connections`.execute(h.db); // the engine allows the rewrite the store runs (best effort there)
    });

    it('legacy v1 envelopes (under the master key) are read and moved to a data key: at start and on first read', async () => {
      const a = await store.create({ name: 'L1', platform: 'platform_a', credentials: { bot_token: 'x' } });
      const b = await store.create({ name: 'L2', platform: 'platform_a', credentials: { bot_token: 'x' } });
      const legacy = async (id: string, token: string) =>
        sql`update connections set credentials = ${cipher.encryptJson({ bot_token: token }, id)} where id = ${id}`.execute(
          h.db,
        );
      await legacy(a.id, 'legacy-a');
      await legacy(b.id, 'legacy-b');
      // A row under some other key (e.g. the former public development key) stays, counted unreadable.
      const u = await store.create({ name: 'L3', platform: 'platform_a', credentials: { bot_token: 'x' } });
      await sql`update connections set credentials = ${new CredentialCipher('9e'.repeat(32)).encryptJson({}, u.id)} where id = ${u.id}`.execute(
        h.db,
      );
      // First read migrates a.
      expect((await store.credentials(a.id))!.credentials).toEqual({ bot_token: 'legacy-a' });
      const rows = async () =>
        Object.fromEntries(
          (
            await sql<{ id: string; credentials: string }>`select id, credentials from connections`.execute(h.db)
          ).rows.map((r) => [r.id, r.credentials.slice(0, 2)]),
        );
      expect((await rows())[a.id]).toBe('v2');
      expect((await rows())[b.id]).toBe('v1');
      const moved = await store.migrateEnvelopes();
      expect(moved).toMatchObject({ migrated: 1, unreadable: 1 });
      expect((await rows())[b.id]).toBe('v2');
      expect((await store.credentials(b.id))!.credentials).toEqual({ bot_token: 'legacy-b' });
      // Idempotent.
      expect(await store.migrateEnvelopes()).toMatchObject({ migrated: 0, unreadable: 1 });
      await store.delete(u.id);
    });

    it('migrateEnvelopes drops old data keys no row references', async () => {
      const orphan = store.keyring.create('gone', new Date(Date.now() - 3_600_000));
      const fresh = store.keyring.create('in-flight');
      const r = await store.migrateEnvelopes();
      expect(r.droppedKeys).toBe(1);
      const ids = store.keyring.entries().map((e) => e.dekId);
      expect(ids).not.toContain(orphan.keyId);
      expect(ids).toContain(fresh.keyId);
      store.keyring.drop([fresh.keyId]);
    });

    it('update: name, merged settings, status, re-encrypted credentials; null for an unknown id', async () => {
      const c = await store.create(
        { name: 'U', platform: 'platform_a', credentials: creds, settings: { wiki_enabled: false } },
        new Date('2026-03-01T10:00:00.000Z'),
      );
      expect(c.settings).toEqual({ ...DEFAULT_CONNECTION_SETTINGS, wiki_enabled: false });
      const later = new Date('2026-03-02T10:00:00.000Z');
      const u = await store.update(
        c.id,
        {
          name: 'U2',
          settings: { sync_interval_minutes: 15 },
          status: 'error',
          credentials: { ...creds, bot_token: 'xoxb-new' },
          validated_at: later.toISOString(),
          last_sync: '2026-03-02T09:00:00.000Z',
        },
        later,
      );
      expect(u).toMatchObject({
        name: 'U2',
        status: 'error',
        created_at: c.created_at,
        updated_at: later.toISOString(),
        validated_at: later.toISOString(),
        last_sync: '2026-03-02T09:00:00.000Z',
        settings: { sync_interval_minutes: 15, wiki_enabled: false, graph_enabled: true },
      });
      expect((await store.credentials(c.id))!.credentials.bot_token).toBe('xoxb-new');
      expect(await store.update(randomUUID(), { name: 'x' })).toBeNull();
    });

    it('connectionsOfChannel: the connections listing a channel, sync-enabled first; [] for none', async () => {
      const id = `C-${randomUUID()}`;
      expect(await store.connectionsOfChannel(id)).toEqual([]);
      const a = await store.create({ name: 'A', platform: 'platform_a', credentials: creds });
      const b = await store.create({ name: 'B', platform: 'platform_a', credentials: creds });
      await store.saveChannels(a.id, [channel(id, false)]);
      await store.saveChannels(b.id, [channel(id, true)]);
      expect(await store.connectionsOfChannel(id)).toEqual([
        { connection_id: b.id, platform: 'platform_a', channel: channel(id, true) },
        { connection_id: a.id, platform: 'platform_a', channel: channel(id, false) },
      ]);
      await store.delete(b.id);
      expect((await store.connectionsOfChannel(id)).map((x) => x.connection_id)).toEqual([a.id]);
    });

    // docs/conventions.md "`connected` (spec "Channel")": selected for sync in a connection whose status is connected.
    it('connectedChannels: selected in a connected connection only; listedChannels: listed at all', async () => {
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
      const one = await store.create({ name: 'One', platform: 'platform_a', credentials: creds });
      const two = await store.create({ name: 'Two', platform: 'platform_a', credentials: creds });
      await store.saveChannels(one.id, [channel(a, true), channel(b, false)]);
      await store.saveChannels(two.id, [channel(c, true)]);
      await store.update(two.id, { status: 'error' });
      expect([...(await store.connectedChannels([a, b, c]))]).toEqual([a]);
      expect((await store.connectedChannels()).has(a)).toBe(true);
      expect([...(await store.listedChannels([a, b, c, randomUUID()]))].sort()).toEqual([a, b, c].sort());
      await store.update(two.id, { status: 'connected' });
      expect([...(await store.connectedChannels([a, b, c]))].sort()).toEqual([a, c].sort());
      await store.update(one.id, { status: 'disconnected' });
      expect([...(await store.connectedChannels([a, b, c]))]).toEqual([c]);
      await store.delete(two.id);
      expect((await store.connectedChannels([a, b, c])).size).toBe(0);
      expect((await store.connectedChannels([])).size).toBe(0);
      await store.delete(one.id);
    });

    it('channels: saved list replaced as a whole, channel_count = sync-enabled channels, deleted with the connection', async () => {
      const c = await store.create({ name: 'C', platform: 'platform_a', credentials: creds });
      expect(await store.channels(c.id)).toEqual([]);
      expect(await store.saveChannels(c.id, [channel('C2', true), channel('C1', false), channel('C3', true)])).toBe(2);
      expect((await store.get(c.id))!.channel_count).toBe(2);
      expect((await store.channels(c.id)).map((x) => [x.id, x.sync_enabled])).toEqual([
        ['C1', false],
        ['C2', true],
        ['C3', true],
      ]);
      expect((await store.channels(c.id))[0]).toEqual(channel('C1', false));
      // A repeated id keeps its last entry.
      expect(await store.saveChannels(c.id, [channel('C1', true), channel('C1', false)])).toBe(0);
      expect(await store.channels(c.id)).toEqual([channel('C1', false)]);
      expect(await store.saveChannels(randomUUID(), [channel('C1', true)])).toBeNull();
      expect(await store.delete(c.id)).toBe(true);
      expect(await store.delete(c.id)).toBe(false);
      expect(await store.get(c.id)).toBeNull();
      expect(await store.channels(c.id)).toEqual([]);
      const left = await sql<{ n: string | number }>`select count(*) as n from connection_channels
        where connection_id = ${c.id}`.execute(h.db);
      expect(Number(left.rows[0]!.n)).toBe(0);
    });

    it('refuses a platform or status outside the spec values (database checks)', async () => {
      await expect(store.create({ name: 'X', platform: 'platform_c' as never, credentials: creds })).rejects.toThrow();
      const c = await store.create({ name: 'Y', platform: 'platform_a', credentials: creds });
      await expect(store.update(c.id, { status: 'paused' as never })).rejects.toThrow();
    });
  });
}
