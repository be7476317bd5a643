import { testDatabases } from '@atlas/db/testing';
import { EventCodec } from './codec.js';
import { eventLogContract, type LogUnderTest } from './contract.js';
import { migrateEventLog } from './embedded/migrations.js';
import { EmbeddedEventLog } from './embedded/postgres-log.js';
import { KyselySchemaRegistry } from './registry.js';

// The embedded adapter on every database this run has (PGlite always; Postgres when .ci/run lists it).
for (const { name, open } of testDatabases()) {
  eventLogContract(`embedded/${name}`, async (): Promise<LogUnderTest> => {
    const handle = await open();
    await migrateEventLog(handle.db);
    const codec = new EventCodec(new KyselySchemaRegistry(handle.db));
    await codec.init();
    const opts = { pollIntervalMs: 20, sessionTimeoutMs: 1000 };
    const log = new EmbeddedEventLog(handle.db, codec, opts);
    const peers: { log: EmbeddedEventLog; close: () => Promise<void> }[] = [];
    return {
      log,
      // A second client of the same log: its own connection pool on a server (for PGlite, the same instance).
      openPeer: async () => {
        const other = await handle.reopen();
        const peerCodec = new EventCodec(new KyselySchemaRegistry(other.db));
        await peerCodec.init();
        const peer = new EmbeddedEventLog(other.db, peerCodec, opts);
        peers.push({ log: peer, close: other.close });
        return peer;
      },
      close: async () => {
        for (const p of peers) await p.log.close().then(p.close);
        await log.close();
        await handle.close();
      },
    };
  });
}
