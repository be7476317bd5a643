import type { AddressInfo } from 'node:net';
import { buildApp } from '@atlas/api';
import { loadConfig, type NewEvent, TOPICS } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { channelEvent, messageEvent } from '@atlas/stores/testing';
import type { FastifyInstance } from 'fastify';
import { apiPorts } from '../api-ports.js';
import { waitForProjectors } from '../lag.js';
import { openRuntime } from '../open.js';
import { startProjectors } from '../run-projectors.js';
import type { Runtime } from '../runtime.js';
import { embeddingServer, type FaultServer } from './faults.js';

/** The bridge key the test API and bot share. */
export const BRIDGE_KEY = 'bridge-key-for-tests';
/** The bootstrap admin key of the test API (ATLAS_ADMIN_API_KEY): `call` uses it. */
export const ADMIN_KEY = 'admin-key-for-tests-at-least-32-characters';

/**
 * A real Atlas API on the embedded profile (in-memory PGlite, every projector running, bag-of-words embeddings from a
 * real OpenAI-compatible HTTP server so the wiki can be generated), listening on a free port with BRIDGE_API_KEY and
 * ATLAS_ADMIN_API_KEY set (so every route needs a key) and ADAPTER_MOCK on (connections and sync without credentials).
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
      ATLAS_ADMIN_API_KEY: ADMIN_KEY,
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
    /** A JSON request to the API as its admin (the bootstrap key). */
    async call(method: 'GET' | 'POST' | 'PUT', path: string, body?: object) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
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
