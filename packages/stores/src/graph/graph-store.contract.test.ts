import {
  AtlasError,
  type EntitiesExtracted,
  type EntityType,
  type ExtractedEntity,
  type ExtractedRelationship,
  entityUuid,
  factUuid,
  messageUuid,
  type RelationshipType,
  relationshipUuid,
  type Supersession,
} from '@atlas/core';
import { type DatabaseHandle, openDatabase } from '@atlas/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshChannelId } from '../test-fixtures.js';
import { testDatabases } from '../testing.js';
import { migrateGraph } from './migrations.js';
import type { GraphEntity, GraphStore } from './port.js';
import { PostgresGraphStore } from './postgres-graph.js';

// ---------------------------------------------------------------------------------------------------------------
// Fixtures: events built the way the graph projector builds them (ids from @atlas/core).

const BASE_SEC = 1_700_000_000;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Platform message id of message `n` of a test (one minute apart). */
const platformId = (n: number) => `${BASE_SEC + n * 60}.000100`;
const msgId = (ch: string, n: number) => messageUuid('platform_a', ch, platformId(n));
const tsOf = (n: number) => new Date((BASE_SEC + n * 60) * 1000).toISOString();
const fact = (ch: string, n: number, text: string) => factUuid(msgId(ch, n), text);

const ent = (ch: string, type: EntityType, name: string, over: Partial<ExtractedEntity> = {}): ExtractedEntity => ({
  entityId: entityUuid(ch, type, name),
  type,
  name,
  aliases: [],
  confidence: 0.9,
  factIds: [],
  properties: {},
  ...over,
});

const rel = (
  type: RelationshipType,
  source: ExtractedEntity,
  target: ExtractedEntity,
  over: Partial<ExtractedRelationship> = {},
): ExtractedRelationship => ({
  type,
  sourceId: source.entityId,
  targetId: target.entityId,
  confidence: 0.9,
  validFrom: '2023-11-14',
  validUntil: null,
  context: `${source.name} ${type} ${target.name}`,
  sourceFactId: null,
  ...over,
});

const relId = (type: RelationshipType, s: ExtractedEntity, t: ExtractedEntity) =>
  relationshipUuid(type, s.entityId, t.entityId);

/** The graph contribution of message `n` of channel `ch`. */
const graphSet = (
  ch: string,
  n: number,
  entities: ExtractedEntity[],
  relationships: ExtractedRelationship[] = [],
  supersessions: Supersession[] = [],
  over: Partial<EntitiesExtracted> = {},
): EntitiesExtracted => ({
  messageId: msgId(ch, n),
  platform: 'platform_a',
  channelId: ch,
  sourceMessageId: platformId(n),
  messageTs: tsOf(n),
  extractor: 'test@1',
  extractedAt: '2024-01-01T00:00:00.000Z',
  entities,
  relationships,
  supersessions,
  ...over,
});

const supersession = (ch: string, n: number, old: ExtractedEntity, neu: ExtractedEntity, certain = true) => ({
  factId: fact(ch, n - 1, old.name),
  supersededBy: fact(ch, n, neu.name),
  oldEntityId: old.entityId,
  newEntityId: neu.entityId,
  invalidAt: tsOf(n),
  certain,
  reason: 'new decision on the same topic',
});

const names = (xs: readonly { name: string }[]) => xs.map((x) => x.name);
const withoutUpdatedAt = ({ updated_at: _, ...rest }: GraphEntity) => rest;

// ---------------------------------------------------------------------------------------------------------------
// Adapters: every GraphStore implementation registers a factory here and passes the same suite.

const open: Record<string, () => Promise<{ store: GraphStore; close: () => Promise<void> }>> = {};
for (const db of testDatabases()) {
  open[`postgres/${db.name}`] = async () => {
    const h: DatabaseHandle = await db.open();
    await migrateGraph(h.db);
    await migrateGraph(h.db); // idempotent
    return { store: new PostgresGraphStore(h.db), close: () => h.close() };
  };
}
// Neo4j adapter registers here (ATLAS_TEST_NEO4J_URL)
// Neo4j 5 when listed (scripts/services up neo4j): a fresh namespace per run, deleted by close(). A listed server that
// does not answer fails the file: the factory pings in beforeAll (vitest then reports the tests as not run, exit 1).
const neo4jUrl = process.env.ATLAS_TEST_NEO4J_URL;
if (neo4jUrl) {
  open[`neo4j/${neo4jUrl}`] = async () => {
    const { Neo4jGraphStore } = await import('./neo4j-graph.js');
    const store = new Neo4jGraphStore({ url: neo4jUrl, namespace: `atlas-test-${globalThis.crypto.randomUUID()}` });
    await store.ping();
    return { store, close: () => store.truncate().finally(() => store.close()) };
  };
}
describe('Neo4jGraphStore: unavailable server', () => {
  it('maps a refused connection to STORE_UNAVAILABLE (retriable)', async () => {
    const { Neo4jGraphStore } = await import('./neo4j-graph.js');
    const store = new Neo4jGraphStore({ url: 'bolt://127.0.0.1:1' });
    try {
      const err = await store.ping().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AtlasError);
      expect((err as AtlasError).code).toBe('STORE_UNAVAILABLE');
      expect((err as AtlasError).retriable).toBe(true);
    } finally {
      await store.close();
    }
  });
});

for (const [name, factory] of Object.entries(open)) {
  describe(`${name}: GraphStore`, () => {
    let store: GraphStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ store, close } = await factory());
    });
    afterAll(async () => close?.());

    it('upserts a message’s entities and relationships and reads them back in the spec shapes', async () => {
      const ch = freshChannelId();
      const alice = ent(ch, 'Person', 'Alice Chen', {
        aliases: ['alice', '@alice_chen', 'Alice Chen'],
        factIds: [fact(ch, 1, 'a'), fact(ch, 1, 'b')],
        properties: { role: 'engineer' },
      });
      const atlas = ent(ch, 'Project', 'Atlas', { confidence: 0.8, factIds: [fact(ch, 1, 'a')] });
      const kafka = ent(ch, 'Technology', 'Kafka', { confidence: 0.7 });
      await store.applyMessageGraphs([
        graphSet(
          ch,
          1,
          [alice, atlas, kafka],
          [
            rel('WORKS_ON', alice, atlas, { sourceFactId: fact(ch, 1, 'a'), validFrom: '2023-11-14' }),
            rel('USES', atlas, kafka, { confidence: 0.6, validUntil: '2024-06-30', context: 'Atlas uses Kafka' }),
          ],
        ),
      ]);

      const got = await store.getEntity(alice.entityId);
      expect(got).toEqual({
        id: alice.entityId,
        name: 'Alice Chen',
        type: 'Person',
        scope: 'channel',
        channel_id: ch,
        status: 'active',
        properties: { role: 'engineer' },
        aliases: ['@alice_chen', 'alice'],
        source_fact_ids: [fact(ch, 1, 'a'), fact(ch, 1, 'b')],
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        source_message_id: platformId(1),
        message_ts: tsOf(1),
        confidence: expect.closeTo(0.9, 10),
        mention_count: 1,
        last_mentioned_at: tsOf(1),
      });

      const rels = await store.listRelationships({ channelId: ch, limit: 10 });
      expect(rels).toEqual([
        {
          id: relId('WORKS_ON', alice, atlas),
          type: 'WORKS_ON',
          source: 'Alice Chen',
          target: 'Atlas',
          source_id: alice.entityId,
          target_id: atlas.entityId,
          channel_id: ch,
          confidence: expect.closeTo(0.9, 10),
          valid_from: '2023-11-14',
          valid_until: null,
          context: 'Alice Chen WORKS_ON Atlas',
          source_message_id: platformId(1),
          source_fact_id: fact(ch, 1, 'a'),
          created_at: expect.stringMatching(ISO),
        },
        {
          id: relId('USES', atlas, kafka),
          type: 'USES',
          source: 'Atlas',
          target: 'Kafka',
          source_id: atlas.entityId,
          target_id: kafka.entityId,
          channel_id: ch,
          confidence: expect.closeTo(0.6, 10),
          valid_from: '2023-11-14',
          valid_until: '2024-06-30',
          context: 'Atlas uses Kafka',
          source_message_id: platformId(1),
          source_fact_id: null,
          created_at: expect.stringMatching(ISO),
        },
      ]);
    });

    it('is idempotent: applying the same sets twice gives the same rows and the same created_at', async () => {
      const ch = freshChannelId();
      const a = ent(ch, 'Person', 'Bob', { aliases: ['bobby'], factIds: [fact(ch, 1, 'x')] });
      const b = ent(ch, 'Team', 'Platform', { confidence: 0.5 });
      const sets = [
        graphSet(ch, 1, [a, b], [rel('MEMBER_OF', a, b)]),
        graphSet(ch, 2, [a], [], [], { messageTs: tsOf(2) }),
      ];
      await store.applyMessageGraphs(sets);
      const before = await store.listEntities({ channelId: ch, limit: 10 });
      const relsBefore = await store.listRelationships({ channelId: ch, limit: 10 });
      const countsBefore = await store.counts();
      await store.applyMessageGraphs(sets);
      const after = await store.listEntities({ channelId: ch, limit: 10 });
      expect(after.map(withoutUpdatedAt)).toEqual(before.map(withoutUpdatedAt));
      expect(await store.listRelationships({ channelId: ch, limit: 10 })).toEqual(relsBefore);
      expect(await store.counts()).toEqual(countsBefore);
      expect(after.find((e) => e.id === a.entityId)!.mention_count).toBe(2);
    });

    it('replaces a message’s contribution: dropped mentions go, entities left without a mention are deleted with their relationships', async () => {
      const ch = freshChannelId();
      const a = ent(ch, 'Person', 'Ann');
      const b1 = ent(ch, 'Project', 'Beacon', { aliases: ['bcn'], factIds: [fact(ch, 1, 'f1')] });
      const b2 = ent(ch, 'Project', 'beacon', { aliases: ['the beacon'], factIds: [fact(ch, 2, 'f2')] });
      const c = ent(ch, 'Technology', 'Cassandra');
      const m1 = graphSet(ch, 1, [a, b1], [rel('WORKS_ON', a, b1)]);
      const m2 = graphSet(ch, 2, [b2, c], [rel('USES', b2, c)]);
      await store.applyMessageGraphs([m1, m2]);
      let b = (await store.getEntity(b1.entityId))!;
      expect(b.mention_count).toBe(2);
      expect(b.aliases).toEqual(['bcn', 'the beacon']);
      expect(b.source_fact_ids).toEqual([fact(ch, 1, 'f1'), fact(ch, 2, 'f2')]);
      expect((await store.listRelationships({ channelId: ch, limit: 10 })).length).toBe(2);

      // message 1 re-extracted with fewer entities: its Beacon mention (and the relationship) go.
      await store.applyMessageGraphs([graphSet(ch, 1, [a])]);
      b = (await store.getEntity(b1.entityId))!;
      expect(b.mention_count).toBe(1);
      expect(b.name).toBe('beacon');
      expect(b.aliases).toEqual(['the beacon']);
      expect(b.source_fact_ids).toEqual([fact(ch, 2, 'f2')]);
      expect(b.source_message_id).toBe(platformId(2));
      expect(b.message_ts).toBe(tsOf(2));
      expect(names(await store.listEntities({ channelId: ch, limit: 10 })).sort()).toEqual([
        'Ann',
        'Cassandra',
        'beacon',
      ]);
      expect((await store.listRelationships({ channelId: ch, limit: 10 })).map((r) => r.type)).toEqual(['USES']);

      // message 2 retracted (empty set): Beacon and Cassandra are mentioned nowhere else, so they go with USES.
      await store.applyMessageGraphs([graphSet(ch, 2, [])]);
      expect(await store.getEntity(b1.entityId)).toBeNull();
      expect(await store.getEntity(c.entityId)).toBeNull();
      expect(names(await store.listEntities({ channelId: ch, limit: 10 }))).toEqual(['Ann']);
      expect(await store.listRelationships({ channelId: ch, limit: 10 })).toEqual([]);

      // An entity deleted this way that comes back is a new entity (fresh created_at is allowed, same id).
      await store.applyMessageGraphs([m2]);
      expect((await store.getEntity(b1.entityId))!.mention_count).toBe(1);
    });

    it('re-applying a message without an entity drops that entity (when mentioned nowhere else) and its relationships', async () => {
      const ch = freshChannelId();
      const p = ent(ch, 'Person', 'Pia');
      const q = ent(ch, 'Project', 'Quartz');
      await store.applyMessageGraphs([graphSet(ch, 1, [p, q], [rel('WORKS_ON', p, q)]), graphSet(ch, 2, [p])]);
      await store.applyMessageGraphs([graphSet(ch, 1, [p])]);
      expect(await store.getEntity(q.entityId)).toBeNull();
      expect((await store.getEntity(p.entityId))!.mention_count).toBe(2);
      expect(await store.listRelationships({ channelId: ch, limit: 10 })).toEqual([]);
    });

    it('folds confidence by noisy-or: a 0.45 entity is pending until a second mention makes it active', async () => {
      const ch = freshChannelId();
      const x = ent(ch, 'Technology', 'Xenon', { confidence: 0.45 });
      await store.applyMessageGraphs([graphSet(ch, 1, [x])]);
      let got = (await store.getEntity(x.entityId))!;
      expect(got.confidence).toBeCloseTo(0.45, 10);
      expect(got.status).toBe('pending');
      expect(names(await store.listEntities({ channelId: ch, status: 'pending', limit: 10 }))).toEqual(['Xenon']);
      expect(await store.listEntities({ channelId: ch, status: 'active', limit: 10 })).toEqual([]);

      await store.applyMessageGraphs([graphSet(ch, 2, [ent(ch, 'Technology', 'xenon', { confidence: 0.45 })])]);
      got = (await store.getEntity(x.entityId))!;
      expect(got.confidence).toBeCloseTo(1 - 0.55 * 0.55, 10);
      expect(got.status).toBe('active');
      expect(got.mention_count).toBe(2);
      expect(got.last_mentioned_at).toBe(tsOf(2));
      expect(names(await store.listEntities({ channelId: ch, status: 'active', limit: 10 }))).toEqual(['Xenon']);

      // retracting the second mention brings it back to pending
      await store.applyMessageGraphs([graphSet(ch, 2, [])]);
      expect((await store.getEntity(x.entityId))!.status).toBe('pending');
    });

    it('unions aliases minus the name; the earliest mention gives name, source_message_id and message_ts', async () => {
      const ch = freshChannelId();
      const later = ent(ch, 'Person', 'Alice Chen', { aliases: ['alice', 'AC', '@ALICE_CHEN'] });
      const earlier = ent(ch, 'Person', '@alice_chen', { aliases: ['alice chen', 'Ali', 'alice'] });
      expect(later.entityId).toBe(earlier.entityId);
      // applied in reverse time order: the fold is by message time, not by arrival
      await store.applyMessageGraphs([graphSet(ch, 5, [later])]);
      await store.applyMessageGraphs([graphSet(ch, 3, [earlier])]);
      const got = (await store.getEntity(later.entityId))!;
      expect(got.name).toBe('@alice_chen');
      expect(got.source_message_id).toBe(platformId(3));
      expect(got.message_ts).toBe(tsOf(3));
      expect(got.last_mentioned_at).toBe(tsOf(5));
      expect(got.aliases).toEqual(['AC', 'Ali', 'alice', 'alice chen']);

      // ties on message time: the smaller message id gives the name
      const ch2 = freshChannelId();
      const one = graphSet(ch2, 1, [ent(ch2, 'Team', 'Core Team')]);
      const two = graphSet(ch2, 2, [ent(ch2, 'Team', 'core-team')], [], [], { messageTs: tsOf(1) });
      await store.applyMessageGraphs([one, two]);
      const tied = (await store.getEntity(entityUuid(ch2, 'Team', 'core team')))!;
      const first = one.messageId < two.messageId ? one : two;
      expect(tied.name).toBe(first.entities[0]!.name);
      expect(tied.source_message_id).toBe(first.sourceMessageId);
    });

    it('lists a channel’s entities most mentioned first, then by name, with type, status and limit filters', async () => {
      const ch = freshChannelId();
      const other = freshChannelId();
      const zed = ent(ch, 'Person', 'Zed');
      const kafka = ent(ch, 'Technology', 'Kafka');
      const bob = ent(ch, 'Person', 'Bob');
      const amy = ent(ch, 'Person', 'Amy', { confidence: 0.3 });
      await store.applyMessageGraphs([
        graphSet(ch, 1, [zed, kafka, bob, amy]),
        graphSet(ch, 2, [zed, kafka]),
        graphSet(ch, 3, [zed]),
        graphSet(other, 1, [ent(other, 'Person', 'Carl'), ent(other, 'Person', 'Zed')]),
      ]);
      expect(names(await store.listEntities({ channelId: ch, limit: 10 }))).toEqual(['Zed', 'Kafka', 'Amy', 'Bob']);
      expect((await store.listEntities({ channelId: ch, limit: 10 })).map((e) => [e.name, e.mention_count])).toEqual([
        ['Zed', 3],
        ['Kafka', 2],
        ['Amy', 1],
        ['Bob', 1],
      ]);
      expect(names(await store.listEntities({ channelId: ch, type: 'Person', limit: 10 }))).toEqual([
        'Zed',
        'Amy',
        'Bob',
      ]);
      expect(names(await store.listEntities({ channelId: ch, status: 'active', limit: 10 }))).toEqual([
        'Zed',
        'Kafka',
        'Bob',
      ]);
      expect(names(await store.listEntities({ channelId: ch, status: 'pending', type: 'Person', limit: 10 }))).toEqual([
        'Amy',
      ]);
      expect(names(await store.listEntities({ channelId: ch, limit: 2 }))).toEqual(['Zed', 'Kafka']);
      expect(names(await store.listEntities({ channelId: other, limit: 10 }))).toEqual(['Carl', 'Zed']);
      expect(await store.listEntities({ channelId: freshChannelId(), limit: 10 })).toEqual([]);
      // Several queries at once: each answered as listEntities answers it, in order.
      const queries = [
        { channelId: other, limit: 10 },
        { channelId: ch, type: 'Person' as const, limit: 10 },
        { channelId: ch, status: 'pending' as const, limit: 10 },
        { channelId: freshChannelId(), limit: 10 },
        { channelId: ch, limit: 2 },
        { channelId: ch, status: 'active' as const, limit: 10 },
      ];
      const many = await store.listEntitiesMany(queries);
      expect(many.map(names)).toEqual([
        ['Carl', 'Zed'],
        ['Zed', 'Amy', 'Bob'],
        ['Amy'],
        [],
        ['Zed', 'Kafka'],
        ['Zed', 'Kafka', 'Bob'],
      ]);
      for (const [i, q] of queries.entries()) expect(many[i]).toEqual(await store.listEntities(q));
      expect(await store.listEntitiesMany([])).toEqual([]);
    });

    it('gets entities by id: unknown ids are null or left out', async () => {
      const ch = freshChannelId();
      const a = ent(ch, 'Project', 'Apollo');
      const b = ent(ch, 'Project', 'Borealis');
      await store.applyMessageGraphs([graphSet(ch, 1, [a, b])]);
      expect((await store.getEntity(a.entityId))!.name).toBe('Apollo');
      expect(await store.getEntity(entityUuid(ch, 'Project', 'Nope'))).toBeNull();
      expect(await store.getEntity('not-a-uuid')).toBeNull();
      const got = await store.getEntities([b.entityId, entityUuid(ch, 'Project', 'Nope'), a.entityId]);
      expect(names(got).sort()).toEqual(['Apollo', 'Borealis']);
      expect(await store.getEntities([])).toEqual([]);
    });

    it('finds entities by normalised name or alias, in one channel or across channels', async () => {
      const c1 = freshChannelId();
      const c2 = freshChannelId();
      const tag = c1.toLowerCase();
      const name = `Dana ${tag}`;
      await store.applyMessageGraphs([
        graphSet(c1, 1, [ent(c1, 'Person', name, { aliases: [`dj ${tag}`] })]),
        graphSet(c1, 2, [ent(c1, 'Person', name)]),
        graphSet(c2, 1, [ent(c2, 'Person', `@${name.replace(' ', '_')}`)]),
        graphSet(c2, 2, [ent(c2, 'Project', name)]),
      ]);
      const across = await store.findEntities({ names: [`DANA-${tag}`] });
      expect(across.map((e) => [e.channel_id, e.type])).toEqual([[c1, 'Person'], expect.anything(), expect.anything()]);
      expect(
        across
          .slice(1)
          .map((e) => `${e.channel_id}/${e.type}`)
          .sort(),
      ).toEqual([`${c2}/Person`, `${c2}/Project`].sort());
      expect(across[0]!.mention_count).toBe(2);

      const inC2 = await store.findEntities({ names: [name], channelId: c2 });
      expect(inC2.map((e) => e.channel_id)).toEqual([c2, c2]);
      expect(await store.findEntities({ names: [name], channelId: c2, type: 'Project' })).toHaveLength(1);

      const byAlias = await store.findEntities({ names: [`@DJ_${tag}`] });
      expect(byAlias.map((e) => e.id)).toEqual([entityUuid(c1, 'Person', name)]);
      expect(await store.findEntities({ names: [`dj ${tag}`], channelId: c2 })).toEqual([]);
      expect(await store.findEntities({ names: [`nobody ${tag}`] })).toEqual([]);
      expect(await store.findEntities({ names: [] })).toEqual([]);
    });

    it('lists relationships with type/source/target filters and folds their evidence', async () => {
      const ch = freshChannelId();
      const alice = ent(ch, 'Person', 'Alice');
      const bob = ent(ch, 'Person', 'Bob');
      const atlas = ent(ch, 'Project', 'Atlas');
      const team = ent(ch, 'Team', 'Core');
      await store.applyMessageGraphs([
        graphSet(
          ch,
          1,
          [alice, bob, atlas, team],
          [
            rel('WORKS_ON', alice, atlas, { confidence: 0.5, validFrom: '2024-02-01', context: 'later statement' }),
            rel('WORKS_ON', bob, atlas, { confidence: 0.7 }),
            rel('MEMBER_OF', alice, team, { confidence: 0.95 }),
          ],
        ),
        graphSet(
          ch,
          2,
          [alice, atlas],
          [
            rel('WORKS_ON', alice, atlas, {
              confidence: 0.6,
              validFrom: '2024-01-15',
              validUntil: '2024-06-30',
              context: 'earlier statement',
              sourceFactId: fact(ch, 2, 'alice works on atlas'),
            }),
          ],
        ),
      ]);
      const all = await store.listRelationships({ channelId: ch, limit: 10 });
      expect(all.map((r) => `${r.source} ${r.type} ${r.target}`)).toEqual([
        'Alice MEMBER_OF Core',
        'Alice WORKS_ON Atlas',
        'Bob WORKS_ON Atlas',
      ]);
      const folded = all[1]!;
      expect(folded.confidence).toBeCloseTo(1 - 0.5 * 0.4, 10);
      expect(folded.valid_from).toBe('2024-01-15');
      expect(folded.context).toBe('earlier statement');
      expect(folded.source_message_id).toBe(platformId(2));
      expect(folded.source_fact_id).toBe(fact(ch, 2, 'alice works on atlas'));
      // valid_until comes from the latest evidence (valid_from 2024-02-01), which states no end
      expect(folded.valid_until).toBeNull();

      expect((await store.listRelationships({ channelId: ch, type: 'WORKS_ON', limit: 10 })).length).toBe(2);
      expect(
        (await store.listRelationships({ channelId: ch, source: '@ALICE', limit: 10 })).map((r) => r.type),
      ).toEqual(['MEMBER_OF', 'WORKS_ON']);
      expect(
        (await store.listRelationships({ channelId: ch, target: 'atlas', limit: 10 })).map((r) => r.source),
      ).toEqual(['Alice', 'Bob']);
      expect(
        (await store.listRelationships({ channelId: ch, source: 'bob', target: 'Atlas', type: 'WORKS_ON', limit: 10 }))
          .length,
      ).toBe(1);
      expect(await store.listRelationships({ channelId: ch, source: 'carol', limit: 10 })).toEqual([]);
      expect((await store.listRelationships({ channelId: ch, limit: 1 })).map((r) => r.type)).toEqual(['MEMBER_OF']);
      expect(await store.listRelationships({ channelId: freshChannelId(), limit: 10 })).toEqual([]);

      // retracting message 2 leaves the fold of message 1's evidence alone
      await store.applyMessageGraphs([graphSet(ch, 2, [])]);
      const back = (await store.listRelationships({ channelId: ch, type: 'WORKS_ON', source: 'alice', limit: 1 }))[0]!;
      expect(back.confidence).toBeCloseTo(0.5, 10);
      expect(back.valid_from).toBe('2024-02-01');
      expect(back.context).toBe('later statement');
      expect(back.source_message_id).toBe(platformId(1));
    });

    describe('traversals', () => {
      // A - B - C - D chain (0.9 each), A - E (0.3), B - F (0.8), G isolated; one cycle B - C - F - B.
      const ch = freshChannelId();
      const [a, b, c, d, e, f, g] = ['A', 'B', 'C', 'D', 'E', 'F', 'G'].map((n) => ent(ch, 'Person', `node ${n}`));
      beforeAll(async () => {
        await store.applyMessageGraphs([
          graphSet(
            ch,
            1,
            [a!, b!, c!, d!, e!, f!, g!],
            [
              rel('RELATED_TO', a!, b!),
              rel('RELATED_TO', c!, b!), // direction does not matter
              rel('RELATED_TO', c!, d!),
              rel('RELATED_TO', a!, e!, { confidence: 0.3 }),
              rel('RELATED_TO', b!, f!, { confidence: 0.8 }),
              rel('RELATED_TO', f!, c!, { confidence: 0.2 }),
            ],
          ),
        ]);
      });

      it('neighborhood: seeds first, then by hops and relationship confidence; depth and limit bound it', async () => {
        const one = await store.neighborhood([a!.entityId], { depth: 1, limit: 10 });
        expect(names(one.nodes)).toEqual(['node A', 'node B', 'node E']);
        expect(one.nodes[0]).toEqual({ id: a!.entityId, name: 'node A', type: 'Person', channel_id: ch });
        expect(one.edges.map((r) => r.id).sort()).toEqual(
          [relId('RELATED_TO', a!, b!), relId('RELATED_TO', a!, e!)].sort(),
        );

        const two = await store.neighborhood([a!.entityId], { depth: 2, limit: 10 });
        expect(names(two.nodes)).toEqual(['node A', 'node B', 'node E', 'node C', 'node F']);
        // every relationship among the returned nodes, including F - C
        expect(two.edges).toHaveLength(5);

        const three = await store.neighborhood([a!.entityId], { depth: 3, limit: 10 });
        expect(names(three.nodes)).toEqual(['node A', 'node B', 'node E', 'node C', 'node F', 'node D']);

        const limited = await store.neighborhood([a!.entityId], { depth: 2, limit: 1 });
        expect(names(limited.nodes)).toEqual(['node A', 'node B']);
        expect(limited.edges.map((r) => r.id)).toEqual([relId('RELATED_TO', a!, b!)]);

        const seeds = await store.neighborhood([d!.entityId, e!.entityId], { depth: 1, limit: 10 });
        expect(names(seeds.nodes)).toEqual(['node D', 'node E', 'node C', 'node A']);

        expect(await store.neighborhood([g!.entityId], { depth: 2, limit: 10 })).toEqual({
          nodes: [{ id: g!.entityId, name: 'node G', type: 'Person', channel_id: ch }],
          edges: [],
        });
        expect(await store.neighborhood([entityUuid(ch, 'Person', 'nobody')], { depth: 2, limit: 10 })).toEqual({
          nodes: [],
          edges: [],
        });
      });

      // docs/conventions.md "An entity card's related_entities": only edges touching the entity, not edges between two
      // OTHER entities (the neighbourhood's edges among neighbours, e.g. F - C for B).
      it('incidentRelationships: only relationships with one end among the entities, each with its other end', async () => {
        const byRank = (...ids: string[]) => ids.sort(); // equal confidence and valid_from: by id
        const ofB = await store.incidentRelationships([b!.entityId], { limit: 10 });
        expect(ofB.map((x) => x.relationship.id)).toEqual([
          ...byRank(relId('RELATED_TO', a!, b!), relId('RELATED_TO', c!, b!)), // 0.9 each
          relId('RELATED_TO', b!, f!), // 0.8
        ]);
        // Never F - C (between two neighbours of B) nor A - E.
        expect(ofB.map((x) => x.relationship.id)).not.toContain(relId('RELATED_TO', f!, c!));
        for (const x of ofB) {
          expect([x.relationship.source_id, x.relationship.target_id]).toContain(b!.entityId);
          expect(x.other.id).toBe(
            x.relationship.source_id === b!.entityId ? x.relationship.target_id : x.relationship.source_id,
          );
        }
        expect(ofB.find((x) => x.other.id === f!.entityId)?.other).toEqual({
          id: f!.entityId,
          name: 'node F',
          type: 'Person',
          channel_id: ch,
        });
        // Several entities (one card's group): edges among them are left out, edges to others kept.
        const ofBC = await store.incidentRelationships([b!.entityId, c!.entityId], { limit: 10 });
        expect(ofBC.map((x) => x.relationship.id).sort()).toEqual(
          [
            relId('RELATED_TO', a!, b!),
            relId('RELATED_TO', b!, f!),
            relId('RELATED_TO', c!, d!),
            relId('RELATED_TO', f!, c!),
          ].sort(),
        );
        expect(ofBC.map((x) => Math.round(x.relationship.confidence * 1000) / 1000)).toEqual([0.9, 0.9, 0.8, 0.2]);
        expect(await store.incidentRelationships([b!.entityId], { limit: 1 })).toHaveLength(1);
        expect(await store.incidentRelationships([g!.entityId], { limit: 10 })).toEqual([]);
        expect(await store.incidentRelationships([entityUuid(ch, 'Person', 'nobody')], { limit: 10 })).toEqual([]);
      });

      it('shortestPath: fewest hops in path order, undirected, null beyond maxDepth', async () => {
        const p = (await store.shortestPath([a!.entityId], [d!.entityId], 5))!;
        expect(names(p.nodes)).toEqual(['node A', 'node B', 'node C', 'node D']);
        expect(p.edges.map((r) => r.id)).toEqual([
          relId('RELATED_TO', a!, b!),
          relId('RELATED_TO', c!, b!),
          relId('RELATED_TO', c!, d!),
        ]);
        p.edges.forEach((r, i) => {
          expect([r.source_id, r.target_id].sort()).toEqual([p.nodes[i]!.id, p.nodes[i + 1]!.id].sort());
        });

        const back = (await store.shortestPath([d!.entityId], [a!.entityId, g!.entityId], 3))!;
        expect(names(back.nodes)).toEqual(['node D', 'node C', 'node B', 'node A']);

        expect(await store.shortestPath([a!.entityId], [d!.entityId], 2)).toBeNull();
        expect(await store.shortestPath([a!.entityId], [g!.entityId], 5)).toBeNull();

        const viaF = (await store.shortestPath([e!.entityId], [f!.entityId], 3))!;
        expect(names(viaF.nodes)).toEqual(['node E', 'node A', 'node B', 'node F']);

        const fromTwo = (await store.shortestPath([a!.entityId, d!.entityId], [c!.entityId], 3))!;
        expect(names(fromTwo.nodes)).toEqual(['node D', 'node C']);
      });

      it('commonNeighbors: entities adjacent to every group, by summed confidence', async () => {
        // B and F are both adjacent to C; B to A, F to ... (B - F). Groups [[A], [C]]: B is adjacent to both.
        const ac = await store.commonNeighbors([[a!.entityId], [c!.entityId]]);
        expect(names(ac.nodes)).toEqual(['node B']);
        expect(ac.edges.map((r) => r.id).sort()).toEqual(
          [relId('RELATED_TO', a!, b!), relId('RELATED_TO', c!, b!)].sort(),
        );

        // groups [[B], [C, D]]: F (0.8 + 0.2) common; C itself is a queried entity, not a neighbour.
        const bc = await store.commonNeighbors([[b!.entityId], [c!.entityId, d!.entityId]]);
        expect(names(bc.nodes)).toEqual(['node F']);
        expect(bc.edges.map((r) => r.id).sort()).toEqual(
          [relId('RELATED_TO', b!, f!), relId('RELATED_TO', f!, c!)].sort(),
        );

        // A and F: B (0.9 + 0.8) before C? C is not adjacent to A. E only to A.
        const af = await store.commonNeighbors([[a!.entityId], [f!.entityId]]);
        expect(names(af.nodes)).toEqual(['node B']);

        expect(await store.commonNeighbors([[a!.entityId], [g!.entityId]])).toEqual({ nodes: [], edges: [] });
        expect(await store.commonNeighbors([])).toEqual({ nodes: [], edges: [] });
      });

      it('commonNeighbors orders by summed relationship confidence, then name', async () => {
        const ch2 = freshChannelId();
        const x = ent(ch2, 'Person', 'Xavier');
        const y = ent(ch2, 'Person', 'Yolanda');
        const hi = ent(ch2, 'Project', 'Zeta');
        const lo = ent(ch2, 'Project', 'Alpha');
        const mid1 = ent(ch2, 'Project', 'Mu');
        await store.applyMessageGraphs([
          graphSet(
            ch2,
            1,
            [x, y, hi, lo, mid1],
            [
              rel('WORKS_ON', x, hi, { confidence: 0.9 }),
              rel('WORKS_ON', y, hi, { confidence: 0.9 }),
              rel('WORKS_ON', x, lo, { confidence: 0.5 }),
              rel('WORKS_ON', y, lo, { confidence: 0.5 }),
              rel('WORKS_ON', x, mid1, { confidence: 0.5 }),
              rel('WORKS_ON', y, mid1, { confidence: 0.5 }),
            ],
          ),
        ]);
        const r = await store.commonNeighbors([[x.entityId], [y.entityId]]);
        expect(names(r.nodes)).toEqual(['Zeta', 'Alpha', 'Mu']);
        expect(r.edges).toHaveLength(6);
      });
    });

    it('supersession: the older Decision becomes superseded by the newer, and is restored when that is retracted', async () => {
      const ch = freshChannelId();
      const props = (date: string) => ({ decided_by: 'alice', date, status: 'decided', context: 'db choice' });
      const d1 = ent(ch, 'Decision', 'use MySQL', { properties: props('2023-11-14') });
      const d2 = ent(ch, 'Decision', 'use PostgreSQL', { properties: props('2023-11-15') });
      const d3 = ent(ch, 'Decision', 'use SQLite', { properties: props('2023-11-16') });
      await store.applyMessageGraphs([graphSet(ch, 1, [d1])]);
      await store.applyMessageGraphs([graphSet(ch, 2, [d2], [], [supersession(ch, 2, d1, d2)])]);
      expect((await store.getEntity(d1.entityId))!.properties).toEqual({
        ...props('2023-11-14'),
        status: 'superseded',
        superseded_by: 'use PostgreSQL',
      });
      expect((await store.getEntity(d2.entityId))!.properties).toEqual(props('2023-11-15'));

      // an uncertain supersession changes nothing
      await store.applyMessageGraphs([graphSet(ch, 3, [d3], [], [supersession(ch, 3, d2, d3, false)])]);
      expect((await store.getEntity(d2.entityId))!.properties.status).toBe('decided');

      // retracting the superseding message restores the old decision
      await store.applyMessageGraphs([graphSet(ch, 2, [])]);
      expect(await store.getEntity(d2.entityId)).toBeNull();
      expect((await store.getEntity(d1.entityId))!.properties).toEqual(props('2023-11-14'));

      // the newest superseding decision names it
      await store.applyMessageGraphs([
        graphSet(ch, 2, [d2], [], [supersession(ch, 2, d1, d2)]),
        graphSet(ch, 3, [d3], [], [supersession(ch, 3, d1, d3)]),
      ]);
      expect((await store.getEntity(d1.entityId))!.properties.superseded_by).toBe('use SQLite');
      // properties merge oldest mention first: a later mention's value wins
      await store.applyMessageGraphs([
        graphSet(ch, 4, [ent(ch, 'Decision', 'use sqlite', { properties: { context: 'embedded' } })]),
      ]);
      expect((await store.getEntity(d3.entityId))!.properties).toEqual({ ...props('2023-11-16'), context: 'embedded' });
    });

    it('entity groups: one card per (type, normalised name) across channels, with filters', async () => {
      const c1 = freshChannelId();
      const c2 = freshChannelId();
      const tag = c1.toLowerCase();
      const kafka = `Kafka ${tag}`;
      await store.applyMessageGraphs([
        graphSet(c1, 1, [ent(c1, 'Technology', kafka, { factIds: [fact(c1, 1, 'k1'), fact(c1, 1, 'k2')] })]),
        graphSet(c1, 2, [ent(c1, 'Technology', kafka, { factIds: [fact(c1, 1, 'k1')] })]),
        graphSet(c2, 3, [
          ent(c2, 'Technology', `kafka-${tag}`, { factIds: [fact(c2, 3, 'k3')] }),
          ent(c2, 'Person', `Kafka ${tag}`, { factIds: [fact(c2, 3, 'k3')] }),
        ]),
        graphSet(c1, 4, [ent(c1, 'Person', `Olga ${tag}`, { factIds: [fact(c1, 4, 'o1')] })]),
      ]);
      const inC2 = await store.entityGroups({ channelId: c2, limit: 10 });
      expect(inC2).toEqual([
        {
          type: 'Technology',
          key: `kafka ${tag}`,
          name: kafka,
          entity_ids: [entityUuid(c1, 'Technology', kafka), entityUuid(c2, 'Technology', kafka)],
          channel_ids: [c1, c2].sort(),
          fact_count: 3,
          last_mentioned_at: tsOf(3),
        },
        {
          type: 'Person',
          key: `kafka ${tag}`,
          name: `Kafka ${tag}`,
          entity_ids: [entityUuid(c2, 'Person', kafka)],
          channel_ids: [c2],
          fact_count: 1,
          last_mentioned_at: tsOf(3),
        },
      ]);
      expect((await store.entityGroups({ channelId: c2, type: 'Person', limit: 10 })).map((g) => g.type)).toEqual([
        'Person',
      ]);
      expect((await store.entityGroups({ channelId: c1, limit: 10 })).map((g) => `${g.type}/${g.fact_count}`)).toEqual([
        'Technology/3',
        'Person/1',
      ]);
      expect(await store.entityGroups({ channelId: c1, limit: 1 })).toHaveLength(1);
      const all = await store.entityGroups({ type: 'Technology', limit: 10_000 });
      expect(all.filter((g) => g.key === `kafka ${tag}`)).toHaveLength(1);
      expect(all.every((g) => g.type === 'Technology')).toBe(true);
      // A restricted caller's visible channels: nothing of the others in a group, its ids, channels or fact count.
      const onlyC2 = await store.entityGroups({ channelId: c2, channels: [c2], limit: 10 });
      expect(onlyC2.find((g) => g.type === 'Technology')).toMatchObject({
        type: 'Technology',
        name: `kafka-${tag}`,
        entity_ids: [entityUuid(c2, 'Technology', kafka)],
        channel_ids: [c2],
        fact_count: 1,
      });
      const seenFromC1 = await store.entityGroups({ channels: [c1], limit: 10_000 });
      expect(seenFromC1.filter((g) => g.key === `kafka ${tag}`).map((g) => `${g.type}/${g.fact_count}`)).toEqual([
        'Technology/2',
      ]);
      expect(seenFromC1.every((g) => g.channel_ids.every((c) => c === c1) || !g.key.endsWith(tag))).toBe(true);
      expect(await store.entityGroups({ channels: [], limit: 10 })).toEqual([]);
    });

    it('deleteChannel removes a channel’s entities and relationships only, and returns the counts', async () => {
      const c1 = freshChannelId();
      const c2 = freshChannelId();
      const a = ent(c1, 'Person', 'Ava');
      const b = ent(c1, 'Project', 'Bolt');
      const t = ent(c1, 'Technology', 'Go');
      const keep = ent(c2, 'Person', 'Ava');
      const keep2 = ent(c2, 'Project', 'Bolt');
      await store.applyMessageGraphs([
        graphSet(c1, 1, [a, b, t], [rel('WORKS_ON', a, b), rel('USES', b, t)]),
        graphSet(c2, 1, [keep, keep2], [rel('WORKS_ON', keep, keep2)]),
      ]);
      const before = await store.counts();
      expect(await store.counts(c1)).toEqual({ nodes: 3, relationships: 2 });
      expect(await store.deleteChannel(c1)).toEqual({ entities: 3, relationships: 2 });
      expect(await store.counts(c1)).toEqual({ nodes: 0, relationships: 0 });
      expect(await store.counts()).toEqual({ nodes: before.nodes - 3, relationships: before.relationships - 2 });
      expect(await store.listEntities({ channelId: c1, limit: 10 })).toEqual([]);
      expect(await store.listRelationships({ channelId: c1, limit: 10 })).toEqual([]);
      expect(names(await store.listEntities({ channelId: c2, limit: 10 }))).toEqual(['Ava', 'Bolt']);
      expect(await store.listRelationships({ channelId: c2, limit: 10 })).toHaveLength(1);
      expect(await store.deleteChannel(c1)).toEqual({ entities: 0, relationships: 0 });

      // the deleted messages' mentions are gone too: a new message does not bring the old ones back
      await store.applyMessageGraphs([graphSet(c1, 2, [ent(c1, 'Project', 'Bolt')])]);
      const bolt = (await store.listEntities({ channelId: c1, limit: 10 }))[0]!;
      expect([bolt.name, bolt.mention_count, bolt.source_message_id]).toEqual(['Bolt', 1, platformId(2)]);
    });

    it('loses no mention when writers of one entity run concurrently', async () => {
      const ch = freshChannelId();
      const hub = (n: number) => ent(ch, 'Project', 'Hub', { confidence: 0.1, factIds: [fact(ch, n, 'hub')] });
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.applyMessageGraphs([graphSet(ch, i + 1, [hub(i + 1), ent(ch, 'Person', `P${i}`)])]),
        ),
      );
      const got = (await store.getEntity(hub(1).entityId))!;
      expect(got.mention_count).toBe(8);
      expect(got.source_fact_ids).toHaveLength(8);
      expect(got.confidence).toBeCloseTo(1 - 0.9 ** 8, 10);
      expect(got.source_message_id).toBe(platformId(1));
    });

    it('counts entities and relationships', async () => {
      const ch = freshChannelId();
      const before = await store.counts();
      const a = ent(ch, 'Person', 'Ed');
      const b = ent(ch, 'Meeting', 'Standup');
      await store.applyMessageGraphs([graphSet(ch, 1, [a, b], [rel('PARTICIPATED_IN', a, b)])]);
      expect(await store.counts()).toEqual({ nodes: before.nodes + 2, relationships: before.relationships + 1 });
    });

    it('rejects a relationship with an end outside the event (INVALID_REQUEST) and writes nothing', async () => {
      const ch = freshChannelId();
      const a = ent(ch, 'Person', 'Ivy');
      const b = ent(ch, 'Project', 'Jade');
      const ok = graphSet(ch, 1, [a, b], [rel('WORKS_ON', a, b)]);
      const stranger = ent(ch, 'Project', 'Elsewhere');
      const bad = graphSet(ch, 2, [a], [rel('WORKS_ON', a, stranger)]);
      const before = await store.counts();
      const err = await store.applyMessageGraphs([ok, bad]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AtlasError);
      expect((err as AtlasError).code).toBe('INVALID_REQUEST');
      expect(await store.counts()).toEqual(before);
      expect(await store.listEntities({ channelId: ch, limit: 10 })).toEqual([]);
      expect(await store.getEntity(a.entityId)).toBeNull();
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('truncate deletes everything', async () => {
      const ch = freshChannelId();
      const a = ent(ch, 'Person', 'Uma');
      const b = ent(ch, 'Team', 'Ops');
      await store.applyMessageGraphs([graphSet(ch, 1, [a, b], [rel('MEMBER_OF', a, b)])]);
      await store.truncate();
      expect(await store.counts()).toEqual({ nodes: 0, relationships: 0 });
      expect(await store.listEntities({ channelId: ch, limit: 10 })).toEqual([]);
      // nothing of the old contribution survives: a new message folds from scratch
      await store.applyMessageGraphs([graphSet(ch, 2, [a])]);
      expect((await store.getEntity(a.entityId))!.mention_count).toBe(1);
    });

    // Issue 27 point 2, "As of a date": every read folds only the contributions of messages at or before asOf.
    it('as_of: entities, their properties and a decision’s status as they stood then', async () => {
      const ch = freshChannelId();
      const props = (date: string) => ({ decided_by: 'alice', date, status: 'decided', context: 'db choice' });
      const d1 = ent(ch, 'Decision', 'use MySQL', { properties: props('2023-11-14') });
      const d2 = ent(ch, 'Decision', 'use PostgreSQL', { properties: props('2023-11-15') });
      const alice = ent(ch, 'Person', 'Alice Chen', { confidence: 0.5, factIds: [fact(ch, 1, 'a')] });
      const alice5 = ent(ch, 'Person', 'Alice Chen', {
        confidence: 0.5,
        aliases: ['alice'],
        factIds: [fact(ch, 5, 'b')],
        properties: { role: 'lead' },
      });
      await store.applyMessageGraphs([
        graphSet(ch, 1, [d1, alice]),
        graphSet(ch, 3, [d2], [], [supersession(ch, 3, d1, d2)]),
        graphSet(ch, 5, [alice5]),
      ]);
      const before = tsOf(2);
      const then = await store.listEntities({ channelId: ch, limit: 10, asOf: before });
      expect(names(then).sort()).toEqual(['Alice Chen', 'use MySQL']);
      const d1Then = then.find((e) => e.id === d1.entityId)!;
      expect(d1Then.properties).toEqual(props('2023-11-14')); // not superseded yet
      const aliceThen = then.find((e) => e.id === alice.entityId)!;
      expect(aliceThen).toMatchObject({
        mention_count: 1,
        aliases: [],
        source_fact_ids: [fact(ch, 1, 'a')],
        properties: {},
        message_ts: tsOf(1),
        last_mentioned_at: tsOf(1),
        status: 'pending', // 0.5 < 0.6 then; 1 − 0.5² = 0.75 now
      });
      expect(aliceThen.confidence).toBeCloseTo(0.5, 10);
      expect(await store.getEntity(d2.entityId, { asOf: before })).toBeNull();
      expect((await store.getEntities([d1.entityId, d2.entityId], { asOf: before })).map((e) => e.id)).toEqual([
        d1.entityId,
      ]);
      // At the superseding message's own time the decision is superseded, as it is today.
      expect((await store.getEntity(d1.entityId, { asOf: tsOf(3) }))!.properties).toMatchObject({
        status: 'superseded',
        superseded_by: 'use PostgreSQL',
      });
      const now = await store.getEntity(alice.entityId);
      expect(now).toMatchObject({ mention_count: 2, aliases: ['alice'], properties: { role: 'lead' } });
      expect(now!.confidence).toBeCloseTo(0.75, 10);
      // An instant after every message reads what a read without asOf reads (system times aside).
      const later = await store.listEntities({ channelId: ch, limit: 10, asOf: '2999-01-01T00:00:00.000Z' });
      const today = await store.listEntities({ channelId: ch, limit: 10 });
      const core = (e: GraphEntity) => ({ ...withoutUpdatedAt(e), created_at: '' });
      expect(later.map(core)).toEqual(today.map(core));
      expect(await store.findEntities({ names: ['use PostgreSQL'], asOf: before })).toEqual([]);
      expect(await store.findEntities({ names: ['alice'], channelId: ch, asOf: before })).toEqual([]); // alias came later
      expect(names(await store.findEntities({ names: ['alice'], channelId: ch }))).toEqual(['Alice Chen']);
      const groups = await store.entityGroups({ channelId: ch, limit: 10, asOf: before });
      expect(groups.map((g) => g.name).sort()).toEqual(['Alice Chen', 'use MySQL']);
      expect(groups.find((g) => g.name === 'Alice Chen')!.fact_count).toBe(1);
    });

    it('as_of: relationships with evidence by then and valid then; traversals over them', async () => {
      const ch = freshChannelId();
      const alice = ent(ch, 'Person', 'Alice Chen');
      const bob = ent(ch, 'Person', 'Bob Stone');
      const atlas = ent(ch, 'Project', 'Atlas');
      const team = ent(ch, 'Team', 'Platform');
      const kafka = ent(ch, 'Technology', 'Kafka');
      await store.applyMessageGraphs([
        graphSet(
          ch,
          1,
          [alice, atlas, team, kafka],
          [
            rel('WORKS_ON', alice, atlas, { validFrom: '2023-11-14' }),
            rel('MEMBER_OF', alice, team, { validFrom: '2023-11-14', validUntil: '2023-11-18' }),
            rel('USES', atlas, kafka, { validFrom: '2023-11-20' }),
          ],
        ),
        graphSet(ch, 5, [bob, atlas], [rel('WORKS_ON', bob, atlas, { validFrom: '2023-11-14' })]),
      ]);
      const types = (rs: readonly { type: string; source: string; target: string }[]) =>
        rs.map((r) => `${r.source} ${r.type} ${r.target}`).sort();
      const before = tsOf(2);
      expect(types(await store.listRelationships({ channelId: ch, limit: 10, asOf: before }))).toEqual([
        'Alice Chen MEMBER_OF Platform',
        'Alice Chen WORKS_ON Atlas',
      ]);
      // valid_until passed: gone; valid_from reached: there.
      expect(types(await store.listRelationships({ channelId: ch, limit: 10, asOf: '2023-11-21T00:00:00Z' }))).toEqual([
        'Alice Chen WORKS_ON Atlas',
        'Atlas USES Kafka',
        'Bob Stone WORKS_ON Atlas',
      ]);
      expect(await store.listRelationships({ channelId: ch, limit: 10 })).toHaveLength(4);

      const hood = await store.neighborhood([atlas.entityId], { depth: 1, limit: 10, asOf: before });
      expect(names(hood.nodes)).toEqual(['Atlas', 'Alice Chen']);
      expect(types(hood.edges)).toEqual(['Alice Chen WORKS_ON Atlas']);
      expect(names((await store.neighborhood([atlas.entityId], { depth: 1, limit: 10 })).nodes).sort()).toEqual([
        'Alice Chen',
        'Atlas',
        'Bob Stone',
        'Kafka',
      ]);
      const incident = await store.incidentRelationships([atlas.entityId], { limit: 10, asOf: before });
      expect(incident.map((x) => x.other.name)).toEqual(['Alice Chen']);
      expect(await store.shortestPath([alice.entityId], [bob.entityId], 3, { asOf: before })).toBeNull();
      expect((await store.shortestPath([alice.entityId], [bob.entityId], 3))!.edges).toHaveLength(2);
      const common = (asOf?: string) => store.commonNeighbors([[alice.entityId], [bob.entityId]], { asOf });
      expect(names((await common()).nodes)).toEqual(['Atlas']);
      expect((await common(before)).nodes).toEqual([]);
    });
  });
}

// Postgres adapter specifics: connection failures are STORE_UNAVAILABLE (retriable).
describe('PostgresGraphStore: unavailable database', () => {
  it('maps a refused connection to STORE_UNAVAILABLE', async () => {
    const h = await openDatabase({ url: 'postgres://postgres@127.0.0.1:1/none', poolSize: 1 });
    try {
      const err = await new PostgresGraphStore(h.db).ping().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AtlasError);
      expect((err as AtlasError).code).toBe('STORE_UNAVAILABLE');
      expect((err as AtlasError).retriable).toBe(true);
    } finally {
      await h.close();
    }
  });

  it('maps a closed embedded database to STORE_UNAVAILABLE', async () => {
    const h = await openDatabase({ dataDir: 'memory://' });
    await migrateGraph(h.db);
    const store = new PostgresGraphStore(h.db);
    await h.close();
    const err = await store.listEntities({ channelId: 'C1', limit: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AtlasError);
    expect((err as AtlasError).code).toBe('STORE_UNAVAILABLE');
  });
});
