import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { apiPorts, appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import { openDatabase, PostgresGraphStore } from '@atlas/stores';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');

/** The query service over the embedded profile, holding the real olake export (302 messages). */
describe('query service on real data (slack-olake)', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let channelId: string;
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url });
    return { status: res.statusCode, body: res.json() };
  };
  const search = async (payload: object) => {
    const res = await app.inject({ method: 'POST', url: '/api/search', payload });
    return { status: res.statusCode, body: res.json() };
  };

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://' }));
    await appendPlan(rt, await planImport(OLAKE));
    await drainProjectors(rt, 0, false);
    app = await buildApp(apiPorts(rt));
    channelId = (await rt.documents.listChannels()).find((c) => c.name === 'help')!.id;
  });
  afterAll(async () => {
    await app?.close();
    await rt?.close();
  });

  it('GET /api/health reports each dependency and the overall status', async () => {
    const { status, body } = await get('/api/health');
    expect(status).toBe(200);
    expect(body.dependencies).toMatchObject({
      document_store: 'healthy',
      event_log: 'healthy',
      vector_store: 'healthy',
      embedding_provider: 'healthy',
      graph_store: 'healthy',
      llm_provider: 'degraded', // no LLM configured: the offline extractors serve
    });
    expect(body.status).toBe('degraded');
    expect(typeof body.uptime).toBe('number');
    expect(Date.parse(body.degraded_since)).not.toBeNaN();
  });

  it('GET /api/stats/health: the four components with status and latency, degraded without an LLM', async () => {
    const { status, body } = await get('/api/stats/health');
    expect(status).toBe(200);
    expect(Object.keys(body.components).sort()).toEqual(
      ['document_store', 'graph_store', 'llm_provider', 'vector_store'].sort(),
    );
    expect(body.components).toMatchObject({
      vector_store: { status: 'up' },
      document_store: { status: 'up' },
      graph_store: { status: 'up' },
      llm_provider: { status: 'degraded' },
    });
    for (const c of Object.values(body.components) as { latency_ms: number }[])
      expect(c.latency_ms).toBeGreaterThanOrEqual(0);
    expect(body.status).toBe('degraded');
    expect(Date.parse(body.checked_at)).not.toBeNaN();
  });

  it('GET /api/stats/health: a graph store that fails is down and the service unhealthy; /api/health says failing', async () => {
    // A real graph store over a database that has been closed: every query throws.
    const dead = await openDatabase({ dataDir: 'memory://' });
    const graph = new PostgresGraphStore(dead.db, { entityThreshold: 0.6 });
    await dead.close();
    const ports = apiPorts(rt);
    const broken = await buildApp({
      ...ports,
      health: ports.health.map((h) =>
        h.name === 'graph_store' ? { name: h.name, check: () => graph.ping().then(() => 'healthy' as const) } : h,
      ),
    });
    try {
      const stats = (await broken.inject({ method: 'GET', url: '/api/stats/health' })).json();
      expect(stats.components.graph_store.status).toBe('down');
      expect(stats.status).toBe('unhealthy');
      const health = (await broken.inject({ method: 'GET', url: '/api/health' })).json();
      expect(health.dependencies.graph_store).toBe('failing');
    } finally {
      await broken.close();
    }
  });

  it('GET /api/channels lists channels in the spec shape with counts', async () => {
    const { body } = await get('/api/channels');
    expect(body).toHaveLength(5);
    const help = body.find((c: { name: string }) => c.name === 'help');
    expect(Object.keys(help).sort()).toEqual(
      ['connected', 'fact_count', 'id', 'last_sync', 'message_count', 'name', 'platform'].sort(),
    );
    expect(help).toMatchObject({ platform: 'platform_a', connected: false });
    expect(help.message_count).toBeGreaterThan(200);
    expect(help.fact_count).toBeGreaterThan(0);
  });

  it('GET /api/channels/{id} gives the detail form, 404 for an unknown id', async () => {
    const { body } = await get(`/api/channels/${channelId}`);
    expect(body).toMatchObject({
      id: channelId,
      settings: { sync_enabled: true, wiki_enabled: true, graph_enabled: true },
    });
    for (const k of ['created_at', 'entity_count', 'topic_count', 'wiki_page_count']) expect(body).toHaveProperty(k);
    const missing = await get('/api/channels/NOPE');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      error: { code: 'NOT_FOUND', message: "channel 'NOPE' was not found", details: { channel_id: 'NOPE' } },
    });
  });

  it('GET /api/channels/{id}/messages pages with limit, before and next_cursor; rejects limit > 200', async () => {
    const first = await get(`/api/channels/${channelId}/messages?limit=3`);
    expect(first.body.messages).toHaveLength(3);
    expect(first.body.has_more).toBe(true);
    const m = first.body.messages[0];
    expect(Object.keys(m).sort()).toEqual(
      ['attachments', 'author', 'has_media', 'id', 'reactions', 'text', 'thread_ts', 'timestamp'].sort(),
    );
    const next = await get(`/api/channels/${channelId}/messages?limit=3&before=${first.body.next_cursor}`);
    expect(Date.parse(next.body.messages[0].timestamp)).toBeLessThan(Date.parse(first.body.messages[2].timestamp));
    const all = await get(`/api/channels/${channelId}/messages?limit=200`);
    expect(all.body.messages.some((x: { reactions: unknown[] }) => x.reactions.length > 0)).toBe(true);
    const bad = await get(`/api/channels/${channelId}/messages?limit=500`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_REQUEST');
    expect((await get(`/api/channels/${channelId}/messages?before=yesterday`)).status).toBe(400);
  });

  it('GET /api/channels/{id}/messages?as_of= lists only the messages written by then; 400 for a bad as_of', async () => {
    /** Every message of the channel (paged with before), or of its state as of `asOf`. */
    const every = async (asOf?: string) => {
      const out: { id: string; timestamp: string }[] = [];
      let cursor: string | null = null;
      do {
        const q = `limit=200${cursor ? `&before=${cursor}` : ''}${asOf ? `&as_of=${asOf}` : ''}`;
        const page = await get(`/api/channels/${channelId}/messages?${q}`);
        expect(page.status).toBe(200);
        out.push(...page.body.messages);
        cursor = page.body.next_cursor;
      } while (cursor);
      return out;
    };
    const all = await every();
    const times = all.map((m) => Date.parse(m.timestamp)).sort((a, b) => a - b);
    const middle = new Date(times[Math.floor(times.length / 2)]!).toISOString();
    const then = await every(middle);
    expect(then.map((m) => m.id)).toEqual(
      all.filter((m) => Date.parse(m.timestamp) <= Date.parse(middle)).map((m) => m.id),
    );
    expect(then.length).toBeLessThan(all.length);
    expect(then.length).toBeGreaterThan(0);
    const bad = await get(`/api/channels/${channelId}/messages?as_of=last-week`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_REQUEST');
  });

  it('GET /api/memories filters and paginates; detail form by id; 404 and 400', async () => {
    const list = await get(`/api/memories?channel_id=${channelId}&limit=5`);
    expect(list.body).toMatchObject({ page: 1 });
    expect(list.body.pages).toBe(Math.ceil(list.body.total / 5));
    const mem = list.body.memories[0];
    expect(mem).toHaveProperty('permalink');
    expect(mem.tier).toBe('atomic');
    const questions = await get(`/api/memories?channel_id=${channelId}&fact_type=question&limit=100`);
    expect(questions.body.memories.every((x: { fact_type: string }) => x.fact_type === 'question')).toBe(true);
    const detail = await get(`/api/memories/${mem.id}`);
    expect(detail.body).toMatchObject({
      id: mem.id,
      source_lang: expect.any(String),
      potential_contradiction: false,
      superseded_by: null,
    });
    expect(detail.body).not.toHaveProperty('permalink');
    expect((await get('/api/memories/00000000-0000-5000-8000-000000000000')).status).toBe(404);
    expect((await get('/api/memories')).status).toBe(400);
    expect((await get(`/api/memories?channel_id=${channelId}&limit=101`)).status).toBe(400);
    expect((await get(`/api/memories?channel_id=${channelId}&importance=urgent`)).status).toBe(400);
  });

  it('GET /api/memories/topics and /entities aggregate tags', async () => {
    const topics = await get(`/api/memories/topics?channel_id=${channelId}`);
    expect(topics.body.topics[0]).toEqual({ tag: expect.any(String), count: expect.any(Number) });
    const entities = await get('/api/memories/entities');
    expect(entities.body.entities.length).toBeGreaterThan(0);
    expect(entities.body.entities[0]).toEqual({ name: expect.any(String), count: expect.any(Number) });
  });

  it('POST /api/search (keyword) returns highlighted facts whose source is a real message', async () => {
    const { status, body } = await search({
      query: 'postgres',
      channel_id: null,
      search_mode: 'keyword',
      facets: ['fact_type'],
    });
    expect(status).toBe(200);
    expect(body.search_method).toBe('keyword');
    expect(body.results.length).toBeGreaterThan(0);
    const r = body.results[0];
    expect(r.highlights.join(' ')).toMatch(/<mark>[^<]+<\/mark>/i);
    expect(r.score).toBeGreaterThan(0);
    expect(r.score).toBeLessThanOrEqual(1);
    expect(r.citation).toMatchObject({ id: '[1]', author: r.memory.author_name });
    expect(Object.values(body.facets.fact_type).reduce((a: number, b) => a + (b as number), 0)).toBe(body.total);
    const detail = (await get(`/api/memories/${r.memory.id}`)).body;
    const page = await get(`/api/channels/${detail.channel_id}/messages?limit=200`);
    const all = [...page.body.messages];
    let cursor = page.body.next_cursor;
    while (cursor) {
      const more = await get(`/api/channels/${detail.channel_id}/messages?limit=200&before=${cursor}`);
      all.push(...more.body.messages);
      cursor = more.body.next_cursor;
    }
    expect(all.map((x: { id: string }) => x.id)).toContain(detail.source_message_id);
  });

  it('POST /api/search validates: limit ≤ 50, channel_id present, known modes; citations can be left out', async () => {
    expect((await search({ query: 'x', channel_id: null, limit: 51 })).status).toBe(400);
    expect((await search({ query: 'x' })).status).toBe(400);
    expect((await search({ query: 'x', channel_id: null, search_mode: 'magic' })).status).toBe(400);
    const r = await search({ query: '*', channel_id: channelId, include_citations: false, limit: 2 });
    expect(r.body.results).toHaveLength(2);
    expect(r.body.results[0]).not.toHaveProperty('citation');
  });

  it('POST /api/search hybrid and vector use the embeddings; keyword mode stays keyword', async () => {
    const hybrid = await search({ query: 'which database does the sync write to', channel_id: null });
    expect(hybrid.status).toBe(200);
    expect(hybrid.body.search_method).toBe('hybrid');
    expect(hybrid.body.results.length).toBeGreaterThan(0);
    const vector = await search({
      query: 'which database does the sync write to',
      channel_id: null,
      search_mode: 'vector',
      limit: 5,
    });
    expect(vector.body.search_method).toBe('vector');
    expect(vector.body.results).toHaveLength(5);
    for (const r of vector.body.results) expect(r.score).toBeGreaterThan(0);
    const kw = await search({ query: 'postgres', channel_id: null, search_mode: 'keyword', limit: 3 });
    expect(kw.body.search_method).toBe('keyword');
  });

  it('POST /api/admin/backfill/{embeddings,entities} drain their backlogs (empty after a healthy import)', async () => {
    const res = await app.inject({ method: 'POST', url: '/api/admin/backfill/embeddings' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ type: 'embeddings', processed: 0, remaining: 0 });
    const entities = await app.inject({ method: 'POST', url: '/api/admin/backfill/entities' });
    expect(entities.json()).toEqual({ type: 'entities', processed: 0, remaining: 0 });
    expect((await app.inject({ method: 'POST', url: '/api/admin/backfill/nope' })).statusCode).toBe(400);
  });

  it('POST /api/memories/search answers full memory objects in one channel, with filters and sort', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/memories/search',
      payload: {
        channel_id: channelId,
        query: 'postgres connector sync',
        filters: { fact_types: ['observation', 'question'] },
        limit: 5,
      },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Number.isInteger(body.query_time_ms)).toBe(true);
    expect(body.results.length).toBeGreaterThan(0);
    for (const r of body.results) {
      expect(r.memory.channel_id).toBe(channelId);
      expect(['observation', 'question']).toContain(r.memory.fact_type);
      expect(r.memory).toHaveProperty('permalink');
      expect(r.memory).toHaveProperty('thread_context_summary');
    }
    const recent = await app.inject({
      method: 'POST',
      url: '/api/memories/search',
      payload: { channel_id: channelId, query: 'sync', sort: 'recent' },
    });
    const ts = recent.json().results.map((r: { memory: { message_ts: string } }) => r.memory.message_ts);
    expect(ts).toEqual([...ts].sort().reverse());
    expect(
      (await app.inject({ method: 'POST', url: '/api/memories/search', payload: { query: 'x' } })).statusCode,
    ).toBe(400);
  });

  it('answers unknown routes with the shared error body', async () => {
    const { status, body } = await get('/api/nope');
    expect(status).toBe(404);
    expect(body.error.code).toBe('NOT_FOUND');
  });
});
