import { randomUUID } from 'node:crypto';
import { deterministicId } from '@atlas/core';
import { openDatabase } from '@atlas/db';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshChannelId } from '../test-fixtures.js';
import { migrateVectors, PgVectorStore } from './pgvector-store.js';
import type { FactVector, VectorStore } from './port.js';
import { QdrantVectorStore } from './qdrant-store.js';

const DIM = 4;
const unit = (v: number[]) => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const point = (channelId: string, n: number, vector: number[], over: Partial<FactVector> = {}): FactVector => ({
  factId: deterministicId('vec-test', channelId, String(n)),
  messageId: deterministicId('vec-msg', channelId, String(n)),
  channelId,
  model: 'test-model',
  vector: unit(vector),
  factType: 'observation',
  importance: 'medium',
  topicTags: [],
  entityTags: [],
  authorName: 'alice',
  messageTs: new Date(1_600_000_000_000 + n * 60_000).toISOString(),
  ...over,
});

// pgvector runs in the embedded PGlite, and on the PostgreSQL server when ATLAS_TEST_PGVECTOR is set (`.ci/run` builds
// the extension with scripts/pgvector; Debian bookworm packages none), each run in a schema of its own.
const open: Record<string, () => Promise<{ store: VectorStore; close: () => Promise<void> }>> = {
  'pgvector/pglite': async () => {
    const h = await openDatabase({ dataDir: 'memory://' });
    await migrateVectors(h.db, DIM);
    return { store: new PgVectorStore(h.db, DIM), close: h.close };
  },
  // Channel-scoped searches exactly in memory (ChannelMatrix), and with a budget smaller than the channel (SQL again).
  'pgvector/pglite, memory index': async () => {
    const h = await openDatabase({ dataDir: 'memory://' });
    await migrateVectors(h.db, DIM);
    return { store: new PgVectorStore(h.db, DIM, { memoryIndexMaxVectors: 1000 }), close: h.close };
  },
  'pgvector/pglite, memory index over budget': async () => {
    const h = await openDatabase({ dataDir: 'memory://' });
    await migrateVectors(h.db, DIM);
    return { store: new PgVectorStore(h.db, DIM, { memoryIndexMaxVectors: 2 }), close: h.close };
  },
};

const serverUrl = process.env.ATLAS_TEST_POSTGRES_URL;
if (serverUrl && process.env.ATLAS_TEST_PGVECTOR) {
  open['pgvector/postgres'] = async () => {
    const schema = `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    const h = await openDatabase({ url: serverUrl, schema, poolSize: 4 });
    await migrateVectors(h.db, DIM);
    return {
      store: new PgVectorStore(h.db, DIM),
      close: async () => {
        await sql.raw(`drop schema if exists "${schema}" cascade`).execute(h.db);
        await h.close();
      },
    };
  };
}

// Qdrant when listed (no Qdrant server can run on the project's own machines: research/infra.md §5).
const qdrantUrl = process.env.ATLAS_TEST_QDRANT_URL;
if (qdrantUrl) {
  open[`qdrant/${qdrantUrl}`] = async () => {
    const store = new QdrantVectorStore({
      url: qdrantUrl,
      collection: `atlas_test_${randomUUID().slice(0, 8)}`,
      dim: DIM,
    });
    await store.ensureCollection();
    return { store, close: () => store.drop() };
  };
}

for (const [name, factory] of Object.entries(open)) {
  describe(`${name}: VectorStore`, () => {
    let store: VectorStore;
    let close: () => Promise<void>;
    const ch = freshChannelId();
    const pts = [
      point(ch, 1, [1, 0, 0, 0], { factType: 'decision' }),
      point(ch, 2, [0.9, 0.1, 0, 0], { entityTags: ['Kafka'] }),
      point(ch, 3, [0, 1, 0, 0], { authorName: 'Bob' }),
      point(ch, 4, [0, 0, 1, 0]),
    ];
    beforeAll(async () => {
      ({ store, close } = await factory());
      await store.replaceForMessages(pts.map((p) => ({ messageId: p.messageId, points: [p] })));
      await store.replaceForMessages(pts.map((p) => ({ messageId: p.messageId, points: [p] }))); // idempotent
    });
    afterAll(async () => close?.());

    it('returns the nearest facts first, with cosine scores in [0, 1]', async () => {
      const hits = await store.search({ channelId: ch, vector: unit([1, 0.05, 0, 0]), model: 'test-model', limit: 3 });
      expect(hits.map((h) => h.factId)).toEqual([pts[0]!.factId, pts[1]!.factId, pts[2]!.factId]);
      expect(hits[0]!.score).toBeGreaterThan(0.99);
      expect(hits[2]!.score).toBeGreaterThanOrEqual(0);
      for (const h of hits) expect(h.score).toBeLessThanOrEqual(1);
      expect(await store.count()).toBeGreaterThanOrEqual(4);
    });

    it('filters by channel, model, fact type, entity and author', async () => {
      const q = { channelId: ch, vector: unit([1, 0, 0, 0]), model: 'test-model', limit: 10 };
      expect((await store.search({ ...q, filters: { factTypes: ['decision'] } })).map((h) => h.factId)).toEqual([
        pts[0]!.factId,
      ]);
      expect((await store.search({ ...q, filters: { entities: ['kafka'] } })).map((h) => h.factId)).toEqual([
        pts[1]!.factId,
      ]);
      expect((await store.search({ ...q, filters: { authors: ['bob'] } })).map((h) => h.factId)).toEqual([
        pts[2]!.factId,
      ]);
      expect(await store.search({ ...q, channelId: freshChannelId() })).toEqual([]);
      expect(await store.search({ ...q, model: 'another-model' })).toEqual([]);
    });

    // docs/conventions.md "Search `total`": a vector match is a fact at or above a cosine floor, counted exactly; the
    // set must not depend on how many are asked for beyond it, nor come from an approximate index.
    it('matches: every fact at or above the floor, exactly, best first, capped by limit, with filters', async () => {
      const q = { channelId: ch, vector: unit([1, 0.05, 0, 0]), model: 'test-model' };
      const sims = await store.similarities({ ...q, factIds: pts.map((p) => p.factId) });
      for (const floor of [0, 0.5, 0.9, 0.999]) {
        const want = pts
          .filter((p) => (sims.get(p.factId) ?? 0) >= floor)
          .sort((a, b) => sims.get(b.factId)! - sims.get(a.factId)!)
          .map((p) => p.factId);
        const got = await store.matches({ ...q, limit: 100, minScore: floor });
        expect(
          got.map((h) => h.factId),
          `floor ${floor}`,
        ).toEqual(want);
        for (const h of got) expect(h.score).toBeGreaterThanOrEqual(floor);
      }
      expect((await store.matches({ ...q, limit: 1, minScore: 0 })).map((h) => h.factId)).toEqual([pts[0]!.factId]);
      expect(
        (await store.matches({ ...q, limit: 100, minScore: 0, filters: { factTypes: ['decision'] } })).map(
          (h) => h.factId,
        ),
      ).toEqual([pts[0]!.factId]);
      expect(await store.matches({ ...q, channelId: freshChannelId(), limit: 100, minScore: 0 })).toEqual([]);
      // Across channels: this channel's matches are among them, in the same order, and nothing below the floor.
      const everywhere = await store.matches({ ...q, channelId: null, limit: 10_000, minScore: 0.5 });
      for (const h of everywhere) expect(h.score).toBeGreaterThanOrEqual(0.5);
      expect(everywhere.map((h) => h.factId).filter((id) => pts.some((p) => p.factId === id))).toEqual(
        (await store.matches({ ...q, limit: 100, minScore: 0.5 })).map((h) => h.factId),
      );
      const scores = everywhere.map((h) => h.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect(await store.matches({ ...q, model: 'another-model', limit: 100, minScore: 0 })).toEqual([]);
    });

    // docs/access.md "What a caller sees": a restricted caller's vector search reads its visible channels only.
    it('filters.channels bounds search and matches to those channels, across channels or in one; empty: nothing', async () => {
      const other = freshChannelId();
      const stranger = point(other, 9, [1, 0.01, 0, 0]);
      await store.replaceForMessages([{ messageId: stranger.messageId, points: [stranger] }]);
      const q = { channelId: null, vector: unit([1, 0.05, 0, 0]), model: 'test-model' };
      const all = await store.matches({ ...q, limit: 100, minScore: 0.9 });
      expect(all.map((h) => h.factId)).toContain(stranger.factId);
      const mine = await store.matches({ ...q, limit: 100, minScore: 0.9, filters: { channels: [ch] } });
      expect(mine.map((h) => h.factId)).toEqual([pts[0]!.factId, pts[1]!.factId]);
      const theirs = await store.search({ ...q, limit: 10, filters: { channels: [other] } });
      expect(theirs.map((h) => h.factId)).toEqual([stranger.factId]);
      expect(await store.matches({ ...q, limit: 100, minScore: 0, filters: { channels: [] } })).toEqual([]);
      expect(await store.search({ ...q, channelId: ch, limit: 10, filters: { channels: [other] } })).toEqual([]);
      expect(
        await store.matches({ ...q, channelId: ch, limit: 10, minScore: 0, filters: { channels: [other] } }),
      ).toEqual([]);
      await store.deleteChannel(other);
    });

    it('gives the stored unit vectors of given facts (absent facts left out)', async () => {
      const vs = await store.vectorsOf([pts[0]!.factId, pts[1]!.factId, deterministicId('vec-test', ch, 'none')]);
      expect([...vs.keys()].sort()).toEqual([pts[0]!.factId, pts[1]!.factId].sort());
      for (const p of [pts[0]!, pts[1]!]) {
        const v = vs.get(p.factId)!;
        expect(v).toHaveLength(DIM);
        expect(Math.hypot(...v)).toBeCloseTo(1, 5);
        for (let i = 0; i < DIM; i++) expect(v[i]).toBeCloseTo(p.vector[i]!, 5);
      }
      expect((await store.vectorsOf([])).size).toBe(0);
    });

    it('gives similarities of given facts, and replaces or removes a message’s vectors', async () => {
      const sims = await store.similarities({
        vector: unit([0, 1, 0, 0]),
        model: 'test-model',
        factIds: [pts[2]!.factId, pts[3]!.factId],
      });
      expect(sims.get(pts[2]!.factId)).toBeCloseTo(1, 5);
      expect(sims.get(pts[3]!.factId)).toBeCloseTo(0, 5);
      await store.replaceForMessages([{ messageId: pts[3]!.messageId, points: [] }]);
      const after = await store.search({ channelId: ch, vector: unit([0, 0, 1, 0]), model: 'test-model', limit: 10 });
      expect(after.map((h) => h.factId)).not.toContain(pts[3]!.factId);
    });

    it('deleteChannel removes a channel’s vectors only, including from channel-scoped search', async () => {
      const gone = freshChannelId();
      const kept = freshChannelId();
      const g = [point(gone, 40, [1, 0, 0, 1]), point(gone, 41, [1, 0, 1, 0])];
      const k = point(kept, 42, [1, 0, 0, 1]);
      await store.replaceForMessages([...g, k].map((p) => ({ messageId: p.messageId, points: [p] })));
      const q = { vector: unit([1, 0, 0, 1]), model: 'test-model', limit: 10 };
      expect(await store.search({ ...q, channelId: gone })).toHaveLength(2); // loads a memory index, if any
      const before = await store.count();
      expect(await store.deleteChannel(gone)).toBe(2);
      expect(await store.count()).toBe(before - 2);
      expect(await store.search({ ...q, channelId: gone })).toEqual([]);
      expect((await store.search({ ...q, channelId: null })).map((h) => h.factId)).not.toContain(g[0]!.factId);
      expect((await store.vectorsOf(g.map((p) => p.factId))).size).toBe(0);
      expect((await store.search({ ...q, channelId: kept })).map((h) => h.factId)).toEqual([k.factId]);
      expect(await store.deleteChannel(gone)).toBe(0);
    });
  });
}
