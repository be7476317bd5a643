import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, TOPICS } from '@atlas/core';
import { apiPorts, openRuntime, type Runtime, startProjectors, waitForProjectors } from '@atlas/runtime';
import { parse } from 'csv-parse/sync';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const EXPORT = path.resolve(ROOT, '../shared/data/slack-clojurians-2018-02/export');

/**
 * What the export holds, computed here from its JSON files without Atlas's code: per channel the kept messages
 * (docs/ingestion.md "Which messages count": ordinary messages and the subtypes bot_message, file_share, thread_broadcast,
 * me_message, file_comment; one per ts), their authors (user, else the file comment's user, the bot id or the
 * username) and the first and last message times (ms precision, as Slack's ts gives them).
 */
interface ExportChannel {
  id: string;
  name: string;
  messages: { ts: string; ms: number; author: string }[];
}
const KEPT = new Set([null, 'bot_message', 'file_share', 'thread_broadcast', 'me_message', 'file_comment']);
const tsMs = (ts: string) => {
  const [sec = '0', frac = ''] = ts.split('.');
  return Number(sec) * 1000 + Number(`${frac}000`.slice(0, 3));
};
const readExport = (): ExportChannel[] => {
  const channels = JSON.parse(readFileSync(path.join(EXPORT, 'channels.json'), 'utf8')) as {
    id: string;
    name: string;
  }[];
  return channels.map((c) => {
    const byTs = new Map<string, { ts: string; ms: number; author: string }>();
    const dir = path.join(EXPORT, c.name);
    for (const f of readdirSync(dir)
      .filter((x) => x.endsWith('.json'))
      .sort()) {
      for (const m of JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Record<string, unknown>[]) {
        if (m.type !== 'message' || !KEPT.has((m.subtype as string | undefined) ?? null)) continue;
        const ts = m.ts as string;
        const author =
          (m.user as string | undefined) ||
          ((m.comment as { user?: string } | undefined)?.user ?? '') ||
          (m.bot_id as string | undefined) ||
          (m.username as string | undefined) ||
          'unknown';
        byTs.set(ts, { ts, ms: tsMs(ts), author });
      }
    }
    return { id: c.id, name: c.name, messages: [...byTs.values()] };
  });
};
const iso = (ms: number) => new Date(ms).toISOString();
const countBy = <T>(items: readonly T[], key: (t: T) => string) => {
  const m = new Map<string, number>();
  for (const i of items) m.set(key(i), (m.get(key(i)) ?? 0) + 1);
  return m;
};

/** Parses Prometheus text exposition lines of one metric into {labels, value}. */
const samples = (text: string, name: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .map((l) => {
      const labels = Object.fromEntries(
        [...(l.match(/\{(.*)\}/)?.[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]),
      );
      return { labels, value: Number(l.slice(l.lastIndexOf(' ') + 1)) };
    });

/**
 * Issue 10's done condition: the Clojurians export imported with `atlas import` (the CLI, in a child process), then
 * every stats route compared with figures computed from the export files above, and /metrics lag falling to 0.
 * Embeddings are off to keep the import short (no wiki: wiki_pages is checked against the wiki store).
 */
describe('stats routes on the Clojurians export', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atlas-stats-'));
  const env = { ...process.env, EMBEDDING_PROVIDER: 'none', ATLAS_DATA_DIR: dataDir };
  let rt: Runtime;
  let app: FastifyInstance;
  const data = readExport();
  const all = data.flatMap((c) => c.messages.map((m) => ({ ...m, channel: c })));
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url });
    return { status: res.statusCode, headers: res.headers, body: res.body, json: () => res.json() };
  };

  beforeAll(async () => {
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [path.join(ROOT, 'bin/atlas.mjs'), 'import', EXPORT, '--data-dir', dataDir, '--no-progress'],
        { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let err = '';
      child.stderr.on('data', (d) => {
        err += String(d);
      });
      child.on('close', (c) => resolve({ code: c, stderr: err }));
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: dataDir, EMBEDDING_PROVIDER: 'none' }));
    app = await buildApp(apiPorts(rt));
  }, 900_000);
  afterAll(async () => {
    await app?.close();
    await rt?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the export holds what docs/stats-and-metrics.md says (the independent count is sound)', () => {
    expect(data).toHaveLength(82);
    expect(all).toHaveLength(7896);
  });

  it('GET /api/stats: messages, authors and channels as counted from the files; facts and decisions as stored', async () => {
    const r = await get('/api/stats');
    expect(r.status).toBe(200);
    const body = r.json();
    const quality = await rt.documents.qualityStats();
    const counts = await rt.documents.counts();
    expect(body).toEqual({
      total_facts: counts.facts,
      total_entities: expect.any(Number),
      total_channels: 82,
      total_decisions: quality.decisionCount,
      wiki_pages: 0, // embeddings off: no wiki was generated
      total_messages: 7896,
      total_authors: new Set(all.map((m) => m.author)).size,
    });
    expect(body.total_facts).toBeGreaterThan(1000);
    expect(body.total_entities).toBeGreaterThan(0);
    expect(body.total_entities).toBeLessThanOrEqual((await rt.graph.counts()).nodes);
  });

  it('GET /api/stats/channel/{id} and /api/channels/{id}/stats for every channel match the files', async () => {
    for (const c of data) {
      const byId = (await get(`/api/stats/channel/${c.id}`)).json();
      const byPath = (await get(`/api/channels/${c.id}/stats`)).json();
      const stored = (await rt.documents.getChannel(c.id))!;
      const authors = countBy(c.messages, (m) => m.author);
      const ms = c.messages.map((m) => m.ms);
      const range = { earliest: iso(Math.min(...ms)), latest: iso(Math.max(...ms)) };
      expect(byId, c.name).toEqual({
        channel_id: c.id,
        message_count: c.messages.length,
        fact_count: stored.fact_count,
        entity_count: expect.any(Number),
        decision_count: expect.any(Number),
        author_count: authors.size,
        wiki_page_count: 0,
        date_range: range,
        // 2018 messages are older than 30 days; every fact was extracted by this import, so it counts as added now
        activity: {
          messages_last_7d: 0,
          messages_last_30d: 0,
          facts_added_last_7d: stored.fact_count,
          facts_added_last_30d: stored.fact_count,
        },
      });
      const topCounts = [...authors.values()].sort((a, b) => b - a).slice(0, 5);
      expect(byPath, c.name).toEqual({
        message_count: c.messages.length,
        fact_count: stored.fact_count,
        entity_count: byId.entity_count,
        decision_count: byId.decision_count,
        author_count: authors.size,
        date_range: range,
        top_authors: topCounts.map((n) => ({ name: expect.any(String), message_count: n })),
      });
    }
    expect((await get('/api/stats/channel/CNOSUCHCHANNEL')).status).toBe(404);
    expect((await get('/api/channels/CNOSUCHCHANNEL/stats')).status).toBe(404);
  });

  it('decisions per channel are the stored decision facts', async () => {
    const beginners = data.find((c) => c.name === 'beginners')!;
    const decisions = await rt.documents.listMemories({
      channelId: beginners.id,
      page: 1,
      limit: 1,
      factType: 'decision',
    });
    expect((await get(`/api/stats/channel/${beginners.id}`)).json().decision_count).toBe(decisions.total);
  });

  it('GET /api/stats/top-authors: counts per author id and their channels, overall and in one channel', async () => {
    const byAuthor = countBy(all, (m) => m.author);
    const top = (await get('/api/stats/top-authors')).json() as {
      author_id: string;
      message_count: number;
      fact_count: number;
      channels: string[];
    }[];
    expect(top).toHaveLength(10); // default limit
    expect(top.map((a) => a.message_count)).toEqual([...byAuthor.values()].sort((a, b) => b - a).slice(0, 10));
    for (const a of top) {
      expect(a.message_count).toBe(byAuthor.get(a.author_id));
      expect(a.channels).toEqual(
        [...new Set(all.filter((m) => m.author === a.author_id).map((m) => m.channel.name))].sort(),
      );
    }
    const clojure = data.find((c) => c.name === 'clojure')!;
    const inChannel = (await get(`/api/stats/top-authors?channel_id=${clojure.id}&limit=3`)).json() as typeof top;
    const local = countBy(clojure.messages, (m) => m.author);
    expect(inChannel.map((a) => a.message_count)).toEqual([...local.values()].sort((a, b) => b - a).slice(0, 3));
    for (const a of inChannel) {
      expect(a.message_count).toBe(local.get(a.author_id));
      expect(a.channels).toEqual(['clojure']);
    }
    expect((await get('/api/stats/top-authors?limit=0')).status).toBe(400);
  });

  it('GET /api/stats/top-topics: fact counts per topic tag as stored, a trend by the rule', async () => {
    const clojure = data.find((c) => c.name === 'clojure')!;
    const topics = (await get(`/api/stats/top-topics?channel_id=${clojure.id}`)).json() as {
      topic: string;
      fact_count: number;
      channels: string[];
      trend: string;
    }[];
    const stored = (await rt.documents.topicCounts(clojure.id)).sort((a, b) => b.count - a.count);
    expect(topics.length).toBe(Math.min(10, stored.length));
    expect(topics.map((t) => t.fact_count)).toEqual(stored.slice(0, topics.length).map((s) => s.count));
    for (const t of topics) {
      expect(t.channels).toEqual(['clojure']);
      expect(['rising', 'falling', 'stable']).toContain(t.trend);
    }
    const global = (await get('/api/stats/top-topics?limit=5')).json() as typeof topics;
    expect(global).toHaveLength(5);
    expect(global.map((t) => t.fact_count)).toEqual([...global.map((t) => t.fact_count)].sort((a, b) => b - a));
  });

  it('GET /api/stats/activity: fact_extracted and entity_created entries of the import, newest first, limit 20', async () => {
    const { activities } = (await get('/api/stats/activity')).json() as {
      activities: { type: string; timestamp: string; channel_id?: string; message_count?: number }[];
    };
    expect(activities).toHaveLength(20);
    for (const a of activities) {
      expect(['fact_extracted', 'entity_created', 'sync_completed', 'wiki_generated']).toContain(a.type);
      expect(data.some((c) => c.id === a.channel_id)).toBe(true);
      expect(a.message_count).toBeGreaterThan(0);
    }
    const times = activities.map((a) => a.timestamp);
    expect(times).toEqual([...times].sort().reverse());
    // Both kinds of the import are there (entities are extracted after facts, so their entries are newer); per
    // channel, the fact_extracted entries count messages that have facts.
    const many = (await get('/api/stats/activity?limit=100')).json().activities as typeof activities;
    expect(many).toHaveLength(100);
    expect(new Set(many.map((a) => a.type))).toEqual(new Set(['fact_extracted', 'entity_created']));
    for (const a of many.filter((x) => x.type === 'fact_extracted').slice(0, 5)) {
      const { rows } = await rt.documents.listMemories({ channelId: a.channel_id!, page: 1, limit: 100_000 });
      expect(a.message_count).toBeLessThanOrEqual(new Set(rows.map((r) => r.source_message_id)).size);
    }
  });

  it('GET /api/stats/export: a CSV and a JSON download whose rows match the files, with since', async () => {
    const csv = await get('/api/stats/export?format=csv');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="atlas-stats-all-\d{8}T\d{6}Z\.csv"$/);
    const rows = parse(csv.body, { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(82);
    for (const c of data) {
      const row = rows.find((r) => r.channel_id === c.id)!;
      expect(row.channel_name).toBe(c.name);
      expect(Number(row.message_count)).toBe(c.messages.length);
      expect(Number(row.author_count)).toBe(new Set(c.messages.map((m) => m.author)).size);
      expect(row.earliest_message).toBe(iso(Math.min(...c.messages.map((m) => m.ms))));
      expect(row.latest_message).toBe(iso(Math.max(...c.messages.map((m) => m.ms))));
    }
    const since = '2018-02-05T00:00:00.000Z';
    const clojure = data.find((c) => c.name === 'clojure')!;
    const json = await get(`/api/stats/export?channel_id=${clojure.id}&since=${since}`);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="atlas-stats-${clojure.id}-since-20180205-\\d{8}T\\d{6}Z\\.json"$`),
    );
    const body = json.json();
    const after = clojure.messages.filter((m) => m.ms >= Date.parse(since));
    expect(body).toMatchObject({ channel_id: clojure.id, since, totals: { channels: 1, messages: after.length } });
    expect(body.channels[0]).toMatchObject({
      channel_id: clojure.id,
      message_count: after.length,
      author_count: new Set(after.map((m) => m.author)).size,
      earliest_message: iso(Math.min(...after.map((m) => m.ms))),
    });
    expect((await get('/api/stats/export?format=xml')).status).toBe(400);
    expect((await get('/api/stats/export?since=yesterday-ish')).status).toBe(400);
  });

  it('GET /api/stats/metrics: storage, quality and usage from the stores, lag 0', async () => {
    const m = (await get('/api/stats/metrics')).json();
    const graph = await rt.graph.counts();
    const counts = await rt.documents.counts();
    expect(m.storage).toEqual({
      vector_store_objects: 0,
      document_store_documents: counts.messages + counts.facts,
      graph_store_nodes: graph.nodes,
      graph_store_relationships: graph.relationships,
    });
    expect(graph.nodes).toBeGreaterThan(0);
    expect(m.usage).toEqual({ total_llm_calls: 0, total_llm_tokens: 0, estimated_cost_usd: 0 }); // offline import
    expect(m.performance.avg_sync_duration_seconds).toBe(0);
    expect(m.event_log.total_lag).toBe(0);
  });

  it('/metrics: lag per group, topic and partition rises with an appended event and falls to 0 once projected', async () => {
    const scrape = async () => (await get('/metrics')).body;
    const text0 = await scrape();
    const lag0 = samples(text0, 'atlas_consumer_lag');
    expect(lag0.length).toBeGreaterThan(0);
    expect(lag0.every((s) => s.value === 0)).toBe(true);
    expect(lag0.some((s) => s.labels.group === 'atlas.projector.stats')).toBe(true);
    expect(samples(text0, 'atlas_http_request_duration_seconds_count').length).toBeGreaterThan(0);
    // A ChannelDiscovered of a known channel changes no figure, but every group reading atlas.messages must read it.
    const c = data[0]!;
    await rt.eventLog.append(TOPICS.messages, [
      {
        type: 'ChannelDiscovered',
        key: c.id,
        data: {
          platform: 'platform_a',
          workspaceId: 'T03RZGPFR',
          workspaceName: 'clojurians',
          channelId: c.id,
          name: c.name,
          isPrivate: false,
          memberCount: 0,
          topic: null,
          createdAt: null,
          source: 'import',
        },
      },
    ]);
    const lagging = samples(await scrape(), 'atlas_consumer_lag').filter((s) => s.value > 0);
    expect(lagging.map((s) => s.labels.group)).toContain('atlas.projector.stats');
    expect(lagging.every((s) => s.labels.topic === TOPICS.messages && s.value === 1)).toBe(true);
    const subs = await startProjectors(rt);
    try {
      await waitForProjectors(rt);
    } finally {
      await Promise.all(subs.map((s) => s.stop()));
    }
    const text1 = await scrape();
    expect(samples(text1, 'atlas_consumer_lag').every((s) => s.value === 0)).toBe(true);
    const handled = samples(text1, 'atlas_projector_events_total').filter(
      (s) => s.labels.projector === 'stats' && s.labels.type === 'ChannelDiscovered' && s.labels.outcome === 'ok',
    );
    expect(handled.map((s) => s.value)).toEqual([1]);
    expect((await get('/api/stats')).json().total_channels).toBe(82);
  }, 120_000);

  it('DELETE /api/channels/{id}/data: the channel counts 0 and the totals drop by what the files held', async () => {
    const c = data.find((x) => x.name === 'aws')!;
    const before = (await get('/api/stats')).json();
    const factsBefore = (await get(`/api/stats/channel/${c.id}`)).json().fact_count as number;
    const subs = await startProjectors(rt);
    try {
      const res = await app.inject({ method: 'DELETE', url: `/api/channels/${c.id}/data` });
      expect(res.statusCode).toBe(200);
      await waitForProjectors(rt);
    } finally {
      await Promise.all(subs.map((s) => s.stop()));
    }
    const after = (await get('/api/stats')).json();
    expect(after.total_messages).toBe(before.total_messages - c.messages.length);
    expect(after.total_facts).toBe(before.total_facts - factsBefore);
    expect(after.total_channels).toBe(82); // the channel itself stays (docs/ingestion.md "Edits, deletes, retention")
    expect((await get(`/api/stats/channel/${c.id}`)).json()).toMatchObject({
      message_count: 0,
      fact_count: 0,
      entity_count: 0,
      author_count: 0,
      date_range: { earliest: null, latest: null },
    });
  }, 120_000);

  it('answers carry a request id: x-request-id is kept when sane, else a UUID', async () => {
    const given = await app.inject({ method: 'GET', url: '/api/stats', headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers['x-request-id']).toBe('abc-123');
    const made = await app.inject({ method: 'GET', url: '/api/stats', headers: { 'x-request-id': 'bad id\u0007' } });
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
