/**
 * `npm run bench:import`: import throughput per real data set on the embedded default, by phase.
 * Each data set goes into a fresh in-memory database. Phases: open (create the database, migrate),
 * plan (read and map the export), append (one atomic append), project (every projector to lag 0).
 * The baseline beside it is the same run with a no-op extractor (no facts): the cost of the log and
 * the stores alone, so `extraction share` is what fact extraction adds. A third run keeps fact extraction
 * but extracts no entities: `graph share` is what entity extraction and the graph store add. A fourth run turns write
 * intents off (no WriteIntentCreated, no store outcomes, no reconciler projector): `intents share` is what the write
 * intents add (spec "Write intent (two-phase persist)"). `BENCH_SETS=slack-olake,discord-ethglobal` picks data sets.
 *
 * A second table compares the local encoders on the full pipeline, in turns in the same run: USE-lite (the baseline,
 * the default before issue 24) and the ONNX encoders of `BENCH_ENCODERS` (default e5-small-v2; fetched first with
 * `atlas models fetch`): seconds to lag 0, messages/s, and vectors/s (vectors written / projection seconds).
 * `BENCH_PHASES=0` skips the phase table, `BENCH_ENCODERS=none` the encoder table.
 */
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import type { EntityExtractor, FactExtractor } from '@atlas/pipeline';
import { planImport } from '@atlas/platforms';
import { appendPlan, drainProjectors, openRuntime } from '@atlas/runtime';

const DATA = path.resolve(import.meta.dirname, '../../shared/data');
const SETS = [
  ['slack-clojurians', 'slack-clojurians-2018-02/export'],
  ['slack-olake', 'slack-olake/export'],
  ['discord-ethglobal', 'discord-ethglobal'],
] as const;
const noop: FactExtractor = { id: 'noop@0', extract: async () => [] };
const noEntities: EntityExtractor = {
  id: 'noop-entities@0',
  extract: async () => ({ entities: [], relationships: [], supersessions: [], people: [], decisions: [] }),
};

const run = async (
  dir: string,
  extractor?: FactExtractor,
  entityExtractor?: EntityExtractor,
  writeIntents = true,
  env: Record<string, string> = {},
) => {
  const t0 = performance.now();
  const rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', ...env }));
  if (extractor) rt.extractor = extractor;
  if (entityExtractor) rt.entityExtractor = entityExtractor;
  rt.writeIntents = writeIntents;
  const t1 = performance.now();
  const plan = await planImport(dir);
  const t2 = performance.now();
  await appendPlan(rt, plan);
  const t3 = performance.now();
  await drainProjectors(rt, 0, false);
  const t4 = performance.now();
  const facts = (await rt.documents.counts()).facts;
  const vectors = (await rt.embeddings?.vectors.count()) ?? 0;
  const model = rt.embeddings?.embedder.id ?? 'none';
  await rt.close();
  return {
    messages: plan.messages.length,
    facts,
    vectors,
    model,
    open: t1 - t0,
    plan: t2 - t1,
    append: t3 - t2,
    project: t4 - t3,
  };
};

const rows: string[][] = [];
const picked = process.env.BENCH_SETS?.split(',').map((x) => x.trim());
const sets = SETS.filter(([n]) => !picked || picked.includes(n));
for (const [name, rel] of process.env.BENCH_PHASES === '0' ? [] : sets) {
  const dir = path.join(DATA, rel);
  const base = await run(dir, noop);
  const noGraph = await run(dir, undefined, noEntities);
  const noIntents = await run(dir, undefined, undefined, false);
  const full = await run(dir);
  const ingest = full.plan + full.append + full.project;
  const noGraphIngest = noGraph.plan + noGraph.append + noGraph.project;
  const noIntentsIngest = noIntents.plan + noIntents.append + noIntents.project;
  rows.push([
    name,
    String(full.messages),
    String(full.facts),
    (full.facts / full.messages).toFixed(3),
    (full.open / 1000).toFixed(2),
    (full.plan / 1000).toFixed(2),
    (full.append / 1000).toFixed(2),
    (full.project / 1000).toFixed(2),
    String(Math.round(full.messages / (ingest / 1000))),
    String(Math.round(full.messages / ((base.plan + base.append + base.project) / 1000))),
    `${Math.round((1 - (base.plan + base.append + base.project) / ingest) * 100)}%`,
    String(Math.round(full.messages / (noGraphIngest / 1000))),
    `${Math.round((1 - noGraphIngest / ingest) * 100)}%`,
    String(Math.round(full.messages / (noIntentsIngest / 1000))),
    `${Math.round((1 - noIntentsIngest / ingest) * 100)}%`,
  ]);
}
const head = [
  'data set',
  'messages',
  'facts',
  'facts/msg',
  'open s',
  'plan s',
  'append s',
  'project s',
  'msg/s',
  'msg/s no-op',
  'extraction share',
  'msg/s no graph',
  'graph share',
  'msg/s no intents',
  'intents share',
];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
if (rows.length > 0) {
  console.log(line(head));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
  console.log('\nmsg/s = messages / (plan + append + project); open is the fixed cost of a fresh embedded database.');
}

const encoders = (process.env.BENCH_ENCODERS ?? 'e5-small-v2').split(',').map((x) => x.trim());
if (!encoders.includes('none')) {
  const erows: string[][] = [];
  for (const [name, rel] of sets) {
    const dir = path.join(DATA, rel);
    const runs = [];
    for (const m of ['use-lite', ...encoders])
      runs.push(await run(dir, undefined, undefined, true, { EMBEDDING_LOCAL_MODEL: m }));
    const base = runs[0]!;
    const secs = (r: typeof base) => (r.plan + r.append + r.project) / 1000;
    for (const r of runs)
      erows.push([
        name,
        r.model,
        String(r.messages),
        String(r.vectors),
        secs(r).toFixed(1),
        String(Math.round(r.messages / secs(r))),
        String(Math.round(r.vectors / (r.project / 1000))),
        `${(secs(base) / secs(r)).toFixed(2)}x`,
      ]);
  }
  const ehead = ['data set', 'encoder', 'messages', 'vectors', 's to lag 0', 'msg/s', 'vectors/s', 'speed vs USE-lite'];
  const ew = ehead.map((h, i) => Math.max(h.length, ...erows.map((r) => r[i]!.length)));
  const eline = (r: string[]) => `| ${r.map((c, i) => c.padEnd(ew[i]!)).join(' | ')} |`;
  console.log(`\n${eline(ehead)}`);
  console.log(`|${ew.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of erows) console.log(eline(r));
  console.log('\nEvery projector to lag 0 (embeddings included); vectors/s = vectors written / projection seconds.');
}
