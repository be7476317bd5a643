import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { apiPorts, appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';
import { WikiChannelSchema, WikiPageDiffSchema, WikiPageResponseSchema } from './contract/wiki.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');

/** ISO instant halfway between two ISO instants. */
const between = (a: string, b: string) => new Date((Date.parse(a) + Date.parse(b)) / 2).toISOString();

/**
 * Issue 27 point 2, "As of a date", on the real OLake export (#help): a fact superseded later reads valid as of an
 * earlier date; search, decisions and the wiki (structure, pages, the channel and topic routes) answer differently
 * as of then than today; the page diff route; the MCP tools' as_of and wiki_page_diff. The wiki's first version is
 * generated after the first half of the channel's messages is imported, the second after the rest, so the two
 * versions really differ.
 */
describe('as_of on real data (slack-olake #help)', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let channelId: string;
  let mcp: Client | undefined;
  /** The wiki versions' generation times (passed to the generator as its `now`). */
  const T1 = '2026-06-20T00:00:00.000Z';
  const T2 = '2026-07-20T00:00:00.000Z';
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url });
    return { status: res.statusCode, body: res.json() };
  };
  const post = async (url: string, payload: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url, payload });
    return { status: res.statusCode, body: res.json() };
  };
  const q = async <T>(query: ReturnType<typeof sql<T>>) => (await query.execute(rt.database.db)).rows;

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://' }));
    const plan = await planImport(OLAKE);
    channelId = plan.channels.find((c) => c.name === 'help')!.channelId;
    // First the messages before T1, and the wiki as it was generated then; then the rest, and today's wiki.
    await appendPlan(rt, { ...plan, messages: plan.messages.filter((m) => m.timestamp < T1) });
    await drainProjectors(rt, 0, false);
    await rt.wikiGenerator!.generate(channelId, 'full', new Date(T1));
    await appendPlan(rt, plan);
    await drainProjectors(rt, 0, false);
    await rt.wikiGenerator!.generate(channelId, 'full', new Date(T2));
    app = await buildApp(apiPorts(rt));
  }, 240_000);
  afterAll(async () => {
    await mcp?.close();
    await app?.close();
    await rt?.close();
  });

  it('a bad as_of is 400 INVALID_REQUEST with the shared body on every surface; a future one is now', async () => {
    const bad = [
      `/api/memories?channel_id=${channelId}&as_of=yesterday`,
      `/api/memories/00000000-0000-0000-0000-000000000000?as_of=2026-13-45`,
      `/api/graph/decisions?channel_id=${channelId}&as_of=soon`,
      `/api/graph/entities?channel_id=${channelId}&as_of=1234`,
      `/api/wiki/structure?channel_id=${channelId}&as_of=June`,
    ];
    for (const url of bad) {
      const r = await get(url);
      expect(r.status, url).toBe(400);
      expect(r.body.error.code, url).toBe('INVALID_REQUEST');
      expect(typeof r.body.error.message).toBe('string');
    }
    const s = await post('/api/search', { query: 'release', channel_id: channelId, as_of: 'not a date' });
    expect(s.status).toBe(400);
    expect(s.body.error.code).toBe('INVALID_REQUEST');
    const future = '2999-01-01T00:00:00Z';
    expect((await get(`/api/graph/decisions?channel_id=${channelId}&as_of=${future}`)).body).toEqual(
      (await get(`/api/graph/decisions?channel_id=${channelId}`)).body,
    );
    expect((await get(`/api/memories?channel_id=${channelId}&as_of=${future}`)).body).toEqual(
      (await get(`/api/memories?channel_id=${channelId}`)).body,
    );
  });

  it('GET /api/memories/{id}: a fact superseded for certain later is valid as of before the superseding message', async () => {
    const [sup] = await q(sql<{
      fact_id: string;
      superseded_by: string;
      invalid_at: Date;
      fact_ts: Date;
    }>`select s.fact_id, s.superseded_by, s.invalid_at, f.message_ts as fact_ts from fact_supersessions s
      join memories f on f.id = s.fact_id where s.certain and f.channel_id = ${channelId} and f.message_ts < s.invalid_at
      order by s.invalid_at, s.fact_id limit 1`);
    expect(sup, 'the export has a certain supersession').toBeDefined();
    const invalidAt = sup!.invalid_at.toISOString();
    const asOf = between(sup!.fact_ts.toISOString(), invalidAt);
    const today = await get(`/api/memories/${sup!.fact_id}`);
    expect(today.status).toBe(200);
    expect(today.body.superseded_by).not.toBeNull();
    expect(today.body.invalid_at).not.toBeNull();
    const then = await get(`/api/memories/${sup!.fact_id}?as_of=${asOf}`);
    expect(then.status).toBe(200);
    expect(then.body).toMatchObject({ id: sup!.fact_id, superseded_by: null, invalid_at: null });
    // The superseding fact did not exist yet then.
    expect((await get(`/api/memories/${sup!.superseded_by}?as_of=${asOf}`)).status).toBe(404);
    expect((await get(`/api/memories/${sup!.superseded_by}`)).status).toBe(200);
    // At the superseding message's own time it is superseded.
    expect((await get(`/api/memories/${sup!.fact_id}?as_of=${invalidAt}`)).body.superseded_by).toBe(
      today.body.superseded_by,
    );
    // The list as of then holds only facts stated by then.
    const list = await get(`/api/memories?channel_id=${channelId}&as_of=${asOf}&limit=100`);
    const all = await get(`/api/memories?channel_id=${channelId}&limit=100`);
    expect(list.body.total).toBeLessThan(all.body.total);
    for (const m of list.body.memories) expect(Date.parse(m.message_ts)).toBeLessThanOrEqual(Date.parse(asOf));
    console.log(
      `as_of example: memory ${sup!.fact_id} (${sup!.fact_ts.toISOString()}) superseded by ${sup!.superseded_by} at ${invalidAt}; ` +
        `today superseded_by=${today.body.superseded_by} invalid_at=${today.body.invalid_at}; as_of ${asOf}: superseded_by=null; ` +
        `"${today.body.memory_text}"; memories total ${all.body.total} today, ${list.body.total} as of then`,
    );
  });

  it('POST /api/search and /api/memories/search: the result set differs with as_of', async () => {
    const [newest] = await q(sql<{ id: string; memory_text: string; message_ts: Date }>`select id, memory_text,
      message_ts from memories where channel_id = ${channelId} and message_ts > ${T1}::timestamptz
      order by quality_score desc, id limit 1`);
    const query = newest!.memory_text;
    const today = await post('/api/search', { query, channel_id: channelId, search_mode: 'keyword', limit: 50 });
    const then = await post('/api/search', {
      query,
      channel_id: channelId,
      search_mode: 'keyword',
      limit: 50,
      as_of: T1,
    });
    expect(today.status).toBe(200);
    expect(then.status).toBe(200);
    const ids = (r: { body: { results: { memory: { id: string; message_ts: string } }[] } }) =>
      r.body.results.map((x) => x.memory.id);
    expect(ids(today)).toContain(newest!.id);
    expect(ids(then)).not.toContain(newest!.id);
    expect(then.body.total).toBeLessThan(today.body.total);
    for (const r of then.body.results) expect(Date.parse(r.memory.message_ts)).toBeLessThanOrEqual(Date.parse(T1));
    const ms = await post('/api/memories/search', { query, channel_id: channelId, as_of: T1 });
    expect(ms.status).toBe(200);
    expect(ms.body.results.map((r: { memory: { id: string } }) => r.memory.id)).not.toContain(newest!.id);
    console.log(
      `search "${query.slice(0, 60)}": total ${today.body.total} today, ${then.body.total} as of ${T1}; ` +
        `top today ${ids(today).slice(0, 3).join(',')}; top then ${ids(then).slice(0, 3).join(',')}`,
    );
  });

  it('POST /api/ask and the channel ask: as_of retrieves only what was known then', async () => {
    const events = async (url: string, payload: Record<string, unknown>) => {
      const res = await app.inject({ method: 'POST', url, payload });
      const parsed = res.body
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as { type: string; citation?: { timestamp: string }; code?: string });
      return { status: res.statusCode, parsed };
    };
    const [late] = await q(sql<{ memory_text: string }>`select memory_text from memories
      where channel_id = ${channelId} and message_ts > ${T1}::timestamptz order by quality_score desc, id limit 1`);
    const question = late!.memory_text;
    const stamps = (xs: { type: string; citation?: { timestamp: string } }[]) =>
      xs.flatMap((e) => (e.type === 'citation' ? [Date.parse(e.citation!.timestamp)] : []));
    const today = await events('/api/ask', { question, mode: 'quick' });
    expect(stamps(today.parsed).some((t) => t > Date.parse(T1))).toBe(true);
    for (const url of ['/api/ask', `/api/channels/${channelId}/ask`]) {
      const then = await events(url, { question, mode: 'quick', as_of: T1 });
      expect(then.status, url).toBe(200);
      expect(
        then.parsed.some((e) => e.type === 'done'),
        url,
      ).toBe(true);
      for (const t of stamps(then.parsed)) expect(t, url).toBeLessThanOrEqual(Date.parse(T1));
    }
    const bad = await events('/api/ask', { question, as_of: 'last week' });
    expect(bad.status).toBe(400);
    expect(bad.parsed[0]).toMatchObject({ type: 'error', code: 'INVALID_REQUEST' });
  });

  it('GET /api/graph/decisions: a decision superseded later is not superseded as of before it', async () => {
    const today = (await get(`/api/graph/decisions?channel_id=${channelId}`)).body as {
      name: string;
      status: string;
      superseded_by: string | null;
      date: string;
    }[];
    const [s] = await q(sql<{ name: string; message_ts: Date; old_ts: Date }>`select o.name, s.message_ts,
      o.message_ts as old_ts from graph_supersessions s join graph_entities o on o.id = s.old_entity_id
      where s.certain and s.channel_id = ${channelId} and o.message_ts < s.message_ts
      order by s.message_ts, o.name limit 1`);
    expect(s, 'a decision superseded for certain').toBeDefined();
    const mine = today.find((d) => d.name === s!.name)!;
    expect(mine.status).toBe('superseded');
    expect(mine.superseded_by).not.toBeNull();
    const asOf = between(s!.old_ts.toISOString(), s!.message_ts.toISOString());
    const then = (await get(`/api/graph/decisions?channel_id=${channelId}&as_of=${asOf}`)).body as typeof today;
    const before = then.find((d) => d.name === s!.name)!;
    expect(before).toBeDefined();
    expect(before.status).not.toBe('superseded');
    expect(before.superseded_by).toBeNull();
    expect(then.length).toBeLessThan(today.length);
    // Entities and relationships as of then: none first seen later.
    const ents = (await get(`/api/graph/entities?channel_id=${channelId}&limit=200&as_of=${asOf}`)).body;
    const entsToday = (await get(`/api/graph/entities?channel_id=${channelId}&limit=200`)).body;
    expect(ents.length).toBeLessThan(entsToday.length);
    const rels = (await get(`/api/graph/relationships?channel_id=${channelId}&limit=200&as_of=${asOf}`)).body;
    for (const r of rels) expect(r.valid_from <= asOf.slice(0, 10)).toBe(true);
    console.log(
      `decision "${s!.name}" (${s!.old_ts.toISOString()}): today ${mine.status} by "${mine.superseded_by}"; ` +
        `as of ${asOf}: ${before.status}; decisions ${today.length} today, ${then.length} then; ` +
        `entities ${entsToday.length} today, ${ents.length} then`,
    );
  });

  it('the wiki as of a date between two versions is the first; before any version is 404; the diff route', async () => {
    const versions = (await get(`/api/wiki/versions?channel_id=${channelId}`)).body.versions;
    expect(versions.map((v: { version_number: number }) => v.version_number)).toEqual([2, 1]);
    const mid = between(T1, T2);
    const [v1, v2] = [
      (await get(`/api/wiki/versions/1?channel_id=${channelId}`)).body,
      (await get(`/api/wiki/versions/2?channel_id=${channelId}`)).body,
    ];
    const asOf = await get(`/api/wiki/structure?channel_id=${channelId}&as_of=${mid}`);
    expect(asOf.status).toBe(200);
    expect(asOf.body).toEqual(v1.structure);
    expect(asOf.body).not.toEqual(v2.structure);
    const page = await get(`/api/wiki/pages/overview?channel_id=${channelId}&as_of=${mid}`);
    expect(page.body).toEqual(v1.pages.find((p: { id: string }) => p.id === 'overview'));
    const early = await get(`/api/wiki/structure?channel_id=${channelId}&as_of=2026-01-01`);
    expect(early.status).toBe(404);
    expect(early.body.error.code).toBe('NOT_FOUND');
    expect(early.body.error.message).toContain(`first version was generated at ${T1}`);

    // A page whose content changed between the versions.
    const changed = v2.pages.find((p: { id: string; content: string }) => {
      const old = v1.pages.find((o: { id: string }) => o.id === p.id);
      return old && old.content !== p.content;
    });
    expect(changed).toBeDefined();
    const d = await get(`/api/wiki/pages/${changed.id}/diff?channel_id=${channelId}&from=1&to=2`);
    expect(d.status).toBe(200);
    WikiPageDiffSchema.parse(d.body);
    expect(d.body).toMatchObject({
      page_id: changed.id,
      changed: true,
      from: { version_number: 1, generated_at: T1, page_exists: true },
      to: { version_number: 2, generated_at: T2, page_exists: true },
    });
    expect(d.body.added_lines + d.body.removed_lines).toBeGreaterThan(0);
    const lines: string[] = d.body.diff.split('\n');
    expect(lines.filter((l) => l.startsWith('+') && !l.startsWith('+++')).length).toBe(d.body.added_lines);
    expect(lines.filter((l) => l.startsWith('-') && !l.startsWith('---')).length).toBe(d.body.removed_lines);
    // Dates name the versions current then; `to` defaults to the current version.
    const byDate = await get(`/api/wiki/pages/${changed.id}/diff?channel_id=${channelId}&from=${mid}`);
    expect(byDate.body).toEqual(d.body);
    const same = await get(`/api/wiki/pages/${changed.id}/diff?channel_id=${channelId}&from=2&to=2`);
    expect(same.body).toMatchObject({ changed: false, added_lines: 0, removed_lines: 0, diff: '' });
    expect((await get(`/api/wiki/pages/${changed.id}/diff?channel_id=${channelId}&from=9`)).status).toBe(404);
    expect((await get(`/api/wiki/pages/${changed.id}/diff?channel_id=${channelId}&from=junk`)).status).toBe(400);
    expect((await get(`/api/wiki/pages/${changed.id}/diff?channel_id=nope&from=1`)).status).toBe(404);
    console.log(
      `wiki page ${changed.id} v1 (${T1}) → v2 (${T2}): +${d.body.added_lines} −${d.body.removed_lines} lines\n` +
        d.body.diff.split('\n').slice(0, 12).join('\n'),
    );
  });

  it('GET /api/wiki/{channel_id} and its topic pages as of a date answer the earlier version, in the same shape', async () => {
    const mid = between(T1, T2);
    const [v1, v2] = [
      (await get(`/api/wiki/versions/1?channel_id=${channelId}`)).body,
      (await get(`/api/wiki/versions/2?channel_id=${channelId}`)).body,
    ];
    type Page = { id: string; page_type: string; content: string };
    const today = await get(`/api/wiki/${channelId}`);
    const then = await get(`/api/wiki/${channelId}?as_of=${mid}`);
    expect(then.status).toBe(200);
    WikiChannelSchema.parse(then.body);
    WikiChannelSchema.parse(today.body);
    // The version current then: its structure and overview as saved (no freshness mark: history).
    expect(then.body).toEqual({ ...v1.structure, overview: v1.overview });
    const { freshness: _, ...todayWiki } = today.body;
    expect(todayWiki).toEqual({ ...v2.structure, is_stale: today.body.is_stale, overview: v2.overview });
    expect(then.body.overview.content).not.toBe(today.body.overview.content);
    expect(then.body.pages).not.toEqual(today.body.pages);
    // as_of after the second version is today's wiki.
    expect((await get(`/api/wiki/${channelId}?as_of=${T2}`)).body).toEqual({ ...v2.structure, overview: v2.overview });

    // A topic whose page changed: as of then it is the first version's page.
    const topic = (v1.pages as Page[]).find(
      (p) => p.page_type !== 'fixed' && (v2.pages as Page[]).some((q) => q.id === p.id && q.content !== p.content),
    )!;
    expect(topic, 'a topic page that changed between the versions').toBeDefined();
    const topicThen = await get(`/api/wiki/${channelId}/topics/${topic.id}?as_of=${mid}`);
    expect(topicThen.status).toBe(200);
    WikiPageResponseSchema.parse(topicThen.body);
    expect(topicThen.body).toEqual(topic);
    const topicNow = await get(`/api/wiki/${channelId}/topics/${topic.id}`);
    expect(topicNow.body.content).not.toBe(topic.content);
    // The short id (without `topic-`) names the same page.
    expect((await get(`/api/wiki/${channelId}/topics/${topic.id.replace(/^topic-/, '')}?as_of=${mid}`)).body).toEqual(
      topic,
    );
    // A topic only the second version has: 404 as of then, 200 today.
    const added = (v2.pages as Page[]).find(
      (p) => p.page_type !== 'fixed' && !(v1.pages as Page[]).some((q) => q.id === p.id),
    );
    const missing = added?.id ?? 'topic-not-a-topic';
    const gone = await get(`/api/wiki/${channelId}/topics/${missing}?as_of=${mid}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('NOT_FOUND');
    if (added) expect((await get(`/api/wiki/${channelId}/topics/${added.id}`)).status).toBe(200);
    // A fixed page is no topic, as of then too.
    expect((await get(`/api/wiki/${channelId}/topics/overview?as_of=${mid}`)).status).toBe(404);

    // Before the first version: 404 with the structure route's details; a bad as_of: 400; an unknown channel: 404.
    const structureEarly = await get(`/api/wiki/structure?channel_id=${channelId}&as_of=2026-01-01`);
    for (const url of [
      `/api/wiki/${channelId}?as_of=2026-01-01`,
      `/api/wiki/${channelId}/topics/${topic.id}?as_of=2026-01-01`,
    ]) {
      const early = await get(url);
      expect(early.status, url).toBe(404);
      expect(early.body.error.code, url).toBe('NOT_FOUND');
      expect(early.body.error.details, url).toEqual({
        channel_id: channelId,
        as_of: '2026-01-01T00:00:00.000Z',
        first_generated_at: T1,
      });
      expect(early.body.error).toEqual(structureEarly.body.error);
    }
    for (const url of [
      `/api/wiki/${channelId}?as_of=June`,
      `/api/wiki/${channelId}/topics/${topic.id}?as_of=2026-13-45`,
    ]) {
      const bad = await get(url);
      expect(bad.status, url).toBe(400);
      expect(bad.body.error.code, url).toBe('INVALID_REQUEST');
    }
    expect((await get(`/api/wiki/nope?as_of=${mid}`)).status).toBe(404);
    console.log(
      `GET /api/wiki/{channel} as of ${mid}: v1 (${then.body.pages.length} top-level pages) vs today v2 ` +
        `(${today.body.pages.length}); topic ${topic.id} as of then ${topic.content.length} chars, today ` +
        `${topicNow.body.content.length}; topic only in v2: ${added?.id ?? 'none'}`,
    );
  });

  describe('MCP (Streamable HTTP at /mcp, the open local default)', () => {
    type Json = ReturnType<typeof JSON.parse>;
    const tool = async (name: string, args: Record<string, unknown>) =>
      (await mcp!.callTool({ name, arguments: args })) as CallToolResult;
    const json = async (name: string, args: Record<string, unknown>): Promise<Json> => {
      const r = await tool(name, args);
      const t = (r.content[0] as { text: string }).text;
      expect(r.isError, `${name}: ${t}`).toBeFalsy();
      return JSON.parse(t);
    };

    beforeAll(async () => {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as { port: number };
      mcp = new Client({ name: 'atlas-as-of-test', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
    });

    it("every tool whose route takes as_of passes it on: the answer is the route's as of then, not today's", async () => {
      const mid = between(T1, T2);
      // Wiki: the version current then.
      const v1 = (await get(`/api/wiki/versions/1?channel_id=${channelId}`)).body;
      const structureThen = await json('wiki_structure', { channel_id: channelId, as_of: mid });
      expect(structureThen).toEqual(v1.structure);
      expect(await json('wiki_structure', { channel_id: channelId })).not.toEqual(structureThen);
      const overviewThen = await json('wiki_page', { channel_id: channelId, page_id: 'overview', as_of: mid });
      expect(overviewThen.content).toBe(v1.overview.content);
      expect((await json('wiki_page', { channel_id: channelId, page_id: 'overview' })).content).not.toBe(
        overviewThen.content,
      );

      // Facts: the list as of T1 holds fewer, each stated by then; a fact superseded later is valid then.
      const factsNow = await json('list_facts', { channel_id: channelId, limit: 100 });
      const factsThen = await json('list_facts', { channel_id: channelId, limit: 100, as_of: T1 });
      expect(factsThen.total).toBe((await get(`/api/memories?channel_id=${channelId}&as_of=${T1}&limit=1`)).body.total);
      expect(factsThen.total).toBeLessThan(factsNow.total);
      for (const f of factsThen.facts) expect(Date.parse(f.at)).toBeLessThanOrEqual(Date.parse(T1));
      const [sup] = await q(sql<{ fact_id: string; fact_ts: Date; invalid_at: Date }>`select s.fact_id,
        f.message_ts as fact_ts, s.invalid_at from fact_supersessions s join memories f on f.id = s.fact_id
        where s.certain and f.channel_id = ${channelId} and f.message_ts < s.invalid_at order by s.invalid_at, s.fact_id
        limit 1`);
      const supAsOf = between(sup!.fact_ts.toISOString(), sup!.invalid_at.toISOString());
      expect((await json('get_fact', { memory_id: sup!.fact_id })).superseded_by).not.toBeNull();
      expect(await json('get_fact', { memory_id: sup!.fact_id, as_of: supAsOf })).toEqual(
        (await get(`/api/memories/${sup!.fact_id}?as_of=${supAsOf}`)).body,
      );
      expect((await json('get_fact', { memory_id: sup!.fact_id, as_of: supAsOf })).superseded_by).toBeNull();

      // Search: a fact stated after T1 is found today, not as of T1.
      const [late] = await q(sql<{ id: string; memory_text: string }>`select id, memory_text from memories
        where channel_id = ${channelId} and message_ts > ${T1}::timestamptz order by quality_score desc, id limit 1`);
      const ids = (b: Json) => b.results.map((r: { id: string }) => r.id);
      const args = { query: late!.memory_text, channel_id: channelId, mode: 'keyword', limit: 50 };
      expect(ids(await json('search_facts', args))).toContain(late!.id);
      const searchThen = await json('search_facts', { ...args, as_of: T1 });
      expect(ids(searchThen)).not.toContain(late!.id);
      for (const r of searchThen.results) expect(Date.parse(r.at)).toBeLessThanOrEqual(Date.parse(T1));

      // Graph: fewer decisions and entities then; relationships valid then; a card as the route answers it then.
      const decisionsThen = await json('decisions', { channel_id: channelId, as_of: T1 });
      expect(decisionsThen).toEqual((await get(`/api/graph/decisions?channel_id=${channelId}&as_of=${T1}`)).body);
      expect(decisionsThen.length).toBeLessThan((await json('decisions', { channel_id: channelId })).length);
      const entitiesThen = await json('list_entities', { channel_id: channelId, limit: 200, as_of: T1 });
      expect(entitiesThen.length).toBeLessThan(
        (await json('list_entities', { channel_id: channelId, limit: 200 })).length,
      );
      const relsThen = await json('relationships', { channel_id: channelId, limit: 200, as_of: T1 });
      expect(relsThen).toEqual(
        (await get(`/api/graph/relationships?channel_id=${channelId}&limit=200&as_of=${T1}`)).body,
      );
      for (const r of relsThen) expect(r.valid_from <= T1.slice(0, 10)).toBe(true);
      const [busy] = await q(sql<{ name: string }>`select name from graph_entities where channel_id = ${channelId}
        and message_ts <= ${T1}::timestamptz and last_mentioned_at > ${T1}::timestamptz
        order by mention_count desc, name limit 1`);
      const cardThen = await json('entity_card', { name: busy!.name, as_of: T1 });
      const cardUrl = `/api/graph/entities/${encodeURIComponent(busy!.name)}/card`;
      expect(cardThen).toEqual((await get(`${cardUrl}?as_of=${T1}`)).body);
      expect(cardThen).not.toEqual((await get(cardUrl)).body);

      // Ask: every citation as of T1 was stated by then.
      const askThen = await json('ask', { question: late!.memory_text, channel_id: channelId, as_of: T1 });
      for (const c of askThen.citations) expect(Date.parse(c.timestamp)).toBeLessThanOrEqual(Date.parse(T1));
      const askNow = await json('ask', { question: late!.memory_text, channel_id: channelId });
      expect(askNow.citations.some((c: { timestamp: string }) => Date.parse(c.timestamp) > Date.parse(T1))).toBe(true);
      expect(askThen.citations).not.toEqual(askNow.citations);

      // A bad as_of reaches each route: its 400 is the tool's error.
      const calls: [string, Record<string, unknown>][] = [
        ['ask', { question: 'what changed?', channel_id: channelId }],
        ['search_facts', { query: 'release', channel_id: channelId }],
        ['list_facts', { channel_id: channelId }],
        ['get_fact', { memory_id: sup!.fact_id }],
        ['list_entities', { channel_id: channelId }],
        ['entity_card', { name: busy!.name }],
        ['relationships', { channel_id: channelId }],
        ['decisions', { channel_id: channelId }],
        ['wiki_structure', { channel_id: channelId }],
        ['wiki_page', { channel_id: channelId, page_id: 'overview' }],
      ];
      for (const [name, a] of calls) {
        const r = await tool(name, { ...a, as_of: 'last week' });
        expect(r.isError, name).toBe(true);
        expect((r.content[0] as { text: string }).text, name).toMatch(/INVALID_REQUEST/);
      }
      // Tools whose routes take no as_of do not offer it.
      const listed = (await mcp!.listTools()).tools;
      const offering = listed.filter((t) => 'as_of' in ((t.inputSchema.properties ?? {}) as object)).map((t) => t.name);
      expect(offering.sort()).toEqual(calls.map(([n]) => n).sort());
      console.log(
        `MCP as_of: list_facts total ${factsNow.total} today, ${factsThen.total} as of ${T1}; decisions ` +
          `${decisionsThen.length} then; entities ${entitiesThen.length} then; card "${busy!.name}" as of then differs; ` +
          `ask cites ${askThen.citations.length} facts as of then, ${askNow.citations.length} today`,
      );
    });

    it('wiki_page_diff answers what GET /api/wiki/pages/{page_id}/diff answers, by version numbers or dates', async () => {
      const mid = between(T1, T2);
      const url = (q: string) => `/api/wiki/pages/overview/diff?channel_id=${channelId}&${q}`;
      const byNumber = await json('wiki_page_diff', { channel_id: channelId, page_id: 'overview', from: 1, to: 2 });
      const rest = await get(url('from=1&to=2'));
      expect(rest.status).toBe(200);
      expect(byNumber).toEqual(rest.body);
      expect(byNumber.changed).toBe(true);
      WikiPageDiffSchema.parse(byNumber);
      expect(await json('wiki_page_diff', { channel_id: channelId, page_id: 'overview', from: mid })).toEqual(
        (await get(url(`from=${mid}`))).body,
      );
      expect(await json('wiki_page_diff', { channel_id: channelId, page_id: 'overview', from: '2', to: T2 })).toEqual(
        (await get(url(`from=2&to=${T2}`))).body,
      );
      const early = await tool('wiki_page_diff', { channel_id: channelId, page_id: 'overview', from: '2026-01-01' });
      expect(early.isError).toBe(true);
      expect((early.content[0] as { text: string }).text).toMatch(/^404 NOT_FOUND/);
      const bad = await tool('wiki_page_diff', { channel_id: channelId, page_id: 'overview', from: 'junk' });
      expect((bad.content[0] as { text: string }).text).toMatch(/^400 INVALID_REQUEST/);
      console.log(`MCP wiki_page_diff overview v1 → v2: +${byNumber.added_lines} −${byNumber.removed_lines} lines`);
    });
  });
});
