import path from 'node:path';
import { SlackEmulator } from '@atlas/platforms/testing';
import { connect, openSyncHarness, type SyncHarness } from '@atlas/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const OLAKE = path.resolve(import.meta.dirname, '../../shared/data/slack-olake/export');
/** Two channels of the olake export, made private on the emulator: #help to one user, #general to another. */
const HELP = 'C081MV728N7';
const GENERAL = 'C081MTEGP8B';
const ADMIN = 'admin-key-for-the-access-leak-test-0123456789';
const BRIDGE = 'bridge-key-for-the-access-leak-test';

/** Every route that takes a channel, called for channel `c` (GET unless named). */
const channelCalls = (c: string): [string, string, object?][] => [
  ['GET', `/api/channels/${c}`],
  ['GET', `/api/channels/${c}/messages`],
  ['GET', `/api/channels/${c}/settings`],
  ['GET', `/api/channels/${c}/stats`],
  ['GET', `/api/channels/${c}/sync/status`],
  ['POST', `/api/channels/${c}/sync`, {}],
  ['POST', '/api/sync', { channel_id: c }],
  ['POST', `/api/channels/${c}/ask`, { question: 'what is the error with the connector?' }],
  ['GET', `/api/channels/${c}/ask/history`],
  ['GET', `/api/channels/${c}/ask/sessions`],
  ['GET', `/api/stats/channel/${c}`],
  ['GET', `/api/wiki/${c}`],
  ['GET', `/api/memories?channel_id=${c}`],
  ['GET', `/api/memories/topics?channel_id=${c}`],
  ['GET', `/api/memories/entities?channel_id=${c}`],
  ['POST', '/api/search', { query: 'olake error', channel_id: c }],
  ['POST', '/api/memories/search', { query: 'olake error', channel_id: c }],
  ['GET', `/api/graph/entities?channel_id=${c}`],
  ['GET', `/api/graph/relationships?channel_id=${c}`],
  ['GET', `/api/graph/decisions?channel_id=${c}`],
  ['GET', `/api/graph/entities/cards?channel_id=${c}`],
  ['GET', `/api/wiki/structure?channel_id=${c}`],
  ['GET', `/api/wiki/versions?channel_id=${c}`],
  ['GET', `/api/wiki/status?channel_id=${c}`],
  ['GET', `/api/wiki/metadata?channel_id=${c}`],
  ['GET', `/api/sync/history?channel_id=${c}`],
  ['GET', `/api/stats/top-authors?channel_id=${c}`],
];

/**
 * Routes that read across every channel when no channel is named and are not offered to a restricted caller without
 * one (search, ask and the entity counts are: they read its visible channels, tested below).
 */
const crossChannelCalls: [string, string, object?][] = [
  ['GET', '/api/memories'],
  ['GET', '/api/memories/topics'],
  ['POST', '/api/memories/search', { query: 'olake error' }],
  ['GET', '/api/graph/entities'],
  ['GET', '/api/graph/relationships'],
  ['GET', '/api/graph/decisions'],
  ['GET', '/api/sync/history'],
  ['GET', '/api/sync/status'],
];

/**
 * Issue 23, "Done when", the leak test: two private channels on the Slack emulator, a member of each; neither member's
 * key (nor the bot acting for them) finds anything of the other channel through any route, and a hidden channel
 * answers exactly as an unknown one; after one member is removed on the emulator and POST /api/admin/acl/refresh runs,
 * that member loses access.
 */
describe('no leak between private channels (Slack emulator, olake #help and #general)', () => {
  let emu: SlackEmulator;
  let h: SyncHarness;
  let alice: string;
  let bob: string;
  let aliceKey: string;
  let bobKey: string;
  const as = (key: string) => ({ authorization: `Bearer ${key}` });

  beforeAll(async () => {
    emu = await SlackEmulator.start(OLAKE);
    [alice, bob] = emu.users.slice(0, 2).map((u) => u.id as string) as [string, string];
    emu.setPrivate(HELP, true, [alice]);
    emu.setPrivate(GENERAL, true, [bob]);
    h = await openSyncHarness(emu, {
      ATLAS_ADMIN_API_KEY: ADMIN,
      BRIDGE_API_KEY: BRIDGE,
      SYNC_BATCH_SIZE: '50',
      SYNC_MAX_MESSAGES: '200',
      RATE_LIMIT_PER_KEY_PER_MIN: '100000',
      RATE_LIMIT_PER_ADDRESS_PER_MIN: '100000',
    });
    await connect(h.rt, emu, [HELP, GENERAL]);
    for (const c of [HELP, GENERAL]) {
      const r = await h.call('POST', '/api/sync', { channel_id: c });
      expect(r.status).toBe(200);
      expect((await h.finished(c, r.body.job_id, 120_000)).status).toBe('completed');
    }
    const key = async (name: string, user: string) => {
      const r = await h.call('POST', '/api/admin/keys', {
        name,
        role: 'member',
        identity: { platform: 'platform_a', user_id: user },
      });
      expect(r.status).toBe(201);
      return r.body.secret as string;
    };
    aliceKey = await key('alice', alice);
    bobKey = await key('bob', bob);
  }, 300_000);
  afterAll(async () => {
    await h?.close();
    await emu?.close();
  });

  it('each member sees their own channel, and the other one answers exactly as a channel that does not exist', async () => {
    const admin = await h.call('GET', `/api/memories?channel_id=${HELP}`);
    expect(admin.body.memories.length).toBeGreaterThan(0); // there is something to leak
    for (const [key, own, other] of [
      [aliceKey, HELP, GENERAL],
      [bobKey, GENERAL, HELP],
    ] as const) {
      const list = await h.call('GET', '/api/channels', undefined, as(key));
      expect(list.body.map((c: { id: string }) => c.id)).toEqual([own]);
      // Who am I (the web UI's sign-in) answers a restricted key too: its own role and identity, nothing of a channel.
      const me = await h.call('GET', '/api/me', undefined, as(key));
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ role: 'member', identity: { platform: 'platform_a' } });
      const leaks: string[] = [];
      for (const [method, url, body] of channelCalls(other)) {
        const hidden = await h.call(method as 'GET', url, body, as(key));
        const swap = (x: string) => x.replaceAll(other, 'C0NOSUCHCHANNEL');
        const u = await h.call(method as 'GET', swap(url), body && JSON.parse(swap(JSON.stringify(body))), as(key));
        if (hidden.status !== 404) leaks.push(`${method} ${url}: ${hidden.status}`);
        else if (JSON.stringify(u.body).replaceAll('C0NOSUCHCHANNEL', other) !== JSON.stringify(hidden.body))
          leaks.push(`${method} ${url}: answers unlike an unknown channel`);
      }
      expect(leaks).toEqual([]);
      const own1 = await h.call('GET', `/api/memories?channel_id=${own}`, undefined, as(key));
      expect(own1.status).toBe(200);
      expect(own1.body.memories.length).toBeGreaterThan(0);
      const search = await h.call('POST', '/api/search', { query: 'olake', channel_id: own }, as(key));
      expect(search.status).toBe(200);
      // Reads across every channel (counts, facets, cards, the export) are not offered to a restricted caller.
      for (const [method, url, body] of crossChannelCalls) {
        const r = await h.call(method as 'GET', url, body, as(key));
        expect(r.status, `${method} ${url}`).toBe(400);
        // Refused for want of a channel: by the route's own schema (channel_id required) or by the visibility rule.
        expect(
          r.body?.error?.details?.reason === 'channel_required' || JSON.stringify(r.body).includes('channel_id'),
          `${method} ${url}: ${JSON.stringify(r.body)}`,
        ).toBe(true);
      }
    }
  }, 180_000);

  /** The `citation` events of an SSE ask answer. */
  const citationsOf = (sse: string) =>
    sse
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)))
      .filter((e) => e.type === 'citation')
      .map((e) => e.citation as { channel: string });

  it('search, ask and entity counts across channels read only the caller’s channels: results, totals and facets', async () => {
    const names = new Map<string, string>(
      (await h.call('GET', '/api/channels')).body.map((c: { id: string; name: string }) => [c.id, c.name]),
    );
    // The admin's ask of every channel cites both: there is something to leak.
    const adminAsk = await h.call('POST', '/api/ask', { question: 'What is OLake?', max_results: 50 });
    expect(new Set(citationsOf(String(adminAsk.body)).map((c) => c.channel))).toEqual(new Set(['help', 'general']));
    for (const [key, own] of [
      [aliceKey, HELP],
      [bobKey, GENERAL],
    ] as const) {
      const q = { query: 'olake', limit: 50, facets: ['fact_type', 'importance', 'topics'] };
      // The admin's search of every channel finds facts of both channels: there is something to leak.
      const everything = await h.call('POST', '/api/search', { ...q, channel_id: null });
      const inOwn = await h.call('POST', '/api/search', { ...q, channel_id: own });
      expect(everything.body.total).toBeGreaterThan(inOwn.body.total);
      const mine = await h.call('POST', '/api/search', { ...q, channel_id: null }, as(key));
      expect(mine.status).toBe(200);
      expect(mine.body.total).toBe(inOwn.body.total);
      expect(mine.body.facets).toEqual(inOwn.body.facets);
      expect(mine.body.results.map((r: { memory: { id: string } }) => r.memory.id).sort()).toEqual(
        inOwn.body.results.map((r: { memory: { id: string } }) => r.memory.id).sort(),
      );
      for (const r of mine.body.results as { memory: { id: string } }[])
        expect((await h.call('GET', `/api/memories/${r.memory.id}`)).body.channel_id).toBe(own);
      const entities = await h.call('GET', '/api/memories/entities', undefined, as(key));
      expect(entities.status).toBe(200);
      expect(entities.body).toEqual((await h.call('GET', `/api/memories/entities?channel_id=${own}`)).body);
      const ask = await h.call('POST', '/api/ask', { question: 'What is OLake?', max_results: 50 }, as(key));
      expect(ask.status).toBe(200);
      const cited = citationsOf(String(ask.body));
      expect(cited.length).toBeGreaterThan(0);
      expect(new Set(cited.map((c) => c.channel))).toEqual(new Set([names.get(own)]));
    }
  }, 180_000);

  it('the graph and wiki entity pages across channels show only the caller’s channels', async () => {
    type Card = { entity_id: string; entity_name: string; fact_count: number };
    const cards: Card[] = (await h.call('GET', '/api/graph/entities/cards?limit=200')).body;
    // An entity mentioned in both channels: its card, seen by the admin, spans both.
    let shared: { card: Card; full: { channel_ids: string[]; fact_count: number; entity_name: string } } | undefined;
    for (const card of cards) {
      const full = (await h.call('GET', `/api/graph/entities/${encodeURIComponent(card.entity_name)}/card`)).body;
      if (full.channel_ids?.length === 2) {
        shared = { card, full };
        break;
      }
    }
    expect(shared, 'an entity of both channels').toBeDefined();
    const name = encodeURIComponent(shared!.full.entity_name);
    for (const [key, own] of [
      [aliceKey, HELP],
      [bobKey, GENERAL],
    ] as const) {
      const list = await h.call('GET', '/api/graph/entities/cards?limit=200', undefined, as(key));
      expect(list.status).toBe(200);
      const mine = list.body.find((c: Card) => c.entity_name === shared!.full.entity_name);
      expect(mine.fact_count).toBeLessThan(shared!.full.fact_count);
      const card = await h.call('GET', `/api/graph/entities/${name}/card`, undefined, as(key));
      expect(card.status).toBe(200);
      expect(card.body.channel_ids).toEqual([own]);
      expect(card.body.fact_count).toBe(mine.fact_count);
      // The entity of the other channel answers as an unknown entity; the own one is served.
      const other = (await h.call('GET', `/api/graph/entities/${card.body.entity_id}`)).body;
      expect(other.channel_id).toBe(own);
      const sub = await h.call('GET', `/api/graph/subgraph?entities=${name}&depth=2`, undefined, as(key));
      expect(sub.status).toBe(200);
      expect(sub.body.nodes.length).toBeGreaterThan(0);
      expect(sub.body.nodes.every((n: { channel_id: string }) => n.channel_id === own)).toBe(true);
      const page = await h.call(
        'GET',
        `/api/wiki/entities/${card.body.entity_type}/${card.body.entity_id}`,
        undefined,
        as(key),
      );
      expect(page.status).toBe(200);
      expect(page.body.restricted).toBe(true);
      expect(page.body.content).toContain('Restricted:');
      expect(page.body.card.channel_ids).toEqual([own]);
      const adminPage = await h.call('GET', `/api/wiki/entities/${card.body.entity_type}/${card.body.entity_id}`);
      expect(adminPage.body.restricted).toBe(false);
    }
    // Each member's entity of the shared name is unknown to the other member, exactly as an unknown id.
    const aliceCard = (await h.call('GET', `/api/graph/entities/${name}/card`, undefined, as(aliceKey))).body;
    const hidden = await h.call('GET', `/api/graph/entities/${aliceCard.entity_id}`, undefined, as(bobKey));
    const unknown = await h.call(
      'GET',
      '/api/graph/entities/00000000-0000-4000-8000-000000000000',
      undefined,
      as(bobKey),
    );
    expect(hidden.status).toBe(404);
    expect(JSON.stringify(hidden.body).replaceAll(aliceCard.entity_id, 'X')).toBe(
      JSON.stringify(unknown.body).replaceAll('00000000-0000-4000-8000-000000000000', 'X'),
    );
    const neighbors = await h.call(
      'GET',
      `/api/graph/entities/${aliceCard.entity_id}/neighbors`,
      undefined,
      as(bobKey),
    );
    expect(neighbors.status).toBe(404);
  }, 180_000);

  it('stats and the export across channels count only the caller’s channels', async () => {
    const all = (await h.call('GET', '/api/stats')).body;
    for (const [key, own] of [
      [aliceKey, HELP],
      [bobKey, GENERAL],
    ] as const) {
      const ch = (await h.call('GET', `/api/stats/channel/${own}`)).body;
      const stats = await h.call('GET', '/api/stats', undefined, as(key));
      expect(stats.status).toBe(200);
      expect(stats.body).toEqual({
        total_facts: ch.fact_count,
        total_entities: ch.entity_count,
        total_channels: 1,
        total_decisions: ch.decision_count,
        wiki_pages: ch.wiki_page_count,
        total_messages: ch.message_count,
        total_authors: ch.author_count,
      });
      expect(stats.body.total_facts).toBeLessThan(all.total_facts);
      for (const route of ['top-authors', 'top-topics']) {
        const mine = await h.call('GET', `/api/stats/${route}?limit=50`, undefined, as(key));
        expect(mine.status).toBe(200);
        expect(mine.body).toEqual((await h.call('GET', `/api/stats/${route}?limit=50&channel_id=${own}`)).body);
      }
      const activity = await h.call('GET', '/api/stats/activity?limit=100', undefined, as(key));
      expect(activity.status).toBe(200);
      expect(activity.body.activities.length).toBeGreaterThan(0);
      expect(activity.body.activities.every((a: { channel_id?: string }) => a.channel_id === own)).toBe(true);
      const exported = await h.call('GET', '/api/stats/export?format=json', undefined, as(key));
      expect(exported.status).toBe(200);
      const doc = typeof exported.body === 'string' ? JSON.parse(exported.body) : exported.body;
      expect(doc.channels.map((c: { channel_id: string }) => c.channel_id)).toEqual([own]);
      expect(doc.totals).toMatchObject({ channels: 1, messages: ch.message_count, facts: ch.fact_count });
      const csv = await h.call('GET', '/api/stats/export?format=csv', undefined, as(key));
      expect(String(csv.body)).not.toContain(own === HELP ? GENERAL : HELP);
      // The wiki's aggregate metadata: the figures of the one visible channel.
      const meta = await h.call('GET', '/api/wiki/metadata', undefined, as(key));
      const ownMeta = (await h.call('GET', `/api/wiki/metadata?channel_id=${own}`)).body;
      expect(meta.status).toBe(200);
      expect(meta.body).toMatchObject({
        channel_id: null,
        channel_count: 1,
        member_count: ownMeta.member_count,
        message_count: ownMeta.message_count,
        memory_count: ownMeta.memory_count,
        entity_count: ownMeta.entity_count,
        media_count: ownMeta.media_count,
      });
      const wikiActivity = await h.call('GET', '/api/wiki/activity', undefined, as(key));
      expect(wikiActivity.status).toBe(200);
      expect(wikiActivity.body.activities.every((a: { channel_id: string }) => a.channel_id === own)).toBe(true);
      const schedules = await h.call('GET', '/api/sync/schedules', undefined, as(key));
      expect(schedules.status).toBe(200);
      expect(JSON.stringify(schedules.body)).not.toContain(own === HELP ? GENERAL : HELP);
      // Figures of the whole installation are not for a restricted key; the stores' health is.
      const metrics = await h.call('GET', '/api/stats/metrics', undefined, as(key));
      expect(metrics.status).toBe(403);
      expect(metrics.body.error.code).toBe('FORBIDDEN');
      expect((await h.call('GET', '/api/stats/health', undefined, as(key))).status).toBe(200);
    }
  }, 120_000);

  it('the bot, acting for a member, sees only what that member may see', async () => {
    const bridge = (user: string) => ({ 'x-atlas-bridge-key': BRIDGE, 'x-atlas-platform-user': `platform_a:${user}` });
    expect((await h.call('GET', `/api/wiki/${GENERAL}`, undefined, bridge(alice))).status).toBe(404);
    expect((await h.call('POST', '/api/sync', { channel_id: GENERAL }, bridge(alice))).status).toBe(404);
    const own = await h.call('GET', `/api/channels/${HELP}/sync/status`, undefined, bridge(alice));
    expect(own.status).toBe(200);
    // The bot's ask for a user who does not see every channel: answered from that user's channels only.
    const global = await h.call('POST', '/api/ask', { question: 'what is the error?' }, bridge(alice));
    expect(global.status).toBe(200);
    const cited = citationsOf(String(global.body));
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.every((c) => c.channel === 'help')).toBe(true);
    const scoped = await h.call('POST', `/api/channels/${HELP}/ask`, { question: 'what is the error?' }, bridge(alice));
    expect(scoped.status).toBe(200);
    expect(String(scoped.body)).toContain('"type":"done"');
    // Without a user the bridge sees no private channel at all.
    expect((await h.call('GET', `/api/channels/${HELP}`, undefined, { 'x-atlas-bridge-key': BRIDGE })).status).toBe(
      404,
    );
  });

  it('a member removed from the channel on the platform loses access at the ACL refresh', async () => {
    expect((await h.call('GET', `/api/channels/${HELP}`, undefined, as(aliceKey))).status).toBe(200);
    emu.setChannelMember(HELP, alice, false);
    const r = await h.call('POST', '/api/admin/acl/refresh', { user_id: alice });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ user_id: alice, caught_up: true });
    expect(r.body.visible_private_channels).not.toContain(HELP);
    expect((await h.call('GET', `/api/channels/${HELP}`, undefined, as(aliceKey))).status).toBe(404);
    expect((await h.call('GET', '/api/channels', undefined, as(aliceKey))).body).toEqual([]);
    expect((await h.call('GET', `/api/channels/${GENERAL}`, undefined, as(bobKey))).status).toBe(200);
  }, 60_000);
});
