import path from 'node:path';
import { buildApp } from '@atlas/api';
import { loadConfig } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { planImport } from '@atlas/platforms';
import {
  apiPorts,
  appendPlan,
  drainProjectors,
  openRuntime,
  type Runtime,
  replayProjector,
  startProjectors,
  waitForProjectors,
} from '@atlas/runtime';
import type { ContradictionView } from '@atlas/stores';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const OLAKE = path.resolve(import.meta.dirname, '../../shared/data/slack-olake/export');
const ADMIN = 'admin-key-for-the-contradictions-test-0123456789';

/**
 * Issue 27, point 5 ("Done when": a resolved contradiction): the olake export imported through the pipeline (the
 * offline extractor flags potential contradictions: 11 of them, all in one channel), every projector running; an admin
 * resolves one contradiction of each outcome through the API, and the list, the memory detail, memory search, the
 * entity card and the channel's wiki (stale, then regenerated from changed sources) reflect it; a replay of the
 * documents projector from the earliest offset rebuilds the same state; a reader cannot resolve, a restricted key
 * sees only its channels.
 */
describe('contradiction desk (slack-olake)', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let subs: Subscription[] = [];
  let channel: string;
  let other: string;
  let open: ContradictionView[];
  const keys: Record<'reader' | 'member' | 'scopedAdmin' | 'restricted', string> = {
    reader: '',
    member: '',
    scopedAdmin: '',
    restricted: '',
  };
  const call = async (method: 'GET' | 'POST', url: string, payload?: object, key = ADMIN) => {
    const res = await app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}` },
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.json() };
  };
  const memory = async (id: string) => (await call('GET', `/api/memories/${id}`)).body;
  /** Everything a resolution shows: the list, both sides' memory details. */
  const state = async () => {
    const list = (await call('GET', `/api/contradictions?channel_id=${channel}&limit=100`)).body;
    const ids = [...new Set(open.flatMap((c) => [c.earlier.memory_id, c.later.memory_id]))].sort();
    const memories = await Promise.all(
      ids.map(async (id) => {
        const m = await memory(id);
        return [id, m.superseded_by, m.invalid_at, m.potential_contradiction];
      }),
    );
    return { list, memories };
  };

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', ATLAS_ADMIN_API_KEY: ADMIN }), {
      pollIntervalMs: 20,
    });
    await appendPlan(rt, await planImport(OLAKE));
    await drainProjectors(rt, 0, false);
    subs = await startProjectors(rt);
    app = await buildApp(apiPorts(rt));
    const all = await rt.documents.listContradictions({ channelIds: null, page: 1, limit: 100 });
    open = all.rows;
    channel = open[0]!.channel_id;
    other = (await rt.documents.listChannels()).find((c) => c.id !== channel && c.fact_count > 0)!.id;
    await rt.wikiGenerator!.generate(channel, 'full');
    const key = async (name: string, role: string, channels: string[] | null) => {
      const r = await call('POST', '/api/admin/keys', {
        name,
        role,
        ...(channels ? { scope: { channels } } : {}),
      });
      expect(r.status).toBe(201);
      return r.body.secret as string;
    };
    keys.reader = await key('reader', 'reader', null);
    keys.member = await key('member', 'member', null);
    keys.scopedAdmin = await key('scoped-admin', 'admin', [other]);
    keys.restricted = await key('restricted', 'reader', [other]);
  }, 300_000);
  afterAll(async () => {
    await Promise.all(subs.map((s) => s.stop()));
    await app?.close();
    await rt?.close();
  });

  it('lists the flagged facts of the real export with both sides and their sources', async () => {
    console.log(`olake: ${open.length} potential contradictions`);
    expect(open.length).toBe(11); // what the offline extractor flags on this export (certain=false supersessions)
    const r = await call('GET', '/api/contradictions?status=open&limit=100');
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(open.length);
    expect(r.body.pages).toBe(1);
    for (const c of r.body.contradictions as ContradictionView[]) {
      expect(c.status).toBe('open');
      expect(c.resolution).toBeNull();
      expect(c.earlier.message_ts < c.later.message_ts).toBe(true);
      expect(c.detected_at).toBe(c.later.message_ts);
      for (const side of [c.earlier, c.later]) {
        expect(side.permalink).toMatch(/^https?:\/\//);
        const m = await memory(side.memory_id);
        expect(m).toMatchObject({
          memory_text: side.memory_text,
          fact_type: side.fact_type,
          author_name: side.author_name,
          channel_id: c.channel_id,
          source_message_id: side.source_message_id,
        });
      }
      // The earlier fact carries the flag, nothing superseded yet.
      expect(await memory(c.earlier.memory_id)).toMatchObject({ potential_contradiction: true });
    }
    // Pages: newest first, the same set.
    const p1 = (await call('GET', `/api/channels/${channel}/contradictions?limit=4`)).body;
    const p3 = (await call('GET', `/api/channels/${channel}/contradictions?limit=4&page=3`)).body;
    expect([p1.total, p1.pages, p1.contradictions.length, p3.contradictions.length]).toEqual([11, 3, 4, 3]);
    expect(p1.contradictions.map((c: ContradictionView) => c.id)).toEqual(
      r.body.contradictions.slice(0, 4).map((c: ContradictionView) => c.id),
    );
    expect((await call('GET', '/api/contradictions?channel_id=C0NOSUCHCHANNEL')).status).toBe(404);
    expect((await call('GET', '/api/channels/C0NOSUCHCHANNEL/contradictions')).status).toBe(404);
    expect((await call('GET', '/api/contradictions?status=closed')).status).toBe(400);
  });

  it('access: readers and members may not resolve (403); a restricted key sees only its channels', async () => {
    const target = open[0]!;
    for (const k of [keys.reader, keys.member]) {
      const r = await call('POST', `/api/contradictions/${target.id}/resolve`, { outcome: 'both' }, k);
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('FORBIDDEN');
    }
    // A reader may read the desk.
    expect((await call('GET', '/api/contradictions', undefined, keys.reader)).body.total).toBe(open.length);
    // A key scoped to another channel lists nothing of this one, and this channel is 404 to it as an unknown one.
    const scoped = await call('GET', '/api/contradictions', undefined, keys.restricted);
    expect(scoped.status).toBe(200);
    expect(scoped.body).toEqual({ contradictions: [], total: 0, page: 1, pages: 0 });
    const hidden = await call('GET', `/api/channels/${channel}/contradictions`, undefined, keys.restricted);
    const unknown = await call('GET', '/api/channels/C0NOSUCHCHANNEL/contradictions', undefined, keys.restricted);
    expect(hidden.status).toBe(404);
    expect(JSON.stringify(hidden.body).replaceAll(channel, 'X')).toBe(
      JSON.stringify(unknown.body).replaceAll('C0NOSUCHCHANNEL', 'X'),
    );
    // An admin key scoped elsewhere cannot resolve this channel's contradiction: 404, as an unknown id.
    const r = await call('POST', `/api/contradictions/${target.id}/resolve`, { outcome: 'both' }, keys.scopedAdmin);
    expect(r.status).toBe(404);
    expect((await call('GET', '/api/contradictions?status=open')).body.total).toBe(open.length); // nothing resolved
    // Unknown id 404, bad outcome 400.
    expect(
      (await call('POST', '/api/contradictions/00000000-0000-4000-8000-000000000000/resolve', { outcome: 'both' }))
        .status,
    ).toBe(404);
    expect((await call('POST', `/api/contradictions/${target.id}/resolve`, { outcome: 'neither' })).status).toBe(400);
  });

  it('resolves one of each outcome: list, memory detail, search, card and wiki reflect it; 409 on a second resolution', async () => {
    // One of each outcome. The olake flags name two earlier facts: `later` and `both` on the most flagged one, `earlier`
    // on the other (each side's expected fields are derived below from what stays open).
    const byFact = new Map<string, ContradictionView[]>();
    for (const c of open) byFact.set(c.earlier.memory_id, [...(byFact.get(c.earlier.memory_id) ?? []), c]);
    const [most, second] = [...byFact.values()].sort((a, b) => b.length - a.length);
    expect(most!.length).toBeGreaterThanOrEqual(2);
    const later = most![0]!;
    const both = most![1]!;
    const earlier = second?.[0] ?? most![2]!;
    const picked = [earlier, later, both];
    // The later facts' own validity (a later release may itself be superseded, with certainty, by a newer one).
    const laterBefore = new Map<string, { superseded_by: string | null; invalid_at: string | null }>();
    for (const c of picked) {
      const { superseded_by, invalid_at } = await memory(c.later.memory_id);
      laterBefore.set(c.later.memory_id, { superseded_by, invalid_at });
    }
    // Before: an incremental wiki run finds nothing changed.
    expect((await rt.wikiGenerator!.generate(channel, 'incremental')).skipped).toBe(true);
    const versionBefore = (await call('GET', `/api/wiki/status?channel_id=${channel}`)).body.current_version;

    // The earlier decision of the `earlier` outcome, as the lifecycle had it before any resolution.
    const earlierItemBefore = (await call('GET', `/api/decisions/${earlier.earlier.memory_id}`)).body;
    expect((await call('GET', `/api/decisions/${later.earlier.memory_id}`)).body.state).toBe('decided');

    const outcomes = [
      [earlier, 'earlier'],
      [later, 'later'],
      [both, 'both'],
    ] as const;
    for (const [c, outcome] of outcomes) {
      const r = await call('POST', `/api/contradictions/${c.id}/resolve`, { outcome, note: `keep ${outcome}` });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        id: c.id,
        status: 'resolved',
        resolution: { outcome, note: `keep ${outcome}`, resolved_by: 'bootstrap' },
      });
      const again = await call('POST', `/api/contradictions/${c.id}/resolve`, { outcome: 'both' });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('CONFLICT');
    }
    const stillOpen = (id: string) => open.some((x) => x.earlier.memory_id === id && !picked.includes(x));

    // Memory detail: `earlier` and `both` clear the flag (unless another open contradiction flags the same fact) and
    // supersede nothing; `later` supersedes the earlier fact from the later one's time. Later facts stay as they were.
    expect(await memory(earlier.earlier.memory_id)).toMatchObject({
      superseded_by: earlier.earlier.memory_id === later.earlier.memory_id ? later.later.memory_id : null,
      potential_contradiction: stillOpen(earlier.earlier.memory_id),
    });
    expect(await memory(later.earlier.memory_id)).toMatchObject({
      superseded_by: later.later.memory_id,
      invalid_at: later.later.message_ts,
      potential_contradiction: stillOpen(later.earlier.memory_id),
    });
    // (A fact can be the later side of one pair and the earlier side of another: only the `later` outcome's earlier
    // fact changes validity.)
    for (const c of picked.filter((x) => x.later.memory_id !== later.earlier.memory_id)) {
      const { superseded_by, invalid_at } = await memory(c.later.memory_id);
      expect({ superseded_by, invalid_at }).toEqual(laterBefore.get(c.later.memory_id));
    }
    if (second) {
      // The other fact had one flag, resolved `earlier`: unflagged, valid.
      expect(second).toHaveLength(1);
      expect(await memory(earlier.earlier.memory_id)).toMatchObject({
        superseded_by: null,
        invalid_at: null,
        potential_contradiction: false,
      });
    }

    // The lifecycle (docs/decisions.md): the `later` outcome moves the earlier decision to superseded at the later
    // message, citing it, and GET /api/graph/decisions reads the same; `both` and `earlier` move nothing.
    const item = (await call('GET', `/api/decisions/${later.earlier.memory_id}`)).body;
    expect(item).toMatchObject({ kind: 'decision', state: 'superseded', superseded_by: later.later.memory_id });
    expect(item.history.at(-1)).toMatchObject({ from: 'decided', to: 'superseded', at: later.later.message_ts });
    expect(item.history.at(-1).evidence.permalink).toBe(later.later.permalink);
    if (second)
      expect((await call('GET', `/api/decisions/${earlier.earlier.memory_id}`)).body).toEqual(earlierItemBefore);
    const decisionEntity = (await rt.graph.listEntities({ channelId: channel, type: 'Decision', limit: 1000 })).find(
      (e) => e.source_fact_ids.at(-1) === later.earlier.memory_id,
    );
    expect(decisionEntity).toBeDefined();
    const records = (await call('GET', `/api/graph/decisions?channel_id=${channel}`)).body;
    const record = records.find((d: { name: string }) => d.name === decisionEntity!.name);
    expect(record).toMatchObject({ status: 'superseded' });

    // The list: three resolved, the rest open.
    const resolved = (await call('GET', `/api/contradictions?channel_id=${channel}&status=resolved`)).body;
    expect(resolved.contradictions.map((c: ContradictionView) => c.id).sort()).toEqual(
      picked
        .slice(0, 3)
        .map((c) => c.id)
        .sort(),
    );
    expect((await call('GET', '/api/contradictions?status=open&limit=100')).body.total).toBe(open.length - 3);

    // Search: memory search answers the full memory object, validity included.
    const found = await call('POST', '/api/memories/search', {
      channel_id: channel,
      query: later.earlier.memory_text,
      limit: 50,
    });
    expect(found.status).toBe(200);
    const hit = found.body.results.find((r: { memory: { id: string } }) => r.memory.id === later.earlier.memory_id);
    expect(hit?.memory).toMatchObject({ superseded_by: later.later.memory_id, invalid_at: later.later.message_ts });

    // The wiki: the resolutions marked the channel's wiki stale; its incremental run sees changed sources.
    expect((await call('GET', `/api/wiki/status?channel_id=${channel}`)).body.is_stale).toBe(true);
    const run = await rt.wikiGenerator!.generate(channel, 'incremental');
    expect(run.skipped).toBeFalsy();
    const after = (await call('GET', `/api/wiki/status?channel_id=${channel}`)).body;
    expect(after.current_version).toBe(versionBefore + 1);
    expect(after.is_stale).toBe(false);

    // An entity card naming the superseded fact ranks it after the facts still valid.
    const entity = (await rt.graph.listEntities({ channelId: channel, limit: 1000 })).find((e) =>
      e.source_fact_ids.includes(later.earlier.memory_id),
    );
    if (entity) {
      const card = (await call('GET', `/api/graph/entities/${encodeURIComponent(entity.name)}/card`)).body;
      const i = card.key_facts.indexOf(later.earlier.memory_text);
      if (i >= 0) {
        const valid = await Promise.all(
          entity.source_fact_ids.map(async (id) => (await memory(id)).superseded_by === null),
        );
        expect(i).toBeGreaterThanOrEqual(Math.min(valid.filter(Boolean).length, card.key_facts.length - 1));
      }
    }
  }, 120_000);

  it('the audit trail records each resolution', async () => {
    await rt.auditSink?.flush();
    await waitForProjectors(rt);
    const audit = (await call('GET', '/api/admin/audit?action=admin_action&limit=100')).body;
    const resolves = audit.entries.filter((e: { route: string; status: number }) =>
      e.route.startsWith('/api/contradictions/'),
    );
    expect(resolves.map((e: { status: number }) => e.status)).toEqual([200, 200, 200]);
  });

  it('a replay of the documents projector from the earliest offset rebuilds the same state', async () => {
    const expected = await state();
    expect(expected.list.total).toBe(open.length);
    await Promise.all(subs.map((s) => s.stop()));
    subs = [];
    await replayProjector(rt, 'documents', 'earliest');
    subs = await startProjectors(rt);
    await waitForProjectors(rt);
    expect(await state()).toEqual(expected);
  }, 300_000);
});
