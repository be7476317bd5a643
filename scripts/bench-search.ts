/**
 * `npm run bench:search`: latency of POST /api/search (hybrid) over HTTP on the embedded default
 * (PGlite: Postgres full text + pgvector, channel-scoped vector search on the in-memory channel matrices after
 * warm-up), at 10k and 100k facts (BENCH_SIZES=10000,100000), beside the same searches with pgvector's HNSW only.
 * Facts are the real facts of the three exports in ../shared/data, copied into as many channels as
 * needed; each unique text is embedded once with the local encoder and each copy's vector gets a little
 * noise, so the index is not full of exact duplicates. The stores are filled directly (ingest speed is
 * bench:ingest's business). Prints p50/p95/p99 per size for searches in one channel and in all channels,
 * beside the keyword-only mode of the same queries as a baseline. Each size runs once per local encoder of
 * `BENCH_ENCODERS` (default `use-lite,e5-small-v2`, in turns in the same run): the vector part of hybrid search scales
 * with the encoder's dimension (512 against 384) and its query embedding with its speed.
 */
import type { AddressInfo } from 'node:net';
import { buildApp } from '@atlas/api';
import { loadConfig } from '@atlas/core';
import { apiPorts, openRuntime } from '@atlas/runtime';
import { PgVectorStore } from '@atlas/stores';
import { embedBase, fillFacts, percentile, realFacts, table } from './bench/fill.js';

const SIZES = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
const ENCODERS = (process.env.BENCH_ENCODERS ?? 'use-lite,e5-small-v2').split(',').map((x) => x.trim());
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);

const base = await realFacts();
const rows: string[][] = [];
for (const size of SIZES)
  for (const encoder of ENCODERS) {
    const rt = await openRuntime(
      loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_LOCAL_MODEL: encoder as 'use-lite' }),
    );
    const { embedder } = rt.embeddings!;
    const unique = await embedBase(rt, base);
    // The stores filled directly, then the vector store's in-memory channel matrices loaded (as `atlas start` does).
    const { channels, loadSeconds, warmSeconds } = await fillFacts(rt, base, unique, size);
    const app = await buildApp(apiPorts(rt));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/search`;
    // Baseline beside it: the same database with the vector store searching in SQL only (pgvector HNSW).
    const sqlOnly = new PgVectorStore(rt.database.db, embedder.dim, { table: rt.vectorSpaces!.active().space.index });
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
        embedder.id,
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
console.log(table(['facts', 'encoder', 'mode', 'scope', 'p50 ms', 'p95 ms', 'p99 ms', 'load s', 'warm-up s'], rows));
console.log(
  `\n${QUERIES} queries per row over HTTP on loopback, one at a time; ${base.length} real facts copied into channels of that size.`,
);
process.exit(0);
