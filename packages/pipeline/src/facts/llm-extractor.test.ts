import { AtlasError, Fact, factUuid, isRetriable } from '@atlas/core';
import { deadLetterAtOnce } from '@atlas/eventlog';
import { LlmChain, OpenAiLlmProvider } from '@atlas/providers';
import { type FakeOpenAiServer, malformed, okJson, serverError, startFakeOpenAiServer } from '@atlas/providers/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OLAKE, SlackExport } from '../test-support.js';
import { LLM_MAX_FACTS_PER_MESSAGE, LlmFactExtractor } from './llm-extractor.js';
import { OfflineFactExtractor } from './offline-extractor.js';
import type { ExtractionInput } from './port.js';

// Real messages of the slack-olake export: a thread reply (with its root as context) and a top-level message.
const inputs = new SlackExport(OLAKE, 'olake').inputs('help');
const reply = inputs.find(
  (i) => i.thread && i.thread.rootId !== i.message.platformMessageId && i.message.text.length > 40,
)!;
const plain = inputs.find((i) => !i.thread && i.message.text.length > 60)!;

const chains: LlmChain[] = [];
afterEach(() => {
  for (const c of chains.splice(0)) c.shutdown();
});
const extractorAt = (...urls: string[]) => {
  const chain = new LlmChain({
    tier: 'fast',
    providers: urls.map((baseURL) => new OpenAiLlmProvider({ baseURL, model: 'fake-small', timeoutMs: 2000 })),
  });
  chains.push(chain);
  return new LlmFactExtractor({ llm: chain, model: 'fake-small' });
};

const answer = {
  facts: [
    {
      text: 'alice decided to run the OLake sync every 15 minutes.',
      type: 'Decision',
      importance: 'HIGH',
      quality: 0.92,
      topics: ['Sync', 'scheduling', 'sync'],
      entities: ['OLake', 'alice'],
      actions: [],
    },
    {
      text: 'bob will  migrate the Postgres source by Friday.',
      type: 'action item',
      importance: 'medium',
      quality: '1.7',
      topics: ['postgres'],
      entities: ['Postgres'],
      actions: ['Migrate', 'bob', 'Friday'],
    },
    // The same fact again (differently spaced): kept once.
    {
      text: 'alice decided to run the OLake  sync every 15 minutes.',
      type: 'decision',
      importance: 'high',
      quality: 0.9,
    },
  ],
};

describe('LlmFactExtractor (against an OpenAI-compatible server in this suite)', () => {
  let primary: FakeOpenAiServer;
  let secondary: FakeOpenAiServer;
  beforeAll(async () => {
    primary = await startFakeOpenAiServer();
    secondary = await startFakeOpenAiServer();
  });
  afterAll(async () => {
    await primary.close();
    await secondary.close();
  });
  afterEach(() => {
    primary.script = null;
    secondary.script = null;
  });

  it('maps the model’s facts to the message: deterministic ids, types and importance, clamped quality, tags, context', async () => {
    primary.reply(okJson(answer));
    const facts = await extractorAt(primary.baseURL).extract(reply);
    for (const f of facts) Fact.parse(f);
    expect(facts.map((f) => f.memoryText)).toEqual([
      'alice decided to run the OLake sync every 15 minutes.',
      'bob will migrate the Postgres source by Friday.',
    ]);
    const [a, b] = facts as [Fact, Fact];
    expect(a).toMatchObject({
      factId: factUuid(reply.message.messageId, a.memoryText),
      factType: 'decision',
      importance: 'high',
      qualityScore: 0.92,
      topicTags: ['sync', 'scheduling'],
      entityTags: ['OLake', 'alice'],
      actionTags: [],
      authorId: reply.message.author.id,
      authorName: reply.message.author.name,
      messageTs: reply.message.timestamp,
      validAt: reply.message.timestamp,
      threadTs: reply.message.threadTs,
      permalink: reply.message.permalink,
    });
    expect(a.threadContextSummary).toMatch(new RegExp(`^Reply to ${reply.thread!.rootAuthorName}`));
    expect(b).toMatchObject({ factType: 'action_item', qualityScore: 1, actionTags: ['migrate', 'bob', 'friday'] });
    // The prompt carried the message, its author and the thread it replies to.
    const sent = JSON.parse(primary.chatRequests().at(-1)!.body.messages.at(-1).content) as Record<string, unknown>;
    expect(sent).toMatchObject({ author: reply.message.author.name, channel: reply.message.channelName });
    expect(sent.thread).toMatchObject({ author: reply.thread!.rootAuthorName });
    expect(String(sent.message).length).toBeGreaterThan(20);
  });

  it('the same answer gives the same facts and ids again; at most 5 facts; nothing factual gives []', async () => {
    const many = {
      facts: Array.from({ length: 8 }, (_, i) => ({
        text: `fact number ${i}`,
        type: 'observation',
        importance: 'low',
      })),
    };
    const x = extractorAt(primary.baseURL);
    primary.reply(okJson(answer), okJson(answer), okJson(many), okJson({ facts: [] }));
    const first = await x.extract(plain);
    expect(await x.extract(plain)).toEqual(first);
    expect(await x.extract(plain)).toHaveLength(LLM_MAX_FACTS_PER_MESSAGE);
    expect(await x.extract(plain)).toEqual([]);
  });

  it('asks nothing for a system message or one without text', async () => {
    const before = primary.chatRequests().length;
    const x = extractorAt(primary.baseURL);
    const join: ExtractionInput = { ...plain, message: { ...plain.message, subtype: 'channel_join' } };
    const empty: ExtractionInput = { ...plain, message: { ...plain.message, text: '   ' } };
    expect(await x.extract(join)).toEqual([]);
    expect(await x.extract(empty)).toEqual([]);
    expect(primary.chatRequests().length).toBe(before);
  });

  it('an answer still invalid after the repair call: the regex fast path extracts the message', async () => {
    primary.reply(malformed(), malformed('{"facts": [{"text": 3}]}'));
    const x = extractorAt(primary.baseURL);
    const facts = await x.extract(plain);
    expect(facts).toEqual(await new OfflineFactExtractor().extract(plain));
    expect(x.stats).toMatchObject({ messages: 1, fastPath: 1, unavailable: 0 });
  });

  it('the primary down: the secondary provider’s model answers', async () => {
    primary.script = () => serverError(503);
    secondary.reply(okJson(answer));
    const facts = await extractorAt(primary.baseURL, secondary.baseURL).extract(reply);
    expect(facts).toHaveLength(2);
  });

  it('every provider down: a non-retriable PROVIDER_UNAVAILABLE that the runner dead-letters at once', async () => {
    primary.script = () => serverError(503);
    secondary.script = () => serverError(500);
    const x = extractorAt(primary.baseURL, secondary.baseURL);
    const err = await x.extract(reply).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AtlasError);
    expect(err).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', details: { dependency: 'llm_provider' } });
    expect(isRetriable(err)).toBe(false);
    expect(deadLetterAtOnce(err)).toBe(true);
    expect((err as Error).message).toMatch(/^fact extraction unavailable \(LLM provider\)/);
    expect(x.stats.unavailable).toBe(1);
  });
});
