/**
 * `npm run bench:wiki`: wiki generation on real data. Imports the slack-clojurians-2018-02 export (by path) into a fresh
 * in-memory runtime with the default (local) embeddings EXCEPT its last day, generates the full wiki of every channel
 * (time, RSS and heap delta per channel), then imports the last day: the wiki projector marks the channels whose
 * knowledge changed stale, and the incremental generation runs for those: the scheduler's pass (WikiGenerator.generateStale:
 * the stale channels together, their store calls batched), through the runtime's WikiGenerator (its cache holds the
 * sources, clusters and pages of the runs before: a long-lived process).
 * Finally a full rebuild of every channel on the final data (the daily rebuild, one channel after the other) gives the
 * side-by-side baseline.
 * Prints one row per channel for the 5 busiest (by facts) and a total row over all channels: facts (after the last
 * day, +new), clusters, mean coherence, share of facts assigned, pages, full ms (final data), incremental ms (`in
 * pass`: run in the pass, whose channels overlap; 0: not stale, not run; total row: walls of the rebuild and of the
 * pass), their ratio, pages rebuilt incrementally, citations verified/total (of the incremental version, kept pages
 * included), and the first full run's RSS / heap delta in MB; then phase totals.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { appendPlan, drainProjectors, openRuntime } from '@atlas/runtime';
import {
  authorCentred,
  authorCentringOf,
  centredCoherences,
  clusterParamsOf,
  type WikiGenerateResult,
  type WikiPage,
} from '@atlas/wiki';

/**
 * With BENCH_PROFILE=<dir>, a V8 CPU profile of each timed phase (incremental, full rebuild) is written there
 * (`wiki-incremental.cpuprofile`, `wiki-full.cpuprofile`; open in Chrome DevTools).
 */
const PROFILE_DIR = process.env.BENCH_PROFILE;
const profiled = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
  if (!PROFILE_DIR) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(path.join(PROFILE_DIR, `wiki-${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
};

const SRC = path.resolve(import.meta.dirname, '../../shared/data/slack-clojurians-2018-02/export');
const MB = 1024 * 1024;

/**
 * With BENCH_WIKI_EMBEDDERS=use-lite,e5-small-v2 (EMBEDDING_LOCAL_MODEL values; ONNX ones from ATLAS_MODELS_DIR):
 * instead of the incremental bench, the encoders side by side. Per encoder, a fresh in-memory runtime imports the
 * real exports (slack-clojurians-2018-02, slack-olake, discord-ethglobal when present) and generates every channel's
 * wiki in full, with the cluster parameters of that embedder (clusterParamsOf). One row per data set and encoder:
 * facts with vectors, clusters, topic pages, coherence mean / lowest (raw, as stored, over clusters of >= 3 facts,
 * size-weighted mean), the same in channel-centred space (centredCoherences over the author-centred vectors the
 * clustering saw), share of facts assigned to a cluster, share in a topic page's cluster (>= minSize facts), and
 * the share of clusters whose centred coherence is below minCoherence. Then, for the 2 busiest channels of each
 * data set, the titles of the 6 biggest topic pages with their first 5 key facts, to judge by reading whether a page
 * is one subject.
 */
if (process.env.BENCH_WIKI_EMBEDDERS) {
  await compareEmbedders(process.env.BENCH_WIKI_EMBEDDERS.split(',').map((m) => m.trim()));
  process.exit(0);
}

async function compareEmbedders(models: string[]): Promise<void> {
  const sets = [
    ['clojurians', 'slack-clojurians-2018-02/export'],
    ['olake', 'slack-olake/export'],
    ['discord', 'discord-ethglobal'],
  ]
    .map(([name, rel]) => [name!, path.resolve(import.meta.dirname, '../../shared/data', rel!)] as const)
    .filter(([, dir]) => existsSync(dir));
  const rows: string[][] = [];
  const samples: string[] = [];
  for (const model of models) {
    const env: Record<string, string> = { ATLAS_DATA_DIR: 'memory://', EMBEDDING_LOCAL_MODEL: model };
    if (process.env.ATLAS_MODELS_DIR) env.ATLAS_MODELS_DIR = process.env.ATLAS_MODELS_DIR;
    const rt = await openRuntime(loadConfig(env));
    if (!rt.embeddings) throw new Error(`no embeddings: ${rt.embeddingsUnavailable}`);
    const embedderId = rt.embeddings.embedder.id;
    const params = clusterParamsOf(embedderId);
    const centring = authorCentringOf(embedderId);
    for (const [set, dir] of sets) {
      const t = performance.now();
      const before = new Set((await rt.documents.listChannels()).map((c) => c.id));
      await appendPlan(rt, await planImport(dir));
      await drainProjectors(rt, 0, false);
      const channels = (await rt.documents.listChannels()).filter((c) => !before.has(c.id));
      let withVectors = 0;
      let assigned = 0;
      let inTopics = 0;
      let pages = 0;
      const raw: { coh: number; n: number }[] = [];
      const centred: { coh: number; n: number }[] = [];
      const perChannel: { name: string; facts: number; pages: WikiPage[] }[] = [];
      for (const c of channels) {
        const r = await rt.wikiGenerator!.generate(c.id, 'full');
        withVectors += r.factsWithVectors;
        assigned += new Set(r.clusters.flatMap((x) => x.member_ids)).size;
        const topical = r.clusters.filter((x) => x.member_ids.length >= params.minSize);
        inTopics += topical.reduce((n, x) => n + x.member_ids.length, 0);
        const ps = (await rt.wiki.pages(c.id)).filter((p) => p.page_type !== 'fixed');
        pages += ps.length;
        perChannel.push({ name: c.name, facts: r.factsWithVectors, pages: ps });
        if (topical.length === 0) continue;
        // The vectors the clustering saw: author-centred (authorCentringOf), then centred per channel.
        const ids = r.clusters.flatMap((x) => x.member_ids);
        const [vecs, mems] = await Promise.all([rt.embeddings.vectors.vectorsOf(ids), rt.documents.getMemories(ids)]);
        const authorOf = new Map([...mems].map(([id, m]) => [id, m.author_name]));
        const seen = authorCentred(ids, vecs, authorOf, centring);
        const cc = centredCoherences(r.clusters, seen);
        r.clusters.forEach((x, i) => {
          if (x.member_ids.length < params.minSize) return;
          raw.push({ coh: x.coherence, n: x.member_ids.length });
          centred.push({ coh: cc[i]!, n: x.member_ids.length });
        });
      }
      const wmean = (xs: { coh: number; n: number }[]) =>
        xs.reduce((s, x) => s + x.coh * x.n, 0) /
        Math.max(
          1,
          xs.reduce((s, x) => s + x.n, 0),
        );
      const low = (xs: { coh: number }[]) => (xs.length ? Math.min(...xs.map((x) => x.coh)) : 0);
      rows.push([
        set,
        embedderId,
        String(withVectors),
        String(raw.length),
        String(pages),
        `${wmean(raw).toFixed(2)} / ${low(raw).toFixed(2)}`,
        `${wmean(centred).toFixed(2)} / ${low(centred).toFixed(2)}`,
        (assigned / Math.max(1, withVectors)).toFixed(3),
        (inTopics / Math.max(1, withVectors)).toFixed(3),
        (centred.filter((x) => x.coh < params.minCoherence).length / Math.max(1, centred.length)).toFixed(2),
        ((performance.now() - t) / 1000).toFixed(0),
      ]);
      for (const ch of perChannel.sort((a, b) => b.facts - a.facts).slice(0, 2)) {
        samples.push(`\n## ${set} #${ch.name} (${ch.facts} facts, ${ch.pages.length} topic pages), ${embedderId}`);
        for (const p of [...ch.pages].sort((a, b) => b.memory_count - a.memory_count).slice(0, 6)) {
          samples.push(`- ${p.title} (${p.memory_count} facts)`);
          const facts = p.content.split('\n').filter((l) => /^\s*[-*] /.test(l));
          for (const f of facts.slice(0, 5)) samples.push(`    ${f.trim().slice(0, 150)}`);
        }
      }
    }
    await rt.close();
  }
  const head = [
    'data set',
    'embedder',
    'facts',
    'clusters >= 3',
    'topic pages',
    'raw coh. mean / min',
    'centred coh. mean / min',
    'assigned',
    'in topics',
    'centred < minCoh',
    's',
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((l) => l[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\n${line(head)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
  for (const r of rows.sort((a, b) => a[0]!.localeCompare(b[0]!))) console.log(line(r));
  console.log(samples.join('\n'));
}

const t0 = performance.now();
const rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://' }));
if (!rt.embeddings) throw new Error(`no embeddings: ${rt.embeddingsUnavailable}`);
const plan = await planImport(SRC);
const lastDay = plan.messages
  .map((m) => m.timestamp.slice(0, 10))
  .sort()
  .at(-1)!;
const early = plan.messages.filter((m) => m.timestamp.slice(0, 10) < lastDay);
await appendPlan(rt, { ...plan, messages: early });
await drainProjectors(rt, 0, false);
const wiki = rt.wiki;
// The runtime's generator (what the scheduler and the API use: per-channel queue, cached sources of the last run).
const generator = rt.wikiGenerator!;
console.log(
  `imported ${early.length} of ${plan.messages.length} messages (all but ${lastDay}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);

interface Row {
  id: string;
  name: string;
  /** The first full run (data before the last day), then the full rebuild of the final data. */
  first: WikiGenerateResult;
  full?: WikiGenerateResult;
  incr?: WikiGenerateResult;
  rssMb: number;
  heapMb: number;
}
const rows = new Map<string, Row>();
const channels = await rt.documents.listChannels();
const fullStart = performance.now();
for (const c of channels) {
  const m0 = process.memoryUsage();
  const first = await generator.generate(c.id, 'full', new Date(`${lastDay}T00:00:00Z`));
  const m1 = process.memoryUsage();
  rows.set(c.id, {
    id: c.id,
    name: c.name,
    first,
    rssMb: (m1.rss - m0.rss) / MB,
    heapMb: (m1.heapUsed - m0.heapUsed) / MB,
  });
}
const firstWall = performance.now() - fullStart;

const t1 = performance.now();
await appendPlan(rt, plan);
await drainProjectors(rt, 0, false);
console.log(
  `imported the last day (${plan.messages.length - early.length} messages) in ${((performance.now() - t1) / 1000).toFixed(1)} s`,
);
// The channels the wiki projector marked stale: what the scheduler regenerates once the projectors are idle.
const stale = new Set(await wiki.staleChannels());
// The scheduler's pass: every stale channel together (generateStale), their store calls batched.
const incrStart = performance.now();
const pass = await profiled('incremental', () => generator.generateStale(new Date(`${lastDay}T23:59:59Z`)));
const incrWall = performance.now() - incrStart;
for (const f of pass.failed) console.log(`  incremental of ${f.channelId} failed: ${f.error}`);
for (const r of pass.results) {
  const row = rows.get(r.channelId);
  if (row) row.incr = r;
}
// The daily rebuild of the final data: the baseline, side by side.
const full2Start = performance.now();
await profiled('full', async () => {
  for (const c of await rt.documents.listChannels()) {
    const row = rows.get(c.id);
    if (row) row.full = await generator.generate(c.id, 'full', new Date(`${lastDay}T23:59:59Z`));
  }
});
const fullWall = performance.now() - full2Start;

const notRun = (r: Row): WikiGenerateResult => ({
  ...r.full!,
  pagesRebuilt: 0,
  renumberedPageIds: [],
  rebuiltBecause: { touched: 0, moved: 0, stale: 0 },
  phasesMs: { read: 0, cluster: 0, render: 0, save: 0 },
  durationMs: 0,
});
const all = [...rows.values()]
  .filter((r) => r.full !== undefined)
  .map((r) => ({ ...r, full: r.full!, incr: r.incr ?? notRun(r) }));
const busiest = [...all].sort((a, b) => b.incr.facts - a.incr.facts).slice(0, 5);
const fmt = (r: {
  name: string;
  facts: number;
  newFacts: number;
  clusters: number;
  coherence: number;
  assigned: number;
  pages: number;
  fullMs: number;
  incrMs: number;
  rebuilt: number;
  renumbered: number;
  because: { touched: number; moved: number; stale: number };
  verified: number;
  total: number;
  rssMb: number;
  heapMb: number;
}) => [
  r.name,
  `${r.facts} (+${r.newFacts})`,
  String(r.clusters),
  r.coherence.toFixed(3),
  r.assigned.toFixed(3),
  String(r.pages),
  String(Math.round(r.fullMs)),
  r.incrMs < 0 ? 'in pass' : String(Math.round(r.incrMs)),
  r.incrMs > 0 ? (r.fullMs / r.incrMs).toFixed(1) : '-',
  `${r.rebuilt}/${r.pages} (${r.because.touched}+${r.because.moved - r.renumbered}+${r.because.stale}), ${r.renumbered}`,
  `${r.verified}/${r.total}`,
  r.rssMb.toFixed(1),
  r.heapMb.toFixed(1),
];
const lines = busiest.map((r) =>
  fmt({
    name: `#${r.name}`,
    facts: r.incr.facts,
    newFacts: r.incr.facts - r.first.facts,
    clusters: r.incr.clusters.length,
    coherence: r.incr.stats.meanCoherence,
    assigned: r.incr.stats.assignedShare,
    pages: r.incr.pages,
    fullMs: r.full.durationMs,
    // The stale channels run together: a channel's own time is not separable from the pass.
    incrMs: stale.has(r.id) ? -1 : 0,
    rebuilt: r.incr.pagesRebuilt,
    renumbered: r.incr.renumberedPageIds.length,
    because: r.incr.rebuiltBecause,
    verified: r.incr.citations.verified,
    total: r.incr.citations.total,
    rssMb: r.rssMb,
    heapMb: r.heapMb,
  }),
);
const sum = (f: (r: (typeof all)[number]) => number) => all.reduce((s, r) => s + f(r), 0);
const nClusters = sum((r) => r.incr.clusters.length);
lines.push(
  fmt({
    name: `total (${all.length} channels)`,
    facts: sum((r) => r.incr.facts),
    newFacts: sum((r) => r.incr.facts - r.first.facts),
    clusters: nClusters,
    coherence: nClusters ? sum((r) => r.incr.stats.meanCoherence * r.incr.clusters.length) / nClusters : 0,
    assigned:
      sum((r) => r.incr.stats.assignedShare * r.incr.factsWithVectors) /
      Math.max(
        1,
        sum((r) => r.incr.factsWithVectors),
      ),
    pages: sum((r) => r.incr.pages),
    fullMs: fullWall,
    incrMs: incrWall,
    rebuilt: sum((r) => r.incr.pagesRebuilt),
    renumbered: sum((r) => r.incr.renumberedPageIds.length),
    because: {
      touched: sum((r) => r.incr.rebuiltBecause.touched),
      moved: sum((r) => r.incr.rebuiltBecause.moved),
      stale: sum((r) => r.incr.rebuiltBecause.stale),
    },
    verified: sum((r) => r.incr.citations.verified),
    total: sum((r) => r.incr.citations.total),
    rssMb: sum((r) => r.rssMb),
    heapMb: sum((r) => r.heapMb),
  }),
);
const head = [
  'channel',
  'facts (+new)',
  'clusters',
  'mean coh.',
  'assigned',
  'pages',
  'full ms',
  'incr ms',
  'full/incr',
  'rendered incr (touched+moved+stale), renumbered',
  'citations ok',
  'full ΔRSS MB',
  'full Δheap MB',
];
const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
const row = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(`\n${row(head)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
for (const l of lines) console.log(row(l));
console.log(
  `\nwall: first full ${(firstWall / 1000).toFixed(1)} s; after the last day: incremental of the ${stale.size} stale ` +
    `channels ${(incrWall / 1000).toFixed(2)} s vs full rebuild of all ${all.length} ${(fullWall / 1000).toFixed(2)} s ` +
    `(${(fullWall / Math.max(1, incrWall)).toFixed(1)}x); channels with new facts: ${all.filter((r) => r.incr.facts > r.first.facts).length}; ` +
    `final RSS ${(process.memoryUsage().rss / MB).toFixed(0)} MB`,
);
const phases = (k: 'full' | 'incr') =>
  (['read', 'cluster', 'render', 'save'] as const)
    .map((p) => `${p} ${Math.round(sum((r) => r[k].phasesMs[p]))}`)
    .join(', ');
console.log(
  `phases ms (all channels): full: ${phases('full')} (incremental: the runs of the pass overlap, phases not separable)`,
);
const ran = all.filter((r) => stale.has(r.id));
const cf = ran.reduce((t, r) => t + r.full.durationMs, 0);
console.log(
  `the ${ran.length} stale channels alone: full ${Math.round(cf)} ms (their runs in the rebuild), incremental pass ${Math.round(incrWall)} ms (${(cf / Math.max(1, incrWall)).toFixed(1)}x)`,
);
console.log(
  `citations: first full ${sum((r) => r.first.citations.verified)}/${sum((r) => r.first.citations.total)}, ` +
    `incremental versions ${sum((r) => r.incr.citations.verified)}/${sum((r) => r.incr.citations.total)}, ` +
    `final full ${sum((r) => r.full.citations.verified)}/${sum((r) => r.full.citations.total)}`,
);
for (const r of all)
  if (
    r.incr.citations.verified < r.incr.citations.total ||
    r.full.citations.verified < r.full.citations.total ||
    r.first.citations.verified < r.first.citations.total
  )
    console.log(`  #${r.name}: citations not all verified`);
await rt.close();
