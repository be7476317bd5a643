import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small OpenAI-compatible HTTP server for tests (node:http on 127.0.0.1, port 0): POST /v1/chat/completions
 * (a JSON body, or `text/event-stream` chunks when the request says `stream: true`) and GET /v1/models, in the
 * documented response shapes. Each chat request takes the next scripted reply (`reply(...)`), or asks `script`.
 */

/** Token counts as the API reports them. */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** What the server does with one chat completion request. */
export type FakeReply =
  /** 200 with `text` as the answer; streamed as `chunks` (default: word by word). `usage: false` omits usage. */
  | { kind: 'text'; text: string; chunks?: string[]; usage?: FakeUsage | false; delayMs?: number }
  /** An error status with the API's error body; `retryAfter` (s) sets the Retry-After header. */
  | { kind: 'status'; status: number; retryAfter?: number; message?: string }
  /** Never answers (until the client gives up or the server closes). */
  | { kind: 'hang' }
  /** Streams `chunks` (or, unstreamed, half a JSON body) and then destroys the connection. */
  | { kind: 'drop'; chunks: string[] };

/** One request the server received: method, path and the parsed JSON body (null when there is none). */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever the client sent
  body: any;
}

export interface FakeOpenAiServer {
  /** Base URL to give the client, ending in `/v1`. */
  readonly baseURL: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Chat completion requests received (`requests` filtered to POST /v1/chat/completions). */
  chatRequests(): RecordedRequest[];
  /** Queues replies for the next chat requests, in order. */
  reply(...replies: FakeReply[]): void;
  /** Answers chat requests the queue has no reply for (default: 500 "no scripted reply"). */
  script: ((req: RecordedRequest) => FakeReply) | null;
  close(): Promise<void>;
}

export const ok = (
  text: string,
  opts: Omit<Extract<FakeReply, { kind: 'text' }>, 'kind' | 'text'> = {},
): FakeReply => ({
  kind: 'text',
  text,
  ...opts,
});
export const okJson = (value: unknown): FakeReply => ({ kind: 'text', text: JSON.stringify(value) });
export const malformed = (text = '{"answer": "half an object'): FakeReply => ({ kind: 'text', text });
export const rateLimited = (retryAfter = 7): FakeReply => ({ kind: 'status', status: 429, retryAfter });
export const serverError = (status = 500): FakeReply => ({ kind: 'status', status });
export const hang = (): FakeReply => ({ kind: 'hang' });
export const drop = (...chunks: string[]): FakeReply => ({ kind: 'drop', chunks });

const words = (text: string): string[] => text.match(/\S+\s*|\s+/g) ?? [];

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      data += c;
    });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });

/** Starts the server; close it with `close()` (which also ends hanging requests). */
export const startFakeOpenAiServer = async (opts: { models?: string[] } = {}): Promise<FakeOpenAiServer> => {
  const queue: FakeReply[] = [];
  const requests: RecordedRequest[] = [];
  let created = 1_700_000_000;

  const chat = (res: ServerResponse, rec: RecordedRequest, reply: FakeReply) => {
    const model = String(rec.body?.model ?? 'fake');
    const stream = rec.body?.stream === true;
    const id = `chatcmpl-${requests.length}`;
    created += 1;
    if (reply.kind === 'hang') return;
    if (reply.kind === 'status') {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (reply.retryAfter !== undefined) headers['retry-after'] = String(reply.retryAfter);
      res.writeHead(reply.status, headers);
      res.end(
        JSON.stringify({ error: { message: reply.message ?? `status ${reply.status}`, type: 'fake', code: null } }),
      );
      return;
    }
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    if (reply.kind === 'drop') {
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"');
      } else {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk({ role: 'assistant', content: '' }, null));
        for (const c of reply.chunks) res.write(chunk({ content: c }, null));
      }
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    const usage =
      reply.usage === false
        ? undefined
        : (reply.usage ?? { prompt_tokens: 10, completion_tokens: words(reply.text).length });
    const send = () => {
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id,
            object: 'chat.completion',
            created,
            model,
            choices: [{ index: 0, message: { role: 'assistant', content: reply.text }, finish_reason: 'stop' }],
            ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(chunk({ role: 'assistant', content: '' }, null));
      for (const c of reply.chunks ?? words(reply.text)) res.write(chunk({ content: c }, null));
      res.write(chunk({}, 'stop'));
      if (usage && rec.body?.stream_options?.include_usage) {
        const total = usage.prompt_tokens + usage.completion_tokens;
        res.write(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: { ...usage, total_tokens: total } })}\n\n`,
        );
      }
      res.end('data: [DONE]\n\n');
    };
    if (reply.delayMs) setTimeout(send, reply.delayMs);
    else send();
  };

  const server = createServer(async (req, res) => {
    const raw = await readBody(req);
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0]!,
      headers: req.headers,
      body: raw ? JSON.parse(raw) : null,
    };
    requests.push(rec);
    if (rec.method === 'GET' && rec.path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const data = (opts.models ?? ['fake-small', 'fake-large']).map((id) => ({
        id,
        object: 'model',
        created,
        owned_by: 'fake',
      }));
      res.end(JSON.stringify({ object: 'list', data }));
      return;
    }
    if (rec.method === 'POST' && rec.path === '/v1/chat/completions') {
      const reply = queue.shift() ??
        fake.script?.(rec) ?? { kind: 'status', status: 500, message: 'no scripted reply' };
      chat(res, rec, reply);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `no route ${rec.method} ${rec.path}` } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeOpenAiServer = {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests: () => requests.filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions'),
    reply: (...replies) => queue.push(...replies),
    script: null,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
};
