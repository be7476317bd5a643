import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { apiPorts, appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');

/**
 * Digests (issue 27 point 4, docs/digests.md) on the real OLake export: the week in which release 0.7.4 superseded
 * 0.7.3 on #help shows that change and the new decision, each citing its message; a quiet week says so; the list
 * across channels reads only the caller's visible channels.
 */
describe('digests on real data (slack-olake)', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let help: string;
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const res = await app.inject({ method: 'GET', url, headers });
    return { status: res.statusCode, body: res.json() };
  };

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://' }));
    await appendPlan(rt, await planImport(OLAKE));
    await drainProjectors(rt, 0, false);
    app = await buildApp(apiPorts(rt));
    help = (await rt.documents.listChannels()).find((c) => c.name === 'help')!.id;
  }, 300_000);
  afterAll(async () => {
    await app?.close();
    await rt?.close();
  });

  it('the week of the 0.7.4 release: 0.7.3 changed (decided → superseded) and 0.7.4 made, each with its source', async () => {
    const { status, body } = await get(`/api/channels/${help}/digest?end=2026-06-01T00:00:00Z&days=7`);
    expect(status).toBe(200);
    expect(body.period).toEqual({ start: '2026-05-25T00:00:00.000Z', end: '2026-06-01T00:00:00.000Z', days: 7 });
    expect(body.channel_name).toBe('help');
    const changed = body.decisions.changed.find(
      (e: { item_id: string }) => e.item_id === '26dc1e52-6508-58a7-9e21-679f3c3dbdfb',
    );
    expect(changed).toMatchObject({ kind: 'decision', previous_state: 'decided', state: 'superseded' });
    const source = body.citations.find((c: { id: number }) => c.id === changed.citation);
    expect(source.permalink).toContain('p1780078079162539');
    expect(source.excerpt).toMatch(/Olake v0\.7\.4/);
    // The decision that superseded it was made that week, citing the same message.
    const made = body.decisions.made.find(
      (e: { item_id: string }) => e.item_id === 'e02ed471-4767-58c7-a750-532becb5864c',
    );
    expect(made?.citation).toBe(changed.citation);
    // Each history the digest quotes is the item's own (GET /api/decisions/{id}).
    const item = await get('/api/decisions/26dc1e52-6508-58a7-9e21-679f3c3dbdfb');
    expect(item.body.history.at(-1)).toMatchObject({ to: 'superseded', at: changed.at });
    expect(body.has_activity).toBe(true);
    expect(body.text).toContain('*Decisions changed*');
    expect(body.text).toMatch(new RegExp(`decided → superseded \\[${changed.citation}\\]`));
  });

  it('a week before the channel begins is quiet; bad periods are 400; an unknown channel is 404', async () => {
    const quiet = await get(`/api/channels/${help}/digest?end=2020-01-08T00:00:00Z`);
    expect(quiet.status).toBe(200);
    expect(quiet.body).toMatchObject({ has_activity: false, citations: [] });
    expect(quiet.body.text).toContain('No decision, action item or new topic in this period.');
    expect((await get(`/api/channels/${help}/digest?days=0`)).status).toBe(400);
    expect((await get(`/api/channels/${help}/digest?days=32`)).status).toBe(400);
    expect((await get(`/api/channels/${help}/digest?end=yesterday`)).body.error.code).toBe('INVALID_REQUEST');
    expect((await get('/api/channels/C0NOSUCHCHANNEL/digest')).status).toBe(404);
  });

  it('GET /api/digests: every busy channel of the period, the quiet ones counted', async () => {
    const { status, body } = await get('/api/digests?end=2026-06-01T00:00:00Z&days=7');
    expect(status).toBe(200);
    const channels = await rt.documents.listChannels();
    expect(body.digests.length + body.quiet_channels).toBe(channels.length);
    expect(body.digests.map((d: { channel_id: string }) => d.channel_id)).toContain(help);
    for (const d of body.digests) expect(d.has_activity).toBe(true);
  });
});
