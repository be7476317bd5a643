import { randomUUID } from 'node:crypto';
import { type AnyStoredEvent, messageUuid, type NewEvent } from '@atlas/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionForKey } from './partitioner.js';
import type { EventLog, Subscription } from './port.js';

export interface LogUnderTest {
  log: EventLog;
  /** A second, independent client of the same log (another process in production). */
  openPeer(): Promise<EventLog>;
  close(): Promise<void>;
}

const uid = () => randomUUID().slice(0, 8);

/** A small valid event; `seq` orders events of one key. */
export const testEvent = (key: string, seq: number): NewEvent<'MessageDeleted'> => ({
  type: 'MessageDeleted',
  key,
  data: {
    messageId: messageUuid('platform_a', key, String(seq)),
    platform: 'platform_a',
    channelId: key,
    platformMessageId: String(seq),
    deletedAt: new Date(0).toISOString(),
  },
});

const seqOf = (e: AnyStoredEvent) => (e.type === 'MessageDeleted' ? Number(e.data.platformMessageId) : Number.NaN);

const waitFor = async (fn: () => boolean | Promise<boolean>, what: string, ms = 20_000) => {
  const until = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/**
 * The EventLog contract: every adapter (embedded on PGlite, embedded on Postgres, Kafka) passes it.
 * Each test uses its own topic and group, and waits for events, never for time.
 */
export const eventLogContract = (name: string, open: () => Promise<LogUnderTest>) =>
  describe(`${name}: EventLog`, () => {
    let t: LogUnderTest;
    const subs: Subscription[] = [];
    beforeAll(async () => {
      t = await open();
    });
    afterAll(async () => {
      await Promise.all(subs.map((s) => s.stop()));
      await t?.close();
    });
    const consume = async (log: EventLog, group: string, topic: string, into: AnyStoredEvent[], maxBatch?: number) => {
      const sub = await log.subscribe({ group, topics: [topic], maxBatch, handler: async (b) => void into.push(...b) });
      subs.push(sub);
      return sub;
    };

    it('keeps append order per key and picks partitions by murmur2(key)', async () => {
      const topic = `t-order-${uid()}`;
      await t.log.ensureTopics([{ name: topic, partitions: 3 }]);
      const keys = ['alpha', 'beta', 'gamma', 'delta'];
      const events = Array.from({ length: 60 }, (_, i) => testEvent(keys[i % keys.length]!, i));
      const positions = await t.log.append(topic, events.slice(0, 30));
      positions.push(...(await t.log.append(topic, events.slice(30))));
      positions.forEach((p, i) => {
        expect(p.partition).toBe(partitionForKey(events[i]!.key, 3));
      });
      const got: AnyStoredEvent[] = [];
      await consume(t.log, `g-${uid()}`, topic, got, 7);
      await waitFor(() => got.length >= 60, '60 events');
      for (const key of keys) {
        const seqs = got.filter((e) => e.key === key).map(seqOf);
        expect(seqs).toEqual(events.filter((e) => e.key === key).map((e) => Number(e.data.platformMessageId)));
      }
      expect(got.length).toBe(60);
    });

    it('redelivers an uncommitted batch after a consumer crash', async () => {
      const topic = `t-crash-${uid()}`;
      const group = `g-${uid()}`;
      await t.log.ensureTopics([{ name: topic, partitions: 1 }]);
      await t.log.append(
        topic,
        Array.from({ length: 5 }, (_, i) => testEvent('k', i)),
      );
      let seenByFirst = 0;
      const first = await t.log.subscribe({
        group,
        topics: [topic],
        handler: async (b) => {
          seenByFirst += b.length;
          await new Promise(() => undefined); // hangs: the process "dies" inside the handler
        },
      });
      await waitFor(() => seenByFirst > 0, 'first delivery');
      await first.stop();
      const got: AnyStoredEvent[] = [];
      await consume(t.log, group, topic, got);
      await waitFor(() => got.length >= 5, 'redelivery', 45_000);
      expect(got.map(seqOf)).toEqual([0, 1, 2, 3, 4]);
    });

    it('retries a batch whose handler failed, without skipping it', async () => {
      const topic = `t-retry-${uid()}`;
      await t.log.ensureTopics([{ name: topic, partitions: 1 }]);
      await t.log.append(topic, [testEvent('k', 0), testEvent('k', 1)]);
      let calls = 0;
      const got: number[] = [];
      subs.push(
        await t.log.subscribe({
          group: `g-${uid()}`,
          topics: [topic],
          handler: async (b) => {
            if (++calls === 1) throw new Error('transient');
            got.push(...b.map(seqOf));
          },
        }),
      );
      await waitFor(() => got.length >= 2, 'retry');
      expect(got).toEqual([0, 1]);
    });

    it('gives independent groups every event each', async () => {
      const topic = `t-groups-${uid()}`;
      await t.log.ensureTopics([{ name: topic, partitions: 2 }]);
      await t.log.append(
        topic,
        Array.from({ length: 20 }, (_, i) => testEvent(`k${i % 5}`, i)),
      );
      const a: AnyStoredEvent[] = [];
      const b: AnyStoredEvent[] = [];
      await consume(t.log, `ga-${uid()}`, topic, a);
      await consume(t.log, `gb-${uid()}`, topic, b);
      await waitFor(() => a.length >= 20 && b.length >= 20, 'both groups');
      expect(new Set(a.map(seqOf)).size).toBe(20);
      expect(new Set(b.map(seqOf)).size).toBe(20);
    });

    it('replays everything after a reset to earliest, from a time after a reset to a timestamp', async () => {
      const topic = `t-reset-${uid()}`;
      const group = `g-${uid()}`;
      await t.log.ensureTopics([{ name: topic, partitions: 2 }]);
      await t.log.append(
        topic,
        Array.from({ length: 10 }, (_, i) => testEvent(`k${i % 3}`, i)),
      );
      const got: AnyStoredEvent[] = [];
      let sub = await consume(t.log, group, topic, got);
      await waitFor(() => got.length >= 10, 'first pass');
      await sub.stop();
      await new Promise((r) => setTimeout(r, 5));
      const cut = Date.now();
      await new Promise((r) => setTimeout(r, 5));
      await t.log.append(
        topic,
        Array.from({ length: 4 }, (_, i) => testEvent(`k${i % 3}`, 10 + i)),
      );
      await t.log.resetOffsets(group, topic, 'earliest');
      got.length = 0;
      sub = await consume(t.log, group, topic, got);
      await waitFor(() => got.length >= 14, 'replay of all 14');
      await sub.stop();
      await t.log.resetOffsets(group, topic, { timestamp: cut });
      got.length = 0;
      sub = await consume(t.log, group, topic, got);
      await waitFor(() => got.length >= 4, 'replay from the timestamp');
      expect(got.map(seqOf).sort((x, y) => x - y)).toEqual([10, 11, 12, 13]);
      await sub.stop();
      await t.log.resetOffsets(group, topic, 'latest');
      expect((await t.log.lag(group, [topic])).reduce((s, r) => s + r.lag, 0)).toBe(0);
    });

    it('reports lag per partition as end offset minus committed offset', async () => {
      const topic = `t-lag-${uid()}`;
      const group = `g-${uid()}`;
      await t.log.ensureTopics([{ name: topic, partitions: 2 }]);
      const positions = await t.log.append(
        topic,
        Array.from({ length: 9 }, (_, i) => testEvent(`key-${i}`, i)),
      );
      // End offsets pass every appended event (Kafka's transaction markers take offsets too).
      // Kafka writes a transaction's commit markers after the commit returns, so its
      // read-committed end offset (the last stable offset) may trail the append for a moment.
      let before = await t.log.lag(group, [topic]);
      await waitFor(async () => {
        before = await t.log.lag(group, [topic]);
        return before.reduce((s, r) => s + r.lag, 0) >= 9;
      }, 'end offsets past the 9 appended events');
      expect(before.map((r) => r.partition)).toEqual([0, 1]);
      for (const r of before) {
        const mine = positions.filter((p) => p.partition === r.partition).map((p) => p.offset);
        expect(r.endOffset).toBeGreaterThan(Math.max(-1, ...mine));
        expect(r.committedOffset).toBeNull();
        expect(r.lag).toBe(r.endOffset);
      }
      const got: AnyStoredEvent[] = [];
      await consume(t.log, group, topic, got);
      await waitFor(async () => (await t.log.lag(group, [topic])).every((r) => r.lag === 0), 'lag 0');
      const after = await t.log.lag(group);
      expect(after.every((r) => r.committedOffset === r.endOffset)).toBe(true);
    });

    it("counts a group's unread events by key (pendingByKey; null where the adapter cannot)", async () => {
      const topic = `t-pending-${uid()}`;
      const group = `g-${uid()}`;
      await t.log.ensureTopics([{ name: topic, partitions: 2 }]);
      await t.log.append(
        topic,
        [0, 1, 2].map((i) => testEvent('key-a', i)),
      );
      await t.log.append(
        topic,
        [3, 4].map((i) => testEvent('key-b', i)),
      );
      const before = await t.log.pendingByKey(group, topic, ['MessageDeleted']);
      if (before === null) return; // Kafka: callers use lag() of the key's partition
      expect(Object.fromEntries(before)).toEqual({ 'key-a': 3, 'key-b': 2 });
      expect((await t.log.pendingByKey(group, topic, ['MessageIngested']))?.size).toBe(0);
      const got: AnyStoredEvent[] = [];
      const sub = await consume(t.log, group, topic, got);
      await waitFor(async () => (await t.log.lag(group, [topic])).every((r) => r.lag === 0), 'lag 0');
      await sub.stop();
      await t.log.append(topic, [testEvent('key-b', 5)]);
      expect(Object.fromEntries((await t.log.pendingByKey(group, topic, ['MessageDeleted']))!)).toEqual({ 'key-b': 1 });
    });

    it('shares partitions between two members of a group, each event handled once', async () => {
      const topic = `t-share-${uid()}`;
      const group = `g-${uid()}`;
      await t.log.ensureTopics([{ name: topic, partitions: 4 }]);
      const peer = await t.openPeer();
      const a: AnyStoredEvent[] = [];
      const b: AnyStoredEvent[] = [];
      const subA = await consume(t.log, group, topic, a);
      const subB = await consume(peer, group, topic, b);
      // Wait until the rebalance gave each member a share and together they own all 4 partitions.
      await waitFor(
        () => {
          const [x, y] = [subA.assignment(), subB.assignment()];
          return (
            x.length > 0 &&
            y.length > 0 &&
            new Set([...x, ...y].map((p) => p.partition)).size === 4 &&
            x.length + y.length === 4
          );
        },
        'a balanced assignment',
        60_000,
      );
      await t.log.append(
        topic,
        Array.from({ length: 40 }, (_, i) => testEvent(`key-${i}`, i)),
      );
      await waitFor(() => a.length + b.length >= 40, 'all 40 events');
      await waitFor(async () => (await t.log.lag(group, [topic])).every((r) => r.lag === 0), 'lag 0');
      expect(a.length).toBeGreaterThan(0);
      expect(b.length).toBeGreaterThan(0);
      expect(new Set([...a, ...b].map(seqOf)).size).toBe(40);
      expect(a.length + b.length).toBe(40);
    });

    it('appends nothing when one event of a batch is invalid', async () => {
      const topic = `t-atomic-${uid()}`;
      await t.log.ensureTopics([{ name: topic, partitions: 1 }]);
      const bad = { ...testEvent('k', 1), data: { channelId: 'k' } } as unknown as NewEvent;
      await expect(t.log.append(topic, [testEvent('k', 0), bad])).rejects.toThrow();
      expect((await t.log.lag(`g-${uid()}`, [topic]))[0]?.endOffset).toBe(0);
    });
  });
