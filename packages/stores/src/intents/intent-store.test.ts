import { randomUUID } from 'node:crypto';
import type { EventDataMap, StoredEvent } from '@atlas/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabases } from '../testing.js';
import { INTENT_ABANDON_AFTER_MS, IntentStore } from './intent-store.js';
import { migrateIntents } from './migrations.js';

let offset = 0;
const ev = <T extends 'WriteIntentCreated' | 'StoreWriteApplied' | 'StoreWriteFailed'>(
  type: T,
  data: EventDataMap[T],
  timestamp = Date.now(),
): StoredEvent<T> => ({
  type,
  key: data.intentId,
  data,
  topic: 'atlas.intents',
  partition: 0,
  offset: offset++,
  timestamp,
});

const T0 = new Date('2026-03-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const MIN = 60_000;

const intent = (channelId = `C${randomUUID()}`) => {
  const intentId = randomUUID();
  const messageId = randomUUID();
  const ids = { intentId, messageId, channelId };
  return {
    ids,
    created: (over: Partial<EventDataMap['WriteIntentCreated']> = {}) =>
      ev('WriteIntentCreated', {
        ...ids,
        factCount: 2,
        extractedAt: T0.toISOString(),
        factsPartition: 1,
        factsOffset: 10,
        vector: 'pending',
        graph: 'pending',
        createdAt: T0.toISOString(),
        ...over,
      }),
    applied: (store: 'vector' | 'graph', outcome: 'written' | 'skipped' | 'superseded' = 'written', attempt = 0) =>
      ev('StoreWriteApplied', { ...ids, store, outcome, attempt, appliedAt: at(attempt * 15 * MIN).toISOString() }),
    failed: (store: 'vector' | 'graph', attempt = 0, error = 'provider down') =>
      ev('StoreWriteFailed', { ...ids, store, error, attempt, failedAt: at(attempt * 15 * MIN).toISOString() }),
  };
};

for (const { name, open } of testDatabases()) {
  describe(`${name}: IntentStore (write intents, spec "Write intent (two-phase persist)")`, () => {
    let h: TestDatabase;
    let store: IntentStore;
    beforeAll(async () => {
      h = await open();
      await migrateIntents(h.db);
      await migrateIntents(h.db); // idempotent
      store = new IntentStore(h.db);
    });
    afterAll(async () => {
      await h?.close();
    });

    it('a created intent is pending with both stores pending; both writes make it done', async () => {
      const i = intent();
      await store.apply([i.created()]);
      expect(await store.get(i.ids.intentId, at(MIN))).toMatchObject({
        state: 'pending',
        vector: { status: 'pending', error: null },
        graph: { status: 'pending', error: null },
        retry_count: 0,
        fact_count: 2,
        facts_partition: 1,
        facts_offset: 10,
        created_at: T0.toISOString(),
      });
      await store.apply([i.applied('vector'), i.applied('graph', 'skipped')]);
      expect(await store.get(i.ids.intentId, at(MIN))).toMatchObject({
        state: 'done',
        vector: { status: 'done' },
        graph: { status: 'skipped' },
      });
    });

    it('folds in any order and any number of times to the same state (outcomes before the intent, redelivery)', async () => {
      const a = intent();
      const b = intent();
      const eventsOf = (x: typeof a) => [
        x.created(),
        x.failed('vector'),
        x.applied('graph'),
        x.applied('vector', 'written', 1),
      ];
      await store.apply(eventsOf(a));
      const [c, f, g, v] = eventsOf(b);
      await store.apply([v!, g!]);
      expect(await store.get(b.ids.intentId)).toBeNull(); // outcomes alone are not an intent
      await store.apply([f!, c!]);
      await store.apply([c!, v!, f!]); // redelivered
      const ra = await store.get(a.ids.intentId, at(MIN));
      const rb = await store.get(b.ids.intentId, at(MIN));
      expect(ra).toMatchObject({ state: 'done', retry_count: 1, vector: { status: 'done', error: null } });
      expect({ ...rb, intent_id: '', message_id: '', updated_at: '' }).toEqual({
        ...ra,
        intent_id: '',
        message_id: '',
        updated_at: '',
        channel_id: b.ids.channelId,
      });
    });

    it('retries only intents older than 5 minutes and younger than 24 hours, below 5 attempts, with an open store', async () => {
      const ch = `C${randomUUID()}`;
      const young = intent(ch);
      const due = intent(ch);
      const done = intent(ch);
      const old = intent(ch);
      await store.apply([
        young.created({ createdAt: at(3 * MIN).toISOString() }),
        due.created(),
        due.failed('vector'),
        due.applied('graph'),
        done.created(),
        done.applied('vector'),
        done.applied('graph'),
        old.created({ createdAt: at(-25 * 60 * MIN).toISOString() }),
      ]);
      const now = at(6 * MIN);
      const ids = (await store.retryCandidates(now, 1000)).map((x) => x.intent_id);
      expect(ids).toContain(due.ids.intentId);
      expect(ids).not.toContain(young.ids.intentId);
      expect(ids).not.toContain(done.ids.intentId);
      expect(ids).not.toContain(old.ids.intentId);
      expect((await store.get(old.ids.intentId, now))?.state).toBe('abandoned');
      const listed = await store.list({ channelId: ch, limit: 10 }, now);
      expect(listed.total).toBe(4);
      expect(
        (await store.list({ channelId: ch, state: 'abandoned', limit: 10 }, now)).intents.map((x) => x.intent_id),
      ).toEqual([old.ids.intentId]);
    });

    it('a failure on the 5th attempt is permanent: state failed, no longer a candidate; a later success still makes it done', async () => {
      const i = intent();
      await store.apply([i.created(), i.applied('graph')]);
      for (let n = 0; n <= 5; n++) await store.apply([i.failed('vector', n, `attempt ${n} failed`)]);
      const r = await store.get(i.ids.intentId, at(90 * MIN));
      expect(r).toMatchObject({
        state: 'failed',
        retry_count: 5,
        vector: { status: 'failed', error: 'attempt 5 failed' },
        last_attempt_at: at(75 * MIN).toISOString(),
      });
      expect((await store.retryCandidates(at(90 * MIN), 1000)).map((x) => x.intent_id)).not.toContain(i.ids.intentId);
      await store.apply([i.applied('vector', 'written', 0)]); // the projector's own write arrives late
      expect((await store.get(i.ids.intentId, at(90 * MIN)))?.state).toBe('done');
    });

    it('counts intents by state (every state present), pending intents older than 24 hours as abandoned', async () => {
      const h2 = await open(); // a database of its own: exact counts
      try {
        await migrateIntents(h2.db);
        const s2 = new IntentStore(h2.db);
        expect(await s2.countByState(T0)).toEqual({ pending: 0, done: 0, failed: 0, abandoned: 0 });
        const [p, d, f] = [intent(), intent(), intent()];
        await s2.apply([p.created(), d.created(), d.applied('vector'), d.applied('graph'), f.created()]);
        for (let n = 0; n <= 5; n++) await s2.apply([f.failed('graph', n)]);
        expect(await s2.countByState(at(MIN))).toEqual({ pending: 1, done: 1, failed: 1, abandoned: 0 });
        expect(await s2.countByState(at(INTENT_ABANDON_AFTER_MS + MIN))).toEqual({
          pending: 0,
          done: 1,
          failed: 1,
          abandoned: 1,
        });
      } finally {
        await h2.close();
      }
    });
  });
}
