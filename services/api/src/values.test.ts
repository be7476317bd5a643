import path from 'node:path';
import { loadConfig, normalizeEntityName } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { apiPorts, appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');

type Json = ReturnType<typeof JSON.parse>;

/**
 * Issue 21, point 1 ("Values, not only keys"): each value below was wrong on real data while its key was right. The
 * olake export (5 channels, 304 messages) is imported, and the wiki of #help (only) is generated.
 */
describe('route values on real data (olake export), issue 21', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let help: string;
  let general: string;
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) => {
    const res = await app.inject({ method, url, ...(payload === undefined ? {} : { payload }) });
    const json = String(res.headers['content-type'] ?? '').includes('json');
    return { status: res.statusCode, body: (res.body ? (json ? res.json() : res.body) : undefined) as Json };
  };
  const get = (url: string) => call('GET', url);
  /** The entities a card aggregates: its type and normalised name, across channels. */
  const cardGroup = async (card: { entity_name: string; entity_type: string }) =>
    (await rt.graph.findEntities({ names: [card.entity_name] })).filter(
      (e) => e.type === card.entity_type && normalizeEntityName(e.name) === normalizeEntityName(card.entity_name),
    );

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', CREDENTIAL_MASTER_KEY: '5a'.repeat(32) }));
    await appendPlan(rt, await planImport(OLAKE));
    await drainProjectors(rt, 0, false);
    app = await buildApp(apiPorts(rt));
    const channels = await rt.documents.listChannels();
    help = channels.find((c) => c.name === 'help')!.id;
    general = channels.find((c) => c.name === 'general')!.id;
    await rt.wikiGenerator!.generate(help, 'full');
  }, 300_000);
  afterAll(async () => {
    await app?.close();
    await rt?.close();
  });

  // Bullet 1: `connected` was false for every channel (the channels.connected column was never written).
  it('connected: true exactly while the channel is selected in a connected connection', async () => {
    const connectedOf = async (id: string) => ({
      list: (await get('/api/channels')).body.find((c: { id: string }) => c.id === id).connected,
      detail: (await get(`/api/channels/${id}`)).body.connected,
    });
    // Imported from an export only: not connected.
    expect(await connectedOf(help)).toEqual({ list: false, detail: false });
    const conn = await rt.connections.create({
      name: 'olake workspace',
      platform: 'platform_a',
      credentials: { bot_token: 'xoxb-test', signing_secret: 'secret' },
    });
    const select = (helpOn: boolean) =>
      rt.connections.saveChannels(conn.id, [
        { id: help, name: '#help', is_private: false, member_count: 40, sync_enabled: helpOn },
        { id: general, name: '#general', is_private: false, member_count: 40, sync_enabled: false },
      ]);
    await select(true);
    expect(await connectedOf(help)).toEqual({ list: true, detail: true });
    expect(await connectedOf(general)).toEqual({ list: false, detail: false }); // listed, not selected
    await select(false); // deselected
    expect(await connectedOf(help)).toEqual({ list: false, detail: false });
    await select(true);
    await rt.connections.update(conn.id, { status: 'disconnected' });
    expect(await connectedOf(help)).toEqual({ list: false, detail: false });
    await rt.connections.update(conn.id, { status: 'connected' });
    expect(await connectedOf(help)).toEqual({ list: true, detail: true });
    await rt.connections.delete(conn.id);
    expect(await connectedOf(help)).toEqual({ list: false, detail: false });
  });

  // Bullet 2: wiki_page_count on GET /api/channels/{id} was a constant 0.
  it('wiki_page_count is the current wiki page count, as wiki status and channel stats give it', async () => {
    const channel = (await get(`/api/channels/${help}`)).body;
    const status = (await get(`/api/wiki/status?channel_id=${help}`)).body;
    const stats = (await get(`/api/stats/channel/${help}`)).body;
    const structure = (await get(`/api/wiki/structure?channel_id=${help}`)).body;
    const countNodes = (nodes: { children: unknown[] }[]): number =>
      nodes.reduce((n, x) => n + 1 + countNodes(x.children as { children: unknown[] }[]), 0);
    expect(channel.wiki_page_count).toBe(countNodes(structure.pages));
    expect(channel.wiki_page_count).toBeGreaterThan(7); // the 7 fixed pages and topics
    expect(status.page_count).toBe(channel.wiki_page_count);
    expect(stats.wiki_page_count).toBe(channel.wiki_page_count);
    expect((await get(`/api/channels/${general}`)).body.wiki_page_count).toBe(0); // never generated
  });

  // Bullet 3: cluster_id was null on every memory, so an entity card's cluster_ids was always empty.
  it('cluster_id is the wiki cluster holding the fact (detail, memory search, card); null where not clustered', async () => {
    const clusters = await rt.wiki.clusters(help);
    const clusterOf = new Map(clusters.flatMap((c) => c.member_ids.map((m) => [m, c.id] as const)));
    const { body } = await get(`/api/memories?channel_id=${help}&limit=100`);
    expect(body.memories.length).toBeGreaterThan(50);
    let clustered = 0;
    for (const m of body.memories as { id: string }[]) {
      const detail = (await get(`/api/memories/${m.id}`)).body;
      expect(detail.cluster_id, m.id).toBe(clusterOf.get(m.id) ?? null);
      if (detail.cluster_id !== null) clustered++;
    }
    expect(clustered).toBe(body.memories.length); // the wiki assigns every fact of #help with a vector

    const found = await call('POST', '/api/memories/search', { channel_id: help, query: 'kafka ingestion', limit: 5 });
    expect(found.body.results.length).toBeGreaterThan(0);
    for (const r of found.body.results) expect(r.memory.cluster_id).toBe(clusterOf.get(r.memory.id));

    // #general's wiki was never generated: its facts are not clustered yet.
    const other = (await get(`/api/memories?channel_id=${general}&limit=1`)).body.memories[0];
    expect((await get(`/api/memories/${other.id}`)).body.cluster_id).toBeNull();

    // A card's cluster_ids: the clusters of its facts in #help.
    const card = (await get('/api/graph/entities/OLake/card')).body;
    const helpFacts = (await cardGroup(card)).flatMap((e) => e.source_fact_ids).filter((id) => clusterOf.has(id));
    expect(helpFacts.length).toBeGreaterThan(0);
    expect(card.cluster_ids).toEqual([...new Set(helpFacts.map((id) => clusterOf.get(id)!))].sort());
  });

  // Bullet 4: the OLake card listed a person DECIDED_BY who decided something else (an edge between two neighbours).
  it('related_entities lists only relationships that touch the entity, named by their other end', async () => {
    const card = (await get('/api/graph/entities/OLake/card')).body;
    const group = await cardGroup(card);
    const ids = new Set(group.map((e) => e.id));
    // Every relationship of the channels involved, from the relationships route.
    const rels: { type: string; source: string; target: string }[] = [];
    for (const c of new Set(group.map((e) => e.channel_id)))
      rels.push(...(await rt.graph.listRelationships({ channelId: c, limit: 100_000 })));
    const same = (a: string, b: string) => normalizeEntityName(a) === normalizeEntityName(b);
    expect(card.related_entities.length).toBeGreaterThan(0);
    // The old card's DECIDED_BY entries joined a Person to a Decision, neither of them OLake.
    expect(card.related_entities.filter((r: { relationship: string }) => r.relationship === 'DECIDED_BY')).toEqual([]);
    // The entity is one end of such a relationship and r names the other end.
    for (const r of card.related_entities as { name: string; type: string; relationship: string }[])
      expect(
        rels.some(
          (x) =>
            x.type === r.relationship &&
            ((same(x.source, card.entity_name) && x.target === r.name) ||
              (same(x.target, card.entity_name) && x.source === r.name)),
        ),
        JSON.stringify(r),
      ).toBe(true);
    // Exactly the store's relationships touching the card's entities (their other end), most confident first.
    const touching = (await rt.graph.incidentRelationships([...ids], { limit: 1000 })).map((x) => ({
      name: x.other.name,
      type: x.other.type,
      relationship: x.relationship.type,
    }));
    const distinct = [...new Map(touching.map((t) => [JSON.stringify(t), t])).values()];
    expect(card.related_entities).toEqual(distinct.slice(0, 20));
  });

  // Bullet 5: GET /api/wiki/metadata lacked 7 of the spec's 8 fields and needed a channel_id.
  it('wiki metadata: the spec’s 8 fields, real, per channel and as the aggregate without channel_id', async () => {
    const meta = (await get(`/api/wiki/metadata?channel_id=${help}`)).body;
    const channel = (await get(`/api/channels/${help}`)).body;
    const stats = (await get(`/api/stats/channel/${help}`)).body;
    const status = (await get(`/api/wiki/status?channel_id=${help}`)).body;
    // Every live message of #help through the messages route, paged: its authors and those with media.
    const messages: { author: { id: string }; has_media: boolean; attachments: unknown[] }[] = [];
    for (let before: string | null = null; ; ) {
      const page: Json = (await get(`/api/channels/${help}/messages?limit=200${before ? `&before=${before}` : ''}`))
        .body;
      messages.push(...page.messages);
      if (!page.has_more) break;
      before = page.next_cursor;
    }
    expect(meta).toMatchObject({
      channel_id: help,
      member_count: new Set(messages.map((m) => m.author.id)).size,
      message_count: channel.message_count,
      memory_count: channel.fact_count,
      entity_count: channel.entity_count,
      media_count: messages.filter((m) => m.attachments.length > 0).length,
      page_count: channel.wiki_page_count,
      generation_cost_usd: 0, // extractive summaries: no LLM call
      generation_duration_ms: status.last_duration_ms,
    });
    expect(meta.member_count).toBe(stats.author_count);
    expect(meta.message_count).toBe(messages.length);
    expect(meta.media_count).toBeGreaterThan(0); // #help carries files
    expect(Number.isInteger(meta.generation_duration_ms)).toBe(true);
    expect(meta.generation_duration_ms).toBeGreaterThan(0);

    // Before any generation the generation figures do not exist (null); the counts do.
    const none = (await get(`/api/wiki/metadata?channel_id=${general}`)).body;
    expect(none).toMatchObject({ page_count: 0, generation_cost_usd: null, generation_duration_ms: null });
    expect(none.message_count).toBe((await get(`/api/channels/${general}`)).body.message_count);

    // Without channel_id: every channel together.
    const all = (await get('/api/wiki/metadata')).body;
    const channels = (await get('/api/channels')).body as { message_count: number; fact_count: number }[];
    const system = (await get('/api/stats')).body;
    expect(all).toMatchObject({
      channel_id: null,
      member_count: system.total_authors,
      message_count: channels.reduce((n, c) => n + c.message_count, 0),
      memory_count: channels.reduce((n, c) => n + c.fact_count, 0),
      page_count: system.wiki_pages,
      generation_cost_usd: 0,
      generation_duration_ms: meta.generation_duration_ms, // only #help was generated
      channel_count: channels.length,
      generated_channel_count: 1,
    });
    expect(all.media_count).toBeGreaterThanOrEqual(meta.media_count);
    expect((await get('/api/wiki/metadata?channel_id=NOPE')).status).toBe(404);
  });

  // Bullet 7: POST /api/search `total` changed with `limit` (93 at 10, 140 at 20): vector-only candidates were counted
  // from a pool of limit·5.
  it('search total is the number of matching facts whatever the limit, in every mode; results never exceed it', async () => {
    const query = 'kafka ingestion job failing';
    const totals: Record<string, number> = {};
    for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
      const answers: Json[] = [];
      for (const limit of [1, 10, 20, 50]) {
        const r = await call('POST', '/api/search', {
          query,
          channel_id: null,
          limit,
          search_mode: mode,
          facets: ['fact_type', 'importance'],
        });
        expect(r.status).toBe(200);
        expect(r.body.search_method).toBe(mode);
        answers.push({ limit, ...r.body });
      }
      // One total whatever the limit (it was 93 at 10 and 140 at 20 for one query).
      expect(
        answers.map((a) => a.total),
        mode,
      ).toEqual(answers.map(() => answers[0].total));
      for (const a of answers) {
        expect(a.results.length).toBeLessThanOrEqual(Math.min(a.limit, a.total));
        // Facets count the same facts as total, whatever the limit.
        expect(a.facets, mode).toEqual(answers[0].facets);
        expect(Object.values(a.facets.fact_type as Record<string, number>).reduce((x, y) => x + y, 0)).toBe(a.total);
      }
      totals[mode] = answers[0].total;
    }
    // vector: the facts whose cosine to the query is at or above the floor, counted here independently.
    const { vectorFloorOf } = await import('@atlas/query');
    const { embedder, vectors } = rt.embeddings!;
    const [q] = await embedder.embed([query], { kind: 'query' }); // as search embeds a query (ONNX: its query prefix)
    const all: string[] = [];
    for (const c of await rt.documents.listChannels())
      all.push(...(await rt.documents.listMemories({ channelId: c.id, page: 1, limit: 1000 })).rows.map((m) => m.id));
    const sims = await vectors.similarities({ vector: q!, model: embedder.id, factIds: all });
    const above = [...sims.values()].filter((s) => s >= vectorFloorOf(embedder.id)).length;
    expect(totals.vector).toBe(above);
    expect(totals.vector).toBeGreaterThan(0);
    expect(totals.vector).toBeLessThan(all.length);
    // hybrid: the union of both.
    expect(totals.hybrid).toBeGreaterThanOrEqual(Math.max(totals.keyword!, totals.vector!));
    expect(totals.hybrid).toBeLessThanOrEqual(totals.keyword! + totals.vector!);

    // POST /api/memories/search counts as hybrid search does, whatever its limit.
    const memTotals = new Set<number>();
    for (const limit of [1, 10, 50]) {
      const r = await call('POST', '/api/memories/search', { channel_id: help, query, limit });
      memTotals.add(r.body.total);
      expect(r.body.results.length).toBeLessThanOrEqual(r.body.total);
    }
    expect(memTotals.size).toBe(1);
    const scoped = await call('POST', '/api/search', { query, channel_id: help, limit: 5 });
    expect([...memTotals][0]).toBe(scoped.body.total);
  });

  // Bullet 8: an unknown channel_id gave 404 on some routes and 200 with empty results on others.
  it('an unknown channel_id is 404 NOT_FOUND with the shared body on every route that takes one', async () => {
    const X = 'C0NOSUCHCHANNEL';
    const cases: [string, string, object?][] = [
      ['GET', `/api/channels/${X}`],
      ['GET', `/api/channels/${X}/messages`],
      ['GET', `/api/channels/${X}/settings`],
      ['PUT', `/api/channels/${X}/settings`, { wiki_enabled: true }],
      ['GET', `/api/channels/${X}/stats`],
      ['DELETE', `/api/channels/${X}/data`],
      ['GET', `/api/channels/${X}/sync/status`],
      ['POST', `/api/channels/${X}/sync`, {}],
      ['POST', `/api/channels/${X}/ask`, { question: 'what broke?' }],
      ['POST', `/api/channels/${X}/ask/feedback`, { session_id: 's', message_id: 'm', rating: 'up' }],
      ['POST', `/api/channels/${X}/ask/upload`, { question: 'what broke?' }],
      ['GET', `/api/channels/${X}/ask/history`],
      ['GET', `/api/channels/${X}/ask/sessions`],
      ['GET', `/api/channels/${X}/ask/sessions/s1`],
      ['DELETE', `/api/channels/${X}/ask/sessions/s1`],
      ['GET', `/api/memories?channel_id=${X}`],
      ['GET', `/api/memories/topics?channel_id=${X}`],
      ['GET', `/api/memories/entities?channel_id=${X}`],
      ['POST', '/api/memories/search', { channel_id: X, query: 'kafka' }],
      ['POST', '/api/search', { channel_id: X, query: 'kafka' }],
      ['GET', `/api/graph/entities?channel_id=${X}`],
      ['GET', `/api/graph/entities/cards?channel_id=${X}`],
      ['GET', `/api/graph/relationships?channel_id=${X}`],
      ['GET', `/api/graph/decisions?channel_id=${X}`],
      ['GET', `/api/graph/subgraph?entities=OLake&channel_id=${X}`],
      ['GET', `/api/graph/path?source=OLake&target=Iceberg&channel_id=${X}`],
      ['GET', `/api/graph/common-neighbors?entities=OLake,Iceberg&channel_id=${X}`],
      ['GET', `/api/wiki/structure?channel_id=${X}`],
      ['GET', `/api/wiki/pages/overview?channel_id=${X}`],
      ['GET', `/api/wiki/versions?channel_id=${X}`],
      ['GET', `/api/wiki/versions/1?channel_id=${X}`],
      ['GET', `/api/wiki/activity?channel_id=${X}`],
      ['GET', `/api/wiki/sync-history?channel_id=${X}`],
      ['GET', `/api/wiki/status?channel_id=${X}`],
      ['GET', `/api/wiki/metadata?channel_id=${X}`],
      ['GET', `/api/wiki/${X}`],
      ['GET', `/api/wiki/${X}/topics/kafka`],
      ['POST', '/api/wiki/refresh', { channel_id: X }],
      ['POST', '/api/admin/wiki/rebuild', { channel_id: X }],
      ['GET', `/api/stats/channel/${X}`],
      ['GET', `/api/stats/top-authors?channel_id=${X}`],
      ['GET', `/api/stats/top-topics?channel_id=${X}`],
      ['GET', `/api/stats/export?channel_id=${X}`],
      ['GET', `/api/sync/status?channel_id=${X}`],
      ['GET', `/api/sync/history?channel_id=${X}`],
      ['POST', '/api/sync', { channel_id: X }],
      ['PUT', '/api/sync/schedules', { channel_id: X, schedule: '0 * * * *', enabled: true }],
    ];
    const answers = [];
    for (const [method, url, payload] of cases)
      answers.push({ what: `${method} ${url}`, ...(await call(method as 'GET', url, payload)) });
    // Every route: 404 (memories, search, graph and others answered 200 with empty results).
    expect(answers.filter((a) => a.status !== 404).map((a) => `${a.what} → ${a.status}`)).toEqual([]);
    for (const a of answers) {
      expect(a.body?.error, a.what).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining(X) });
      expect(a.body.error.details?.channel_id, a.what).toBe(X);
    }
    // A null channel_id on search still means every channel.
    const everywhere = await call('POST', '/api/search', { channel_id: null, query: 'kafka' });
    expect(everywhere.status).toBe(200);
    expect(everywhere.body.total).toBeGreaterThan(0);
  });

  // Bullet 9: a value that does not exist is the field present with JSON null (docs/conventions.md).
  it('values that do not exist are present as null', async () => {
    const last = (await get(`/api/channels/${general}/messages?limit=200`)).body;
    expect(last).toMatchObject({ has_more: false, next_cursor: null });
    const first = (await get(`/api/channels/${help}/messages?limit=5`)).body;
    expect(first.has_more).toBe(true);
    expect(typeof first.next_cursor).toBe('string');
    const status = (await get(`/api/wiki/status?channel_id=${general}`)).body; // never generated
    expect(status).toMatchObject({ last_generated_at: null, current_version: null });
    const meta = (await get(`/api/wiki/metadata?channel_id=${general}`)).body;
    expect(meta).toHaveProperty('generated_at', null);
    expect(meta).toHaveProperty('generation_duration_ms', null);
    const conn = await rt.connections.create({
      name: 'never synced',
      platform: 'platform_a',
      credentials: { bot_token: 'xoxb-test', signing_secret: 'secret' },
    });
    const listed = (await get('/api/connections')).body.find((c: { id: string }) => c.id === conn.id);
    expect(listed).toHaveProperty('last_sync', null);
    await rt.connections.delete(conn.id);
    for (const d of (await get(`/api/graph/decisions?channel_id=${help}`)).body as Record<string, unknown>[]) {
      for (const k of ['decided_by', 'context', 'superseded_by'])
        expect(d[k] === null || (typeof d[k] === 'string' && d[k] !== ''), `${k} of ${d.name}`).toBe(true);
    }
  });
});
