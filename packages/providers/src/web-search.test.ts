import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BreakerSet } from '@atlas/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type Embedder, normalize } from './embedder.js';
import { GuardedEmbedder } from './guarded-embedder.js';
import { OpenAiEmbedder } from './openai-embedder.js';
import { HttpWebSearchProvider, parseWebResults } from './web-search.js';

/** A real HTTP server whose handler a test sets: answer, fail, or stall (never answer). */
const servers: Server[] = [];
const serve = async (handler: Parameters<typeof createServer>[1]) => {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('parseWebResults', () => {
  it('reads SearXNG / Tavily, Brave, Google CSE and bare-array shapes; drops items without a url', () => {
    expect(parseWebResults({ results: [{ title: 'A', url: 'https://a', content: 'x' }, { title: 'no url' }] })).toEqual(
      [{ title: 'A', url: 'https://a', snippet: 'x' }],
    );
    expect(parseWebResults({ web: { results: [{ title: 'B', url: 'https://b', description: 'y' }] } })).toEqual([
      { title: 'B', url: 'https://b', snippet: 'y' },
    ]);
    expect(parseWebResults({ items: [{ title: 'C', link: 'https://c', snippet: 'z' }] })).toEqual([
      { title: 'C', url: 'https://c', snippet: 'z' },
    ]);
    expect(parseWebResults([{ url: 'https://d' }])).toEqual([{ title: 'https://d', url: 'https://d', snippet: '' }]);
    expect(parseWebResults(null)).toEqual([]);
  });
});

describe('HttpWebSearchProvider', () => {
  it('GETs <url>?q=&limit= with the bearer key and returns at most `limit` results', async () => {
    let seen: { url?: string | undefined; auth?: string | undefined } = {};
    const url = await serve((req, res) => {
      seen = { url: req.url, auth: req.headers.authorization };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ results: [1, 2, 3].map((i) => ({ title: `t${i}`, url: `https://x/${i}` })) }));
    });
    const web = new HttpWebSearchProvider({ url: `${url}/search?format=json`, apiKey: 'k' });
    closers.push(() => web.close());
    const results = await web.search('kafka retention', { limit: 2 });
    expect(results.map((r) => r.title)).toEqual(['t1', 't2']);
    expect(seen.url).toBe('/search?format=json&q=kafka+retention&limit=2');
    expect(seen.auth).toBe('Bearer k');
    expect(new BreakerSet().add(web.breaker).snapshots()[0]?.dependency).toBe('web_search_provider');
  });

  it('a stalled endpoint times out (5 s in production; 100 ms here); 3 failures open the breaker; a 400 does not count', async () => {
    let mode: 'stall' | 'bad' = 'bad';
    let requests = 0;
    const url = await serve((_req, res) => {
      requests++;
      if (mode === 'bad') {
        res.writeHead(400).end('{}');
      } // stall: never answers
    });
    const web = new HttpWebSearchProvider({ url, breaker: { timeoutMs: 100, resetMs: 60_000 } });
    closers.push(() => web.close());
    for (let i = 0; i < 4; i++)
      await expect(web.search('q')).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE', details: { status: 400 } });
    expect(web.breaker.state).toBe('CLOSED');
    mode = 'stall';
    for (let i = 0; i < 3; i++) await expect(web.search('q')).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
    expect(web.breaker.state).toBe('OPEN');
    const before = requests;
    await expect(web.search('q')).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
    expect(requests).toBe(before); // not sent
  });
});

describe('GuardedEmbedder', () => {
  /** An embeddings endpoint whose every answer takes `delayMs`. */
  const slowEmbeddings = (state: { delayMs: number; calls: number }) =>
    serve((req, res) => {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        state.calls++;
        const input = (JSON.parse(body) as { input: string[] }).input;
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ data: input.map((_, index) => ({ index, embedding: [1, 0, 0] })) }));
        }, state.delayMs);
      });
    });

  it('a slow first call (the cold start) is not a failure; later calls have the usual timeout', async () => {
    const state = { delayMs: 300, calls: 0 };
    const url = await slowEmbeddings(state);
    const e = new GuardedEmbedder(new OpenAiEmbedder({ baseURL: `${url}/v1`, model: 'm', dim: 3 }), {
      breaker: { timeoutMs: 100, resetMs: 60_000 },
      coldStartTimeoutMs: 2_000,
    });
    closers.push(() => e.close());
    expect(e.isWarm).toBe(false);
    expect(await e.embed(['a'])).toEqual([[1, 0, 0]]);
    expect(e.isWarm).toBe(true);
    expect(e.breaker.state).toBe('CLOSED');
    await expect(e.embed(['b'])).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE' }); // 300 ms > 100 ms
    state.delayMs = 0;
    expect(await e.embed(['c'])).toEqual([[1, 0, 0]]);
  });

  it('sends the texts in chunks of 32, each one call through the breaker; keeps the id and dim', async () => {
    const calls: number[] = [];
    const inner: Embedder = {
      id: 'fixed@1',
      dim: 2,
      embed: async (texts) => {
        calls.push(texts.length);
        return texts.map(() => normalize([1, 1]));
      },
    };
    const e = new GuardedEmbedder(inner);
    closers.push(() => e.close());
    expect(e.id).toBe('fixed@1');
    expect(e.dim).toBe(2);
    expect(await e.embed(Array.from({ length: 70 }, (_, i) => `t${i}`))).toHaveLength(70);
    expect(calls).toEqual([32, 32, 6]);
    expect(await e.embed([])).toEqual([]);
  });
});
