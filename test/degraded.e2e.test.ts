import { randomUUID } from 'node:crypto';
import { buildApp } from '@atlas/api';
import { type AnyNewEvent, loadConfig, type NewEvent, TOPICS } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { runLlmRecoveryPass, startLlmRecovery, WikiGenerator } from '@atlas/projectors';
import { type FakeOpenAiServer, okJson, serverError, startFakeOpenAiServer } from '@atlas/providers/testing';
import {
  type AskEvent,
  askStreamViolations,
  CACHED_WIKI_NOTE,
  FALLBACK_NOTE,
  parseAskStream,
  TEMPORARILY_UNAVAILABLE,
  WEB_SEARCH_NOTE,
} from '@atlas/query';
import {
  apiPorts,
  llmRecoveryDeps,
  openRuntime,
  type Runtime,
  startProjectors,
  waitForProjectors,
} from '@atlas/runtime';
import { embeddingServer, type FaultServer, faultProxy, webSearchServer } from '@atlas/runtime/testing';
import { type DatabaseHandle, guardGraphStore, migrateGraph, openDatabase, PostgresGraphStore } from '@atlas/stores';
import { channelEvent, freshChannelId, messageEvent, waitFor } from '@atlas/stores/testing';
import { GRAPH_UNAVAILABLE_NOTICE, type WikiPage, type WikiStructure } from '@atlas/wiki';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Spec "Degraded behaviour when a dependency fails": each dependency turned off for real, in turn, on the embedded
 * profile with every projector running, checked through the API. Embedding provider and web search: real HTTP
 * servers (an OpenAI-compatible embeddings endpoint, a search JSON endpoint) that answer 503 or cut connections. Graph
 * store: PostgreSQL (ATLAS_TEST_POSTGRES_URL) behind a TCP proxy that cuts every connection and refuses new ones.
 * Vector store: Qdrant's adapter at a server that cuts connections. Breakers reset after 300 ms (BREAKER_RESET_MS)
 * so recoveries are seen in the test's time.
 */
const DIM = 16;
const RESET_MS = 300;
const PG = process.env.ATLAS_TEST_POSTGRES_URL;

const conversation = (ch: string, sec: number): AnyNewEvent[] => [
  { type: 'ChannelDiscovered', key: ch, data: channelEvent(ch, 'platform') },
  ...[
    'We decided to move the event log to Kafka next sprint, it replaces the cron jobs.',
    'Kafka needs three brokers in production, and the retention should be seven days for the event log.',
    'Bob will own the Kafka migration and the schema registry setup before the release.',
    'The Postgres outbox keeps working until Kafka is live, then we drop the cron jobs entirely.',
  ].map(
    (text, i): NewEvent<'MessageIngested'> => ({
      type: 'MessageIngested',
      key: ch,
      data: messageEvent(ch, sec + i * 60, text, {
        author: { id: `U${i % 2}`, name: i % 2 ? 'bob' : 'alice', isBot: false },
      }),
    }),
  ),
];

/** The route stored with an answer (ask_messages.metadata.route). */
const routeOf = async (rt: Runtime, events: AskEvent[]): Promise<string | undefined> => {
  const done = events.find((e) => e.type === 'done') as Extract<AskEvent, { type: 'done' }> | undefined;
  if (!done) return undefined;
  const rows = await sql<{ metadata: { route: string } }>`select metadata from ask_messages
    where message_id = ${done.message_id}`.execute(rt.database.db);
  return rows.rows[0]?.metadata.route;
};

const textOf = (events: AskEvent[]) => events.flatMap((e) => (e.type === 'token' ? [e.content] : [])).join('');

/** The API of a runtime, with helpers to ingest and ask. */
const harness = () => {
  const h = {
    rt: undefined as unknown as Runtime,
    app: undefined as unknown as FastifyInstance,
    subs: [] as Subscription[],
    async open(env: Record<string, string>, before?: (rt: Runtime) => Promise<void>) {
      h.rt = await openRuntime(
        loadConfig({
          ATLAS_DATA_DIR: 'memory://',
          EMBEDDING_PROVIDER: 'openai',
          EMBEDDING_DIM: String(DIM),
          EMBEDDING_MODEL: 'bag',
          BREAKER_RESET_MS: String(RESET_MS),
          VECTOR_MEMORY_INDEX_MB: '0',
          ...env,
        }),
        { pollIntervalMs: 20, sessionTimeoutMs: 1000 },
      );
      await before?.(h.rt);
      h.subs = await startProjectors(h.rt);
      h.app = await buildApp(apiPorts(h.rt));
    },
    async close() {
      await Promise.all(h.subs.map((s) => s.stop()));
      await h.app?.close();
      await h.rt?.close();
    },
    async ingest(events: NewEvent[], projectors?: string[]) {
      await h.rt.eventLog.append(TOPICS.messages, events);
      await waitForProjectors(h.rt, projectors, 20);
    },
    async json(method: 'GET' | 'POST', url: string, payload?: object) {
      const res = await h.app.inject({ method, url, ...(payload ? { payload } : {}) });
      return { status: res.statusCode, body: res.json() };
    },
    async health(): Promise<Record<string, string>> {
      return (await h.json('GET', '/api/health')).body.dependencies;
    },
    async search(query: string, channelId: string) {
      return (await h.json('POST', '/api/search', { query, channel_id: channelId, limit: 10 })).body as {
        results: { memory: { memory_text: string } }[];
        search_method: string;
      };
    },
    async ask(question: string, channelId?: string) {
      const res = await h.app.inject({
        method: 'POST',
        url: channelId ? `/api/channels/${channelId}/ask` : '/api/ask',
        payload: { question },
      });
      const events = parseAskStream([res.body]);
      return { status: res.statusCode, events, text: textOf(events) };
    },
  };
  return h;
};

describe('embedding provider down (a real OpenAI-compatible endpoint answering 503, then cutting connections)', () => {
  const h = harness();
  let embed: FaultServer;
  let web: FaultServer;
  const ch = freshChannelId();
  beforeAll(async () => {
    embed = await embeddingServer(DIM);
    web = await webSearchServer();
    // Breakers stay open 2 s here: long enough to see calls refused on a busy machine, short enough to see recovery.
    await h.open({ EMBEDDING_BASE_URL: embed.url, WEB_SEARCH_URL: web.url, BREAKER_RESET_MS: '2000' });
  }, 60_000);
  afterAll(async () => {
    await h.close();
    await embed?.close();
    await web?.close();
  });

  it('all up: hybrid search, every configured dependency healthy', async () => {
    await h.ingest(conversation(ch, 1_700_000_000));
    expect((await h.search('Kafka brokers retention', ch)).search_method).toBe('hybrid');
    expect(await h.health()).toMatchObject({
      vector_store: 'healthy',
      embedding_provider: 'healthy',
      graph_store: 'healthy',
      document_store: 'healthy',
      web_search_provider: 'healthy',
    });
  });

  it('down: facts stored text-only and queued, keyword-only search, the breaker open (failing); back: backfill, hybrid', async () => {
    embed.mode = 'error';
    const other = freshChannelId();
    await h.ingest(conversation(other, 1_700_100_000));
    // Facts are stored and keyword-searchable; their embeddings wait in the backlog (spec: embeddings queued).
    expect((await h.rt.documents.getChannel(other))?.fact_count).toBeGreaterThan(0);
    expect(await h.rt.embeddings!.backlog.count()).toBeGreaterThan(0);
    const found = await h.search('Kafka brokers retention', other);
    expect(found.search_method).toBe('keyword');
    expect(found.results.length).toBeGreaterThan(0);
    // Existing embeddings are not lost: the first channel's vectors are still there for when the provider is back.
    expect(await h.rt.embeddings!.vectors.count()).toBeGreaterThan(0);
    embed.mode = 'down'; // connections cut: the same
    await h.search('cron jobs', other);
    await h.search('schema registry', other);
    await waitFor(async () => (await h.health()).embedding_provider === 'failing', 'embedding breaker open');
    const sent = embed.requests;
    expect((await h.search('Kafka', other)).search_method).toBe('keyword');
    expect(embed.requests).toBe(sent); // OPEN: no call sent
    // Recovery: the provider answers again; after the reset one probe closes the breaker, and its closing drains the
    // queue in the background (backfill on recovery).
    embed.mode = 'up';
    await new Promise((r) => setTimeout(r, 2_050));
    await waitFor(async () => (await h.search('Kafka brokers', other)).search_method === 'hybrid', 'hybrid again');
    await waitFor(async () => (await h.rt.embeddings!.backlog.count()) === 0, 'embedding backlog drained', 10_000);
    const backfill = await h.json('POST', '/api/admin/backfill/embeddings');
    expect(backfill.status).toBe(200);
    expect(backfill.body).toMatchObject({ type: 'embeddings', remaining: 0 });
    expect((await h.health()).embedding_provider).toBe('healthy');
  });

  it('web search down: internal results with a note; up: web results follow the answer', async () => {
    const up = await h.ask('What did we decide about Kafka?', ch);
    expect(up.status).toBe(200);
    expect(askStreamViolations(up.events)).toEqual([]);
    expect(up.text).toContain('From the web:');
    expect(up.text).toContain('https://example.org/a');
    web.mode = 'down';
    for (let i = 0; i < 3; i++) {
      const down = await h.ask('What did we decide about Kafka?', ch);
      expect(askStreamViolations(down.events)).toEqual([]);
      expect(down.text).toContain('Kafka'); // the internal answer stands
      expect(down.text).toContain(WEB_SEARCH_NOTE);
      expect(down.text).not.toContain('From the web:');
    }
    expect((await h.health()).web_search_provider).toBe('failing');
    web.mode = 'up';
  });
});

describe.skipIf(!PG)('graph store down (PostgreSQL behind a TCP proxy that cuts every connection)', () => {
  const h = harness();
  let embed: FaultServer;
  let proxy: Awaited<ReturnType<typeof faultProxy>>;
  let graphDb: DatabaseHandle;
  const schema = `degraded_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const ch = freshChannelId();
  beforeAll(async () => {
    embed = await embeddingServer(DIM);
    const target = new URL(PG!);
    proxy = await faultProxy({ host: target.hostname, port: Number(target.port || 5432) });
    target.host = `${proxy.host}:${proxy.port}`;
    graphDb = await openDatabase({ url: target.toString(), schema, poolSize: 2 });
    await migrateGraph(graphDb.db);
    await h.open({ EMBEDDING_BASE_URL: embed.url }, async (rt) => {
      // The runtime's graph store on the PostgreSQL server, behind its breaker, as NEO4J_URL would swap Neo4j in.
      const guarded = guardGraphStore(new PostgresGraphStore(graphDb.db), {
        name: 'graph_store:postgres-proxy',
        breaker: { resetMs: RESET_MS },
      });
      for (const b of rt.breakers.ofDependency('graph_store')) b.shutdown();
      rt.breakers.add(guarded.breaker);
      rt.graph = guarded.port;
    });
  }, 60_000);
  afterAll(async () => {
    await h.close();
    proxy.mode = 'up';
    await graphDb?.close();
    if (PG) {
      const { default: pg } = await import('pg');
      const c = new pg.Client({ connectionString: PG });
      await c.connect();
      await c.query(`drop schema if exists "${schema}" cascade`);
      await c.end();
    }
    await proxy?.close();
    await embed?.close();
  });

  it('down: entity writes skipped and queued, facts stored; graph questions answered semantically; People and Decisions pages unavailable; back: backfill', async () => {
    proxy.mode = 'down';
    await h.ingest(conversation(ch, 1_700_200_000));
    expect((await h.rt.documents.getChannel(ch))?.fact_count).toBeGreaterThan(0);
    expect((await h.search('Kafka brokers', ch)).results.length).toBeGreaterThan(0);
    expect(await h.rt.entityBacklog.count()).toBeGreaterThan(0);
    await waitFor(async () => (await h.health()).graph_store === 'failing', 'graph breaker open', 10_000);

    // A graph question: the route is reclassified as semantic (stored with the answer), and the answer stands.
    const asked = await h.ask('Who decided to move the event log to Kafka?', ch);
    expect(asked.status).toBe(200);
    expect(askStreamViolations(asked.events)).toEqual([]);
    expect(asked.text).toContain('Kafka');
    expect(await routeOf(h.rt, asked.events)).toBe('semantic');

    // The wiki generated meanwhile: People and Decisions say the graph is temporarily unavailable.
    const generator = new WikiGenerator({
      documents: h.rt.documents,
      vectors: h.rt.embeddings!.vectors,
      graph: h.rt.graph,
      wiki: h.rt.wiki,
    });
    await generator.generate(ch, 'full');
    const pages = await h.rt.wiki.pages(ch);
    for (const slug of ['people', 'decisions']) {
      const page = pages.find((p) => p.id === slug || p.slug === slug);
      expect(page?.content, slug).toContain(GRAPH_UNAVAILABLE_NOTICE);
    }

    // Recovery: the server is reachable again; after the reset a probe (here the health check) closes the breaker,
    // and its closing writes the queued entities in the background (backfill on recovery).
    proxy.mode = 'up';
    await new Promise((r) => setTimeout(r, RESET_MS + 50));
    await waitFor(async () => (await h.health()).graph_store === 'healthy', 'graph breaker closed', 10_000);
    await waitFor(
      async () => (await h.rt.graph.listEntities({ channelId: ch, limit: 50 })).some((e) => e.name === 'Kafka'),
      'queued entities written',
      10_000,
    );
    const backfill = await h.json('POST', '/api/admin/backfill/entities');
    expect(backfill.status).toBe(200);
    expect(backfill.body.remaining).toBe(0);
    const again = await h.ask('Who decided to move the event log to Kafka?', ch);
    expect(await routeOf(h.rt, again.events)).toBe('graph');
  });
});

describe('vector store down (the Qdrant adapter at a server that cuts every connection)', () => {
  const h = harness();
  let embed: FaultServer;
  let qdrant: FaultServer;
  const ch = freshChannelId();
  beforeAll(async () => {
    embed = await embeddingServer(DIM);
    qdrant = await embeddingServer(DIM); // any HTTP server: it is down for the whole suite
    qdrant.mode = 'down';
    await h.open({ EMBEDDING_BASE_URL: embed.url, QDRANT_URL: qdrant.url.replace(/\/v1$/, '') });
  }, 60_000);
  afterAll(async () => {
    await h.close();
    await embed?.close();
    await qdrant?.close();
  });

  it('ingestion of vectors paused and queued (the other stores go on); keyword search; failing in health', async () => {
    await h.ingest(conversation(ch, 1_700_300_000), ['facts', 'keyword', 'documents', 'entities', 'graph']);
    expect((await h.rt.documents.getChannel(ch))?.fact_count).toBeGreaterThan(0);
    // The embeddings projector's batch waits in the log (retried with backoff) until the vector store is back.
    const lag = await h.rt.eventLog.lag('atlas.projector.embeddings', [TOPICS.facts]);
    expect(lag.reduce((n, r) => n + r.lag, 0)).toBeGreaterThan(0);
    const found = await h.search('Kafka brokers retention', ch);
    expect(found.search_method).toBe('keyword');
    expect(found.results.length).toBeGreaterThan(0);
    await waitFor(async () => (await h.health()).vector_store === 'failing', 'vector breaker open', 15_000);
  });

  it('asks are answered from the keyword index and the graph (no error)', async () => {
    const asked = await h.ask('What did we decide about Kafka?', ch);
    expect(asked.status).toBe(200);
    expect(askStreamViolations(asked.events)).toEqual([]);
    expect(asked.text).toContain('Kafka');
  });
});

describe('vector store and graph store both down', () => {
  const h = harness();
  let embed: FaultServer;
  let qdrant: FaultServer;
  let proxy: Awaited<ReturnType<typeof faultProxy>>;
  let graphDb: DatabaseHandle;
  const ch = freshChannelId();
  beforeAll(async () => {
    embed = await embeddingServer(DIM);
    qdrant = await embeddingServer(DIM);
    qdrant.mode = 'down';
    // A graph store on a PostgreSQL address whose proxy refuses everything (no server needed behind it).
    proxy = await faultProxy({ host: '127.0.0.1', port: 1 });
    proxy.mode = 'down';
    graphDb = await openDatabase({ url: `postgres://postgres@${proxy.host}:${proxy.port}/atlas`, poolSize: 1 });
    await h.open({ EMBEDDING_BASE_URL: embed.url, QDRANT_URL: qdrant.url.replace(/\/v1$/, '') }, async (rt) => {
      const guarded = guardGraphStore(new PostgresGraphStore(graphDb.db), { name: 'graph_store:down' });
      for (const b of rt.breakers.ofDependency('graph_store')) b.shutdown();
      rt.breakers.add(guarded.breaker);
      rt.graph = guarded.port;
    });
    await h.ingest(conversation(ch, 1_700_400_000), ['facts', 'keyword', 'documents']);
  }, 60_000);
  afterAll(async () => {
    await h.close();
    await graphDb?.close();
    await proxy?.close();
    await embed?.close();
    await qdrant?.close();
  });

  it('no cached wiki: the ask answers the "temporarily unavailable" error object', async () => {
    const asked = await h.ask('What did we decide about Kafka?', ch);
    const errors = asked.events.filter((e) => e.type === 'error');
    expect(errors).toEqual([
      expect.objectContaining({ type: 'error', error: TEMPORARILY_UNAVAILABLE, retry_after: 30 }),
    ]);
    expect(TEMPORARILY_UNAVAILABLE).toMatch(/temporarily unavailable/);
  });

  it('a cached wiki: the answer comes from it, with a note', async () => {
    const page = (slug: string, title: string, summary: string): WikiPage =>
      ({
        id: slug,
        slug,
        title,
        page_type: 'topic',
        parent_id: null,
        section_number: '1',
        content: `# ${title}\n\n${summary} [1]`,
        summary,
        memory_count: 1,
        last_updated: new Date().toISOString(),
        citations: [],
        children: [],
      }) as WikiPage;
    const pages = [
      page('kafka', 'Kafka migration', 'The event log moves to Kafka next sprint; Bob owns the migration.'),
      page('release', 'Release', 'The release is planned for Friday.'),
    ];
    await h.rt.wiki.savePages(
      ch,
      { structure: { pages: [] } as unknown as WikiStructure, pages },
      { generatedAt: new Date().toISOString(), model: 'extractive' },
    );
    const asked = await h.ask('What did we decide about Kafka?', ch);
    expect(asked.status).toBe(200);
    expect(askStreamViolations(asked.events)).toEqual([]);
    expect(asked.text).toContain('Kafka migration');
    expect(asked.text).toContain(CACHED_WIKI_NOTE);
    expect((await h.health()).graph_store).toBe('failing');
  });
});

describe.skipIf(!PG)('document store down (PostgreSQL behind a TCP proxy that cuts every connection)', () => {
  const h = harness();
  let proxy: Awaited<ReturnType<typeof faultProxy>>;
  const schema = `degraded_docs_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const ch = freshChannelId();
  const admin = async (q: string) => {
    const { default: pg } = await import('pg');
    const c = new pg.Client({ connectionString: PG });
    await c.connect();
    await c.query(q);
    await c.end();
  };
  beforeAll(async () => {
    const target = new URL(PG!);
    proxy = await faultProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await admin(`create schema "${schema}"`);
    target.host = `${proxy.host}:${proxy.port}`;
    target.searchParams.set('options', `-c search_path=${schema},public`);
    // The whole runtime on the server (event log, documents, keyword index, graph); no vectors (no pgvector there).
    await h.open({ DATABASE_URL: target.toString(), EMBEDDING_PROVIDER: 'none' });
    await h.ingest(conversation(ch, 1_700_500_000));
  }, 60_000);
  afterAll(async () => {
    if (proxy) proxy.mode = 'up';
    await h.close();
    await proxy?.close();
    if (PG) await admin(`drop schema if exists "${schema}" cascade`);
  });

  it('down: reads answer 503 STORE_UNAVAILABLE, the breaker opens (failing, unhealthy); back: served again', async () => {
    expect((await h.json('GET', `/api/channels/${ch}`)).status).toBe(200);
    proxy.mode = 'down';
    for (let i = 0; i < 3; i++) {
      const res = await h.json('GET', `/api/channels/${ch}`);
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('STORE_UNAVAILABLE');
    }
    const health = (await h.json('GET', '/api/health')).body;
    expect(health.dependencies.document_store).toBe('failing');
    expect(health.status).toBe('unhealthy');
    expect(health.degraded_since).toEqual(expect.any(String));
    proxy.mode = 'up';
    await new Promise((r) => setTimeout(r, RESET_MS + 50));
    await waitFor(
      async () => (await h.json('GET', `/api/channels/${ch}`)).status === 200,
      'document store back',
      10_000,
    );
    expect((await h.health()).document_store).toBe('healthy');
  });
});

describe('LLM provider down (primary and secondary OpenAI-compatible endpoints answering 503)', () => {
  const h = harness();
  let embed: FaultServer;
  let primary: FaultServer;
  let secondary: FaultServer;
  const ch = freshChannelId();
  beforeAll(async () => {
    embed = await embeddingServer(DIM);
    primary = await embeddingServer(DIM); // any HTTP server: it answers 503 to everything
    secondary = await embeddingServer(DIM);
    primary.mode = 'error';
    secondary.mode = 'error';
    await h.open({
      EMBEDDING_BASE_URL: embed.url,
      LLM_BASE_URL: primary.url,
      LLM_SECONDARY_BASE_URL: secondary.url,
      LLM_TIMEOUT_MS: '2000',
      BREAKER_RESET_MS: '60000', // no probe within the test: the breakers stay OPEN once opened
      // Facts by the regex fast path: this part is about the LLM's other agents (LLM fact extraction: the next describe).
      FACT_EXTRACTOR: 'offline',
    });
  }, 60_000);
  afterAll(async () => {
    await h.close();
    await Promise.all([embed?.close(), primary?.close(), secondary?.close()]);
  });

  it('entity extraction queued (facts stored); asks fall back to extractive answers with a note; breakers open', async () => {
    await h.ingest(conversation(ch, 1_700_600_000));
    expect((await h.rt.documents.getChannel(ch))?.fact_count).toBeGreaterThan(0);
    expect(await h.rt.entityBacklog.count()).toBeGreaterThan(0); // the entity extractor's last resort: skipped, queued
    for (let i = 0; i < 3; i++) {
      const asked = await h.ask('What did we decide about Kafka?', ch);
      expect(asked.status).toBe(200);
      expect(askStreamViolations(asked.events)).toEqual([]);
      expect(asked.text).toContain('Kafka');
      expect(asked.text).toContain(FALLBACK_NOTE);
    }
    // Every provider of both tiers behind an open breaker: the LLM provider is failing.
    await waitFor(async () => (await h.health()).llm_provider === 'failing', 'LLM breakers open', 10_000);
    const sent = primary.requests + secondary.requests;
    expect(sent).toBeGreaterThan(0);
    const again = await h.ask('What did we decide about Kafka?', ch);
    expect(again.text).toContain(FALLBACK_NOTE);
    expect(primary.requests + secondary.requests).toBe(sent); // OPEN: nothing sent
  });
});

describe('LLM provider down for fact extraction: messages dead-lettered at once, re-driven when the model answers', () => {
  const h = harness();
  let embed: FaultServer;
  let llm: FakeOpenAiServer;
  let recovery: ReturnType<typeof startLlmRecovery> | undefined;
  const state = { down: true };
  const ch = freshChannelId();
  const ch2 = freshChannelId();
  const dead = (q = '') => h.json('GET', `/api/admin/dead-letters?error_code=PROVIDER_UNAVAILABLE${q}`);
  beforeAll(async () => {
    embed = await embeddingServer(DIM);
    llm = await startFakeOpenAiServer();
    // The model: 503 while down; up, one observation per message (the message's own text) and no entities.
    llm.script = (req) => {
      if (state.down) return serverError(503);
      const messages = req.body.messages as { role: string; content: string }[];
      if (!messages.some((m) => m.role === 'system' && m.content.includes('atomic facts'))) {
        return okJson({ entities: [], relationships: [] });
      }
      const { message } = JSON.parse(messages.findLast((m) => m.role === 'user')!.content) as { message: string };
      return okJson({
        facts: [{ text: message, type: 'observation', importance: 'medium', quality: 0.8, topics: ['kafka'] }],
      });
    };
    // The spec's 10 s per call: with every projector polling in this process, a request can take a second to arrive.
    await h.open({ EMBEDDING_BASE_URL: embed.url, LLM_BASE_URL: llm.baseURL, LLM_TIMEOUT_MS: '10000' });
  }, 60_000);
  afterAll(async () => {
    recovery?.stop();
    await h.close();
    await Promise.all([embed?.close(), llm?.close()]);
  });

  it('down: every message goes to the dead-letter queue at its first failure; the partition goes on; nothing stored', async () => {
    expect(h.rt.extractor.id).toBe('llm-facts:gpt-4o-mini'); // FACT_EXTRACTOR auto with LLM_BASE_URL: the model
    await h.ingest(conversation(ch, 1_700_700_000)); // returns once every group caught up: nothing is stuck
    expect((await h.rt.documents.getChannel(ch))?.fact_count).toBe(0);
    expect((await h.rt.documents.getChannel(ch))?.message_count).toBe(4); // the other projectors went on
    const list = await dead(`&channel_id=${ch}`);
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(4);
    for (const item of list.body.dead_letters) {
      expect(item).toMatchObject({
        group: 'atlas.projector.facts',
        event_type: 'MessageIngested',
        error_code: 'PROVIDER_UNAVAILABLE',
        attempts: 1, // at once: a retry would meet the same outage
        needs_inspection: false,
        redrivable: true,
        status: 'pending',
      });
      expect(item.error).toMatch(/^fact extraction unavailable \(LLM provider\)/);
    }
    // The fast tier's breaker opened (the quality tier's, never called, stays closed: llm_provider degraded). It may
    // already be HALF_OPEN when the ingest took longer than BREAKER_RESET_MS (a loaded machine): either way not closed.
    expect(h.rt.llm.fast!.health().map((b) => b.state)).toEqual([expect.stringMatching(/^(OPEN|HALF_OPEN)$/)]);
    expect((await h.health()).llm_provider).toBe('degraded');
    // A recovery pass while the model is still down re-drives nothing.
    const deps = llmRecoveryDeps(h.rt)!;
    expect(await runLlmRecoveryPass(deps)).toMatchObject({ waiting: 4, probed: true, available: false, redriven: 0 });
  });

  it('up: new messages get the model’s facts; the recovery re-drives the dead letters once, and then asks nothing', async () => {
    state.down = false;
    // The breaker half-opens after BREAKER_RESET_MS; the next message's call is its probe and closes it.
    await new Promise((r) => setTimeout(r, RESET_MS + 100));
    await h.ingest(conversation(ch2, 1_700_800_000));
    expect((await h.rt.documents.getChannel(ch2))?.fact_count).toBe(4);
    expect((await dead(`&channel_id=${ch}&status=pending`)).body.total).toBe(4); // not re-driven by themselves
    recovery = startLlmRecovery(llmRecoveryDeps(h.rt)!, {
      intervalMs: 100,
      log: { info: () => undefined, warn: () => undefined },
    });
    await waitFor(
      async () => (await h.rt.documents.getChannel(ch))?.fact_count === 4,
      'the re-driven messages’ facts',
      30_000,
    );
    await waitForProjectors(h.rt, undefined, 20);
    const list = await dead(`&channel_id=${ch}`);
    expect(list.body.dead_letters.map((d: { status: string }) => d.status)).toEqual([
      'redriven',
      'redriven',
      'redriven',
      'redriven',
    ]);
    const facts = (await h.rt.documents.listMemories({ channelId: ch, page: 1, limit: 10 })).rows;
    expect(facts.map((f) => f.memory_text).sort()).toEqual(
      conversation(ch, 0)
        .flatMap((e) => (e.type === 'MessageIngested' ? [e.data.text] : []))
        .sort(),
    );
    recovery.stop();
    const calls = llm.chatRequests().length;
    expect(await runLlmRecoveryPass(llmRecoveryDeps(h.rt)!)).toMatchObject({ waiting: 0, probed: false });
    expect(llm.chatRequests().length).toBe(calls); // nothing waits: no call
  });
});
