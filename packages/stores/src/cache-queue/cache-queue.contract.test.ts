import { randomUUID } from 'node:crypto';
import { AtlasError } from '@atlas/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardCacheQueue } from './index.js';
import { MemoryCacheQueue } from './memory.js';
import type { CacheQueueStore } from './port.js';
import { RedisCacheQueue } from './redis.js';

// ---------------------------------------------------------------------------------------------------------------
// Adapters: every CacheQueueStore registers a factory here and passes the same suite. `open(prefix)` gives a store
// over the same data for a prefix (two Redis clients share the server; two in-process stores share nothing, so the
// in-process factory hands out one store per prefix).

type Factory = () => Promise<{ open: (prefix: string) => Promise<CacheQueueStore>; close: () => Promise<void> }>;
const adapters: Record<string, Factory> = {
  memory: async () => {
    const stores = new Map<string, MemoryCacheQueue>();
    return {
      open: async (prefix) => {
        const s = stores.get(prefix) ?? new MemoryCacheQueue();
        stores.set(prefix, s);
        return s;
      },
      close: async () => {
        for (const s of stores.values()) await s.close();
      },
    };
  },
};
// Redis when listed (.ci/run: ATLAS_TEST_REDIS_URL=redis://127.0.0.1:6379). Every store of a run uses its own key
// prefix, deleted after. A listed server that does not answer fails the file (connect() throws in beforeAll).
const redisUrl = process.env.ATLAS_TEST_REDIS_URL;
if (redisUrl) {
  adapters[`redis/${redisUrl}`] = async () => {
    const opened: RedisCacheQueue[] = [];
    return {
      open: async (prefix) => {
        const s = new RedisCacheQueue(redisUrl, { keyPrefix: prefix });
        opened.push(s);
        await s.connect(5_000);
        return s;
      },
      close: async () => {
        for (const s of opened) {
          await s.deleteAll();
          await s.close();
        }
      },
    };
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const [name, factory] of Object.entries(adapters)) {
  describe(`${name}: CacheQueueStore`, () => {
    const prefix = `atlas-test:${randomUUID()}:`;
    let store: CacheQueueStore;
    let other: CacheQueueStore; // the same data through another client (Redis) or the same object (in process)
    let close: () => Promise<void>;
    let open: (prefix: string) => Promise<CacheQueueStore>;
    beforeAll(async () => {
      ({ open, close } = await factory());
      store = await open(prefix);
      other = name === 'memory' ? store : await open(prefix);
      await store.ping();
    });
    afterAll(async () => close?.());

    it('get answers null for a missing key; set stores a value that get reads back, replacing the previous one', async () => {
      const k = randomUUID();
      expect(await store.get(k)).toBeNull();
      await store.set(k, 'first', 10_000);
      await store.set(k, 'second value ✓', 10_000);
      expect(await other.get(k)).toBe('second value ✓');
    });

    it('a value expires after its TTL (ms)', async () => {
      const k = randomUUID();
      await store.set(k, 'short', 80);
      await store.set(`${k}-long`, 'long', 10_000);
      expect(await store.get(k)).toBe('short');
      await sleep(200);
      expect(await store.get(k)).toBeNull();
      expect(await store.get(`${k}-long`)).toBe('long');
    });

    it('a TTL below 1 ms is refused (RangeError), nothing stored', async () => {
      const k = randomUUID();
      await expect(store.set(k, 'x', 0)).rejects.toBeInstanceOf(RangeError);
      await expect(store.claim(k, -5)).rejects.toBeInstanceOf(RangeError);
      expect(await store.get(k)).toBeNull();
    });

    it('claim is true once while the claim lives, across clients; of concurrent claims exactly one wins', async () => {
      const k = randomUUID();
      expect(await store.claim(k, 10_000)).toBe(true);
      expect(await other.claim(k, 10_000)).toBe(false);
      expect(await store.claim(k, 10_000)).toBe(false);
      const race = randomUUID();
      const wins = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? store : other).claim(race, 10_000)));
      expect(wins.filter(Boolean)).toHaveLength(1);
    });

    it('a claim can be made again once its TTL passed', async () => {
      const k = randomUUID();
      expect(await store.claim(k, 80)).toBe(true);
      expect(await store.claim(k, 80)).toBe(false);
      await sleep(200);
      expect(await other.claim(k, 80)).toBe(true);
    });

    it('a queue is FIFO; pop without a job answers null at once (waitMs 0); depth counts waiting jobs', async () => {
      const q = randomUUID();
      expect(await store.pop(q, 'c1', 0)).toBeNull();
      for (const p of ['a', 'b', 'c']) await store.push(q, p);
      expect(await other.depth(q)).toBe(3);
      const got: string[] = [];
      for (let i = 0; i < 3; i++) {
        const job = await store.pop(q, 'c1', 0);
        got.push(job!.payload);
        await store.ack(q, 'c1', job!);
      }
      expect(got).toEqual(['a', 'b', 'c']);
      expect(await store.depth(q)).toBe(0);
      expect(await store.pop(q, 'c1', 0)).toBeNull();
    });

    it('every push is its own job: the same payload twice gives two jobs with different ids', async () => {
      const q = randomUUID();
      await store.push(q, 'same');
      await store.push(q, 'same');
      const a = await store.pop(q, 'c1', 0);
      const b = await store.pop(q, 'c1', 0);
      expect([a?.payload, b?.payload]).toEqual(['same', 'same']);
      expect(a!.id).not.toBe(b!.id);
    });

    it('a waiting pop is woken by a push from another client, well before its waitMs', async () => {
      const q = randomUUID();
      const started = Date.now();
      const waiting = store.pop(q, 'c1', 3_000);
      await sleep(100);
      await other.push(q, JSON.stringify({ n: 1 }));
      const job = await waiting;
      expect(job?.payload).toBe('{"n":1}');
      expect(Date.now() - started).toBeLessThan(2_500);
    });

    it('a pop that waits for nothing answers null after about waitMs', async () => {
      const q = randomUUID();
      const started = Date.now();
      expect(await store.pop(q, 'c1', 300)).toBeNull();
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(250);
      expect(waited).toBeLessThan(2_000);
    });

    it('an unacked job comes back by recover (oldest first, before newer jobs); an acked one does not', async () => {
      const q = randomUUID();
      for (const p of ['1', '2', '3', '4']) await store.push(q, p);
      const j1 = await store.pop(q, 'worker-a', 0);
      const j2 = await store.pop(q, 'worker-a', 0);
      const j3 = await store.pop(q, 'worker-a', 0);
      await store.ack(q, 'worker-a', j2!);
      await store.ack(q, 'worker-a', j2!); // idempotent
      expect(await other.recover(q, 'worker-b')).toBe(0); // another consumer's in-flight jobs are not its own
      expect(await other.recover(q, 'worker-a')).toBe(2);
      const after: string[] = [];
      for (let job = await store.pop(q, 'worker-a', 0); job; job = await store.pop(q, 'worker-a', 0)) {
        after.push(job.payload);
        await store.ack(q, 'worker-a', job);
      }
      expect(after).toEqual(['1', '3', '4']);
      expect([j1?.payload, j3?.payload]).toEqual(['1', '3']);
      expect(await store.recover(q, 'worker-a')).toBe(0);
    });

    it('two consumers popping one queue take every job exactly once', async () => {
      const q = randomUUID();
      const n = 40;
      for (let i = 0; i < n; i++) await store.push(q, String(i));
      const take = async (s: CacheQueueStore, consumer: string) => {
        const got: string[] = [];
        for (let job = await s.pop(q, consumer, 0); job; job = await s.pop(q, consumer, 0)) {
          got.push(job.payload);
          await s.ack(q, consumer, job);
        }
        return got;
      };
      const [a, b] = await Promise.all([take(store, 'c-a'), take(other, 'c-b')]);
      expect([...a, ...b].map(Number).sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i));
    });

    it('stores with different prefixes (or different in-process stores) do not see each other', async () => {
      const apart = await open(`atlas-test:${randomUUID()}:`);
      const k = randomUUID();
      await store.set(k, 'mine', 10_000);
      await store.push(k, 'job');
      expect(await apart.get(k)).toBeNull();
      expect(await apart.claim(k, 10_000)).toBe(true);
      expect(await apart.pop(k, 'c1', 0)).toBeNull();
      expect(await store.depth(k)).toBe(1);
    });

    it('behind guardCacheQueue it answers the same, through a closed cache_queue breaker', async () => {
      const { port, breaker } = guardCacheQueue(store, { name: `cache_queue:${name}:test` });
      try {
        const k = randomUUID();
        await port.set(k, 'guarded', 10_000);
        expect(await port.get(k)).toBe('guarded');
        await port.push(k, 'job');
        // A blocking pop may take its waitMs plus the 2 s timeout: it is not cut at 2 s.
        expect((await port.pop(k, 'c1', 100))?.payload).toBe('job');
        expect(breaker.dependency).toBe('cache_queue');
        expect(breaker.state).toBe('CLOSED');
      } finally {
        breaker.shutdown();
      }
    });
  });
}

describe('RedisCacheQueue: unreachable server', () => {
  it('every call fails at once with STORE_UNAVAILABLE (retriable); connect() fails after its timeout', async () => {
    const store = new RedisCacheQueue('redis://127.0.0.1:1', { keyPrefix: `atlas-test:${randomUUID()}:` });
    try {
      const started = Date.now();
      for (const call of [
        () => store.get('k'),
        () => store.set('k', 'v', 1_000),
        () => store.claim('k', 1_000),
        () => store.push('q', 'p'),
        () => store.pop('q', 'c', 500),
        () => store.ping(),
      ]) {
        const err = await call().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(AtlasError);
        expect((err as AtlasError).code).toBe('STORE_UNAVAILABLE');
        expect((err as AtlasError).retriable).toBe(true);
      }
      expect(Date.now() - started).toBeLessThan(1_000);
      const err = await store.connect(300).catch((e: unknown) => e);
      expect((err as AtlasError).code).toBe('STORE_UNAVAILABLE');
    } finally {
      await store.close();
    }
  });
});
