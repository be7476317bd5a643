import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { loadLocomo } from '@atlas/pipeline/testing';
import { searchMemories } from '@atlas/query';
import { openRuntime } from '@atlas/runtime';
import { ingestLocomo } from './bench/locomo.js';
const set = loadLocomo(path.resolve(import.meta.dirname, '../../shared/data/locomo/locomo-dev.json'));
const rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', DATABASE_URL: '', KAFKA_BROKERS: '', EMBEDDING_LOCAL_MODEL: 'e5-small-v2' }));
const subs = await ingestLocomo(rt, set);
const text = new Map(set.messages.map((m) => [m.channelId + '/' + m.platformMessageId, `${m.author.name}: ${m.text}`]));
const buckets = [0,0,0,0,0]; let n = 0; let oracle = 0;
for (const q of set.questions) {
  const res = await searchMemories({ ...rt, vectors: { embedder: rt.embeddings!.embedder, store: rt.embeddings!.vectors } }, { query: q.question, channel_id: q.channelId, limit: 50, search_mode: 'hybrid', include_citations: false, fuzzy: false });
  const byId = await rt.documents.getMemories(res.results.map((r) => r.memory.id));
  const ranked = [...new Set(res.results.map((r) => byId.get(r.memory.id)?.source_message_id ?? ''))];
  const ranks = q.evidence.map((e) => ranked.indexOf(e));
  n++; for (const r of ranks) buckets[r < 0 ? 4 : r < 10 ? 0 : r < 20 ? 1 : r < 30 ? 2 : 3]! += 1 / ranks.length;
  oracle += Math.min(10, ranks.filter((r) => r >= 0).length) / ranks.length;
  continue;
  console.log(`\n## ${q.question}`);
  for (const [i, e] of q.evidence.entries()) console.log(`  ${ranks[i]! < 0 ? '-' : ranks[i]! + 1} ${e} ${text.get(q.channelId + '/' + e)?.slice(0, 160)}`);
  console.log(`  top3: ${ranked.slice(0, 3).map((id) => text.get(q.channelId + '/' + id)?.slice(0, 70)).join(' || ')}`);
}
console.log(buckets.map((b) => (b / n * 100).toFixed(1)), 'oracle top50→10', (oracle / n * 100).toFixed(1));
await Promise.all(subs.map((s) => s.stop())); await rt.close();
