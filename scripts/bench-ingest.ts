/**
 * `npm run bench:ingest`: end-to-end ingest rate (events appended → the projectors caught up, so the facts are stored,
 * indexed and embedded) of the clojurians export (7,896 messages), on:
 *   - the embedded log, in one process (the default profile: PGlite stores), once per local encoder: USE-lite (the
 *     default before issue 24) and each of `BENCH_ENCODERS` (default e5-small-v2; fetched with `atlas models fetch`);
 *   - Kafka with 1 and 3 partitions, and 1 or 2 `atlas run facts` processes beside `atlas run documents` and
 *     `atlas run keyword` (no embeddings: the log and the facts projector alone; PostgreSQL stores, as separate
 *     processes must share them);
 *   - Kafka with 3 partitions, documents + keyword + facts, and 1 or 2 `atlas run embeddings` processes, once per
 *     local encoder (the embeddings consumer group spreads the facts topic's partitions over the processes);
 * beside the ceiling: the same broker's raw produce-then-consume rate of the same records (no work).
 * Each row: seconds from the first append to lag 0 of the consumer groups of the projectors that run, messages/s, and
 * vectors/s (vectors written / those seconds). `BENCH_EMBEDDED=0` skips the embedded rows, `BENCH_KAFKA=0` the Kafka
 * rows.
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
  encoder: string;
  messages: number;
  vectors: number;
  seconds: number;
  rate: number;
}

const ENCODERS = [
  'use-lite',
  ...(process.env.BENCH_ENCODERS ?? 'e5-small-v2')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x && x !== 'use-lite'),
];
/** The projectors the Kafka rows run as processes (and wait for), without and with embeddings. */
const LOG_ONLY = ['documents', 'keyword', 'facts'];

const plan = await planImport(EXPORT);
const N = plan.messages.length;

/** The default profile in one process, every projector, with the local encoder `model`. */
const embedded = async (model: string): Promise<Row> => {
  const rt = await openRuntime(
    loadConfig({ ATLAS_DATA_DIR: 'memory://', DATABASE_URL: '', KAFKA_BROKERS: '', EMBEDDING_LOCAL_MODEL: model }),
  );
  const t0 = performance.now();
  await appendPlan(rt, plan);
  const subs = await startProjectors(rt);
  await waitForProjectors(rt);
  const seconds = (performance.now() - t0) / 1000;
  const vectors = (await rt.embeddings?.vectors.count()) ?? 0;
  const encoder = rt.embeddings?.embedder.id ?? 'none';
  await Promise.all(subs.map((s) => s.stop()));
  await rt.close();
  return { setup: 'embedded log, 1 process', encoder, messages: N, vectors, seconds, rate: N / seconds };
};

const until = async (fn: () => boolean | Promise<boolean>, ms = 120_000) => {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
};

/**
 * Kafka with one process per projector (`atlas run <name>`; names may repeat: instances of one consumer group); the
 * clock runs from the first append to lag 0 of every group that runs. `model` null runs without embeddings.
 */
const kafka = async (partitions: number, services: string[], model: string | null): Promise<Row | string> => {
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
    ...(model ? { EMBEDDING_PROVIDER: 'local', EMBEDDING_LOCAL_MODEL: model } : { EMBEDDING_PROVIDER: 'none' }),
  };
  // Opened first, so the vector space of `model` is registered before the processes start.
  const rt: Runtime = await openRuntime(loadConfig(env));
  if (model && !rt.embeddings) {
    // Separate embeddings processes need a vector store they share: pgvector on the server, or Qdrant.
    const why = rt.embeddingsUnavailable ?? 'no vector store';
    await rt.close();
    await admin.query(`drop schema "${schema}" cascade`);
    await admin.end();
    return `Kafka embeddings rows (${model}) skipped: ${why} (they need pgvector on the PostgreSQL server, e.g. scripts/pgvector install, or QDRANT_URL).`;
  }
  await rt.eventLog.ensureTopics(Object.values(TOPICS).map((name) => ({ name, partitions })));
  const children: ChildProcess[] = [];
  const ready: boolean[] = [];
  const out: string[][] = [];
  for (const svc of services) {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/atlas.mjs'), 'run', svc], { cwd: ROOT, env });
    const i = ready.push(false) - 1;
    out.push([]);
    child.stdout.on('data', (d) => {
      out[i]!.push(String(d));
      if (String(d).includes('is running')) ready[i] = true;
    });
    child.stderr.on('data', (d) => out[i]!.push(String(d)));
    children.push(child);
  }
  /** A process that exited: fail with what it printed. */
  const exited = () => {
    const i = children.findIndex((c) => c.exitCode !== null || c.signalCode !== null);
    if (i >= 0)
      throw new Error(`atlas run ${services[i]} exited (${children[i]!.exitCode}):\n${out[i]!.join('').slice(-3000)}`);
  };
  try {
    await until(() => {
      exited();
      return ready.every(Boolean);
    }, 300_000);
    await new Promise((r) => setTimeout(r, 3000)); // let each group settle its assignment
    const t0 = performance.now();
    await appendPlan(rt, plan);
    const groups = [...new Set(services)];
    await until(async () => {
      exited();
      return (await projectorLag(rt, groups)) === 0;
    }, 900_000);
    const seconds = (performance.now() - t0) / 1000;
    const vectors = model ? ((await rt.embeddings?.vectors.count()) ?? 0) : 0;
    const count = (name: string) => services.filter((x) => x === name).length;
    const plural = (n: number, what: string) => `${n} ${what} process${n > 1 ? 'es' : ''}`;
    return {
      setup: `Kafka, ${partitions} partition${partitions > 1 ? 's' : ''}, ${
        model ? plural(count('embeddings'), 'embeddings') : plural(count('facts'), 'facts')
      }`,
      encoder: model ? (rt.embeddings?.embedder.id ?? model) : 'none',
      messages: N,
      vectors,
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
    encoder: 'none',
    messages: N,
    vectors: 0,
    seconds,
    rate: N / seconds,
  };
};

const rows: Row[] = [];
/** Each row on stderr as it is measured (the table follows at the end). */
const measured = (r: Row | string): Row[] => {
  if (typeof r === 'string') {
    skipped.push(r);
    return [];
  }
  console.error(`${r.setup} · ${r.encoder}: ${r.seconds.toFixed(1)} s, ${r.vectors} vectors`);
  return [r];
};
const skipped: string[] = [];
if (process.env.BENCH_EMBEDDED !== '0') for (const m of ENCODERS) rows.push(...measured(await embedded(m)));
if (process.env.BENCH_KAFKA === '0') skipped.push('Kafka rows skipped (BENCH_KAFKA=0).');
else if (brokers && pgUrl) {
  for (const [p, f] of [
    [1, 1],
    [3, 1],
    [3, 2],
  ] as const)
    rows.push(...measured(await kafka(p, [...LOG_ONLY, ...Array<string>(f).fill('facts').slice(1)], null)));
  for (const m of ENCODERS)
    for (const e of [1, 2]) {
      const row = await kafka(3, [...LOG_ONLY, ...Array<string>(e).fill('embeddings')], m);
      rows.push(...measured(row));
      if (typeof row === 'string') break; // the same store is missing for two processes
    }
  rows.push(await ceiling(1), await ceiling(3));
} else
  skipped.push(
    'Kafka rows skipped: set KAFKA_BROKERS and DATABASE_URL (scripts/services up; PostgreSQL on 127.0.0.1).',
  );

const best = Math.max(...rows.filter((r) => r.setup.startsWith('Kafka ceiling')).map((r) => r.rate), 0);
/** The same setup's USE-lite row: the baseline of "vs USE-lite". */
const baseOf = (r: Row) => rows.find((b) => b.setup === r.setup && b.encoder.startsWith('use-lite'));
const head = [
  'setup',
  'encoder',
  'messages',
  'vectors',
  's to lag 0',
  'msg/s',
  'vectors/s',
  'vs USE-lite',
  'of ceiling',
];
const cells = rows.map((r) => {
  const base = r.vectors ? baseOf(r) : undefined;
  return [
    r.setup,
    r.encoder,
    String(r.messages),
    String(r.vectors),
    r.seconds.toFixed(2),
    String(Math.round(r.rate)),
    r.vectors ? String(Math.round(r.vectors / r.seconds)) : '-',
    base ? `${(base.seconds / r.seconds).toFixed(2)}x` : '-',
    best ? `${((r.rate / best) * 100).toFixed(1)}%` : '-',
  ];
});
const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i]!)).join(' | ')} |`;
console.log(line(head));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const c of cells) console.log(line(c));
for (const s of skipped) console.log(s);
console.log(
  '\nvectors/s = vectors written / seconds to lag 0; "vs USE-lite" = the same setup\'s USE-lite seconds / these seconds;',
);
console.log('"of ceiling" divides msg/s by the best raw produce-then-consume rate of the same broker and records.');
process.exit(0);
