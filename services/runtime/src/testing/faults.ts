import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import net from 'node:net';

/** How a fault server behaves now: serve, answer 503, or close every connection at once (a crash / partition). */
export type FaultMode = 'up' | 'error' | 'down';

/** A real HTTP server whose mode a test flips; every connection is tracked so `down` can cut them. */
export interface FaultServer {
  url: string;
  mode: FaultMode;
  /** Requests served while `up`. */
  served: number;
  /** Requests received in any mode (a connection cut before its request counts too). */
  requests: number;
  close(): Promise<void>;
}

const startHttp = async (
  handle: (req: IncomingMessage, body: string, res: ServerResponse) => void,
  path: string,
): Promise<FaultServer> => {
  const sockets = new Set<net.Socket>();
  const state = { mode: 'up' as FaultMode, served: 0, requests: 0 };
  const server: Server = createServer((req, res) => {
    state.requests++;
    if (state.mode === 'down') {
      req.socket.destroy();
      return;
    }
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      if (state.mode === 'error') {
        res.writeHead(503, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'service unavailable' } }));
      }
      state.served++;
      handle(req, body, res);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    if (state.mode === 'down') {
      state.requests++;
      s.destroy();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    get mode() {
      return state.mode;
    },
    set mode(m: FaultMode) {
      state.mode = m;
      if (m === 'down') for (const s of sockets) s.destroy();
    },
    get served() {
      return state.served;
    },
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
};

/**
 * An OpenAI-compatible embeddings endpoint (`POST /v1/embeddings`) with `dim`-dimensional bag-of-words vectors: each
 * lower-cased word adds 1 to the component its sha1 picks, so texts sharing words are close. Deterministic.
 */
export const embeddingServer = (dim: number): Promise<FaultServer> =>
  startHttp((req, body, res) => {
    if (req.url !== '/v1/embeddings') {
      res.writeHead(404).end();
      return;
    }
    const input = (JSON.parse(body) as { input: string | string[] }).input;
    const texts = Array.isArray(input) ? input : [input];
    const data = texts.map((t, index) => {
      const v: number[] = new Array<number>(dim).fill(0);
      for (const w of t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
        v[createHash('sha1').update(w).digest()[0]! % dim]! += 1;
      if (!v.some((x) => x > 0)) v[0] = 1;
      return { object: 'embedding', index, embedding: v };
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data, model: 'bag', usage: { prompt_tokens: 1, total_tokens: 1 } }));
  }, '/v1');

/** A web search JSON endpoint (SearXNG-style `{results: [{title, url, content}]}`) answering two results per query. */
export const webSearchServer = (): Promise<FaultServer> =>
  startHttp((req, _body, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams.get('q') ?? '';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        results: [
          { title: `Web: ${q.slice(0, 40)}`, url: 'https://example.org/a', content: 'an external page' },
          { title: 'Another page', url: 'https://example.org/b', content: 'more' },
        ],
      }),
    );
  }, '/search');

/**
 * A TCP proxy in front of a real server (Postgres, Neo4j, ...): `up` forwards, `down` cuts every open connection and
 * closes new ones at once (the server seen as crashed or partitioned away), `stall` accepts and forwards nothing.
 */
export interface FaultProxy {
  host: string;
  port: number;
  mode: 'up' | 'down' | 'stall';
  close(): Promise<void>;
}

export const faultProxy = async (target: { host: string; port: number }): Promise<FaultProxy> => {
  const pairs = new Set<[net.Socket, net.Socket | null]>();
  let mode: FaultProxy['mode'] = 'up';
  const server = net.createServer((client) => {
    if (mode === 'down') return client.destroy();
    if (mode === 'stall') {
      const pair: [net.Socket, null] = [client, null];
      pairs.add(pair);
      client.on('close', () => pairs.delete(pair));
      client.on('error', () => undefined);
      return;
    }
    const upstream = net.connect(target.port, target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    host: '127.0.0.1',
    port: (server.address() as net.AddressInfo).port,
    get mode() {
      return mode;
    },
    set mode(m) {
      mode = m;
      if (m !== 'up')
        for (const [a, b] of pairs) {
          a.destroy();
          b?.destroy();
        }
    },
    close: () =>
      new Promise<void>((r) => {
        for (const [a, b] of pairs) {
          a.destroy();
          b?.destroy();
        }
        server.close(() => r());
      }),
  };
};
