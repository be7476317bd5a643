import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Embedder } from './embedder.js';
import { GuardedEmbedder } from './guarded-embedder.js';
import { LocalSentenceEncoder } from './local-use.js';
import { OpenAiEmbedder } from './openai-embedder.js';

const dot = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * b[i]!, 0);

describe('LocalSentenceEncoder (weights shipped in npm, no network)', () => {
  const encoder = new LocalSentenceEncoder();
  afterAll(() => encoder.close());
  it('puts paraphrases closer than unrelated sentences, as unit vectors', async () => {
    const [a, b, c] = await encoder.embed([
      'we decided to migrate the database to Postgres',
      'the team chose PostgreSQL for storage',
      'lunch is at noon',
    ]);
    expect(a).toHaveLength(512);
    expect(Math.hypot(...a!)).toBeCloseTo(1, 3);
    expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!) + 0.3);
  });

  it('accepts empty texts and is deterministic', async () => {
    const [x, y, z] = await encoder.embed(['', 'core.async channels', 'core.async channels']);
    expect(x).toHaveLength(512);
    expect(y).toEqual(z);
  });

  it('embeds on a worker thread: a one-text job overtakes a long one, and this thread stays free', async () => {
    const order: string[] = [];
    const long = encoder
      .embed(Array.from({ length: 96 }, (_, i) => `backfill sentence number ${i} about Kafka consumer groups`))
      .then((v) => order.push(`long:${v.length}`));
    await new Promise((r) => setTimeout(r, 20));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const short = encoder.embed(['who decided to use Postgres?']).then((v) => order.push(`short:${v.length}`));
    await Promise.all([long, short]);
    clearInterval(timer);
    expect(order).toEqual(['short:1', 'long:96']);
    expect(ticks).toBeGreaterThan(5); // timers ran while the model worked
  });

  it('starts a new worker after close', async () => {
    const e = new LocalSentenceEncoder();
    const [a] = await e.embed(['core.async channels']);
    await e.close();
    const [b] = await e.embed(['core.async channels']);
    expect(b).toEqual(a);
    await e.close();
  });
});

/** A small OpenAI-compatible embeddings server: deterministic 8-d vectors from a hash, or a failure on demand. */
const startServer = async (mode: { fail?: boolean; dim?: number }) => {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url !== '/v1/embeddings' || mode.fail) {
        res.writeHead(mode.fail ? 500 : 404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'down' } }));
      }
      const { input } = JSON.parse(body) as { input: string[] };
      const data = input.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: [...createHash('sha256').update(text).digest()].slice(0, mode.dim ?? 8).map((b) => b - 128),
      }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          data: data.reverse(),
          model: 'm',
          usage: { prompt_tokens: 1, total_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
};

describe('OpenAiEmbedder (against an OpenAI-compatible server in this suite)', () => {
  let ok: Awaited<ReturnType<typeof startServer>>;
  let down: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    ok = await startServer({});
    down = await startServer({ fail: true });
  });
  afterAll(() => {
    ok.server.close();
    down.server.close();
  });

  it('returns unit vectors in input order, batching requests', async () => {
    const e = new OpenAiEmbedder({ baseURL: ok.url, model: 'm', dim: 8, batchSize: 2 });
    const texts = ['alpha', 'beta', 'gamma', 'alpha'];
    const v = await e.embed(texts);
    expect(v).toHaveLength(4);
    expect(v[0]).toEqual(v[3]);
    expect(v[0]).not.toEqual(v[1]);
    for (const x of v) expect(Math.hypot(...x)).toBeCloseTo(1, 6);
    expect(e.id).toMatch(/^openai-compatible:m@127\.0\.0\.1:\d+$/);
  });

  it('fails with PROVIDER_UNAVAILABLE (retriable) when the endpoint fails or answers the wrong length', async () => {
    const e = new OpenAiEmbedder({ baseURL: down.url, model: 'm', dim: 8, timeoutMs: 2000 });
    await expect(e.embed(['x'])).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE', retriable: true });
    const wrong = new OpenAiEmbedder({ baseURL: ok.url, model: 'm', dim: 16 });
    await expect(wrong.embed(['x'])).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
  });
});

describe('GuardedEmbedder', () => {
  it("passes the texts' kind (query or passage) to the embedder it guards, chunk by chunk", async () => {
    const kinds: (string | undefined)[] = [];
    const inner: Embedder = {
      id: 'fake',
      dim: 1,
      embed: async (texts, opts) => {
        kinds.push(opts?.kind);
        return texts.map(() => [1]);
      },
    };
    const g = new GuardedEmbedder(inner, { chunk: 2 });
    expect(await g.embed(['a', 'b', 'c'], { kind: 'query' })).toEqual([[1], [1], [1]]);
    await g.embed(['d']);
    expect(kinds).toEqual(['query', 'query', undefined]);
    await g.close();
  });
});
