import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '@atlas/api';
import { type AnyStoredEvent, loadConfig, TOPICS } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { startWikiWorker, WikiGenerator, type WikiWorker, type WikiWorkerDeps } from '@atlas/projectors';
import { apiPorts, appendPlan, drainProjectors, openRuntime, type Runtime, startProjectors } from '@atlas/runtime';
import { estimateLlmCostUsd } from '@atlas/stores';
import { openAiSummarizer } from '@atlas/wiki';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const OLAKE = path.resolve(import.meta.dirname, '../../shared/data/slack-olake/export');

const NODE_KEYS = ['children', 'id', 'memory_count', 'page_type', 'section_number', 'slug', 'title'];
const PAGE_KEYS = [
  'children',
  'citations',
  'content',
  'id',
  'last_updated',
  'memory_count',
  'page_type',
  'parent_id',
  'section_number',
  'slug',
  'summary',
  'title',
];
const CITATION_KEYS = ['author', 'channel', 'id', 'media_name', 'media_type', 'permalink', 'text_excerpt', 'timestamp'];
const VERSION_KEYS = ['archived_at', 'channel_id', 'generated_at', 'model', 'page_count', 'version_number'];
/** The wiki worker on a runtime's stores and log, running `generate` (a gated or differently configured generator). */
const wikiWorkerOn = (rt: Runtime, generate: WikiWorkerDeps['generate']) =>
  startWikiWorker({ eventLog: rt.eventLog, jobs: rt.wikiJobs, wiki: rt.wiki, generate });

const FIXED = ['overview', 'people', 'decisions', 'faq', 'glossary', 'activity', 'topics'];

/** Every /api/wiki route over the real olake export, with local embeddings (clustering needs the fact vectors). */
describe('wiki routes on real data (slack-olake)', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let channelId: string;
  let generations = 0;
  let worker: WikiWorker | undefined;
  /** Generation waits for this gate, so a test can see the job running. */
  let gate: Promise<void> = Promise.resolve();
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url });
    return { status: res.statusCode, body: res.json() };
  };
  const post = async (url: string, payload?: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url, ...(payload === undefined ? {} : { payload }) });
    return { status: res.statusCode, body: res.json() };
  };
  const idle = async () => {
    for (let i = 0; i < 300; i++) {
      const { body } = await get(`/api/wiki/status?channel_id=${channelId}`);
      if (!body.is_generating && body.job_id === null) return body;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('wiki generation did not finish');
  };

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://' }));
    await appendPlan(rt, await planImport(OLAKE));
    await drainProjectors(rt, 0, false);
    const generator = rt.wikiGenerator!;
    worker = await wikiWorkerOn(rt, async (c, m) => {
      generations++;
      await gate;
      return generator.generate(c, m);
    });
    app = await buildApp(apiPorts(rt));
    channelId = (await rt.documents.listChannels()).find((c) => c.name === 'help')!.id;
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await worker?.stop();
    await rt?.close();
  });

  it('before any generation: 404 saying to POST /api/wiki/refresh; 400 without channel_id', async () => {
    const s = await get(`/api/wiki/structure?channel_id=${channelId}`);
    expect(s.status).toBe(404);
    expect(s.body.error.code).toBe('NOT_FOUND');
    expect(s.body.error.message).toContain('POST /api/wiki/refresh');
    expect((await get(`/api/wiki/${channelId}`)).status).toBe(404);
    expect((await get('/api/wiki/structure')).status).toBe(400);
    expect((await get('/api/wiki/structure')).body.error.code).toBe('INVALID_REQUEST');
    expect((await get('/api/wiki/status')).status).toBe(400);
    expect((await get('/api/wiki/versions')).status).toBe(400);
    expect((await get('/api/wiki/pages/overview')).status).toBe(400);
    expect((await post('/api/wiki/refresh', {})).status).toBe(400);
    const st = await get(`/api/wiki/status?channel_id=${channelId}`);
    expect(st.body).toMatchObject({ channel_id: channelId, is_generating: false, current_version: null });
    expect((await get(`/api/wiki/versions?channel_id=${channelId}`)).body).toEqual({ versions: [] });
  });

  it('POST /api/wiki/refresh starts a job (status shows is_generating), a second one meanwhile is 409', async () => {
    let open = () => {};
    gate = new Promise((r) => {
      open = r;
    });
    const r = await post('/api/wiki/refresh', { channel_id: channelId });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ status: 'started', channel_id: channelId, mode: 'full' });
    expect(typeof r.body.job_id).toBe('string');
    expect(Number.isInteger(r.body.estimated_duration_seconds)).toBe(true);
    const during = await get(`/api/wiki/status?channel_id=${channelId}`);
    expect(during.body.is_generating).toBe(true);
    expect(during.body.job_id).toBe(r.body.job_id);
    const again = await post('/api/wiki/refresh', { channel_id: channelId });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
    expect(again.body.error.details.job_id).toBe(r.body.job_id);
    open();
    const done = await idle();
    expect(done).toMatchObject({
      is_generating: false,
      is_stale: false,
      current_version: 1,
    });
    // The next daily full rebuild (WIKI_REBUILD_CRON, 02:00 UTC).
    const next = new Date(done.next_generation_scheduled);
    expect(done.next_generation_scheduled).toMatch(/T02:00:00\.000Z$/);
    expect(next.getTime() - Date.now()).toBeGreaterThan(0);
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
    expect(done.last_generated_at).toMatch(/Z$/);
    const structure = await get(`/api/wiki/structure?channel_id=${channelId}`);
    const count = (nodes: { children: unknown[] }[]): number =>
      nodes.reduce((n, x) => n + 1 + count(x.children as { children: unknown[] }[]), 0);
    expect(done.page_count).toBe(count(structure.body.pages));
    expect(generations).toBe(1);
  }, 60_000);

  it('GET /api/wiki/structure: spec structure with the 7 fixed pages numbered 1..7 and topic nodes', async () => {
    const { status, body } = await get(`/api/wiki/structure?channel_id=${channelId}`);
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual([
      'channel_id',
      'channel_name',
      'generated_at',
      'is_stale',
      'pages',
      'platform',
    ]);
    expect(body).toMatchObject({ channel_id: channelId, channel_name: 'help', is_stale: false });
    expect(body.pages.slice(0, 7).map((p: { id: string }) => p.id)).toEqual(FIXED);
    expect(body.pages.slice(0, 7).map((p: { section_number: string }) => p.section_number)).toEqual([
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
    ]);
    for (const n of body.pages) expect(Object.keys(n).sort()).toEqual(NODE_KEYS);
    const topics = body.pages.find((p: { id: string }) => p.id === 'topics');
    expect(topics.children.length).toBeGreaterThan(0);
    expect(topics.children[0].section_number).toBe('7.1');
    expect(topics.children[0].id).toMatch(/^topic-/);
  });

  it('GET /api/wiki/pages/{id}, /api/wiki/{channel_id} and /api/wiki/{channel_id}/topics/{id} serve stored pages', async () => {
    const overview = await get(`/api/wiki/pages/overview?channel_id=${channelId}`);
    expect(overview.status).toBe(200);
    // Issue 27 point 3: the page answer adds how current its channel is (docs/wiki.md "Freshness").
    const { freshness, ...overviewPage } = overview.body;
    expect(freshness).toMatchObject({ behind: false, pending_messages: 0, channels: [{ channel_id: channelId }] });
    expect(Object.keys(overviewPage).sort()).toEqual(PAGE_KEYS);
    expect(overview.body).toMatchObject({ id: 'overview', section_number: '1', page_type: 'fixed', parent_id: null });
    expect(overview.body.content.length).toBeGreaterThan(100);
    expect(overview.body.citations.length).toBeGreaterThan(0);
    for (const c of overview.body.citations) expect(Object.keys(c).sort()).toEqual(CITATION_KEYS);
    expect(overview.body.citations[0].id).toBe('[1]');

    const whole = await get(`/api/wiki/${channelId}`);
    expect(whole.status).toBe(200);
    expect(whole.body.channel_id).toBe(channelId);
    expect(whole.body.pages.length).toBeGreaterThanOrEqual(7);
    expect(whole.body.overview).toEqual(overviewPage);
    expect(whole.body.freshness).toEqual(freshness);

    const structure = (await get(`/api/wiki/structure?channel_id=${channelId}`)).body;
    const topicId = structure.pages.find((p: { id: string }) => p.id === 'topics').children[0].id as string;
    const topic = await get(`/api/wiki/${channelId}/topics/${topicId}`);
    expect(topic.status).toBe(200);
    expect(topic.body).toMatchObject({ id: topicId, page_type: 'topic', parent_id: 'topics', section_number: '7.1' });
    expect(topic.body.memory_count).toBeGreaterThan(0);
    // Also by the slug part of the id, and as a page.
    expect((await get(`/api/wiki/${channelId}/topics/${topicId.slice('topic-'.length)}`)).body.id).toBe(topicId);
    expect((await get(`/api/wiki/pages/${topicId}?channel_id=${channelId}`)).body).toEqual(topic.body);
    expect((await get(`/api/wiki/${channelId}/topics/overview`)).status).toBe(404);

    // Serving pages generated nothing.
    expect(generations).toBe(1);
    expect((await get(`/api/wiki/status?channel_id=${channelId}`)).body.current_version).toBe(1);
  });

  it('404 for an unknown page, channel or version', async () => {
    for (const url of [
      `/api/wiki/pages/nope?channel_id=${channelId}`,
      '/api/wiki/pages/overview?channel_id=no-such-channel',
      '/api/wiki/structure?channel_id=no-such-channel',
      '/api/wiki/status?channel_id=no-such-channel',
      `/api/wiki/versions/99?channel_id=${channelId}`,
      '/api/wiki/versions/1?channel_id=no-such-channel',
      '/api/wiki/no-such-channel',
      `/api/wiki/${channelId}/topics/topic-nope`,
    ]) {
      const r = await get(url);
      expect(r.status, url).toBe(404);
      expect(r.body.error.code, url).toBe('NOT_FOUND');
    }
    expect((await post('/api/wiki/refresh', { channel_id: 'no-such-channel' })).status).toBe(404);
    expect((await get(`/api/wiki/versions/abc?channel_id=${channelId}`)).status).toBe(400);
  });

  it('versions grow with a second (forced, full) refresh; version snapshot, activity, sync-history, metadata', async () => {
    const r = await post('/api/wiki/refresh', { channel_id: channelId, force: true });
    expect(r.status).toBe(202);
    expect(r.body.mode).toBe('full');
    await idle();
    expect(generations).toBe(2);

    const { body } = await get(`/api/wiki/versions?channel_id=${channelId}`);
    expect(body.versions.map((v: { version_number: number }) => v.version_number)).toEqual([2, 1]);
    for (const v of body.versions) expect(Object.keys(v).sort()).toEqual(VERSION_KEYS);
    expect(body.versions[0].archived_at).toBeNull();
    expect(body.versions[1].archived_at).toBe(body.versions[0].generated_at);
    expect(body.versions[0]).toMatchObject({ channel_id: channelId, model: 'extractive' });
    expect((await get(`/api/wiki/versions?channel_id=${channelId}&limit=1`)).body.versions).toHaveLength(1);

    const snap = await get(`/api/wiki/versions/1?channel_id=${channelId}`);
    expect(snap.status).toBe(200);
    expect(Object.keys(snap.body).sort()).toEqual(
      [...VERSION_KEYS, 'channel_name', 'platform', 'structure', 'overview', 'pages', 'metadata'].sort(),
    );
    expect(snap.body).toMatchObject({ version_number: 1, channel_name: 'help' });
    expect(snap.body.pages).toHaveLength(body.versions[1].page_count);
    expect(snap.body.overview.id).toBe('overview');
    expect(snap.body.metadata.mode).toBe('full');

    const activity = await get(`/api/wiki/activity?channel_id=${channelId}`);
    expect(activity.status).toBe(200);
    expect(activity.body.activities).toHaveLength(2);
    for (const a of activity.body.activities) {
      expect(Object.keys(a).sort()).toEqual([
        'action',
        'channel_id',
        'duration_ms',
        'page_count',
        'timestamp',
        'version_number',
      ]);
      expect(a.action).toBe('generated');
      expect(Number.isInteger(a.duration_ms)).toBe(true);
    }
    expect(activity.body.activities[0].version_number).toBe(2);
    expect((await get('/api/wiki/activity?limit=1')).body.activities).toHaveLength(1);

    const history = await get(`/api/wiki/sync-history?channel_id=${channelId}`);
    expect(history.status).toBe(200);
    expect(history.body.history).toHaveLength(2);
    const [second, first] = history.body.history;
    expect(first).toMatchObject({ status: 'completed', mode: 'full', version_number: 1, error: null });
    expect(second).toMatchObject({ status: 'completed', mode: 'full', version_number: 2, error: null });
    expect(first.facts_processed).toBeGreaterThan(10);
    expect(first.pages_generated).toBe(snap.body.page_count);
    expect(Date.parse(first.completed_at)).toBeGreaterThanOrEqual(Date.parse(first.started_at));
    expect(typeof first.sync_id).toBe('string');
    // The job history is a read model: another API process on the same stores answers the same.
    const other = await buildApp(apiPorts(rt));
    try {
      const seen = await other.inject({ method: 'GET', url: `/api/wiki/sync-history?channel_id=${channelId}` });
      expect(seen.json()).toEqual(history.body);
    } finally {
      await other.close();
    }

    const meta = await get(`/api/wiki/metadata?channel_id=${channelId}`);
    expect(meta.status).toBe(200);
    expect(meta.body).toMatchObject({ channel_id: channelId, channel_name: 'help', current_version: 2 });
    expect(meta.body.page_count).toBe(body.versions[0].page_count);
    expect(meta.body.topic_count).toBeGreaterThan(0);
    expect(meta.body.generation.mode).toBe('full');
    // Issue 21: without channel_id, the aggregate over every channel (no longer a 400).
    expect((await get('/api/wiki/metadata')).status).toBe(200);
  }, 60_000);

  it('an incremental refresh with nothing changed keeps the version; sync-history lists the run', async () => {
    const r = await post('/api/wiki/refresh', { channel_id: channelId });
    expect(r.status).toBe(202);
    expect(r.body.mode).toBe('incremental');
    const done = await idle();
    expect(done.current_version).toBe(2);
    expect(generations).toBe(3);
    const { body } = await get(`/api/wiki/sync-history?channel_id=${channelId}`);
    expect(body.history).toHaveLength(3);
    expect(body.history[0]).toMatchObject({
      sync_id: r.body.job_id,
      status: 'completed',
      mode: 'incremental',
      version_number: 2,
      pages_generated: 0,
    });
  }, 60_000);

  it('GET /api/wiki/entities/{type}/{id}: an entity page from the graph with cited facts; 404 for a wrong type', async () => {
    const [person] = await rt.graph.listEntities({ channelId, type: 'Person', limit: 1 });
    expect(person).toBeDefined();
    const { status, body } = await get(`/api/wiki/entities/person/${person!.id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ page_type: 'entity', title: person!.name });
    expect(body.entity.id).toBe(person!.id);
    expect(body.citations.length).toBe(body.memory_count);
    for (const c of body.citations) expect(Object.keys(c).sort()).toEqual(CITATION_KEYS);
    expect(body.card.entity_name).toBe(person!.name);
    expect((await get(`/api/wiki/entities/decision/${person!.id}`)).status).toBe(404);
    expect((await get('/api/wiki/entities/person/nope')).status).toBe(404);
  });

  it('POST /api/admin/wiki/rebuild runs a full rebuild of one channel', async () => {
    const r = await post('/api/admin/wiki/rebuild', { channel_id: channelId });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ status: 'started', mode: 'full', channel_id: channelId });
    await idle();
    expect((await get(`/api/wiki/status?channel_id=${channelId}`)).body.current_version).toBe(3);
    expect(generations).toBe(4);
  }, 60_000);

  it('POST /api/admin/wiki/rebuild without a body rebuilds every channel with facts, one job each', async () => {
    const r = await post('/api/admin/wiki/rebuild');
    expect(r.status).toBe(202);
    expect(r.body.status).toBe('started');
    expect(r.body.jobs.length).toBeGreaterThan(0);
    expect(r.body.job_id).toBe(r.body.jobs[0].job_id);
    expect(Number.isInteger(r.body.estimated_duration_seconds)).toBe(true);
    for (const j of r.body.jobs as { channel_id: string }[]) {
      for (let i = 0; i < 300; i++) {
        const { body } = await get(`/api/wiki/status?channel_id=${j.channel_id}`);
        if (!body.is_generating && body.job_id === null) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      const { status, body } = await get(`/api/wiki/structure?channel_id=${j.channel_id}`);
      expect(status).toBe(200);
      expect(body.pages.slice(0, 7).map((p: { id: string }) => p.id)).toEqual(FIXED);
    }
    expect(generations).toBe(4 + r.body.jobs.length);
  }, 60_000);

  it('without a vector store (requestWiki null) refresh answers 503 PROVIDER_UNAVAILABLE; reads still answer', async () => {
    const bare = await buildApp({ ...apiPorts(rt), requestWiki: null });
    try {
      const r = await bare.inject({ method: 'POST', url: '/api/wiki/refresh', payload: { channel_id: channelId } });
      expect(r.statusCode).toBe(503);
      expect(r.json().error.code).toBe('PROVIDER_UNAVAILABLE');
      expect(r.json().error.message).toContain('vector store');
      const page = await bare.inject({ method: 'GET', url: `/api/wiki/pages/overview?channel_id=${channelId}` });
      expect(page.statusCode).toBe(200);
    } finally {
      await bare.close();
    }
  });
});

/**
 * With an LLM configured (quality tier), topic summaries are written by the model, cited and verified; serving the
 * cached pages afterwards makes no LLM call. The endpoint is a small OpenAI-compatible server inside the test.
 */
/** The job history survives a restart of the process (data dir), with the job's command on the log. */
describe('wiki jobs across a restart (embedded data dir, slack-olake)', () => {
  let dir: string;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a refresh run by the wiki worker is in sync-history after the process restarts', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'atlas-wiki-jobs-'));
    const cfg = loadConfig({ ATLAS_DATA_DIR: dir });
    let rt = await openRuntime(cfg, { pollIntervalMs: 20 });
    let jobId: string;
    let channelId: string;
    let before: unknown;
    try {
      await appendPlan(rt, await planImport(OLAKE));
      await drainProjectors(rt, 0, false);
      channelId = (await rt.documents.listChannels()).find((c) => c.name === 'help')!.id;
      const subs = await startProjectors(rt); // the wiki worker runs beside the wiki projector
      const app = await buildApp(apiPorts(rt));
      try {
        const r = await app.inject({ method: 'POST', url: '/api/wiki/refresh', payload: { channel_id: channelId } });
        expect(r.statusCode).toBe(202);
        jobId = r.json().job_id;
        for (let i = 0; i < 600; i++) {
          if ((await rt.wikiJobs.job(jobId))?.status === 'completed') break;
          await new Promise((res) => setTimeout(res, 100));
        }
        before = (await app.inject({ method: 'GET', url: `/api/wiki/sync-history?channel_id=${channelId}` })).json();
      } finally {
        await app.close();
        await Promise.all(subs.map((s) => s.stop()));
      }
      // The command on atlas.commands, read back by a consumer group of this test.
      const commands: AnyStoredEvent[] = [];
      const group = 'test.wiki-commands';
      const reader = await rt.eventLog.subscribe({
        group,
        topics: [TOPICS.commands],
        handler: async (batch) => void commands.push(...batch),
      });
      for (let i = 0; i < 200; i++) {
        if ((await rt.eventLog.lag(group, [TOPICS.commands])).every((l) => l.lag === 0)) break;
        await new Promise((res) => setTimeout(res, 50));
      }
      await reader.stop();
      expect(commands.filter((e) => e.type === 'WikiRefreshRequested').map((e) => e.data)).toEqual([
        expect.objectContaining({ jobId, channelId, mode: 'full', requestedBy: 'api' }),
      ]);
    } finally {
      await rt.close();
    }
    rt = await openRuntime(cfg, { pollIntervalMs: 20 });
    try {
      const app = await buildApp(apiPorts(rt));
      const after = await app.inject({ method: 'GET', url: `/api/wiki/sync-history?channel_id=${channelId}` });
      expect(after.json()).toEqual(before);
      expect(after.json().history).toEqual([
        expect.objectContaining({ sync_id: jobId, status: 'completed', mode: 'full', version_number: 1 }),
      ]);
      const status = await app.inject({ method: 'GET', url: `/api/wiki/status?channel_id=${channelId}` });
      expect(status.json()).toMatchObject({ current_version: 1, is_generating: false, job_id: null });
      await app.close();
    } finally {
      await rt.close();
    }
  }, 240_000);
});

describe('wiki with an LLM summarizer (OpenAI-compatible server in the test)', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let server: Server;
  let calls = 0;
  let channelId: string;
  let worker: WikiWorker | undefined;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (d) => {
        raw += d;
      });
      req.on('end', () => {
        calls++;
        const body = JSON.parse(raw) as { model: string; messages: { role: string; content: string }[] };
        // Answers with the first two key facts of the prompt, cited by their markers (and one uncited sentence).
        const facts = body.messages
          .at(-1)!
          .content.split('\n')
          .filter((l) => /^\[\d+\] /.test(l));
        const said = facts.slice(0, 2).map((l) => {
          const [, marker, text] = /^(\[\d+\]) \([^)]*\) (.*)$/.exec(l)!;
          return `${text!.replace(/\\?\[\d+\\?\]/g, '').replace(/[.!?\s]+$/, '')} ${marker}.`;
        });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: `c${calls}`,
            object: 'chat.completion',
            created: 0,
            model: body.model,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: `In short: ${said.join(' ')} Everyone agrees on this.` },
                finish_reason: 'stop',
              },
            ],
            usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://' }));
    await appendPlan(rt, await planImport(OLAKE));
    await drainProjectors(rt, 0, false);
    const generator = new WikiGenerator({
      documents: rt.documents,
      vectors: rt.embeddings!.vectors,
      embedderId: rt.embeddings!.embedder.id,
      graph: rt.graph,
      wiki: rt.wiki,
      // A priced model name, priced as the usage ledger prices calls (generation_cost_usd, issue 21).
      summarizer: openAiSummarizer({
        baseURL: `http://127.0.0.1:${port}/v1`,
        model: 'gpt-4o-mini',
        timeoutMs: 5000,
        price: estimateLlmCostUsd,
      }),
    });
    worker = await wikiWorkerOn(rt, (c, m) => generator.generate(c, m));
    app = await buildApp(apiPorts(rt));
    channelId = (await rt.documents.listChannels()).find((c) => c.name === 'help')!.id;
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await worker?.stop();
    await rt?.close();
    await new Promise((r) => server?.close(r));
  });

  it('generation calls the model once per topic page; cached pages are then served with no call', async () => {
    const r = await app.inject({ method: 'POST', url: '/api/wiki/refresh', payload: { channel_id: channelId } });
    expect(r.statusCode).toBe(202);
    for (let i = 0; i < 300; i++) {
      const st = (await app.inject({ method: 'GET', url: `/api/wiki/status?channel_id=${channelId}` })).json();
      if (st.current_version === 1 && !st.is_generating && st.job_id === null) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    const structure = (await app.inject({ method: 'GET', url: `/api/wiki/structure?channel_id=${channelId}` })).json();
    const topics = structure.pages.find((p: { id: string }) => p.id === 'topics').children as unknown[];
    const countNodes = (nodes: { children: unknown[] }[]): number =>
      nodes.reduce((n, x) => n + 1 + countNodes(x.children as { children: unknown[] }[]), 0);
    expect(calls).toBe(countNodes(topics as { children: unknown[] }[]));
    const callsAfterGeneration = calls;

    const versions = (await app.inject({ method: 'GET', url: `/api/wiki/versions?channel_id=${channelId}` })).json();
    expect(versions.versions[0].model).toBe('gpt-4o-mini');
    // Issue 21, point 1, bullet 5: generation_cost_usd is what the LLM summaries of the last generation cost (each
    // call 10 prompt + 10 completion tokens at the model's price), generation_duration_ms its duration.
    const meta = (await app.inject({ method: 'GET', url: `/api/wiki/metadata?channel_id=${channelId}` })).json();
    const status = (await app.inject({ method: 'GET', url: `/api/wiki/status?channel_id=${channelId}` })).json();
    expect(meta.generation_cost_usd).toBeGreaterThan(0);
    expect(meta.generation_cost_usd).toBeCloseTo(callsAfterGeneration * estimateLlmCostUsd('gpt-4o-mini', 10, 10), 9);
    expect(meta.generation_duration_ms).toBe(status.last_duration_ms);
    expect(Number.isInteger(meta.generation_duration_ms)).toBe(true);
    expect(meta.model).toBe('gpt-4o-mini');
    const first = (topics as { id: string }[])[0]!.id;
    const page = (await app.inject({ method: 'GET', url: `/api/wiki/pages/${first}?channel_id=${channelId}` })).json();
    // The model's cited sentences replaced the extractive summary; its uncited sentence was dropped.
    expect(page.summary).toMatch(/^In short: /);
    expect(page.summary).not.toContain('Everyone agrees');
    expect(page.summary).toMatch(/\[1\]/);
    expect(page.content.split('\n')[2]).toBe(page.summary);
    const markers = [...page.content.matchAll(/(?<!\\)\[(\d+)\]/g)].map((m) => `[${m[1]}]`);
    expect(page.citations.map((c: { id: string }) => c.id)).toEqual([...new Set(markers)]);

    for (const url of [
      `/api/wiki/structure?channel_id=${channelId}`,
      `/api/wiki/pages/overview?channel_id=${channelId}`,
      `/api/wiki/pages/${first}?channel_id=${channelId}`,
      `/api/wiki/${channelId}`,
      `/api/wiki/${channelId}/topics/${first.slice('topic-'.length)}`,
      `/api/wiki/versions/1?channel_id=${channelId}`,
      `/api/wiki/status?channel_id=${channelId}`,
    ])
      expect((await app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    expect(calls).toBe(callsAfterGeneration);
  }, 120_000);
});
