import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, type NewEvent, TOPICS } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { channelEvent, messageEvent } from '@atlas/stores/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/src/app.js';
import { embeddingServer, type FaultServer } from '../../api/src/faults.test-support.js';
import { apiPorts, openRuntime, type Runtime, startProjectors, waitForProjectors } from '../../cli/src/runtime.js';

/** The bridge key the test API and bot share. */
export const BRIDGE_KEY = 'bridge-key-for-tests';

/**
 * A real Atlas API on the embedded profile (in-memory PGlite, every projector running, bag-of-words embeddings from a
 * real OpenAI-compatible HTTP server so the wiki can be generated), listening on a free port with BRIDGE_API_KEY set
 * and ADAPTER_MOCK on (connections and sync without credentials).
 */
export const openAtlas = async () => {
  const embed: FaultServer = await embeddingServer(16);
  const rt: Runtime = await openRuntime(
    loadConfig({
      ATLAS_DATA_DIR: 'memory://',
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_BASE_URL: embed.url,
      EMBEDDING_DIM: '16',
      EMBEDDING_MODEL: 'bag',
      VECTOR_MEMORY_INDEX_MB: '0',
      BRIDGE_API_KEY: BRIDGE_KEY,
      ADAPTER_MOCK: 'true',
      CREDENTIAL_MASTER_KEY: '3d'.repeat(32),
      PLATFORM_A_API_URL: 'http://127.0.0.1:9/api/', // nothing listens: a request to a real platform fails the test
    }),
    { pollIntervalMs: 20 },
  );
  const subs: Subscription[] = await startProjectors(rt);
  const app: FastifyInstance = await buildApp(apiPorts(rt));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    rt,
    app,
    url,
    async ingest(events: NewEvent[]) {
      await rt.eventLog.append(TOPICS.messages, events);
      await waitForProjectors(rt, undefined, 20);
    },
    /** A JSON request to the API with the right bridge key. */
    async call(method: 'GET' | 'POST' | 'PUT', path: string, body?: object) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { 'x-atlas-bridge-key': BRIDGE_KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return {
        status: res.status,
        body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text,
      };
    },
    async close() {
      await app.close();
      await Promise.all(subs.map((s) => s.stop()));
      await rt.close();
      await embed.close();
    },
  };
};
export type Atlas = Awaited<ReturnType<typeof openAtlas>>;

/** A conversation of four messages about moving the event log to Kafka, in a channel named `name`. */
export const kafkaConversation = (ch: string, name = 'platform', sec = 1_700_000_000): NewEvent[] => [
  { type: 'ChannelDiscovered', key: ch, data: channelEvent(ch, name) },
  ...[
    'We decided to move the event log to Kafka next sprint, it replaces the cron jobs.',
    'Kafka needs three brokers in production, and the retention should be seven days for the event log.',
    'Bob will own the Kafka migration and the schema registry setup before the release.',
    'The Postgres outbox keeps working until Kafka is live, then we drop the cron jobs entirely.',
  ].map(
    (text, i): NewEvent => ({
      type: 'MessageIngested',
      key: ch,
      data: messageEvent(ch, sec + i * 60, text, {
        channelName: name,
        author: { id: `U${i % 2}`, name: i % 2 ? 'bob' : 'alice', isBot: false },
      }),
    }),
  ),
];

/** A received POST: its path and JSON body. */
export interface Received {
  path: string;
  body: Record<string, unknown>;
}

/**
 * A real HTTP server standing in for the platforms' reply endpoints: platform_a's response_url
 * (`/response/<id>`) and platform_b's REST API (`/v10/webhooks/<application>/<token>`). Records every POST.
 */
export const openReceiver = async () => {
  const posts: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      posts.push({ path: req.url ?? '', body: body ? (JSON.parse(body) as Record<string, unknown>) : {} });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    posts,
    /** The first POST to `path`, waiting up to `timeoutMs`. */
    async next(path: string, timeoutMs = 30_000): Promise<Received> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const hit = posts.find((p) => p.path === path);
        if (hit) return hit;
        if (Date.now() > until) throw new Error(`no POST to ${path} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
};

/** platform_a's signature headers for `body` (v0 HMAC-SHA256 over `v0:<ts>:<body>`), ts in epoch seconds. */
export const signA = (secret: string, body: string, ts = Math.floor(Date.now() / 1000)) => ({
  'content-type': 'application/x-www-form-urlencoded',
  'x-slack-request-timestamp': String(ts),
  'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`,
});

/** A fresh Ed25519 key pair as platform_b's application key: the public key as 64 hex, and a signer for requests. */
export const ed25519App = () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' }) as { x: string };
  return {
    publicHex: Buffer.from(jwk.x, 'base64url').toString('hex'),
    headers: (body: string, ts = String(Math.floor(Date.now() / 1000))) => ({
      'content-type': 'application/json',
      'x-signature-timestamp': ts,
      'x-signature-ed25519': sign(null, Buffer.from(ts + body), privateKey).toString('hex'),
    }),
  };
};

/** A platform_a slash command body as the platform form-encodes it. */
export const slashCommand = (fields: {
  text: string;
  channel_id: string;
  response_url: string;
  trigger_id?: string;
  channel_name?: string;
}): string =>
  new URLSearchParams({
    token: 'legacy-unused',
    team_id: 'T1',
    team_domain: 'acme',
    channel_name: fields.channel_name ?? 'platform',
    user_id: 'U1',
    user_name: 'alice',
    command: '/atlas',
    api_app_id: 'A1',
    trigger_id: fields.trigger_id ?? `trigger-${Math.random().toString(36).slice(2)}`,
    ...fields,
  }).toString();
