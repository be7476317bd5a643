import { randomUUID } from 'node:crypto';
import { connect, createServer, type Server } from 'node:net';
import { openDatabase } from '@atlas/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventCodec } from './codec.js';
import { eventLogContract, type LogUnderTest } from './contract.js';
import { migrateEventLog } from './embedded/migrations.js';
import { ConfluentSchemaRegistry } from './kafka/confluent-registry.js';
import { KafkaEventLog } from './kafka/kafka-log.js';
import { KyselySchemaRegistry, type SchemaRegistry } from './registry.js';
import { loadSchemas } from './schemas.js';
import { testKafka } from './testing-servers.js';

const kafka = await testKafka();
const registryUrl = process.env.ATLAS_TEST_SCHEMA_REGISTRY_URL;

/** The schema registry of this run: the listed Confluent-compatible server, else the embedded table registry. */
const openRegistry = async (): Promise<{ registry: SchemaRegistry; close: () => Promise<void> }> => {
  if (registryUrl) return { registry: new ConfluentSchemaRegistry(registryUrl), close: async () => undefined };
  const h = await openDatabase({ dataDir: 'memory://' });
  await migrateEventLog(h.db);
  return { registry: new KyselySchemaRegistry(h.db), close: h.close };
};

if (kafka) {
  const opts = { brokers: kafka.brokers, sessionTimeoutMs: 6000, heartbeatMs: 1000, defaultPartitions: 4 };
  eventLogContract('kafka', async (): Promise<LogUnderTest> => {
    const { registry, close } = await openRegistry();
    const codec = new EventCodec(registry);
    await codec.init();
    const clientId = `atlas-test-${randomUUID().slice(0, 8)}`;
    const log = new KafkaEventLog(codec, { ...opts, clientId, namespace: clientId });
    const peers: KafkaEventLog[] = [];
    return {
      log,
      openPeer: async () => {
        const peer = new KafkaEventLog(codec, { ...opts, clientId: `${clientId}-peer`, namespace: clientId });
        peers.push(peer);
        return peer;
      },
      close: async () => {
        await Promise.all([...peers, log].map((l) => l.close()));
        await close();
      },
    };
  });
}

describe.runIf(Boolean(registryUrl))('schema registry (Confluent-compatible server)', () => {
  let registry: ConfluentSchemaRegistry;
  beforeAll(() => {
    registry = new ConfluentSchemaRegistry(registryUrl!);
  });
  afterAll(() => undefined);

  it('registers every Atlas schema, idempotently, and reads them back by id', async () => {
    for (const s of loadSchemas().values()) {
      const id = await registry.register(s.fullName, s.json);
      expect(await registry.register(s.fullName, s.json)).toBe(id);
      const back = await new ConfluentSchemaRegistry(registryUrl!).getSchema(id);
      expect((JSON.parse(back.schemaJson) as { name: string }).name.split('.').pop()).toBe(s.type);
    }
  });

  it('tries again when the server drops a connection (socket hang up), and reports an unreachable one as STORE_UNAVAILABLE', async () => {
    // A TCP proxy in front of the real registry that hangs up on its first two connections.
    const target = new URL(registryUrl!);
    let dropped = 0;
    const proxy: Server = createServer((client) => {
      if (dropped < 2) {
        dropped++;
        client.once('data', () => client.destroy());
        return;
      }
      const upstream = connect(Number(target.port), target.hostname);
      client.pipe(upstream).pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end);
      upstream.on('error', end);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const port = (proxy.address() as { port: number }).port;
    try {
      const s = [...loadSchemas().values()][0]!;
      const viaProxy = new ConfluentSchemaRegistry(`http://127.0.0.1:${port}${target.pathname.replace(/\/$/, '')}`);
      const id = await viaProxy.register(s.fullName, s.json);
      expect(dropped).toBe(2);
      expect(id).toBe(await registry.register(s.fullName, s.json));
    } finally {
      await new Promise((r) => proxy.close(r));
    }
    const gone = new ConfluentSchemaRegistry(`http://127.0.0.1:${port}`, { attempts: 2 });
    await expect(gone.register('atlas.test.Gone', '"string"')).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      retriable: true,
    });
  });

  it('accepts a compatible new version and refuses an incompatible one (BACKWARD)', async () => {
    const subject = `atlas.test.Compat${randomUUID().replaceAll('-', '').slice(0, 8)}`;
    const v1 = { type: 'record', name: 'Compat', namespace: 'atlas.test', fields: [{ name: 'a', type: 'string' }] };
    const v2 = { ...v1, fields: [...v1.fields, { name: 'b', type: 'string', default: 'x' }] };
    const bad = { ...v1, fields: [...v2.fields, { name: 'c', type: 'int' }] };
    const id1 = await registry.register(subject, JSON.stringify(v1));
    const id2 = await registry.register(subject, JSON.stringify(v2));
    expect(id2).not.toBe(id1);
    await expect(registry.register(subject, JSON.stringify(bad))).rejects.toMatchObject({ code: 'CONFLICT' });
  });
});
