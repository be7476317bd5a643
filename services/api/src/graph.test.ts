import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { apiPorts, appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');

const ENTITY_KEYS = [
  'aliases',
  'channel_id',
  'created_at',
  'id',
  'name',
  'properties',
  'scope',
  'source_fact_ids',
  'status',
  'type',
  'updated_at',
];
const EDGE_KEYS = ['confidence', 'context', 'id', 'source', 'source_message_id', 'target', 'type', 'valid_from'];

/**
 * The graph stores the routes run on: the embedded default (Postgres tables in PGlite) always, and Neo4j when
 * ATLAS_TEST_NEO4J_URL lists a server (a fresh namespace per run, deleted after).
 */
const STORES: { name: string; env: Record<string, string> }[] = [
  { name: 'postgres tables', env: {} },
  ...(process.env.ATLAS_TEST_NEO4J_URL
    ? [
        {
          name: 'neo4j',
          env: { NEO4J_URL: process.env.ATLAS_TEST_NEO4J_URL, NEO4J_NAMESPACE: `atlas-test-${randomUUID()}` },
        },
      ]
    : []),
];

/** Every /api/graph route over the real olake export (302 messages), on each graph store. */
describe.each(STORES)('graph routes on real data (slack-olake), $name', ({ env }) => {
  let rt: Runtime;
  let app: FastifyInstance;
  let channelId: string;
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url });
    return { status: res.statusCode, body: res.json() };
  };

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', ...env }));
    await appendPlan(rt, await planImport(OLAKE));
    await drainProjectors(rt, 0, false);
    app = await buildApp(apiPorts(rt));
    channelId = (await rt.documents.listChannels()).find((c) => c.name === 'help')!.id;
  });
  afterAll(async () => {
    await app?.close();
    if (env.NEO4J_URL) await rt?.graph.truncate(); // only this run's namespace
    await rt?.close();
  });

  it('GET /api/graph/entities lists the channel entities in the spec shape, with filters and limits', async () => {
    const { status, body } = await get(`/api/graph/entities?channel_id=${channelId}&limit=200`);
    expect(status).toBe(200);
    expect(body.length).toBeGreaterThan(10);
    for (const e of body) {
      expect(Object.keys(e).sort()).toEqual(ENTITY_KEYS);
      expect(e.channel_id).toBe(channelId);
      expect(e.scope).toBe('channel');
      expect(['active', 'pending']).toContain(e.status);
    }
    const types = new Set(body.map((e: { type: string }) => e.type));
    expect(types.has('Person')).toBe(true);
    expect(types.has('Technology')).toBe(true);
    const people = await get(`/api/graph/entities?channel_id=${channelId}&type=Person&limit=5`);
    expect(people.body.length).toBeLessThanOrEqual(5);
    expect(people.body.every((e: { type: string }) => e.type === 'Person')).toBe(true);
    const pending = await get(`/api/graph/entities?channel_id=${channelId}&status=pending&limit=200`);
    expect(pending.body.every((e: { status: string }) => e.status === 'pending')).toBe(true);
    expect((await get(`/api/graph/entities?channel_id=${channelId}&limit=201`)).status).toBe(400);
    expect((await get('/api/graph/entities')).status).toBe(400);
    expect((await get(`/api/graph/entities?channel_id=${channelId}&type=Planet`)).status).toBe(400);
    expect((await get(`/api/graph/entities?channel_id=${channelId}`)).body.length).toBeLessThanOrEqual(50);
  });

  it('GET /api/graph/entities/{id} is the single-entity form; unknown ids are 404', async () => {
    const [first] = (await get(`/api/graph/entities?channel_id=${channelId}&type=Technology&limit=1`)).body;
    const { status, body } = await get(`/api/graph/entities/${first.id}`);
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual([...ENTITY_KEYS, 'message_ts', 'source_message_id'].sort());
    expect(body.source_fact_ids.length).toBeGreaterThan(0);
    const memory = await get(`/api/memories/${body.source_fact_ids[0]}`);
    expect(memory.body.graph_entity_ids).toContain(first.id);
    const missing = await get('/api/graph/entities/00000000-0000-5000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
  });

  it('relationships, neighbors, subgraph, path and common-neighbors agree with each other', async () => {
    const rels = await get(`/api/graph/relationships?channel_id=${channelId}&limit=200`);
    expect(rels.status).toBe(200);
    expect(rels.body.length).toBeGreaterThan(5);
    for (const r of rels.body) {
      expect(Object.keys(r).sort()).toEqual([...EDGE_KEYS, 'created_at', 'source_fact_id', 'valid_until'].sort());
      expect(r.confidence).toBeGreaterThanOrEqual(0);
      expect(r.confidence).toBeLessThanOrEqual(1);
      expect(r.valid_from).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    const r = rels.body[0];
    const bySource = await get(
      `/api/graph/relationships?channel_id=${channelId}&source=${encodeURIComponent(r.source)}&limit=200`,
    );
    expect(bySource.body.length).toBeGreaterThan(0);
    expect(bySource.body.every((x: { source: string }) => x.source.toLowerCase() === r.source.toLowerCase())).toBe(
      true,
    );
    const byType = await get(`/api/graph/relationships?channel_id=${channelId}&type=${r.type}`);
    expect(byType.body.every((x: { type: string }) => x.type === r.type)).toBe(true);

    const [src] = (await get(`/api/graph/entities?channel_id=${channelId}&limit=200`)).body.filter(
      (e: { name: string }) => e.name === r.source,
    );
    const hood = await get(`/api/graph/entities/${src.id}/neighbors?depth=1`);
    expect(hood.status).toBe(200);
    expect(hood.body.nodes[0]).toEqual({ id: src.id, name: src.name, type: src.type });
    expect(hood.body.nodes.map((n: { name: string }) => n.name)).toContain(r.target);
    for (const e of hood.body.edges) expect(Object.keys(e).sort()).toEqual(EDGE_KEYS);
    expect((await get(`/api/graph/entities/${src.id}/neighbors?depth=4`)).status).toBe(400);
    const deeper = await get(`/api/graph/entities/${src.id}/neighbors?depth=2&limit=200`);
    expect(deeper.body.nodes.length).toBeGreaterThanOrEqual(hood.body.nodes.length);

    const sub = await get(
      `/api/graph/subgraph?entities=${encodeURIComponent(`${r.source},${r.target}`)}&depth=1&channel_id=${channelId}`,
    );
    expect(sub.status).toBe(200);
    expect(sub.body.edges.some((e: { id: string }) => e.id === r.id)).toBe(true);

    const p = await get(
      `/api/graph/path?source=${encodeURIComponent(r.source)}&target=${encodeURIComponent(r.target)}&channel_id=${channelId}`,
    );
    expect(p.status).toBe(200);
    expect(p.body.length).toBe(1);
    expect(p.body.nodes.map((n: { name: string }) => n.name)).toEqual([r.source, r.target]);

    // Two entities sharing a neighbour: the two ends of two relationships with a common end.
    const ends = new Map<string, Set<string>>();
    for (const x of rels.body) {
      ends.set(x.source, new Set([...(ends.get(x.source) ?? []), x.target]));
      ends.set(x.target, new Set([...(ends.get(x.target) ?? []), x.source]));
    }
    const hub = [...ends].find(([, s]) => s.size >= 2);
    expect(hub).toBeDefined();
    const [a, b] = [...hub![1]];
    const common = await get(
      `/api/graph/common-neighbors?entities=${encodeURIComponent(`${a},${b}`)}&channel_id=${channelId}`,
    );
    expect(common.status).toBe(200);
    expect(common.body.nodes.map((n: { name: string }) => n.name)).toContain(hub![0]);
    expect((await get('/api/graph/common-neighbors?entities=onlyone')).status).toBe(400);
    expect((await get('/api/graph/path?source=nobody-at-all&target=x')).status).toBe(404);
  });

  it('GET /api/graph/decisions returns decision records; cards aggregate an entity', async () => {
    const d = await get(`/api/graph/decisions?channel_id=${channelId}`);
    expect(d.status).toBe(200);
    for (const rec of d.body)
      expect(Object.keys(rec).sort()).toEqual(['context', 'date', 'decided_by', 'name', 'status', 'superseded_by']);

    const cards = await get('/api/graph/entities/cards?limit=5');
    expect(cards.status).toBe(200);
    expect(cards.body.length).toBe(5);
    for (const c of cards.body)
      expect(Object.keys(c).sort()).toEqual([
        'entity_id',
        'entity_name',
        'entity_type',
        'fact_count',
        'staleness_score',
      ]);
    expect(cards.body[0].fact_count).toBeGreaterThanOrEqual(cards.body[4].fact_count);
    const techCards = await get(`/api/graph/entities/cards?entity_type=Technology&channel_id=${channelId}`);
    expect(techCards.body.every((c: { entity_type: string }) => c.entity_type === 'Technology')).toBe(true);

    const top = techCards.body[0];
    const card = await get(`/api/graph/entities/${encodeURIComponent(top.entity_name)}/card`);
    expect(card.status).toBe(200);
    expect(card.body).toMatchObject({
      tier: 'entity_card',
      entity_name: top.entity_name,
      entity_type: 'Technology',
      fact_count: top.fact_count,
    });
    expect(card.body.channel_ids).toContain(channelId);
    expect(card.body.key_facts.length).toBeGreaterThan(0);
    const breakdown = Object.values(card.body.fact_type_breakdown as Record<string, number>).reduce((s, n) => s + n, 0);
    expect(breakdown).toBe(card.body.fact_count);
    expect(card.body.staleness_score).toBeGreaterThan(0);
    expect(card.body.summary).toContain(top.entity_name);
    expect((await get('/api/graph/entities/no%20such%20thing%20here/card')).status).toBe(404);
  });
});
