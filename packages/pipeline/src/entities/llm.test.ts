import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AtlasError,
  ExtractedEntity,
  ExtractedRelationship,
  entityUuid,
  type Fact,
  type FactsExtracted,
  factUuid,
  messageUuid,
} from '@atlas/core';
import { LlmChain, OpenAiLlmProvider } from '@atlas/providers';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LlmEntityExtractor, parseLlmAnswer } from './llm.js';
import { OfflineEntityExtractor } from './offline/index.js';
import type { EntityExtractionInput, KnownDecision } from './port.js';

const CHANNEL = 'C0LLM';
const TS = '2018-02-05T14:30:00.000Z';
const messageId = messageUuid('platform_a', CHANNEL, '1517841000.000100');
const fact = (text: string, over: Partial<Fact> = {}): Fact => ({
  factId: factUuid(messageId, text),
  memoryText: text,
  factType: 'observation',
  importance: 'medium',
  qualityScore: 0.8,
  topicTags: [],
  entityTags: [],
  actionTags: [],
  authorId: 'U0ALICE',
  authorName: 'alice',
  messageTs: TS,
  threadTs: null,
  permalink: 'https://example.slack.com/archives/C0LLM/p1',
  threadContextSummary: '',
  validAt: TS,
  sourceLang: 'en',
  ...over,
});
const input = (facts: Fact[], decisions: KnownDecision[] = []): EntityExtractionInput => {
  const set: FactsExtracted = {
    messageId,
    platform: 'platform_a',
    channelId: CHANNEL,
    sourceMessageId: '1517841000.000100',
    extractor: 'offline-regex@1',
    extractedAt: TS,
    facts,
    sourceText: '',
    contextText: '',
  };
  return { facts: set, people: [{ name: 'Bob Stone', aliases: ['bob'] }], decisions };
};
const id = (type: string, name: string) => entityUuid(CHANNEL, type, name);

/** The fast tier as the runtime builds it: an LlmChain over OpenAI-compatible providers, each behind its breaker. */
const chains: LlmChain[] = [];
afterEach(() => {
  for (const c of chains.splice(0)) c.shutdown();
});
const chainOf = (urls: string[], timeoutMs: number) => {
  const chain = new LlmChain({
    tier: 'fast',
    providers: urls.map((baseURL) => new OpenAiLlmProvider({ baseURL, model: 'test-model', timeoutMs })),
  });
  chains.push(chain);
  return chain;
};
const extractorAt = (urls: string[], timeoutMs = 2000) =>
  new LlmEntityExtractor({ llm: chainOf(urls, timeoutMs), model: 'test-model' });

const decisionFact = fact('alice and team decided to use Postgres for the event log; @bob will migrate it.', {
  factType: 'decision',
  entityTags: ['Postgres', 'bob'],
  topicTags: ['postgres', 'event log'],
});

/** A valid answer for decisionFact, with the kinds of noise models produce (case, aliases, a reversed edge). */
const GOOD_ANSWER = {
  entities: [
    { name: 'alice', type: 'Person', aliases: [], confidence: 0.95, properties: {}, fact: 'f1' },
    { name: 'bob', type: 'person', aliases: ['@bob'], confidence: 0.9, properties: {}, fact: 'f1' },
    { name: 'postgres', type: 'Technology', aliases: [], confidence: 1.4, properties: {}, fact: 'f1' },
    {
      name: 'Use Postgres for the event log',
      type: 'Decision',
      aliases: [],
      confidence: 0.9,
      properties: { decided_by: 'alice', status: 'agreed' },
      fact: 'f1',
    },
  ],
  relationships: [
    {
      type: 'DECIDED_BY',
      source: 'Use Postgres for the event log',
      target: 'alice',
      confidence: 0.9,
      context: '',
      fact: 'f1',
    },
    {
      type: 'RELATED_TO',
      source: 'Use Postgres for the event log',
      target: 'Postgres',
      confidence: 0.6,
      valid_from: '2018-02-05',
      valid_until: null,
    },
    { type: 'RELATED_TO', source: 'alice', target: 'bob', confidence: 0.5 },
    { type: 'WORKS_ON', source: 'alice', target: 'Nonexistent', confidence: 0.9 },
  ],
};

interface Mode {
  answers: string[];
  status?: number;
  calls: number;
  bodies: Array<{ messages: Array<{ role: string; content: string }>; response_format?: unknown; model: string }>;
}

/** A small OpenAI-compatible chat server: answers the queued contents in turn (the last one repeats). */
const startServer = async (mode: Mode) => {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      if (req.url !== '/v1/chat/completions' || req.method !== 'POST') {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'not found' } }));
      }
      mode.calls++;
      mode.bodies.push(JSON.parse(body));
      if (mode.status) {
        res.writeHead(mode.status, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'overloaded' } }));
      }
      const content = mode.answers[Math.min(mode.calls - 1, mode.answers.length - 1)]!;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl-${mode.calls}`,
          object: 'chat.completion',
          created: 0,
          model: 'test-model',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
};

describe('LlmEntityExtractor (against an OpenAI-compatible server in this suite)', () => {
  let srv: Awaited<ReturnType<typeof startServer>>;
  const mode: Mode = { answers: [], calls: 0, bodies: [] };
  const reset = (answers: string[], status?: number) => {
    mode.answers = answers;
    mode.status = status;
    mode.calls = 0;
    mode.bodies = [];
  };
  beforeAll(async () => {
    srv = await startServer(mode);
  });
  afterAll(() => srv.server.close());
  const extractor = () => extractorAt([srv.url]);

  it('maps a valid answer to entities and relationships (ids, known names, lexicon names, clamped confidences)', async () => {
    reset([JSON.stringify(GOOD_ANSWER)]);
    const x = extractor();
    expect(x.id).toBe('llm-entities:test-model');
    const out = await x.extract(input([decisionFact]));
    expect(mode.calls).toBe(1);
    expect(mode.bodies[0]!.response_format).toEqual({ type: 'json_object' });
    expect(mode.bodies[0]!.model).toBe('test-model');
    const prompt = JSON.parse(mode.bodies[0]!.messages[1]!.content);
    expect(prompt.facts[0]).toMatchObject({
      id: 'f1',
      author: 'alice',
      type: 'decision',
      text: decisionFact.memoryText,
    });
    expect(prompt.known_people).toEqual([{ name: 'Bob Stone', aliases: ['bob'] }]);

    for (const e of out.entities) ExtractedEntity.parse(e);
    for (const r of out.relationships) ExtractedRelationship.parse(r);
    const names = out.entities.map((e) => `${e.type}:${e.name}`);
    expect(names).toEqual([
      'Person:alice',
      'Person:Bob Stone',
      'Technology:Postgres',
      'Decision:Use Postgres for the event log',
    ]);
    expect(out.entities.find((e) => e.name === 'Bob Stone')!.aliases).toEqual(['bob']);
    expect(out.entities.find((e) => e.name === 'Postgres')!.confidence).toBe(1);
    const decision = out.entities.find((e) => e.type === 'Decision')!;
    expect(decision.entityId).toBe(id('Decision', 'Use Postgres for the event log'));
    expect(decision.properties).toEqual({
      decided_by: 'alice',
      status: 'agreed',
      date: '2018-02-05',
      context: decisionFact.memoryText,
    });
    // reversed DECIDED_BY turned round; Person–Person and dangling edges dropped
    expect(out.relationships.map((r) => r.type)).toEqual(['DECIDED_BY', 'RELATED_TO']);
    expect(out.relationships[0]).toMatchObject({
      sourceId: id('Person', 'alice'),
      targetId: decision.entityId,
      validFrom: '2018-02-05',
      validUntil: null,
      context: decisionFact.memoryText,
      sourceFactId: decisionFact.factId,
    });
    expect(out.decisions).toEqual([
      expect.objectContaining({
        entityId: decision.entityId,
        decidedBy: 'alice',
        topicKeys: ['postgres', 'event log'],
      }),
    ]);
    expect(out.people).toEqual([{ name: 'alice', aliases: [] }]);
    expect(x.stats).toEqual({ calls: 1, repairs: 0, fallbacks: 0 });
  });

  it('repairs an invalid answer with one more request (exactly 2 calls), the error sent back', async () => {
    reset(['{"entities": [{"name": "Postgres", "type": "Tech', JSON.stringify(GOOD_ANSWER)]);
    const x = extractor();
    const out = await x.extract(input([decisionFact]));
    expect(mode.calls).toBe(2);
    const repair = mode.bodies[1]!.messages;
    expect(repair.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(repair[3]!.content).toMatch(/not valid JSON/);
    expect(out.entities.some((e) => e.type === 'Decision')).toBe(true);
    expect(x.stats).toEqual({ calls: 2, repairs: 1, fallbacks: 0 });
  });

  it('repairs a schema failure too (an unknown entity type)', async () => {
    const bad = { entities: [{ name: 'Postgres', type: 'Database' }], relationships: [] };
    reset([JSON.stringify(bad), JSON.stringify(GOOD_ANSWER)]);
    const x = extractor();
    await x.extract(input([decisionFact]));
    expect(mode.calls).toBe(2);
    expect(mode.bodies[1]!.messages[3]!.content).toMatch(/entities(\.0|\[0\])\.type/);
  });

  it('falls back to the offline result when the repaired answer is still invalid, and counts it', async () => {
    reset(['not json', 'still not json']);
    const x = extractor();
    const inp = input([decisionFact]);
    const out = await x.extract(inp);
    expect(mode.calls).toBe(2);
    expect(out).toEqual(new OfflineEntityExtractor().extractSync(inp));
    expect(x.stats).toEqual({ calls: 2, repairs: 1, fallbacks: 1 });
  });

  it('throws PROVIDER_UNAVAILABLE (retriable) on a 5xx', async () => {
    reset([], 503);
    const err = await extractor()
      .extract(input([decisionFact]))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AtlasError);
    expect(err).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', retriable: true });
    expect((err as { attempts: { error: { details: unknown } }[] }).attempts[0]!.error.details).toMatchObject({
      status: 503,
    });
  });

  it('3 failures open the provider breaker: the next extraction fails at once, without a request', async () => {
    reset([], 503);
    const x = extractor();
    for (let i = 0; i < 3; i++)
      await expect(x.extract(input([decisionFact]))).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
    expect(mode.calls).toBe(3);
    await expect(x.extract(input([decisionFact]))).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
    expect(mode.calls).toBe(3);
  });

  it('supersedes an earlier decision of the channel with the same logic as the offline extractor', async () => {
    const kafka = fact('alice and team decided to switch the event log from Postgres to Kafka.', {
      factType: 'decision',
      entityTags: ['Postgres', 'Kafka'],
      topicTags: ['event log', 'kafka'],
    });
    const earlier: KnownDecision = {
      entityId: id('Decision', 'Use Postgres for the event log'),
      name: 'Use Postgres for the event log',
      factId: factUuid(messageUuid('platform_a', CHANNEL, '1517000000.000100'), 'x'),
      messageTs: '2018-01-26T20:53:20.000Z',
      decidedBy: 'alice',
      topicKeys: ['postgres', 'event log'],
    };
    const answer = {
      entities: [
        { name: 'Switch the event log to Kafka', type: 'Decision', properties: { status: 'done' } },
        { name: 'Kafka', type: 'Technology' },
        { name: 'Postgres', type: 'Technology' },
      ],
      relationships: [
        { type: 'RELATED_TO', source: 'Switch the event log to Kafka', target: 'Kafka', confidence: 0.7 },
      ],
    };
    reset([JSON.stringify(answer)]);
    const out = await extractor().extract(input([kafka], [earlier]));
    const d = out.entities.find((e) => e.type === 'Decision')!;
    expect(d.properties.status).toBe('agreed'); // 'done' is no status value: read from the text instead
    expect(out.supersessions).toEqual([
      expect.objectContaining({ factId: earlier.factId, supersededBy: kafka.factId, certain: true, invalidAt: TS }),
    ]);
  });

  it('makes no request for an empty fact set', async () => {
    reset([JSON.stringify(GOOD_ANSWER)]);
    const out = await extractor().extract(input([]));
    expect(out.entities).toEqual([]);
    expect(mode.calls).toBe(0);
  });
});

describe('LlmEntityExtractor when the endpoint is down', () => {
  it('throws PROVIDER_UNAVAILABLE (retriable) when nothing listens', async () => {
    const probe = await startServer({ answers: [], calls: 0, bodies: [] });
    const url = probe.url;
    await new Promise((r) => probe.server.close(r));
    const err = await extractorAt([url], 1000)
      .extract(input([decisionFact]))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AtlasError);
    expect(err).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', retriable: true });
  });

  it('throws PROVIDER_UNAVAILABLE on a timeout', async () => {
    const server = createServer(() => {
      /* never answers */
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const started = Date.now();
    const err = await extractorAt([url], 200)
      .extract(input([decisionFact]))
      .catch((e: unknown) => e);
    server.closeAllConnections();
    server.close();
    expect(err).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', retriable: true });
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('LlmEntityExtractor with a secondary provider', () => {
  it('the primary down (nothing listens): the secondary provider answers', async () => {
    const down = await startServer({ answers: [], calls: 0, bodies: [] });
    await new Promise((r) => down.server.close(r));
    const mode: Mode = { answers: [JSON.stringify(GOOD_ANSWER)], calls: 0, bodies: [] };
    const up = await startServer(mode);
    try {
      const out = await extractorAt([down.url, up.url], 1000).extract(input([decisionFact]));
      expect(mode.calls).toBe(1);
      expect(out.entities.some((e) => e.type === 'Decision')).toBe(true);
    } finally {
      await new Promise((r) => up.server.close(r));
    }
  });
});

describe('parseLlmAnswer', () => {
  it('accepts code fences and missing optional fields, rejects wrong shapes', () => {
    const ok = parseLlmAnswer('```json\n{"entities":[{"name":"Kafka","type":"technology"}]}\n```');
    expect(ok).toMatchObject({
      ok: true,
      value: { entities: [{ name: 'Kafka', type: 'Technology', aliases: [] }], relationships: [] },
    });
    expect(parseLlmAnswer('{"entities": "none"}')).toMatchObject({ ok: false });
    expect(
      parseLlmAnswer('{"entities": [], "relationships": [{"type": "LIKES", "source": "a", "target": "b"}]}'),
    ).toMatchObject({
      ok: false,
    });
  });
});
