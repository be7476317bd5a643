import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, type NewEvent, TOPICS } from '@atlas/core';
import { entityDeps, openRuntime, type Runtime, startProjectors, waitForProjectors } from '@atlas/runtime';
import { channelEvent, freshChannelId, messageEvent } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillEntities } from './graph.js';

/** What the model answers for every message: entities and a relationship in the extractor's JSON shape. */
const ANSWER = JSON.stringify({
  entities: [
    { name: 'Kafka', type: 'Technology', aliases: [], confidence: 0.9, properties: {}, fact: 'f1' },
    { name: 'Event log', type: 'Project', aliases: [], confidence: 0.8, properties: {}, fact: 'f1' },
  ],
  relationships: [{ type: 'USES', source: 'Event log', target: 'Kafka', confidence: 0.9, context: '', fact: 'f1' }],
});

/** A small OpenAI-compatible chat server in this suite; `status` makes it fail like an overloaded endpoint. */
const startServer = async (state: { status: number; calls: number }) => {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.calls++;
      if (state.status !== 200) {
        res.writeHead(state.status, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'overloaded' } }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl-${state.calls}`,
          object: 'chat.completion',
          created: 0,
          model: 'test-model',
          choices: [{ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
};

const conversation = (ch: string, sec: number): NewEvent[] => [
  { type: 'ChannelDiscovered', key: ch, data: channelEvent(ch, 'platform') },
  {
    type: 'MessageIngested',
    key: ch,
    data: messageEvent(ch, sec, 'We decided to move the event log to Kafka next sprint, it replaces the cron jobs.'),
  },
];

/** The runtime with LLM_BASE_URL set: the LLM entity extractor is the one the projectors use. */
describe('entity extraction through a configured LLM endpoint', () => {
  const state = { status: 200, calls: 0 };
  let srv: Awaited<ReturnType<typeof startServer>>;
  let rt: Runtime;
  const run = async (events: NewEvent[]) => {
    await rt.eventLog.append(TOPICS.messages, events);
    const subs = await startProjectors(rt);
    try {
      await waitForProjectors(rt);
    } finally {
      await Promise.all(subs.map((s) => s.stop()));
    }
  };

  beforeAll(async () => {
    srv = await startServer(state);
    rt = await openRuntime(
      loadConfig({
        ATLAS_DATA_DIR: 'memory://',
        EMBEDDING_PROVIDER: 'none',
        LLM_BASE_URL: srv.url,
        LLM_API_KEY: 'test-key',
        LLM_FAST_MODEL: 'test-model',
        FACT_EXTRACTOR: 'offline', // this test is about entities: facts by the regex fast path
      }),
      { pollIntervalMs: 20, sessionTimeoutMs: 1000 },
    );
  });
  afterAll(async () => {
    await rt?.close();
    await new Promise((r) => srv?.server.close(r));
  });

  it('the model names the entities; the graph and the log record them with the model as extractor', async () => {
    expect(rt.entityExtractor.id).toBe('llm-entities:test-model');
    const ch = freshChannelId();
    await run(conversation(ch, 1_700_000_000));
    expect(state.calls).toBeGreaterThan(0);
    const names = (await rt.graph.listEntities({ channelId: ch, limit: 50 })).map((e) => `${e.type}:${e.name}`);
    expect(names).toEqual(expect.arrayContaining(['Technology:Kafka', 'Project:Event log']));
    const rels = await rt.graph.listRelationships({ channelId: ch, type: 'USES', limit: 10 });
    expect(rels.map((r) => `${r.source}→${r.target}`)).toEqual(['Event log→Kafka']);
  });

  it('the endpoint failing: extraction is queued, facts stored; the backfill extracts once it answers again', async () => {
    const ch = freshChannelId();
    state.status = 503;
    await run(conversation(ch, 1_700_100_000));
    expect((await rt.documents.getChannel(ch))?.fact_count).toBeGreaterThan(0);
    expect(await rt.graph.listEntities({ channelId: ch, limit: 50 })).toEqual([]);
    expect(await rt.entityBacklog.count()).toBe(1);
    state.status = 200;
    expect(await backfillEntities(entityDeps(rt))).toEqual({ processed: 1, remaining: 0 });
    await run([]);
    expect((await rt.graph.listEntities({ channelId: ch, limit: 50 })).map((e) => e.name)).toContain('Kafka');
  });
});
