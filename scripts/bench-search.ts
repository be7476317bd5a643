/**
 * `npm run bench:search`: latency of POST /api/search (hybrid) over HTTP on the embedded default
 * (PGlite: Postgres full text + pgvector, channel-scoped vector search on the in-memory channel matrices after
 * warm-up), at 10k and 100k facts (BENCH_SIZES=10000,100000), beside the same searches with pgvector's HNSW only.
 * Facts are the real facts of the three exports in ../shared/data, copied into as many channels as
 * needed; each unique text is embedded once with the local encoder and each copy's vector gets a little
 * noise, so the index is not full of exact duplicates. The stores are filled directly (ingest speed is
 * bench:ingest's business). Prints p50/p95/p99 per size for searches in one channel and in all channels,
 * beside the keyword-only mode of the same queries as a baseline.
 */
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { buildApp } from '@atlas/api';
import { type Fact, type FactsExtracted, factUuid, loadConfig, messageUuid, TOPICS } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import {
  embeddingText,
  filterFields,
  openRuntime,
  startProjectors,
  toKeywordDocs,
  waitForProjectors,
} from '@atlas/projectors';
import { type FactVector, PgVectorStore } from '@atlas/stores';
import { appendPlan } from '../services/cli/src/commands/import.js';
import { apiPorts } from '../services/cli/src/runtime.js';

const DATA = path.resolve(import.meta.dirname, '../../shared/data');
const SIZES = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);

/** Real facts with their sets' sourceText/contextText: the three exports projected once on a scratch runtime. */
const realFacts = async (): Promise<{ fact: Fact; sourceText: string; contextText: string }[]> => {
  const rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none' }));
  for (const rel of ['slack-clojurians-2018-02/export', 'slack-olake/export', 'discord-ethglobal']) {
    await appendPlan(rt, await planImport(path.join(DATA, rel)));
  }
  const subs = await startProjectors(rt);
  await waitForProjectors(rt);
  await Promise.all(subs.map((s) => s.stop()));
  const out: { fact: Fact; sourceText: string; contextText: string }[] = [];
  const group = 'bench-search-reader';
  const reader = await rt.eventLog.subscribe({
    group,
    topics: [TOPICS.facts],
    handler: async (batch) => {
      for (const e of batch) {
        if (e.type !== 'FactsExtracted') continue;
        const set = e.data as FactsExtracted;
        for (const fact of set.facts) out.push({ fact, sourceText: set.sourceText, contextText: set.contextText });
      }
    },
  });
  for (;;) {
    const lag = await rt.eventLog.lag(group, [TOPICS.facts]);
    if (lag.length > 0 && lag.every((r) => r.lag === 0)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await reader.stop();
  await rt.close();
  return out;
};

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

const noisy = (v: number[], seed: number): number[] => {
  let s = seed;
  const rand = () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return (s / 2_147_483_648 - 0.5) * 0.04;
  };
  const w = v.map((x) => x + rand());
  const n = Math.hypot(...w);
  return w.map((x) => x / n);
};

const base = await realFacts();
const rows: string[][] = [];
for (const size of SIZES) {
  const rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://' }));
  const { embedder, vectors } = rt.embeddings!;
  const unique = await embedder.embed(base.map((b) => embeddingText(b.fact, b)));
  const t0 = performance.now();
  const channels = Math.ceil(size / base.length);
  for (let c = 0; c < channels; c++) {
    const channelId = `bench-${c}`;
    const n = Math.min(base.length, size - c * base.length);
    const sets: FactsExtracted[] = [];
    const points: { messageId: string; points: FactVector[] }[] = [];
    for (let i = 0; i < n; i++) {
      const { fact: f, sourceText, contextText } = base[i]!;
      const messageId = messageUuid('platform_a', channelId, String(i));
      const fact = { ...f, factId: factUuid(messageId, f.memoryText) };
      sets.push({
        messageId,
        platform: 'platform_a',
        channelId,
        sourceMessageId: String(i),
        extractor: 'bench',
        extractedAt: f.validAt,
        facts: [fact],
        sourceText,
        contextText,
      });
      points.push({
        messageId,
        points: [
          {
            ...filterFields(sets[sets.length - 1]!, fact),
            model: embedder.id,
            vector: c === 0 ? unique[i]! : noisy(unique[i]!, c * 100_003 + i),
          },
        ],
      });
    }
    await rt.documents.replaceFacts(sets);
    await rt.keyword.replaceForMessages(sets.map((s) => ({ messageId: s.messageId, docs: toKeywordDocs(s) })));
    await vectors.replaceForMessages(points);
  }
  await rt.database.refreshStatistics(); // as `atlas start` does at start and every 5 minutes
  const loadSeconds = (performance.now() - t0) / 1000;
  // What `atlas start` does after it listens: load the vector store's in-memory channel matrices.
  const w0 = performance.now();
  await vectors.warm?.();
  const warmSeconds = (performance.now() - w0) / 1000;
  const app = await buildApp(apiPorts(rt));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/search`;
  // Baseline beside it: the same database with the vector store searching in SQL only (pgvector HNSW).
  const sqlOnly = new PgVectorStore(rt.database.db, embedder.dim);
  const baseline = await buildApp(apiPorts({ ...rt, embeddings: { ...rt.embeddings!, vectors: sqlOnly } }));
  await baseline.listen({ port: 0, host: '127.0.0.1' });
  const baselineUrl = `http://127.0.0.1:${(baseline.server.address() as AddressInfo).port}/api/search`;
  const queries = Array.from({ length: QUERIES }, (_, i) =>
    base[(i * 7919) % base.length]!.fact.memoryText.split(/\s+/).slice(0, 8).join(' '),
  );
  for (const [mode, scope, target] of [
    ['hybrid', 'one channel', url],
    ['hybrid (pgvector HNSW only)', 'one channel', baselineUrl],
    ['hybrid', 'all channels', url],
    ['keyword', 'one channel', url],
    ['keyword', 'all channels', url],
  ] as const) {
    const ms: number[] = [];
    for (const [i, query] of queries.entries()) {
      const body = JSON.stringify({
        query,
        channel_id: scope === 'all channels' ? null : `bench-${i % channels}`,
        search_mode: mode.split(' ')[0],
        limit: 10,
      });
      const s = performance.now();
      const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await res.json();
      ms.push(performance.now() - s);
    }
    rows.push([
      String(size),
      mode,
      scope,
      percentile(ms, 0.5).toFixed(1),
      percentile(ms, 0.95).toFixed(1),
      percentile(ms, 0.99).toFixed(1),
      loadSeconds.toFixed(0),
      warmSeconds.toFixed(1),
    ]);
  }
  await app.close();
  await baseline.close();
  await rt.close();
}
const head = ['facts', 'mode', 'scope', 'p50 ms', 'p95 ms', 'p99 ms', 'load s', 'warm-up s'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(line(head));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows) console.log(line(r));
console.log(
  `\n${QUERIES} queries per row over HTTP on loopback, one at a time; ${base.length} real facts copied into channels of that size.`,
);
process.exit(0);
