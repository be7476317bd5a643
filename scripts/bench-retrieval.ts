/**
 * `npm run bench:retrieval`: retrieval quality on the LoCoMo dev conversations (../shared/data/locomo),
 * every question of categories 1-4 run as a search in its conversation's channel, results mapped back to
 * dialogue ids (a message's facts count once, at the rank of its best fact). Prints recall@5, recall@10
 * and MRR per category and overall for each Atlas search mode, beside BM25 over the raw messages
 * (minisearch, BM25+) in the same run; then search latency p50/p95 and ingest time.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { type Config, loadConfig } from '@atlas/core';
import { questionEntities } from '@atlas/pipeline';
import { type LocomoQuestion, loadLocomo } from '@atlas/pipeline/testing';
import { ONNX_MODELS } from '@atlas/providers';
import { graphExpansion, searchMemories } from '@atlas/query';
import { openRuntime, type Runtime } from '@atlas/runtime';
import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { ingestLocomo, score } from './bench/locomo.js';

const FILE = path.resolve(import.meta.dirname, '../../shared/data/locomo/locomo-dev.json');
/** The third-party audit of LoCoMo's gold evidence (data/locomo/SOURCE.md): scored beside the original, when present. */
const AUDIT = path.resolve(import.meta.dirname, '../../shared/data/locomo/locomo-audit-errors.json');
const set = loadLocomo(FILE, existsSync(AUDIT) ? { audit: AUDIT } : {});
const audited = set.questions.filter((q) => q.auditedEvidence).length;
/** Modes: keyword, vector, hybrid, and hybrid+graph (hybrid with graph-expanded retrieval). */
type Mode = 'keyword' | 'vector' | 'hybrid' | 'hybrid+graph';
const MODES = (process.env.BENCH_MODES ?? 'keyword,vector,hybrid').split(',') as Mode[];

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

/** The local encoders compared (EMBEDDING_LOCAL_MODEL values), each in a runtime of its own. */
const EMBEDDERS = (process.env.BENCH_EMBEDDERS ?? 'use-lite,e5-small-v2').split(
  ',',
) as Config['EMBEDDING_LOCAL_MODEL'][];
/** Short names of the encoders in the table. */
const SHORT: Record<string, string> = {
  'use-lite': 'USE-lite',
  'e5-small-v2': 'e5',
  'bge-small-en-v1.5': 'bge',
  'all-minilm-l6-v2': 'MiniLM',
};

/** A runtime with LoCoMo ingested, embedded by `model`; throws when the model falls back to another encoder. */
const openIngested = async (model: Config['EMBEDDING_LOCAL_MODEL']) => {
  const t0 = performance.now();
  const rt = await openRuntime(
    loadConfig({
      ATLAS_DATA_DIR: 'memory://',
      DATABASE_URL: '',
      KAFKA_BROKERS: '',
      QUALITY_THRESHOLD: process.env.QUALITY_THRESHOLD,
      EMBEDDING_LOCAL_MODEL: model,
      ATLAS_MODELS_DIR: process.env.ATLAS_MODELS_DIR,
    }),
  );
  const id = rt.embeddings?.embedder.id ?? '';
  const expected = model === 'use-lite' ? 'use-lite' : (ONNX_MODELS[model]?.id ?? model);
  if (!id.startsWith(expected))
    throw new Error(
      `${model}: the runtime embeds with '${id || rt.embeddingsUnavailable}' (run 'atlas models fetch ${model}' or set ATLAS_MODELS_DIR)`,
    );
  const subs = await ingestLocomo(rt, set);
  return { model, rt, subs, ingestSeconds: (performance.now() - t0) / 1000 };
};
const runtimes: Awaited<ReturnType<typeof openIngested>>[] = [];
for (const m of EMBEDDERS) runtimes.push(await openIngested(m));

const latencies: number[] = [];
const atlas =
  (rt: Runtime, mode: Mode): Ranker =>
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

// Keyword search does not read vectors: it runs once (in the first runtime); every other mode once per encoder.
const rankers: [string, Ranker][] = [
  ['BM25 raw messages (minisearch)', async (q) => uniq(await bm25Plain(q))],
  ['BM25 raw messages, stemmed, stop words', async (q) => uniq(await bm25Stemmed(q))],
  ...(MODES.includes('keyword') ? [['Atlas keyword', atlas(runtimes[0]!.rt, 'keyword')] as [string, Ranker]] : []),
  ...runtimes.flatMap(({ model, rt }) =>
    MODES.filter((m) => m !== 'keyword').map((m): [string, Ranker] => [
      `Atlas ${m} ${SHORT[model] ?? model}`,
      atlas(rt, m),
    ]),
  ),
];
const cats = [1, 2, 3, 4] as const;
const names: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };
/** Sums over questions: recall@5, recall@10, reciprocal rank, and recall@10 against the audited evidence (r10a). */
type Sums = { r5: number; r10: number; rr: number; r10a: number; n: number };
const results: { name: string; per: Map<number | 'all', Sums>; ms: number[] }[] = [];
for (const [name, rank] of rankers) {
  const per = new Map<number | 'all', Sums>();
  const from = latencies.length;
  for (const q of set.questions) {
    const ranked = await rank(q);
    const s = score(ranked, q.evidence);
    const r10a = q.auditedEvidence ? score(ranked, q.auditedEvidence).r10 : s.r10;
    for (const k of [q.category, 'all'] as const) {
      const a = per.get(k) ?? { r5: 0, r10: 0, rr: 0, r10a: 0, n: 0 };
      per.set(k, { r5: a.r5 + s.r5, r10: a.r10 + s.r10, rr: a.rr + s.rr, r10a: a.r10a + r10a, n: a.n + 1 });
    }
  }
  results.push({ name, per, ms: latencies.slice(from) });
}
const pct = (v: number, n: number) => `${((v / n) * 100).toFixed(1)}%`;
/** Prints a Markdown table. */
const table = (head: string[], rows: string[][]) => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(head));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
};
table(
  ['ranker', 'category', 'questions', 'recall@5', 'recall@10', 'MRR'],
  results.flatMap(({ name, per }) =>
    [...cats, 'all' as const].map((k) => {
      const a = per.get(k)!;
      return [
        name,
        k === 'all' ? 'all' : `${k} ${names[k]}`,
        String(a.n),
        pct(a.r5, a.n),
        pct(a.r10, a.n),
        (a.rr / a.n).toFixed(3),
      ];
    }),
  ),
);
// Side by side: recall@10 per category, then all three figures over every question, and each ranker's latency.
const quantile = (xs: number[], p: number) =>
  xs.length === 0 ? '-' : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!.toFixed(1);
console.log(
  `\nSide by side (recall@10 per category; all questions: recall@5, recall@10, MRR; recall@10 over all and multi-hop against the audited evidence, ${audited} questions corrected; search latency in process):\n`,
);
table(
  [
    'ranker',
    ...cats.map((c) => `R@10 ${c} ${names[c]}`),
    'R@5 all',
    'R@10 all',
    'MRR all',
    'R@10 all audited',
    'R@10 1 audited',
    'p50 / p95 ms',
  ],
  results.map(({ name, per, ms }) => {
    const all = per.get('all')!;
    return [
      name,
      ...cats.map((c) => pct(per.get(c)!.r10, per.get(c)!.n)),
      pct(all.r5, all.n),
      pct(all.r10, all.n),
      (all.rr / all.n).toFixed(3),
      pct(all.r10a, all.n),
      pct(per.get(1)!.r10a, per.get(1)!.n),
      ms.length ? `${quantile(ms, 0.5)} / ${quantile(ms, 0.95)}` : '-',
    ];
  }),
);
const { rt } = runtimes[0]!;
const facts = (await rt.documents.counts()).facts;
const graphSize = await rt.graph.counts();
console.log(
  `\n${set.messages.length} messages, ${facts} facts, graph ${graphSize.nodes} entities / ${graphSize.relationships} relationships; ingest ${runtimes.map((r) => `${SHORT[r.model] ?? r.model} ${r.ingestSeconds.toFixed(1)} s (${r.rt.embeddings?.embedder.id})`).join(', ')}`,
);
for (const r of runtimes) {
  await Promise.all(r.subs.map((s) => s.stop()));
  await r.rt.close();
}
