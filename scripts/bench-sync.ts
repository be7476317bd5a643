/**
 * `npm run bench:sync`: a first sync of 1000 messages (SYNC_MAX_MESSAGES, the spec's initial sync) of Clojurians
 * #clojure through the Slack Web API emulator, on the embedded default (PGlite in a fresh data dir, the local sentence
 * encoder, default log polling, SYNC_BATCH_SIZE 50), timed by stage from the job's own SyncJobUpdated events. Beside
 * it, how soon facts are keyword-searchable while the job runs: the keyword index is sampled every 200 ms, giving the
 * time to the first searchable fact and the share of the final facts searchable when fetching ends. Target:
 * under 60 s. `BENCH_RUNS` (default 1) repeats the run on fresh data dirs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '@atlas/api';
import { loadConfig, type StoredEvent, type SyncJobUpdated, TOPICS } from '@atlas/core';
import { SlackEmulator } from '@atlas/platforms/testing';
import { apiPorts, openRuntime, startProjectors, startRuntimeSyncWorker } from '@atlas/runtime';
import { sql } from 'kysely';

const EXPORT = path.resolve(import.meta.dirname, '../../shared/data/slack-clojurians-2018-02/export');
const CHANNEL = 'C03S1KBA2'; // #clojure: 1359 messages, 109 thread replies
const RUNS = Number(process.env.BENCH_RUNS ?? 1);

const run = async (emu: SlackEmulator) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'atlas-bench-sync-'));
  const rt = await openRuntime(
    loadConfig({
      ...process.env,
      ATLAS_DATA_DIR: dir,
      PLATFORM_A_API_URL: emu.url,
      CREDENTIAL_MASTER_KEY: '3b'.repeat(32),
    }),
  );
  const updates: { at: number; u: SyncJobUpdated }[] = [];
  const subs = await startProjectors(rt);
  subs.push(
    await rt.eventLog.subscribe({
      group: 'bench.sync-updates',
      topics: [TOPICS.syncJobs],
      handler: async (batch: StoredEvent[]) => {
        for (const e of batch)
          if (e.type === 'SyncJobUpdated') updates.push({ at: performance.now(), u: e.data as SyncJobUpdated });
      },
    }),
  );
  const worker = await startRuntimeSyncWorker(rt);
  const app = await buildApp(apiPorts(rt));
  const conn = await rt.connections.create({
    name: 'bench',
    platform: 'platform_a',
    credentials: { bot_token: emu.token, signing_secret: 'bench' },
  });
  await rt.connections.saveChannels(conn.id, [
    { id: CHANNEL, name: '#clojure', is_private: false, member_count: 0, sync_enabled: true },
  ]);
  const searchable = async () =>
    Number(
      (
        await sql<{ n: string }>`select count(*) as n from keyword_facts where channel_id = ${CHANNEL}`.execute(
          rt.database.db,
        )
      ).rows[0]?.n ?? 0,
    );
  const samples: { at: number; facts: number }[] = [];
  const t0 = performance.now();
  const r = await app.inject({ method: 'POST', url: '/api/sync', payload: { channel_id: CHANNEL } });
  const jobId = (r.json() as { job_id: string }).job_id;
  for (;;) {
    samples.push({ at: performance.now(), facts: await searchable() });
    const last = updates.at(-1)?.u;
    if (last?.jobId === jobId && last.status !== 'running') break;
    await new Promise((res) => setTimeout(res, 200));
  }
  const end = performance.now();
  const mine = updates.filter((x) => x.u.jobId === jobId);
  const stageAt = (s: string) => mine.find((x) => x.u.stage === s)?.at ?? end;
  const done = mine.at(-1)!.u;
  const finalFacts = await searchable();
  const fetchEnd = stageAt('extracting_facts');
  const firstFact = samples.find((s) => s.facts > 0)?.at ?? end;
  const atFetchEnd = samples.filter((s) => s.at <= fetchEnd).at(-1)?.facts ?? 0;
  const search = await app.inject({
    method: 'POST',
    url: '/api/search',
    payload: { query: 'macro', channel_id: CHANNEL, limit: 10 },
  });
  const hits = (search.json() as { total?: number }).total ?? -1;
  await worker.stop();
  await app.close();
  await Promise.all(subs.map((s) => s.stop()));
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
  const s = (ms: number) => (ms / 1000).toFixed(1);
  return [
    done.status,
    String(done.processedMessages),
    String(finalFacts),
    s(fetchEnd - t0),
    s(stageAt('building_graph') - fetchEnd),
    s(stageAt('generating_wiki') - stageAt('building_graph')),
    s(end - stageAt('generating_wiki')),
    s(end - t0),
    String(Math.round(done.processedMessages / ((end - t0) / 1000))),
    s(firstFact - t0),
    `${Math.round((100 * atFetchEnd) / Math.max(1, finalFacts))}%`,
    String(hits),
  ];
};

const emu = await SlackEmulator.start(EXPORT);
const rows: string[][] = [];
for (let i = 0; i < RUNS; i++) rows.push(await run(emu));
await emu.close();
const head = [
  'status',
  'messages',
  'facts',
  'fetch s',
  'facts+index s',
  'graph s',
  'wiki s',
  'total s',
  'msg/s',
  'first searchable s',
  'searchable at fetch end',
  "hits 'macro'",
];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i]!)).join(' | ')} |`;
console.log(
  `sync of #clojure (first sync, SYNC_MAX_MESSAGES ${loadConfig(process.env).SYNC_MAX_MESSAGES}) through the Slack emulator, embedded default`,
);
console.log(line(head));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows) console.log(line(r));
