import { buildApp } from '@atlas/api';
import { loadConfig } from '@atlas/core';
import { serveMetrics } from '@atlas/projectors';
import { type FakeOpenAiServer, ok, serverError, startFakeOpenAiServer } from '@atlas/providers/testing';
import { apiPorts, openRuntime, type Runtime } from '@atlas/runtime';
import { waitFor } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * LLM usage accounting (docs/stats-and-metrics.md): calls through the runtime's LLM chains, against the in-suite
 * OpenAI-compatible server, are counted in Prometheus (atlas_llm_calls_total, atlas_llm_tokens_total,
 * atlas_llm_cost_usd_total) and in the usage ledger that GET /api/stats/metrics reads (usage.total_llm_calls,
 * total_llm_tokens, estimated_cost_usd).
 */
describe('LLM usage: calls, tokens and cost', () => {
  let fake: FakeOpenAiServer;
  let rt: Runtime;
  beforeAll(async () => {
    fake = await startFakeOpenAiServer();
    rt = await openRuntime(
      // Facts by the regex fast path: the calls counted here are the test's own.
      loadConfig({
        ATLAS_DATA_DIR: 'memory://',
        EMBEDDING_PROVIDER: 'none',
        LLM_BASE_URL: fake.baseURL,
        FACT_EXTRACTOR: 'offline',
      }),
    );
  });
  afterAll(async () => {
    await rt?.close();
    await fake?.close();
  });

  it('counts whole, streamed and failed calls with the tokens the server reported', async () => {
    fake.reply(
      ok('a whole answer', { usage: { prompt_tokens: 1200, completion_tokens: 300 } }),
      ok('a streamed answer here', { usage: { prompt_tokens: 800, completion_tokens: 40 } }),
      serverError(500),
    );
    const messages = [{ role: 'user' as const, content: 'hello' }];
    const whole = await rt.llm.quality!.complete({ messages });
    expect(whole.text).toBe('a whole answer');
    let streamed = '';
    for await (const ev of rt.llm.fast!.stream({ messages })) if (ev.type === 'delta') streamed += ev.text;
    expect(streamed).toBe('a streamed answer here');
    await expect(rt.llm.fast!.complete({ messages })).rejects.toThrow();
    expect(fake.chatRequests()).toHaveLength(3);

    // Prometheus (this process): the quality tier's gpt-4o, the fast tier's gpt-4o-mini, one failure.
    const text = await rt.metrics.registry.metrics();
    const line = (re: RegExp) =>
      Number(
        text
          .split('\n')
          .find((l) => re.test(l))
          ?.split(' ')
          .pop(),
      );
    expect(line(/^atlas_llm_calls_total\{tier="quality",.*model="gpt-4o",outcome="ok"\}/)).toBe(1);
    expect(line(/^atlas_llm_calls_total\{tier="fast",.*model="gpt-4o-mini",outcome="ok"\}/)).toBe(1);
    expect(line(/^atlas_llm_calls_total\{tier="fast",.*outcome="failed"\}/)).toBe(1);
    expect(line(/^atlas_llm_tokens_total\{tier="quality",.*kind="prompt"\}/)).toBe(1200);
    expect(line(/^atlas_llm_tokens_total\{tier="quality",.*kind="completion"\}/)).toBe(300);
    expect(line(/^atlas_llm_tokens_total\{tier="fast",.*kind="prompt"\}/)).toBe(800);
    const quality = (1200 * 2.5 + 300 * 10) / 1e6; // gpt-4o list price per million tokens
    const fast = (800 * 0.15 + 40 * 0.6) / 1e6; // gpt-4o-mini
    expect(line(/^atlas_llm_cost_usd_total\{tier="quality",/)).toBeCloseTo(quality, 9);

    // The ledger (all processes) behind GET /api/stats/metrics.
    await waitFor(async () => (await rt.stats.llmUsage()).total_llm_calls === 3, 'the usage ledger');
    const app = await buildApp(apiPorts(rt));
    try {
      const m = (await app.inject({ method: 'GET', url: '/api/stats/metrics' })).json();
      expect(m.usage.total_llm_calls).toBe(3);
      expect(m.usage.total_llm_tokens).toBe(1200 + 300 + 800 + 40);
      expect(m.usage.estimated_cost_usd).toBeCloseTo(quality + fast, 6);
      const scraped = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(scraped).toMatch(/^atlas_llm_calls_total\{tier="quality",.*\} 1$/m); // appended to the API's /metrics
      expect(scraped).toMatch(/^atlas_circuit_breaker_state\{breaker="llm:fast:[^"]+",dependency="llm_provider"\} 0$/m);
    } finally {
      await app.close();
    }
  });

  it('serves the same counters on its own port for a process without the API (METRICS_PORT)', async () => {
    const server = await serveMetrics(rt.metrics.registry, { port: 0, host: '127.0.0.1' });
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toMatch(/^atlas_llm_calls_total\{tier="quality",.*outcome="ok"\} 1$/m);
      expect(text).toMatch(/^# TYPE atlas_projector_events_total counter$/m);
      expect(text).toMatch(/^atlas_process_resident_memory_bytes \d+/m);
      expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
