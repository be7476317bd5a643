import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventType } from '@atlas/core';
import type { Projector } from '@atlas/eventlog';
import type { LlmChain, LlmChains } from '@atlas/providers';
import { estimateLlmCostUsd, type LlmUsageRecord } from '@atlas/stores';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/**
 * The Prometheus metrics of what runs in this process beside the API (docs/stats-and-metrics.md): projector
 * throughput and LLM usage. One registry per runtime (so several runtimes in one test process stay apart); the API's
 * /metrics appends it to its own. Counters are per process, as Prometheus expects (rate() handles restarts):
 * - `atlas_projector_events_total{projector, topic, type, outcome}`: events a projector handled (`ok`) or saw fail in
 *   a batch that is retried (`failed`); `topic` is the pipeline stage it read them from (atlas.messages →
 *   atlas.facts → atlas.graph, ...);
 * - `atlas_projector_batch_duration_seconds{projector, outcome}`: time in the projector's handler per batch;
 * - `atlas_llm_calls_total{tier, provider, model, outcome}` (`ok`, `failed`), `atlas_llm_tokens_total{tier, provider,
 *   model, kind}` (`prompt`, `completion`) and `atlas_llm_cost_usd_total{tier, provider, model}` (estimated from
 *   LLM_PRICES_USD_PER_MTOK; 0 for models not listed).
 */
export class RuntimeMetrics {
  readonly registry = new Registry();
  private readonly events = new Counter({
    name: 'atlas_projector_events_total',
    help: 'Events handled by a projector, by the topic (pipeline stage) they came from and the outcome',
    labelNames: ['projector', 'topic', 'type', 'outcome'],
    registers: [this.registry],
  });
  private readonly batches = new Histogram({
    name: 'atlas_projector_batch_duration_seconds',
    help: 'Time a projector spent handling one batch',
    labelNames: ['projector', 'outcome'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly llmCalls = new Counter({
    name: 'atlas_llm_calls_total',
    help: 'LLM calls through the fallback chains, by tier, provider, model and outcome',
    labelNames: ['tier', 'provider', 'model', 'outcome'],
    registers: [this.registry],
  });
  private readonly llmTokens = new Counter({
    name: 'atlas_llm_tokens_total',
    help: 'LLM tokens (reported by the provider, else characters / 4), by kind: prompt or completion',
    labelNames: ['tier', 'provider', 'model', 'kind'],
    registers: [this.registry],
  });
  private readonly llmCost = new Counter({
    name: 'atlas_llm_cost_usd_total',
    help: 'Estimated LLM cost in USD (list prices of known models; 0 for others)',
    labelNames: ['tier', 'provider', 'model'],
    registers: [this.registry],
  });

  /** A projector whose batches are counted and timed here (same name, topics and reset; the handler wrapped). */
  instrument<D, T extends EventType>(projector: Projector<D, T>): Projector<D, T> {
    return {
      ...projector,
      handle: async (events, deps) => {
        const end = this.batches.startTimer({ projector: projector.name });
        let outcome = 'ok';
        try {
          await projector.handle(events, deps);
        } catch (err) {
          outcome = 'failed';
          throw err;
        } finally {
          end({ outcome });
          const counts = new Map<string, { topic: string; type: string; n: number }>();
          for (const e of events) {
            const k = `${e.topic}\u0000${e.type}`;
            const c = counts.get(k) ?? { topic: e.topic, type: e.type, n: 0 };
            c.n++;
            counts.set(k, c);
          }
          for (const c of counts.values())
            this.events.inc({ projector: projector.name, topic: c.topic, type: c.type, outcome }, c.n);
        }
      },
    };
  }

  /** Counts one LLM call (see LlmUsageRecord). */
  recordLlm(u: LlmUsageRecord): void {
    const l = { tier: u.tier, provider: u.provider, model: u.model };
    this.llmCalls.inc({ ...l, outcome: u.failed ? 'failed' : 'ok' });
    if (u.promptTokens > 0) this.llmTokens.inc({ ...l, kind: 'prompt' }, u.promptTokens);
    if (u.completionTokens > 0) this.llmTokens.inc({ ...l, kind: 'completion' }, u.completionTokens);
    this.llmCost.inc(l, u.costUsd);
  }
}

type Usage = { prompt_tokens: number; completion_tokens: number; estimated?: boolean };

/**
 * Wraps the chain's `complete`, `json` and `stream` (in place) so that each call that ends is passed to `record`:
 * who answered (provider, model), the usage it reported (or estimated), the cost estimated by estimateLlmCostUsd.
 * A call no provider answered is recorded as failed (provider and model `none`, no tokens). The chain's behaviour is
 * unchanged, and a recorder that throws never fails the call.
 */
export const instrumentLlmChain = (chain: LlmChain, record: (u: LlmUsageRecord) => void): LlmChain => {
  const tier = chain.tier;
  const safe = (u: LlmUsageRecord) => {
    try {
      record(u);
    } catch {
      // usage accounting never fails a call
    }
  };
  const ok = (provider: string, model: string, usage: Usage) =>
    safe({
      tier,
      provider,
      model,
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      estimated: usage.estimated === true,
      costUsd: estimateLlmCostUsd(model, usage.prompt_tokens, usage.completion_tokens),
    });
  const failed = () =>
    safe({ tier, provider: 'none', model: 'none', promptTokens: 0, completionTokens: 0, failed: true, costUsd: 0 });
  const complete = chain.complete.bind(chain);
  const json = chain.json.bind(chain);
  const stream = chain.stream.bind(chain);
  chain.complete = async (req) => {
    try {
      const r = await complete(req);
      ok(r.provider, r.model, r.usage);
      return r;
    } catch (err) {
      if (!req.signal?.aborted) failed();
      throw err;
    }
  };
  chain.json = (async (schema, messages, opts) => {
    try {
      const r = await json(schema, messages, opts);
      ok(r.provider, r.model, r.usage);
      return r;
    } catch (err) {
      if (!opts?.signal?.aborted) failed();
      throw err;
    }
  }) as LlmChain['json'];
  chain.stream = async function* (req) {
    let done = false;
    try {
      for await (const ev of stream(req)) {
        if (ev.type === 'done') {
          done = true;
          ok(ev.provider, ev.model, ev.usage);
        }
        yield ev;
      }
    } catch (err) {
      if (!done && !req.signal?.aborted) failed();
      throw err;
    }
  };
  return chain;
};

/** instrumentLlmChain over both tiers (null tiers stay null). */
export const instrumentLlmChains = (llm: LlmChains, record: (u: LlmUsageRecord) => void): LlmChains => ({
  fast: llm.fast && instrumentLlmChain(llm.fast, record),
  quality: llm.quality && instrumentLlmChain(llm.quality, record),
});

/**
 * Serves Prometheus `GET /metrics` (text format) for a process without the API (`atlas run <projector>` with
 * METRICS_PORT): the process metrics (`atlas_process_*`, `atlas_nodejs_*`) and `registry` (RuntimeMetrics: projector
 * events and batches, LLM calls, tokens and cost). Any other path is 404. Resolves once listening; `port` is the bound
 * one (pass 0 for any). Errors: the listen error (port taken).
 */
export const serveMetrics = async (
  registry: Registry,
  at: { port: number; host: string },
): Promise<{ port: number; close(): Promise<void> }> => {
  const processRegistry = new Registry();
  collectDefaultMetrics({ register: processRegistry, prefix: 'atlas_' });
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    Promise.all([processRegistry.metrics(), registry.metrics()]).then(
      (parts) => res.writeHead(200, { 'content-type': processRegistry.contentType }).end(parts.join('\n')),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
