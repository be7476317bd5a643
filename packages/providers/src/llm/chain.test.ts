import { BreakerOpenError, loadConfig } from '@atlas/core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LlmChain } from './chain.js';
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
import { llmChainsFromConfig } from './index.js';
import { OpenAiLlmProvider } from './openai-llm.js';
import { LlmStreamInterruptedError, LlmUnavailableError } from './port.js';

// Spec "LLM fallback chain" and "Dependency circuit breaker" over two real HTTP servers, times shortened:
// per-call timeout 200 ms, breaker reset 150 ms, failure streak 300 ms, 3 consecutive failures.
let primary: FakeOpenAiServer;
let secondary: FakeOpenAiServer;
let chain: LlmChain;
const logged: unknown[] = [];
beforeAll(async () => {
  [primary, secondary] = await Promise.all([startFakeOpenAiServer(), startFakeOpenAiServer()]);
});
afterAll(async () => {
  await Promise.all([primary.close(), secondary.close()]);
});
const makeChain = (breaker = { resetMs: 150, streakMs: 300 }) =>
  new LlmChain({
    tier: 'fast',
    providers: [
      new OpenAiLlmProvider({ baseURL: primary.baseURL, model: 'primary-small', timeoutMs: 200 }),
      new OpenAiLlmProvider({ baseURL: secondary.baseURL, model: 'secondary-small', timeoutMs: 200 }),
    ],
    breaker,
    logger: { info: (obj) => logged.push(obj) },
  });
beforeEach(() => {
  for (const s of [primary, secondary]) {
    s.requests.length = 0;
    s.script = null;
  }
  logged.length = 0;
  chain = makeChain();
});
afterEach(() => chain.shutdown());

const user = (content: string) => [{ role: 'user' as const, content }];
const ask = (q = 'q') => chain.complete({ messages: user(q) });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const calls = () => [primary.chatRequests().length, secondary.chatRequests().length];
const states = () => chain.health().map((h) => h.state);
const halfOpen = async () => {
  while (chain.health()[0]!.state !== 'HALF_OPEN') await sleep(10);
};
/** Three failures of the primary (answered by the secondary): its breaker opens. */
const openPrimary = async () => {
  primary.script = () => serverError(500);
  secondary.script = () => ok('from secondary');
  for (let i = 0; i < 3; i++) await ask();
  expect(states()).toEqual(['OPEN', 'CLOSED']);
};

describe('LlmChain', () => {
  it('the primary answers while it is healthy; the secondary is not called', async () => {
    primary.reply(ok('from primary'));
    expect(await ask()).toMatchObject({
      text: 'from primary',
      model: 'primary-small',
      provider: expect.stringContaining('primary-small@'),
    });
    expect(calls()).toEqual([1, 0]);
  });

  it.each([
    ['a 429 with Retry-After', rateLimited(30)],
    ['a 500', serverError(500)],
    ['a timeout', hang()],
  ])('falls back to the secondary on %s', async (_, failure) => {
    primary.reply(failure);
    secondary.reply(ok('from secondary'));
    const started = Date.now();
    expect(await ask()).toMatchObject({ text: 'from secondary', model: 'secondary-small' });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(calls()).toEqual([1, 1]);
  });

  it('falls back when the primary answers malformed JSON twice (its one repair included)', async () => {
    primary.reply(malformed(), malformed());
    secondary.reply(okJson({ route: 'semantic' }));
    const r = await chain.json(z.object({ route: z.string() }), user('route this'));
    expect(r).toMatchObject({ value: { route: 'semantic' }, model: 'secondary-small', repaired: false });
    expect(calls()).toEqual([2, 1]);
  });

  it('opens the primary after 3 consecutive failures, logs it, then skips it without calling it', async () => {
    await openPrimary();
    expect(logged).toMatchObject([
      { reason: 'consecutive_failures', breaker: expect.stringContaining('llm:fast:primary-small') },
    ]);
    for (let i = 0; i < 5; i++) expect((await ask()).model).toBe('secondary-small');
    expect(calls()).toEqual([3, 8]);
  });

  it('after the reset time, HALF_OPEN lets exactly one probe reach the primary; its success closes it', async () => {
    await openPrimary();
    await halfOpen();
    primary.script = () => ok('primary is back', { delayMs: 40 });
    const answers = await Promise.all([ask(), ask(), ask(), ask()]);
    expect(primary.chatRequests()).toHaveLength(4); // 3 failures + exactly 1 probe
    expect(answers.map((a) => a.model).sort()).toEqual([
      'primary-small',
      'secondary-small',
      'secondary-small',
      'secondary-small',
    ]);
    expect(states()).toEqual(['CLOSED', 'CLOSED']);
    expect((await ask()).model).toBe('primary-small');
  });

  it('a failed probe opens the primary again; the next probe after the reset can close it', async () => {
    await openPrimary();
    await halfOpen();
    expect((await ask()).model).toBe('secondary-small'); // the probe failed (500), the secondary answered
    expect(states()[0]).toBe('OPEN');
    expect(calls()[0]).toBe(4);
    await ask();
    expect(calls()[0]).toBe(4); // skipped while open again
    await halfOpen();
    primary.script = () => ok('back');
    expect((await ask()).model).toBe('primary-small');
    expect(states()[0]).toBe('CLOSED');
  });

  it('a failure streak lasting the streak time opens the primary before 3 failures', async () => {
    chain.shutdown();
    chain = makeChain({ resetMs: 10_000, streakMs: 100 });
    primary.script = () => serverError(503);
    secondary.script = () => ok('s');
    await ask();
    await sleep(120);
    expect(states()[0]).toBe('CLOSED');
    await ask();
    expect(states()[0]).toBe('OPEN');
    expect(logged).toMatchObject([{ reason: 'failure_streak' }]);
  });

  it('throws LlmUnavailableError naming every provider when all fail, for the caller to apply its last resort', async () => {
    primary.reply(serverError(502));
    secondary.reply(rateLimited(5));
    const err = await ask().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmUnavailableError);
    expect(err).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', retriable: true, tier: 'fast' });
    expect((err as LlmUnavailableError).attempts.map((a) => (a.error as { kind?: string }).kind)).toEqual([
      'server_error',
      'rate_limited',
    ]);
  });

  it('LlmUnavailableError also when every breaker is open, without any call', async () => {
    primary.script = () => serverError(500);
    secondary.script = () => serverError(500);
    for (let i = 0; i < 3; i++) await ask().catch(() => undefined);
    expect(states()).toEqual(['OPEN', 'OPEN']);
    const err = (await ask().catch((e: unknown) => e)) as LlmUnavailableError;
    expect(err.attempts.every((a) => a.error instanceof BreakerOpenError)).toBe(true);
    expect(calls()).toEqual([3, 3]);
  });

  it("the caller's abort stops the chain: its reason is rethrown, no other provider is tried, nothing is counted", async () => {
    primary.reply(hang());
    const ctl = new AbortController();
    const call = chain.complete({ messages: user('q'), signal: ctl.signal });
    setTimeout(() => ctl.abort(new Error('user left')), 30);
    await expect(call).rejects.toThrow('user left');
    expect(calls()).toEqual([1, 0]);
    expect(chain.health()[0]!.consecutiveFailures).toBe(0);
  });

  it('health() lists each provider with its breaker state', async () => {
    await openPrimary();
    expect(chain.health()).toMatchObject([
      { model: 'primary-small', state: 'OPEN', openedAt: expect.any(Number) },
      { model: 'secondary-small', state: 'CLOSED', consecutiveFailures: 0, openedAt: null },
    ]);
  });
});

describe('LlmChain.stream', () => {
  const text = async (q = 'q') => {
    let out = '';
    let done: unknown;
    for await (const e of chain.stream({ messages: user(q) })) {
      if (e.type === 'delta') out += e.text;
      else done = e;
    }
    return { out, done };
  };

  it('streams from the primary: deltas concatenate to the done text, with usage and who answered', async () => {
    primary.reply(ok('one two three', { usage: { prompt_tokens: 4, completion_tokens: 3 } }));
    const { out, done } = await text();
    expect(out).toBe('one two three');
    expect(done).toMatchObject({
      type: 'done',
      text: 'one two three',
      usage: { prompt_tokens: 4, completion_tokens: 3 },
      model: 'primary-small',
    });
  });

  it('a primary that fails before its first delta is passed over', async () => {
    primary.reply(serverError(500));
    secondary.reply(ok('secondary answer'));
    expect(await text()).toMatchObject({ out: 'secondary answer', done: { model: 'secondary-small' } });
  });

  it('a primary that hangs before its first delta is passed over after its timeout', async () => {
    primary.reply(hang());
    secondary.reply(ok('late but fine'));
    expect((await text()).out).toBe('late but fine');
  });

  it('a drop mid-stream throws LlmStreamInterruptedError with the text so far; no other provider is tried', async () => {
    primary.reply(drop('The deploy ', 'failed because'));
    const seen: string[] = [];
    const err = await (async () => {
      for await (const e of chain.stream({ messages: user('why?') })) if (e.type === 'delta') seen.push(e.text);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmStreamInterruptedError);
    expect(err).toMatchObject({ partialText: 'The deploy failed because', model: 'primary-small' });
    expect(seen.join('')).toBe('The deploy failed because');
    expect(calls()).toEqual([1, 0]);
    expect(chain.health()[0]!.consecutiveFailures).toBe(1); // the interruption counts against the primary
  });

  it('a consumer that stops early closes the request; nothing is counted against the provider', async () => {
    primary.reply(ok('a b c d e f'));
    for await (const e of chain.stream({ messages: user('q') })) {
      expect(e).toEqual({ type: 'delta', text: 'a ' });
      break;
    }
    expect(chain.health()[0]).toMatchObject({ state: 'CLOSED', consecutiveFailures: 0 });
    primary.reply(ok('next'));
    expect((await text()).out).toBe('next');
  });

  it('LlmUnavailableError when no provider starts', async () => {
    primary.reply(serverError(500));
    secondary.reply(serverError(500));
    await expect(text()).rejects.toBeInstanceOf(LlmUnavailableError);
  });
});

describe('llmChainsFromConfig', () => {
  it('is null for both tiers when no LLM endpoint is configured (the offline default)', () => {
    expect(llmChainsFromConfig(loadConfig({}))).toEqual({ fast: null, quality: null });
  });

  it('builds primary then secondary per tier; secondary models default to the primary names', () => {
    const { fast, quality } = llmChainsFromConfig(
      loadConfig({
        LLM_BASE_URL: primary.baseURL,
        LLM_SECONDARY_BASE_URL: secondary.baseURL,
        LLM_SECONDARY_QUALITY_MODEL: 'big-local',
        LLM_ACCEPTS_IMAGES: 'true',
      }),
    );
    expect(fast!.health().map((h) => h.model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini']);
    expect(quality!.health().map((h) => h.model)).toEqual(['gpt-4o', 'big-local']);
    expect(fast!.acceptsImages).toBe(true);
    fast!.shutdown();
    quality!.shutdown();
  });

  it('a secondary alone makes one-provider chains', () => {
    const { fast } = llmChainsFromConfig(
      loadConfig({ LLM_SECONDARY_BASE_URL: secondary.baseURL, LLM_SECONDARY_FAST_MODEL: 'small' }),
    );
    expect(fast!.health().map((h) => h.model)).toEqual(['small']);
    expect(fast!.acceptsImages).toBe(false);
    fast!.shutdown();
  });
});
