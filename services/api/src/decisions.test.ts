import path from 'node:path';
import { loadConfig, normalizeEntityName } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { apiPorts, appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';
import {
  DecisionRecordSchema,
  EntityCardWithLifecycleSchema,
  LifecycleItemDetailSchema,
  LifecyclePageSchema,
} from './contract/index.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');
const ADMIN = 'admin-key-for-the-decisions-test-0123456789';

/** The lifecycle routes and GET /api/graph/decisions over the real OLake export, through the whole pipeline. */
describe('decision and action-item lifecycle routes on real data (slack-olake)', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let help: string;
  let announcements: string;
  let helpKey: string;
  const get = async (url: string, key = ADMIN) => {
    const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
    return { status: res.statusCode, body: res.json() };
  };

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none' }));
    await appendPlan(rt, await planImport(OLAKE));
    await drainProjectors(rt, 0, false);
    app = await buildApp({ ...apiPorts(rt), auth: { keys: rt.apiKeys, adminKey: ADMIN, host: '127.0.0.1' } });
    const channels = await rt.documents.listChannels();
    help = channels.find((c) => c.name === 'help')!.id;
    announcements = channels.find((c) => c.name === 'announcements')!.id;
    const created = await app.inject({
      method: 'POST',
      url: '/api/admin/keys',
      headers: { authorization: `Bearer ${ADMIN}` },
      payload: { name: 'help reader', role: 'reader', scope: { channels: [help] } },
    });
    helpKey = created.json().secret;
  }, 240_000);
  afterAll(async () => {
    await app?.close();
    await rt?.close();
  });

  it('lists a channel’s items with filters, and closes an action item by the reply that shipped it', async () => {
    const page = await get(`/api/channels/${help}/decisions?kind=action_item&state=done&limit=100`);
    expect(page.status).toBe(200);
    LifecyclePageSchema.parse(page.body);
    const fix = page.body.items.find(
      (i: { source: { platform_message_id: string } }) => i.source.platform_message_id === '1783940673.563389',
    );
    expect(fix).toMatchObject({ kind: 'action_item', state: 'done', channel_id: help });
    expect(fix.moved_by.platform_message_id).toBe('1784003552.959999');
    for (const i of page.body.items) expect(i).toMatchObject({ kind: 'action_item', state: 'done', channel_id: help });
    const detail = await get(`/api/decisions/${fix.id}`);
    expect(detail.status).toBe(200);
    LifecycleItemDetailSchema.parse(detail.body);
    expect(detail.body.history.map((t: { from: string | null; to: string }) => [t.from, t.to])).toEqual([
      [null, 'open'],
      ['open', 'done'],
    ]);
    expect(detail.body.history[1].at).toBe(new Date(1784003552959).toISOString());
    // paging and time range
    const all = await get(`/api/channels/${help}/decisions?limit=100`);
    const two = await get(`/api/channels/${help}/decisions?limit=2&page=2`);
    expect(two.body).toMatchObject({ page: 2, total: all.body.total, pages: Math.ceil(all.body.total / 2) });
    expect(two.body.items).toEqual(all.body.items.slice(2, 4));
    const late = await get(`/api/decisions?channel_id=${help}&since=2026-07-01T00:00:00Z&limit=100`);
    for (const i of late.body.items) expect(i.updated_at >= '2026-07-01').toBe(true);
    expect(late.body.total).toBeLessThan(all.body.total);
    expect((await get(`/api/decisions?state=bogus`)).status).toBe(400);
    expect((await get(`/api/channels/C0NOPE/decisions`)).status).toBe(404);
    expect((await get(`/api/decisions/nope`)).status).toBe(404);
  });

  it('fills /api/graph/decisions status and superseded_by from the lifecycle, keeping the record shape', async () => {
    const items = await get(`/api/channels/${announcements}/decisions?kind=decision&limit=100`);
    const superseded = items.body.items.filter((i: { state: string }) => i.state === 'superseded');
    expect(superseded.length).toBeGreaterThan(5);
    const records = await get(`/api/graph/decisions?channel_id=${announcements}`);
    expect(records.status).toBe(200);
    for (const r of records.body) {
      expect(Object.keys(r).sort()).toEqual(['context', 'date', 'decided_by', 'name', 'status', 'superseded_by']);
      expect(DecisionRecordSchema.shape.status.options).toContain(r.status);
    }
    const byStatus = await get(`/api/graph/decisions?channel_id=${announcements}&status=superseded`);
    expect(byStatus.body.length).toBeGreaterThan(0);
    for (const r of byStatus.body) expect(typeof r.superseded_by).toBe('string');
    const agreed = await get(`/api/graph/decisions?channel_id=${announcements}&status=agreed`);
    for (const r of agreed.body) expect(r.superseded_by).toBeNull();
    const others = records.body.filter((r: { status: string }) => r.status !== 'superseded' && r.status !== 'agreed');
    for (const r of others) expect(['implemented', 'proposed']).toContain(r.status);
    expect(byStatus.body.length + agreed.body.length + others.length).toBe(records.body.length);
  });

  it('an entity card carries the lifecycle items of its source facts; as_of before a supersession, the earlier state', async () => {
    // A decision superseded for certain, and the Decision entity its fact made.
    const superseded = (await get(`/api/channels/${announcements}/decisions?kind=decision&state=superseded&limit=100`))
      .body.items as { id: string; created_at: string; updated_at: string }[];
    const decisions = await rt.graph.listEntities({ channelId: announcements, type: 'Decision', limit: 10_000 });
    const pair = superseded
      .map((i) => ({ item: i, entity: decisions.find((e) => e.source_fact_ids.includes(i.id)) }))
      .find((p) => p.entity !== undefined && p.item.created_at < p.item.updated_at);
    expect(pair, 'a superseded decision item with its Decision entity').toBeDefined();
    const { item, entity } = pair as { item: (typeof superseded)[number]; entity: (typeof decisions)[number] };
    const name = encodeURIComponent(entity.name);
    const card = await get(`/api/graph/entities/${name}/card`);
    expect(card.status).toBe(200);
    EntityCardWithLifecycleSchema.parse(card.body);
    expect(card.body.entity_type).toBe('Decision');
    const detail = (await get(`/api/decisions/${item.id}`)).body;
    const mine = card.body.lifecycle.find((i: { id: string }) => i.id === item.id);
    expect(mine).toEqual(detail); // the item exactly as GET /api/decisions/{item_id} answers it
    expect(mine.state).toBe('superseded');
    expect(typeof mine.superseded_by).toBe('string');
    expect(mine.history.map((t: { to: string }) => t.to).at(-1)).toBe('superseded');
    expect(mine.history.length).toBeGreaterThanOrEqual(2);
    // Newest opened first; exactly the items of the card's source facts (every entity of its name and type).
    const created = card.body.lifecycle.map((i: { created_at: string }) => i.created_at);
    expect(created).toEqual([...created].sort().reverse());
    const group = (await rt.graph.findEntities({ names: [entity.name] })).filter(
      (e) => e.type === 'Decision' && normalizeEntityName(e.name) === normalizeEntityName(entity.name),
    );
    const stored = await rt.lifecycle.byIds(group.flatMap((e) => e.source_fact_ids));
    expect(card.body.lifecycle.map((i: { id: string }) => i.id).sort()).toEqual([...stored.keys()].sort());

    // As of between the opening and the supersession: the state before it, the history up to then.
    const last = mine.history.at(-1);
    const before = mine.history.at(-2);
    const asOf = new Date((Date.parse(before.at) + Date.parse(last.at)) / 2).toISOString();
    const then = await get(`/api/graph/entities/${name}/card?as_of=${asOf}`);
    expect(then.status).toBe(200);
    EntityCardWithLifecycleSchema.parse(then.body);
    const earlier = then.body.lifecycle.find((i: { id: string }) => i.id === item.id);
    expect(earlier).toMatchObject({ state: before.to, superseded_by: null, updated_at: before.at });
    expect(earlier.state).not.toBe('superseded');
    expect(earlier.history).toEqual(mine.history.slice(0, -1));
    expect(earlier.moved_by).toEqual(before.evidence);
    for (const i of then.body.lifecycle) expect(Date.parse(i.created_at)).toBeLessThanOrEqual(Date.parse(asOf));
    console.log(
      `card "${entity.name}": ${card.body.lifecycle.length} item(s); item ${item.id} today ${mine.state} ` +
        `(${mine.history.map((t: { to: string; at: string }) => `${t.to} ${t.at}`).join(' → ')}); ` +
        `as of ${asOf}: ${earlier.state}`,
    );

    // Cards of entities no lifecycle fact made carry []; a restricted key sees only its channels' cards and items.
    const people = await rt.graph.listEntities({ channelId: help, type: 'Person', limit: 200 });
    let empty = 0;
    for (const p of people.slice(0, 15)) {
      const c = (await get(`/api/graph/entities/${encodeURIComponent(p.name)}/card`)).body;
      const ids = new Set(
        (await rt.graph.findEntities({ names: [p.name] }))
          .filter((e) => e.type === c.entity_type && normalizeEntityName(e.name) === normalizeEntityName(c.entity_name))
          .flatMap((e) => e.source_fact_ids),
      );
      expect(c.lifecycle.map((i: { id: string }) => i.id).sort()).toEqual(
        [...(await rt.lifecycle.byIds([...ids])).keys()].sort(),
      );
      if (c.lifecycle.length === 0) empty++;
    }
    expect(empty).toBeGreaterThan(0);
    expect((await get(`/api/graph/entities/${name}/card`, helpKey)).status).toBe(404);
    const helpDecision = (await rt.graph.listEntities({ channelId: help, type: 'Decision', limit: 200 }))[0]!;
    const helpCard = await get(`/api/graph/entities/${encodeURIComponent(helpDecision.name)}/card`, helpKey);
    expect(helpCard.status).toBe(200);
    expect(helpCard.body.lifecycle.length).toBeGreaterThan(0);
    for (const i of helpCard.body.lifecycle) expect(i.channel_id).toBe(help);
  });

  it('reads only the visible channels of a restricted key; a hidden channel’s item is 404', async () => {
    const mine = await get('/api/decisions?limit=100', helpKey);
    expect(mine.status).toBe(200);
    expect(mine.body.total).toBeGreaterThan(0);
    for (const i of mine.body.items) expect(i.channel_id).toBe(help);
    const everything = await get('/api/decisions?limit=100');
    expect(new Set(everything.body.items.map((i: { channel_id: string }) => i.channel_id)).size).toBeGreaterThan(1);
    const hidden = everything.body.items.find((i: { channel_id: string }) => i.channel_id === announcements);
    expect((await get(`/api/decisions/${hidden.id}`, helpKey)).status).toBe(404);
    expect((await get(`/api/decisions/${hidden.id}`)).status).toBe(200);
    expect((await get(`/api/channels/${announcements}/decisions`, helpKey)).status).toBe(404);
    expect((await get(`/api/decisions?channel_id=${announcements}`, helpKey)).status).toBe(404);
  });
});
