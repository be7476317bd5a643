import { randomUUID } from 'node:crypto';
import { testDatabases } from '@atlas/db/testing';
import type { Embedder } from '@atlas/providers';
import {
  type FactVector,
  migrateVectorSpaces,
  migrateVectors,
  PgVectorStore,
  type VectorSpace,
  VectorSpaceRegistry,
} from '@atlas/stores';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SpaceHandle, VectorSpaces } from './vector-spaces.js';

/** A three-dimensional embedder of one model id: each text's vector from its first three char codes, unit length. */
const embedderOf = (id: string): Embedder => ({
  id,
  dim: 3,
  embed: async (texts) =>
    texts.map((t) => {
      const v = [0, 1, 2].map((i) => (t.charCodeAt(i) || 1) % 17);
      const n = Math.hypot(...v) || 1;
      return v.map((x) => x / n);
    }),
});

const FACT = randomUUID();
const MESSAGE = randomUUID();

const point = (factId: string, vector: number[], model: string): FactVector => ({
  factId,
  messageId: MESSAGE,
  channelId: 'C1',
  factType: 'decision',
  importance: 'high',
  topicTags: [],
  entityTags: [],
  authorName: 'ana',
  messageTs: '2026-01-01T00:00:00.000Z',
  model,
  vector,
});

for (const { name, open } of testDatabases()) {
  /**
   * Two processes over one database: the one that rebuilds and switches (it embeds), and one that only reads vectors
   * (`atlas run wiki`: the wiki reads vectorsOf, never embeds). The reader follows the switch from the registry.
   */
  describe(`${name}: VectorSpaces followed by a process that never embeds`, () => {
    let h: Awaited<ReturnType<typeof open>>;
    const spacesOf = (db: typeof h.db, target: Embedder) =>
      new VectorSpaces({
        registry: new VectorSpaceRegistry(h.db),
        target,
        refreshMs: 0,
        open: async (space: VectorSpace): Promise<SpaceHandle> => {
          await migrateVectors(db, space.dim, space.index);
          const store = new PgVectorStore(db, space.dim, { table: space.index });
          return { space, embedder: embedderOf(space.model), store, drop: () => store.drop() };
        },
      });

    beforeAll(async () => {
      h = await open();
      await migrateVectorSpaces(h.db);
    });
    afterAll(async () => h?.close());

    it('reads the new space after a switch made by another process, and never the dropped one', async () => {
      const registry = new VectorSpaceRegistry(h.db);
      await registry.create({ model: 'model-a', dim: 3, state: 'active', kind: 'pgvector' });
      const writer = spacesOf(h.db, embedderOf('model-b'));
      const reader = spacesOf(h.db, embedderOf('model-b'));
      await writer.load();
      await reader.load();
      const [a] = await writer.embedder.embed(['old vector']);
      await writer.store.replaceForMessages([{ messageId: MESSAGE, points: [point(FACT, a!, 'model-a')] }]);
      const fixed = (v: readonly number[] | undefined) => v?.map((x) => x.toFixed(5)); // stored as float4
      expect(fixed((await reader.store.vectorsOf([FACT])).get(FACT))).toEqual(fixed(a));

      // The writer rebuilds into a space of model-b, switches and drops the old one.
      const { handle } = await writer.beginBuilding('pgvector');
      const b = (await embedderOf('model-b').embed(['new vector']))[0]!;
      await handle.store.replaceForMessages([{ messageId: MESSAGE, points: [point(FACT, b, 'model-b')] }]);
      await writer.activate(handle.space.id);
      await writer.dropRetired();

      // The reader never embedded: its reads go to the new space, under the new model.
      expect(fixed((await reader.store.vectorsOf([FACT])).get(FACT))).toEqual(fixed(b));
      expect(await reader.store.count()).toBe(1);
      expect(reader.embedder.id).toBe('model-b');
    });
  });
}
