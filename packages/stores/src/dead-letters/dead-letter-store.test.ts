import { randomUUID } from 'node:crypto';
import { type DeadLettered, deadLetterId, type EventDataMap, type StoredEvent } from '@atlas/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabases } from '../testing.js';
import { DeadLetterStore } from './dead-letter-store.js';
import { migrateDeadLetters } from './migrations.js';

let offset = 0;
const stored = <T extends 'DeadLettered' | 'DeadLetterRedriven'>(
  type: T,
  key: string,
  data: EventDataMap[T],
): StoredEvent<T> => ({
  type,
  key,
  data,
  topic: 'atlas.dead-letters',
  partition: 0,
  offset: offset++,
  timestamp: Date.now(),
});

const letter = (key: string, over: Partial<DeadLettered> = {}): DeadLettered => ({
  group: 'atlas.projector.facts',
  topic: 'atlas.messages',
  partition: 2,
  offset: offset++,
  eventType: 'MessageIngested',
  key,
  error: 'extractor failed',
  attempts: 5,
  failedAt: new Date(Date.UTC(2026, 2, 1, 10, 0, offset)).toISOString(),
  eventData: JSON.stringify({ messageId: randomUUID(), text: 'hello' }),
  ...over,
});

for (const { name, open } of testDatabases()) {
  describe(`${name}: DeadLetterStore`, () => {
    let h: TestDatabase;
    let store: DeadLetterStore;
    beforeAll(async () => {
      h = await open();
      await migrateDeadLetters(h.db);
      await migrateDeadLetters(h.db); // idempotent
      store = new DeadLetterStore(h.db);
    });
    afterAll(async () => {
      await h?.close();
    });

    it('keeps each dead letter once with its original event, flagged for inspection after 5 attempts', async () => {
      const ch = `C${randomUUID()}`;
      const d = letter(ch);
      await store.apply([stored('DeadLettered', ch, d), stored('DeadLettered', ch, d)]); // redelivered
      const id = deadLetterId(d);
      const { items, total } = await store.list({ key: ch, limit: 10 });
      expect(total).toBe(1);
      expect(items[0]).toMatchObject({
        id,
        group: 'atlas.projector.facts',
        topic: 'atlas.messages',
        partition: 2,
        offset: d.offset,
        event_type: 'MessageIngested',
        key: ch,
        error: 'extractor failed',
        attempts: 5,
        failed_at: d.failedAt,
        needs_inspection: true,
        redrivable: true,
        status: 'pending',
        redriven_at: null,
        redriven_to: null,
      });
      expect((await store.get(id))?.event_data).toEqual(JSON.parse(d.eventData!));
      expect(await store.get(randomUUID())).toBeNull();
    });

    it('a v1 dead letter (no original event) is listed but not re-drivable; fewer than 5 attempts is not flagged', async () => {
      const ch = `C${randomUUID()}`;
      const v1 = letter(ch, { eventData: null, attempts: 2 });
      await store.apply([stored('DeadLettered', ch, v1)]);
      const item = await store.get(deadLetterId(v1));
      expect(item).toMatchObject({ redrivable: false, needs_inspection: false, event_data: null });
      expect((await store.list({ key: ch, needsInspection: true, limit: 10 })).total).toBe(0);
    });

    it('a re-drive marks the item redriven with where the event went; filters and pages', async () => {
      const ch = `C${randomUUID()}`;
      const ds = [
        letter(ch),
        letter(ch, { group: 'atlas.projector.embeddings', topic: 'atlas.facts', eventType: 'FactsExtracted' }),
        letter(ch),
      ];
      await store.apply(ds.map((d) => stored('DeadLettered', ch, d)));
      const id = deadLetterId(ds[0]!);
      await store.apply([
        stored('DeadLetterRedriven', ch, {
          deadLetterId: id,
          topic: 'atlas.messages',
          partition: 2,
          offset: 99,
          redrivenAt: '2026-03-02T00:00:00.000Z',
        }),
      ]);
      expect(await store.get(id)).toMatchObject({
        status: 'redriven',
        needs_inspection: false,
        redriven_at: '2026-03-02T00:00:00.000Z',
        redriven_to: { topic: 'atlas.messages', partition: 2, offset: 99 },
      });
      expect((await store.list({ key: ch, status: 'pending', limit: 10 })).total).toBe(2);
      expect((await store.list({ key: ch, group: 'embeddings', limit: 10 })).items.map((x) => x.event_type)).toEqual([
        'FactsExtracted',
      ]);
      const page1 = await store.list({ key: ch, limit: 2 });
      const page2 = await store.list({ key: ch, limit: 2, offset: 2 });
      expect(page1.total).toBe(3);
      expect([...page1.items, ...page2.items].map((x) => x.id)).toEqual(
        [...ds].reverse().map((d) => deadLetterId(d)), // newest first
      );
      const counts = await store.counts();
      expect(counts.redriven).toBeGreaterThanOrEqual(1);
      expect(counts.needs_inspection).toBeLessThanOrEqual(counts.pending);
    });
  });
}
