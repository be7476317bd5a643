/**
 * `npm run bench:retrieval`: retrieval quality on the LoCoMo dev conversations (../shared/data/locomo),
 * every question of categories 1-4 run as a search in its conversation's channel, results mapped back to
 * dialogue ids (a message's facts count once, at the rank of its best fact). Prints recall@5, recall@10
 * and MRR per category and overall for each Atlas search mode, beside BM25 over the raw messages
 * (minisearch, BM25+) in the same run; then search latency p50/p95 and ingest time.
 */
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { questionEntities } from '@atlas/pipeline';
import { type LocomoQuestion, loadLocomo } from '@atlas/pipeline/testing';
import { graphExpansion, searchMemories } from '@atlas/query';
import { openRuntime } from '@atlas/runtime';
import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { ingestLocomo, score } from './bench/locomo.js';

const FILE = path.resolve(import.meta.dirname, '../../shared/data/locomo/locomo-dev.json');
const set = loadLocomo(FILE);
/** Modes: keyword, vector, hybrid, and hybrid+graph (hybrid with graph-expanded retrieval). */
type Mode = 'keyword' | 'vector' | 'hybrid' | 'hybrid+graph';
const MODES = (process.env.BENCH_MODES ?? 'keyword').split(',') as Mode[];

type Ranker = (q: LocomoQuestion) => Promise<string[]>;
const uniq = (ids: string[]) => [...new Set(ids)];

/** English stop words (Postgres's list, as the keyword index uses) for the stemmed baseline. */
const STOP = new Set(
  'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself they them their theirs themselves what which who whom this that these those am is are was were be been being have has had having do does did doing a an the and but if or because as until while of at by for with about against between into through during before after above below to from up down in out on off over under again further then once here there when where why how all any both each few more most other some such no nor not only own same so than too very s t can will just don should now'.split(
    ' ',
  ),
);

/** BM25 over the raw messages of each conversation (the bar from data/README.md: ~57% recall@10); `stemmed` adds stop words and Porter stems. */
const bm25 = (stemmed: boolean): Ranker => {
  const processTerm = (t: string) => {
    const w = t.toLowerCase();
    return stemmed ? (STOP.has(w) ? null : stemmer(w)) : w;
  };
  const byChannel = new Map<string, MiniSearch>();
  for (const c of set.channels) {
    const ms = new MiniSearch({ fields: ['text'], idField: 'id', processTerm });
    ms.addAll(
      set.messages.filter((m) => m.channelId === c.channelId).map((m) => ({ id: m.platformMessageId, text: m.text })),
    );
    byChannel.set(c.channelId, ms);
  }
  return async (q) =>
    byChannel
      .get(q.channelId)!
      .search(q.question)
      .map((r) => String(r.id));
};

const bm25Plain = bm25(false);
const bm25Stemmed = bm25(true);

const t0 = performance.now();
const rt = await openRuntime(
  loadConfig({
    ATLAS_DATA_DIR: 'memory://',
    DATABASE_URL: '',
    KAFKA_BROKERS: '',
    QUALITY_THRESHOLD: process.env.QUALITY_THRESHOLD,
  }),
);
const subs = await ingestLocomo(rt, set);
const ingestSeconds = (performance.now() - t0) / 1000;
const facts = (await rt.documents.counts()).facts;
const graphSize = await rt.graph.counts();

const latencies: number[] = [];
const atlas =
  (mode: Mode): Ranker =>
  async (q) => {
    const s = performance.now();
    const vectors = rt.embeddings && { embedder: rt.embeddings.embedder, store: rt.embeddings.vectors };
    const expand = mode === 'hybrid+graph' ? graphExpansion(rt.graph, questionEntities) : null;
    const res = await searchMemories(
      { ...rt, vectors, graphExpansion: expand },
      {
        query: q.question,
        channel_id: q.channelId,
        limit: 50,
        search_mode: mode === 'hybrid+graph' ? 'hybrid' : mode,
        include_citations: false,
        fuzzy: false,
      },
    );
    latencies.push(performance.now() - s);
    const byId = await rt.documents.getMemories(res.results.map((r) => r.memory.id));
    return uniq(res.results.map((r) => byId.get(r.memory.id)?.source_message_id ?? ''));
  };

const rankers: [string, Ranker][] = [
  ['BM25 raw messages (minisearch)', async (q) => uniq(await bm25Plain(q))],
  ['BM25 raw messages, stemmed, stop words', async (q) => uniq(await bm25Stemmed(q))],
  ...MODES.map((m): [string, Ranker] => [`Atlas ${m}`, atlas(m)]),
];
const cats = [1, 2, 3, 4];
const names: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };
const rows: string[][] = [];
for (const [name, rank] of rankers) {
  const per = new Map<number | 'all', { r5: number; r10: number; rr: number; n: number }>();
  for (const q of set.questions) {
    const s = score(await rank(q), q.evidence);
    for (const k of [q.category, 'all'] as const) {
      const a = per.get(k) ?? { r5: 0, r10: 0, rr: 0, n: 0 };
      per.set(k, { r5: a.r5 + s.r5, r10: a.r10 + s.r10, rr: a.rr + s.rr, n: a.n + 1 });
    }
  }
  for (const k of [...cats, 'all'] as const) {
    const a = per.get(k)!;
    const pct = (v: number) => `${((v / a.n) * 100).toFixed(1)}%`;
    rows.push([
      name,
      k === 'all' ? 'all' : `${k} ${names[k]}`,
      String(a.n),
      pct(a.r5),
      pct(a.r10),
      (a.rr / a.n).toFixed(3),
    ]);
  }
}
const head = ['ranker', 'category', 'questions', 'recall@5', 'recall@10', 'MRR'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(line(head));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows) console.log(line(r));
const sorted = [...latencies].sort((a, b) => a - b);
const pq = (p: number) => (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0).toFixed(1);
console.log(
  `\n${set.messages.length} messages, ${facts} facts, graph ${graphSize.nodes} entities / ${graphSize.relationships} relationships, ingest ${ingestSeconds.toFixed(1)} s; Atlas search latency p50 ${pq(0.5)} ms, p95 ${pq(0.95)} ms (in process, ${latencies.length} searches)`,
);
await Promise.all(subs.map((s) => s.stop()));
await rt.close();
