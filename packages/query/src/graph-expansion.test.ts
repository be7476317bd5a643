import {
  type EntitiesExtracted,
  type EntityType,
  type ExtractedEntity,
  entityUuid,
  factUuid,
  messageUuid,
  type RelationshipType,
} from '@atlas/core';
import { questionEntities } from '@atlas/pipeline';
import { migrateGraph, openDatabase, PostgresGraphStore } from '@atlas/stores';
import { freshChannelId } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphExpansion, MAX_EXPANDED_FACTS } from './graph-expansion.js';

const ch = freshChannelId();
const ts = (n: number) => new Date((1_700_000_000 + n * 60) * 1000).toISOString();
const fid = (n: number, k = 0) => factUuid(messageUuid('platform_a', ch, String(n)), `fact ${k}`);
const ent = (type: EntityType, name: string, factIds: string[]): ExtractedEntity => ({
  entityId: entityUuid(ch, type, name),
  type,
  name,
  aliases: [],
  confidence: 0.9,
  factIds,
  properties: {},
});
const set = (
  n: number,
  entities: ExtractedEntity[],
  rels: [RelationshipType, ExtractedEntity, ExtractedEntity][] = [],
): EntitiesExtracted => ({
  messageId: messageUuid('platform_a', ch, String(n)),
  platform: 'platform_a',
  channelId: ch,
  sourceMessageId: String(n),
  messageTs: ts(n),
  extractor: 'test',
  extractedAt: ts(n),
  entities,
  relationships: rels.map(([type, s, t]) => ({
    type,
    sourceId: s.entityId,
    targetId: t.entityId,
    confidence: 0.9,
    validFrom: ts(n).slice(0, 10),
    validUntil: null,
    context: '',
    sourceFactId: null,
  })),
  supersessions: [],
});

describe('graph-expanded retrieval', () => {
  const db = openDatabase({ dataDir: 'memory://' });
  let graph: PostgresGraphStore;
  beforeAll(async () => {
    const { db: k } = await db;
    await migrateGraph(k);
    graph = new PostgresGraphStore(k);
    const melanie = ent('Person', 'Melanie', [fid(1), fid(2)]);
    const parade = ent('Meeting', 'pride parade', [fid(1)]);
    const kafka = ent('Technology', 'Kafka', [fid(2)]);
    const redpanda = ent('Technology', 'Redpanda', [fid(2)]);
    const broad = ent(
      'Technology',
      'Clojure',
      Array.from({ length: MAX_EXPANDED_FACTS + 1 }, (_, i) => fid(3, i)),
    );
    await graph.applyMessageGraphs([
      set(1, [melanie, parade], [['PARTICIPATED_IN', melanie, parade]]),
      set(2, [{ ...melanie, factIds: [fid(2)] }, kafka, redpanda], [['RELATED_TO', kafka, redpanda]]),
      set(3, [broad]),
    ]);
  });
  afterAll(async () => (await db).close());

  it('a named technology gives its facts 1 and its neighbours 0.5', async () => {
    const scores = await graphExpansion(graph, questionEntities)('Why do we use Kafka?', ch);
    expect(scores.get(fid(2))).toBe(1);
    const only = await graphExpansion(graph, () => [{ name: 'Redpanda', type: 'Technology' }])('x', ch);
    expect(only.get(fid(2))).toBe(1);
  });

  it('a named person leads to what they took part in, not to everything they said', async () => {
    const scores = await graphExpansion(graph, () => [{ name: 'Melanie', type: 'Person' }])(
      'What events has Melanie been to?',
      ch,
    );
    expect(scores.get(fid(1))).toBe(0.5); // the parade's fact, through PARTICIPATED_IN
    expect(scores.has(fid(2))).toBe(false); // her other fact, about Kafka
    const other = await graphExpansion(graph, () => [{ name: 'Melanie', type: 'Person' }])(
      'What does Melanie like?',
      ch,
    );
    expect(other.size).toBe(0); // not a question about what she took part in
  });

  it('an entity too broad to expand, an unknown name, and another channel give nothing', async () => {
    expect((await graphExpansion(graph, () => [{ name: 'Clojure', type: 'Technology' }])('x', ch)).size).toBe(0);
    expect((await graphExpansion(graph, () => [{ name: 'Nothing', type: 'Project' }])('x', ch)).size).toBe(0);
    expect((await graphExpansion(graph, () => [{ name: 'Kafka', type: 'Technology' }])('x', 'C0THER')).size).toBe(0);
  });
});
