import { AtlasError } from '@atlas/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  drop,
  type FakeOpenAiServer,
  hang,
  malformed,
  ok,
  okJson,
  rateLimited,
  serverError,
  startFakeOpenAiServer,
} from './fake-openai-server.test-support.js';
import { OpenAiLlmProvider } from './openai-llm.js';
import { LlmProviderError, type LlmStreamEvent } from './port.js';

// The provider against a real OpenAI-compatible HTTP server (never a mock of the openai package); timeouts 200 ms.
let server: FakeOpenAiServer;
let llm: OpenAiLlmProvider;
beforeAll(async () => {
  server = await startFakeOpenAiServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  llm = new OpenAiLlmProvider({ baseURL: server.baseURL, model: 'fake-small', timeoutMs: 200 });
});

const user = (content: string) => [{ role: 'user' as const, content }];
const collect = async (events: AsyncIterable<LlmStreamEvent>) => {
  const out: LlmStreamEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
};
const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => expect.fail('resolved'),
    (e: unknown) => e,
  );
const Answer = z.object({ answer: z.string(), confidence: z.number() });

describe('OpenAiLlmProvider.complete', () => {
  it('returns the text, the usage and who answered, and sends model, messages and limits', async () => {
    server.reply(ok('Use Postgres.', { usage: { prompt_tokens: 12, completion_tokens: 3 } }));
    const r = await llm.complete({ messages: user('Which store?'), maxTokens: 50, temperature: 0 });
    expect(r).toEqual({
      text: 'Use Postgres.',
      usage: { prompt_tokens: 12, completion_tokens: 3 },
      provider: `fake-small@${new URL(server.baseURL).host}`,
      model: 'fake-small',
    });
    expect(server.chatRequests()).toHaveLength(1);
    expect(server.chatRequests()[0]!.body).toMatchObject({
      model: 'fake-small',
      messages: [{ role: 'user', content: 'Which store?' }],
      max_tokens: 50,
      temperature: 0,
    });
  });

  it('estimates usage as chars / 4 when the server sends none', async () => {
    server.reply(ok('12345678', { usage: false }));
    const r = await llm.complete({ messages: user('abcdefghij') });
    expect(r.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, estimated: true });
  });

  it.each([
    ['429 with Retry-After', rateLimited(7), { kind: 'rate_limited', details: { status: 429, retryAfterSeconds: 7 } }],
    ['500', serverError(500), { kind: 'server_error', details: { status: 500 } }],
    ['503', serverError(503), { kind: 'server_error' }],
    ['a hang past the timeout', hang(), { kind: 'timeout' }],
    ['a connection dropped mid-answer', drop(), { kind: 'network' }],
  ])('%s is an LlmProviderError (PROVIDER_UNAVAILABLE, retriable)', async (_, reply, expected) => {
    server.reply(reply);
    const started = Date.now();
    const err = await failureOf(llm.complete({ messages: user('q') }));
    expect(err).toBeInstanceOf(LlmProviderError);
    expect(err).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', retriable: true, ...expected });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(server.chatRequests()).toHaveLength(1); // maxRetries 0
  });

  it('a refused connection is a network failure', async () => {
    const down = new OpenAiLlmProvider({ baseURL: 'http://127.0.0.1:9/v1', model: 'm', timeoutMs: 200 });
    expect(await failureOf(down.complete({ messages: user('q') }))).toMatchObject({ kind: 'network' });
  });

  it("the caller's abort rejects with its reason, not a provider failure", async () => {
    server.reply(hang());
    const ctl = new AbortController();
    const call = llm.complete({ messages: user('q'), signal: ctl.signal });
    setTimeout(() => ctl.abort(new Error('user left')), 30);
    expect(await failureOf(call)).toMatchObject({ message: 'user left' });
  });

  it('image parts only go to a model that accepts images', async () => {
    const messages = [
      {
        role: 'user' as const,
        content: [
          { type: 'text' as const, text: 'What is in it?' },
          { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
    ];
    const err = await failureOf(llm.complete({ messages }));
    expect(err).toBeInstanceOf(AtlasError);
    expect(err).toMatchObject({ code: 'INVALID_REQUEST' });
    expect(server.chatRequests()).toHaveLength(0);
    const vision = new OpenAiLlmProvider({ baseURL: server.baseURL, model: 'v', timeoutMs: 200, acceptsImages: true });
    server.reply(ok('a cat'));
    expect((await vision.complete({ messages })).text).toBe('a cat');
    expect(server.chatRequests()[0]!.body.messages[0].content[1].type).toBe('image_url');
  });
});

describe('OpenAiLlmProvider.stream', () => {
  it('yields the deltas in order, then done with the whole text and the usage; asks for usage', async () => {
    server.reply(
      ok('Kafka is a log.', { chunks: ['Kafka ', 'is ', 'a log.'], usage: { prompt_tokens: 9, completion_tokens: 5 } }),
    );
    const events = await collect(llm.stream({ messages: user('What is Kafka?') }));
    expect(events).toEqual([
      { type: 'delta', text: 'Kafka ' },
      { type: 'delta', text: 'is ' },
      { type: 'delta', text: 'a log.' },
      {
        type: 'done',
        text: 'Kafka is a log.',
        usage: { prompt_tokens: 9, completion_tokens: 5 },
        provider: llm.provider,
        model: 'fake-small',
      },
    ]);
    expect(server.chatRequests()[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('estimates usage when the stream carries none', async () => {
    server.reply(ok('abcdefgh', { chunks: ['abcd', 'efgh'], usage: false }));
    const done = (await collect(llm.stream({ messages: user('abcd') }))).at(-1);
    expect(done).toMatchObject({
      type: 'done',
      text: 'abcdefgh',
      usage: { prompt_tokens: 1, completion_tokens: 2, estimated: true },
    });
  });

  it('a connection dropped mid-stream throws after the deltas it got', async () => {
    server.reply(drop('The answer ', 'is'));
    const seen: string[] = [];
    const err = await failureOf(
      (async () => {
        for await (const e of llm.stream({ messages: user('q') })) if (e.type === 'delta') seen.push(e.text);
      })(),
    );
    expect(seen).toEqual(['The answer ', 'is']);
    expect(err).toMatchObject({ kind: 'network' });
  });

  it('a server that stops sending times out (the clock restarts at every chunk)', async () => {
    server.reply(hang());
    expect(await failureOf(collect(llm.stream({ messages: user('q') })))).toMatchObject({ kind: 'timeout' });
  });
});

describe('OpenAiLlmProvider.json', () => {
  it('asks for a JSON object (response_format and the prompt) and returns the validated value', async () => {
    server.reply(okJson({ answer: 'yes', confidence: 0.9 }));
    const r = await llm.json(Answer, [{ role: 'system', content: 'You judge.' }, ...user('Is it?')]);
    expect(r).toMatchObject({ value: { answer: 'yes', confidence: 0.9 }, repaired: false, model: 'fake-small' });
    const body = server.chatRequests()[0]!.body;
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(body.messages[0].content).toMatch(/^You judge\.\n\n.*JSON object only/);
  });

  it('malformed, then valid: one repair call carrying the bad answer and the error', async () => {
    server.reply(
      malformed('{"answer": "yes", "confidence": '),
      ok('```json\n{"answer": "yes", "confidence": 0.8}\n```'),
    );
    const r = await llm.json(Answer, user('Is it?'));
    expect(r).toMatchObject({ value: { answer: 'yes', confidence: 0.8 }, repaired: true });
    expect(r.usage.prompt_tokens).toBe(20); // both calls
    const [first, repair] = server.chatRequests();
    expect(repair!.body.messages.slice(0, first!.body.messages.length)).toEqual(first!.body.messages);
    expect(repair!.body.messages.at(-2)).toEqual({ role: 'assistant', content: '{"answer": "yes", "confidence": ' });
    expect(repair!.body.messages.at(-1).content).toMatch(/not valid JSON/);
  });

  it('a schema failure is repaired the same way, the zod error sent back', async () => {
    server.reply(okJson({ answer: 'yes' }), okJson({ answer: 'yes', confidence: 1 }));
    const r = await llm.json(Answer, user('Is it?'));
    expect(r.repaired).toBe(true);
    expect(server.chatRequests()[1]!.body.messages.at(-1).content).toMatch(
      /does not match the schema[\s\S]*confidence/,
    );
  });

  it('malformed twice: malformed_output after exactly two calls', async () => {
    server.reply(malformed(), malformed('still not json'));
    const err = await failureOf(llm.json(Answer, user('Is it?')));
    expect(err).toBeInstanceOf(LlmProviderError);
    expect(err).toMatchObject({ kind: 'malformed_output' });
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('a server that refuses response_format (400) is asked again without it, and not again after', async () => {
    server.reply(
      { kind: 'status', status: 400, message: 'response_format not supported' },
      okJson({ answer: 'a', confidence: 1 }),
    );
    server.reply(okJson({ answer: 'b', confidence: 1 }));
    expect((await llm.json(Answer, user('q'))).value.answer).toBe('a');
    expect((await llm.json(Answer, user('q'))).value.answer).toBe('b');
    expect(server.chatRequests().map((r) => r.body.response_format ?? null)).toEqual([
      { type: 'json_object' },
      null,
      null,
    ]);
  });
});

describe('fake server', () => {
  it('lists models at GET /v1/models', async () => {
    const res = await fetch(`${server.baseURL}/models`);
    expect(await res.json()).toMatchObject({
      object: 'list',
      data: [{ id: 'fake-small', object: 'model' }, { id: 'fake-large' }],
    });
  });
});
