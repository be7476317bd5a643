/**
 * `npm run bench:ingest`: end-to-end ingest rate (events appended → every projector caught up, so the
 * facts are stored and indexed) of the clojurians export (7,896 messages), on:
 *   - the embedded log, in one process (the default profile: PGlite stores);
 *   - Kafka with 1 and 3 partitions, and 1 or 2 `atlas run facts` processes beside `atlas run documents`
 *     and `atlas run keyword` (PostgreSQL stores, as separate processes must share them);
 * beside the ceiling: the same broker's raw produce-then-consume rate of the same records (no work).
 * Needs KAFKA_BROKERS and DATABASE_URL (a server) for the Kafka rows; without them those rows are skipped.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { loadConfig, TOPICS } from '@atlas/core';
import { EventCodec, KafkaEventLog, KyselySchemaRegistry, migrateEventLog } from '@atlas/eventlog';
import { planImport } from '@atlas/platforms';
import {
  appendPlan,
  openRuntime,
  projectorLag,
  type Runtime,
  startProjectors,
  waitForProjectors,
} from '@atlas/runtime';
import { openDatabase } from '@atlas/stores';
import pg from 'pg';

const ROOT = path.resolve(import.meta.dirname, '..');
const EXPORT = path.resolve(ROOT, '../shared/data/slack-clojurians-2018-02/export');
const brokers = process.env.KAFKA_BROKERS;
const pgUrl = process.env.DATABASE_URL;

interface Row {
  setup: string;
  messages: number;
  seconds: number;
  rate: number;
}

const plan = await planImport(EXPORT);
const N = plan.messages.length;

/** The default profile in one process. */
const embedded = async (): Promise<Row> => {
  const rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', DATABASE_URL: '', KAFKA_BROKERS: '' }));
  const t0 = performance.now();
  await appendPlan(rt, plan);
  const subs = await startProjectors(rt);
  await waitForProjectors(rt);
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(subs.map((s) => s.stop()));
  await rt.close();
  return { setup: 'embedded log, 1 process', messages: N, seconds, rate: N / seconds };
};

const until = async (fn: () => boolean | Promise<boolean>, ms = 120_000) => {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
};

/** Kafka with projector processes; the clock runs from the first append to lag 0 everywhere. */
const kafka = async (partitions: number, factsInstances: number): Promise<Row> => {
  const id = randomUUID().replaceAll('-', '').slice(0, 10);
  const schema = `bench_${id}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`create schema "${schema}"`);
  const env = {
    ...process.env,
    KAFKA_BROKERS: brokers!,
    KAFKA_NAMESPACE: `bench-${id}`,
    KAFKA_SESSION_TIMEOUT_MS: '10000',
    EVENTLOG_PARTITIONS: String(partitions),
    DATABASE_URL: `${pgUrl}${pgUrl!.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema},public`)}`,
    LOG_LEVEL: 'warn',
  };
  const rt: Runtime = await openRuntime(loadConfig(env));
  await rt.eventLog.ensureTopics(Object.values(TOPICS).map((name) => ({ name, partitions })));
  const children: ChildProcess[] = [];
  const ready: boolean[] = [];
  for (const svc of ['documents', 'keyword', ...Array(factsInstances).fill('facts')]) {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/atlas.mjs'), 'run', svc], { cwd: ROOT, env });
    const i = ready.push(false) - 1;
    child.stdout.on('data', (d) => {
      if (String(d).includes('is running')) ready[i] = true;
    });
    children.push(child);
  }
  try {
    await until(() => ready.every(Boolean));
    await new Promise((r) => setTimeout(r, 3000)); // let the facts group settle its assignment
    const t0 = performance.now();
    await appendPlan(rt, plan);
    await until(async () => (await projectorLag(rt)) === 0, 600_000);
    const seconds = (performance.now() - t0) / 1000;
    return {
      setup: `Kafka, ${partitions} partition${partitions > 1 ? 's' : ''}, ${factsInstances} facts process${factsInstances > 1 ? 'es' : ''}`,
      messages: N,
      seconds,
      rate: N / seconds,
    };
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await rt.close();
    await admin.query(`drop schema "${schema}" cascade`);
    await admin.end();
  }
};

/** The broker's ceiling: produce the same encoded records, then consume them with no work. */
const ceiling = async (partitions: number): Promise<Row> => {
  const h = await openDatabase({ dataDir: 'memory://' });
  await migrateEventLog(h.db);
  const codec = new EventCodec(new KyselySchemaRegistry(h.db));
  await codec.init();
  const log = new KafkaEventLog(codec, {
    brokers: brokers!.split(','),
    namespace: `ceiling-${randomUUID().slice(0, 8)}`,
    defaultPartitions: partitions,
  });
  const topic = 'atlas.messages';
  await log.ensureTopics([{ name: topic, partitions }]);
  const t0 = performance.now();
  await log.append(
    topic,
    plan.messages.map((m) => ({ type: 'MessageIngested' as const, key: m.channelId, data: m })),
  );
  let seen = 0;
  const sub = await log.subscribe({
    group: 'ceiling',
    topics: [topic],
    handler: async (b) => {
      seen += b.length;
    },
  });
  await until(() => seen >= N);
  const seconds = (performance.now() - t0) / 1000;
  await sub.stop();
  await log.close();
  await h.close();
  return {
    setup: `Kafka ceiling, ${partitions} partition${partitions > 1 ? 's' : ''} (produce + consume, no work)`,
    messages: N,
    seconds,
    rate: N / seconds,
  };
};

const rows: Row[] = [await embedded()];
const skipped: string[] = [];
if (brokers && pgUrl) {
  for (const [p, f] of [
    [1, 1],
    [3, 1],
    [3, 2],
  ] as const) {
    rows.push(await kafka(p, f));
  }
  rows.push(await ceiling(1), await ceiling(3));
} else
  skipped.push(
    'Kafka rows skipped: set KAFKA_BROKERS and DATABASE_URL (scripts/services up; PostgreSQL on 127.0.0.1).',
  );

const best = Math.max(...rows.filter((r) => r.setup.startsWith('Kafka ceiling')).map((r) => r.rate), 0);
const head = ['setup', 'messages', 'seconds', 'msg/s', 'of ceiling'];
const cells = rows.map((r) => [
  r.setup,
  String(r.messages),
  r.seconds.toFixed(2),
  String(Math.round(r.rate)),
  best ? `${((r.rate / best) * 100).toFixed(1)}%` : '-',
]);
const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i]!)).join(' | ')} |`;
console.log(line(head));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const c of cells) console.log(line(c));
for (const s of skipped) console.log(s);
console.log('\n"of ceiling" divides by the best raw produce-then-consume rate of the same broker and records.');
process.exit(0);
