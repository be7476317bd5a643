import { randomUUID } from 'node:crypto';
import type { AuditRecorded, StoredEvent } from '@atlas/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabases } from '../testing.js';
import { AuditStore } from './audit-store.js';
import { migrateAudit } from './migrations.js';

const DAY = 86_400_000;
const NOW = new Date('2026-03-01T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
let offset = 0;
const recorded = (over: Partial<AuditRecorded> = {}): StoredEvent<'AuditRecorded'> => {
  const data: AuditRecorded = {
    id: randomUUID(),
    action: 'key_used',
    principal: 'ops',
    keyId: 'key-1',
    method: 'GET',
    route: '/api/channels',
    status: null,
    address: '10.0.0.7',
    reason: null,
    at: ago(60_000),
    ...over,
  };
  return {
    type: 'AuditRecorded',
    key: data.principal ?? data.address,
    data,
    topic: 'atlas.audit',
    partition: 0,
    offset: offset++,
    timestamp: Date.now(),
  };
};

for (const { name, open } of testDatabases()) {
  describe(`${name}: AuditStore`, () => {
    let db: TestDatabase;
    let store: AuditStore;
    beforeAll(async () => {
      db = await open();
      await migrateAudit(db.db);
      await migrateAudit(db.db); // idempotent
      store = new AuditStore(db.db, { retentionDays: 90 });
    });
    afterAll(() => db.close());

    it('keeps every field, snake_case with the event id; the same event twice is one entry', async () => {
      const p = `p-${randomUUID()}`;
      const e = recorded({
        principal: p,
        action: 'admin_action',
        method: 'POST',
        route: '/api/admin/keys',
        status: 201,
      });
      expect(await store.apply([e, e], NOW)).toBe(1);
      expect(await store.apply([e], NOW)).toBe(0);
      expect((await store.list({ principal: p, limit: 10 })).entries).toEqual([
        {
          id: e.data.id,
          action: 'admin_action',
          principal: p,
          key_id: 'key-1',
          method: 'POST',
          route: '/api/admin/keys',
          status: 201,
          address: '10.0.0.7',
          reason: null,
          at: e.data.at,
        },
      ]);
    });

    it('lists newest first in cursor pages that neither repeat nor skip, ties broken by id', async () => {
      const p = `p-${randomUUID()}`;
      const events = Array.from({ length: 7 }, (_, i) => recorded({ principal: p, at: ago((i % 4) * 1000) }));
      await store.apply(events, NOW);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await store.list({ principal: p, limit: 3, cursor });
        seen.push(...page.entries.map((x) => x.id));
        cursor = page.next_cursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      const want = [...events]
        .sort((a, b) => b.data.at.localeCompare(a.data.at) || b.data.id.localeCompare(a.data.id))
        .map((x) => x.data.id);
      expect(seen).toEqual(want);
    });

    it('filters by action, principal and time (since inclusive, until exclusive), combined', async () => {
      const p = `p-${randomUUID()}`;
      const denied = recorded({
        principal: null,
        keyId: null,
        action: 'access_denied',
        status: 401,
        reason: 'missing',
        address: p,
        at: ago(3000),
      });
      const used = recorded({ principal: p, at: ago(2000) });
      const admin = recorded({ principal: p, action: 'admin_action', status: 200, at: ago(1000) });
      await store.apply([denied, used, admin], NOW);
      const ids = async (q: Parameters<AuditStore['list']>[0]) => (await store.list(q)).entries.map((x) => x.id);
      expect(await ids({ principal: p, limit: 10 })).toEqual([admin.data.id, used.data.id]);
      expect(await ids({ principal: p, action: 'key_used', limit: 10 })).toEqual([used.data.id]);
      expect(await ids({ principal: p, since: ago(2000), until: ago(1000), limit: 10 })).toEqual([used.data.id]);
      const deniedPage = await store.list({ action: 'access_denied', since: ago(3000), until: ago(2999), limit: 10 });
      expect(deniedPage.entries.map((x) => x.id)).toContain(denied.data.id);
      expect(deniedPage.entries.every((x) => x.action === 'access_denied')).toBe(true);
    });

    it('drops entries past retention as it writes, and never writes one already past it', async () => {
      const p = `p-${randomUUID()}`;
      const old = recorded({ principal: p, at: ago(89 * DAY) });
      const ancient = recorded({ principal: p, at: ago(91 * DAY) });
      const fresh = recorded({ principal: p, at: ago(1000) });
      expect(await store.apply([old, ancient, fresh], NOW)).toBe(2);
      expect((await store.list({ principal: p, limit: 10 })).entries.map((x) => x.id)).toEqual([
        fresh.data.id,
        old.data.id,
      ]);
      // Two days later the 89-day-old entry is past 90 days: the next write drops it.
      await store.apply([recorded({ principal: p, at: NOW.toISOString() })], new Date(NOW.getTime() + 2 * DAY));
      expect((await store.list({ principal: p, limit: 10 })).entries.map((x) => x.id)).not.toContain(old.data.id);
      expect(await store.prune(new Date(NOW.getTime() + 2 * DAY))).toBe(0);
    });

    it('skips an entry with an unreadable time', async () => {
      const p = `p-${randomUUID()}`;
      expect(await store.apply([recorded({ principal: p, at: 'yesterday-ish' })], NOW)).toBe(0);
      expect((await store.list({ principal: p, limit: 10 })).entries).toEqual([]);
    });

    it('empties on truncate (before a replay)', async () => {
      const p = `p-${randomUUID()}`;
      await store.apply([recorded({ principal: p })], NOW);
      await store.truncate();
      expect((await store.list({ principal: p, limit: 10 })).entries).toEqual([]);
    });

    it('refuses a cursor it did not give out (INVALID_REQUEST)', async () => {
      await expect(store.list({ limit: 5, cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    });
  });
}
