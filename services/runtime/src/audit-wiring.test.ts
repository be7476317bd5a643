import type { AuditEntry } from '@atlas/api';
import type { NewEvent } from '@atlas/core';
import { describe, expect, it } from 'vitest';
import { AUDIT_QUEUE_MAX, auditEvent, auditSink } from './audit-wiring.js';

const entry = (over: Partial<AuditEntry> = {}): AuditEntry => ({
  action: 'access_denied',
  principal: null,
  key_id: null,
  method: 'GET',
  route: '/api/channels',
  status: 401,
  address: '10.0.0.7',
  reason: 'missing',
  at: '2026-03-01T12:00:00.000Z',
  ...over,
});

describe('the audit sink (audit-wiring.ts)', () => {
  it('maps an entry to AuditRecorded keyed by principal, else address, with a fresh id', () => {
    const a = auditEvent(entry());
    expect(a).toMatchObject({
      type: 'AuditRecorded',
      key: '10.0.0.7',
      data: { action: 'access_denied', principal: null, keyId: null, status: 401, reason: 'missing' },
    });
    expect(auditEvent(entry({ principal: 'ops', key_id: 'key_1' })).key).toBe('ops');
    expect(auditEvent(entry()).data.id).not.toBe(a.data.id);
  });

  it('returns at once and appends queued entries together on atlas.audit, in order', async () => {
    const appended: { topic: string; events: readonly NewEvent[] }[] = [];
    const sink = auditSink(
      {
        append: async (topic, events) => {
          appended.push({ topic, events });
          return events.map((_, i) => ({ partition: 0, offset: i }));
        },
      },
      () => ({ warn: () => undefined }),
    );
    sink(entry({ route: '/a' }));
    sink(entry({ route: '/b' }));
    expect(appended).toEqual([]); // nothing waited for the log
    await sink.flush();
    sink(entry({ route: '/c' }));
    await sink.flush();
    expect(appended.map((a) => a.topic)).toEqual(['atlas.audit', 'atlas.audit']);
    expect(appended.flatMap((a) => a.events.map((e) => (e.data as { route: string }).route))).toEqual([
      '/a',
      '/b',
      '/c',
    ]);
  });

  it('logs an append that fails and keeps going: no throw, later entries still appended', async () => {
    const warned: { obj: object; msg: string }[] = [];
    let fail = true;
    const appended: NewEvent[] = [];
    const sink = auditSink(
      {
        append: async (_topic, events) => {
          if (fail) throw new Error('log down');
          appended.push(...events);
          return [];
        },
      },
      () => ({ warn: (obj, msg) => warned.push({ obj, msg }) }),
    );
    expect(() => sink(entry())).not.toThrow();
    await sink.flush();
    expect(warned).toHaveLength(1);
    expect(warned[0]!.obj).toMatchObject({ entries: 1 });
    fail = false;
    sink(entry());
    await sink.flush();
    expect(appended).toHaveLength(1);
  });

  it(`drops entries beyond ${AUDIT_QUEUE_MAX} waiting and says how many`, async () => {
    const warned: object[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let appended = 0;
    const sink = auditSink(
      {
        append: async (_topic, events) => {
          await gate;
          appended += events.length;
          return [];
        },
      },
      () => ({ warn: (obj) => warned.push(obj) }),
    );
    sink(entry()); // in flight once the drain's turn comes
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < AUDIT_QUEUE_MAX + 5; i++) sink(entry());
    release();
    await sink.flush();
    expect(appended).toBe(1 + AUDIT_QUEUE_MAX);
    expect(warned).toEqual([{ entries: 5 }]);
  });
});
