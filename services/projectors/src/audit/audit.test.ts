import { randomUUID } from 'node:crypto';
import { type AuditRecorded, type StoredEvent, TOPICS } from '@atlas/core';
import { AuditStore, migrateAudit } from '@atlas/stores';
import { type TestDatabase, testDatabases } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditProjector } from './audit.js';

let offset = 0;
const recorded = (over: Partial<AuditRecorded> = {}): StoredEvent<'AuditRecorded'> => ({
  type: 'AuditRecorded',
  key: over.principal ?? 'ops',
  data: {
    id: randomUUID(),
    action: 'admin_action',
    principal: 'ops',
    keyId: 'key_1',
    method: 'DELETE',
    route: '/api/admin/keys/:key_id',
    status: 200,
    address: '10.0.0.7',
    reason: null,
    at: new Date().toISOString(),
    ...over,
  },
  topic: TOPICS.audit,
  partition: 0,
  offset: offset++,
  timestamp: Date.now(),
});

describe.each(testDatabases())('audit projector ($name)', ({ open }) => {
  let db: TestDatabase;
  let audit: AuditStore;
  beforeAll(async () => {
    db = await open();
    await migrateAudit(db.db);
    audit = new AuditStore(db.db, { retentionDays: 90 });
  });
  afterAll(() => db.close());

  it('reads atlas.audit for AuditRecorded (consumer group atlas.projector.audit)', () => {
    expect(auditProjector).toMatchObject({ name: 'audit', topics: ['atlas.audit'], handles: ['AuditRecorded'] });
  });

  it('writes each entry once: the same event delivered twice is one entry', async () => {
    // Given an admin action recorded on the log
    const principal = `p-${randomUUID()}`;
    const e = recorded({ principal });
    // When it is delivered, then redelivered after a crash
    await auditProjector.handle([e], { audit });
    await auditProjector.handle([e], { audit });
    // Then the trail holds it once
    const { entries } = await audit.list({ principal, limit: 10 });
    expect(entries.map((x) => x.id)).toEqual([e.data.id]);
    expect(entries[0]).toMatchObject({ action: 'admin_action', key_id: 'key_1', status: 200 });
  });

  it('skips an entry already past retention (a replay of an old log adds nothing that would be pruned)', async () => {
    const principal = `p-${randomUUID()}`;
    await auditProjector.handle([recorded({ principal, at: '2000-01-01T00:00:00.000Z' })], { audit });
    expect((await audit.list({ principal, limit: 10 })).entries).toEqual([]);
  });

  it('reset empties the store before a replay', async () => {
    const principal = `p-${randomUUID()}`;
    await auditProjector.handle([recorded({ principal })], { audit });
    await auditProjector.reset!({ audit });
    expect((await audit.list({ principal, limit: 10 })).entries).toEqual([]);
  });
});
