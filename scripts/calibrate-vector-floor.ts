/**
 * `npx tsx scripts/calibrate-vector-floor.ts`: calibrates search's vector match floor (services/api/src/search.ts
 * VECTOR_MATCH_FLOOR) on real data. Every LoCoMo dev question (categories 1-4) is embedded and compared with every
 * fact of its conversation; a fact is evidence when its source message is one of the question's gold dialogue ids.
 * For each candidate floor it prints the share of questions with at least one evidence fact at or above it, the share
 * of evidence facts at or above it, and how many facts a question matches on average (of its conversation's facts):
 * the floor is where matches still reach the evidence of most questions while a question no longer matches most of
 * its conversation. Also prints the share of the other facts at or above each floor, and the floor where evidence matched
 * minus other facts matched peaks. Uses the embedder the configuration names (EMBEDDING_PROVIDER, EMBEDDING_LOCAL_MODEL,
 * ATLAS_MODELS_DIR from the environment; default the local model). Candidate floors: every 0.01 from the 10th
 * percentile of the other facts' cosines to the 90th of the evidence's (CALIBRATE_FLOORS, comma-separated, instead).
 */
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { loadLocomo } from '@atlas/pipeline/testing';
import { openRuntime } from '@atlas/runtime';
import { ingestLocomo } from './bench/locomo.js';

const FILE = path.resolve(import.meta.dirname, '../../shared/data/locomo/locomo-dev.json');

const set = loadLocomo(FILE);
const rt = await openRuntime(
  loadConfig({ ...process.env, ATLAS_DATA_DIR: 'memory://', DATABASE_URL: '', KAFKA_BROKERS: '' }),
);
const subs = await ingestLocomo(rt, set);
const emb = rt.embeddings;
if (!emb) throw new Error(`no embeddings: ${rt.embeddingsUnavailable}`);

/** Each channel's facts: id and source message (dialogue id). */
const facts = new Map<string, { id: string; source: string }[]>();
for (const c of set.channels) {
  const { rows } = await rt.documents.listMemories({ channelId: c.channelId, page: 1, limit: 100_000 });
  facts.set(
    c.channelId,
    rows.map((m) => ({ id: m.id, source: m.source_message_id })),
  );
}
let evidenceFacts = 0;
const evidenceCos: number[] = [];
const otherCos: number[] = [];
/** Per question: each fact of its conversation, evidence or not, and its cosine to the question. */
const perQuestion: { gold: boolean; s: number }[][] = [];
for (const q of set.questions) {
  const mine = facts.get(q.channelId) ?? [];
  const [vector] = await emb.embedder.embed([q.question], { kind: 'query' }); // as search embeds a query
  const sims = await emb.vectors.similarities({
    vector: vector!,
    model: emb.embedder.id,
    factIds: mine.map((f) => f.id),
  });
  const gold = new Set(q.evidence);
  const cos = mine.map((f) => ({ gold: gold.has(f.source), s: sims.get(f.id) ?? 0 }));
  evidenceFacts += cos.filter((c) => c.gold).length;
  for (const c of cos) (c.gold ? evidenceCos : otherCos).push(c.s);
  perQuestion.push(cos);
}
const quantile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(p * (xs.length - 1))]!;
const step = 0.01;
const FLOORS = process.env.CALIBRATE_FLOORS
  ? process.env.CALIBRATE_FLOORS.split(',').map(Number)
  : Array.from(
      { length: Math.floor((quantile(evidenceCos, 0.9) - quantile(otherCos, 0.1)) / step) + 2 },
      (_, i) => Math.round((Math.floor(quantile(otherCos, 0.1) / step) + i) * step * 1000) / 1000,
    );
const rows = FLOORS.map((floor) => {
  const r = { questions: 0, evidence: 0, others: 0, matched: 0, share: 0 };
  for (const cos of perQuestion) {
    const above = cos.filter((c) => c.s >= floor);
    if (above.some((c) => c.gold)) r.questions++;
    r.evidence += above.filter((c) => c.gold).length;
    r.others += above.filter((c) => !c.gold).length;
    r.matched += above.length;
    r.share += cos.length > 0 ? above.length / cos.length : 0;
  }
  return r;
});
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const n = set.questions.length;
console.log(
  `${emb.embedder.id}: ${n} questions, ${[...facts.values()].flat().length} facts, ${evidenceFacts} evidence pairs`,
);
console.log(
  `cosine quantiles p10/p50/p90: evidence ${[0.1, 0.5, 0.9].map((p) => quantile(evidenceCos, p).toFixed(3)).join('/')}, ` +
    `others ${[0.1, 0.5, 0.9].map((p) => quantile(otherCos, p).toFixed(3)).join('/')}`,
);
console.log(
  'floor | questions with evidence matched | evidence facts matched | other facts matched | facts matched per question (share)',
);
const gap = rows.map((r) => r.evidence / Math.max(1, evidenceFacts) - r.others / Math.max(1, otherCos.length));
FLOORS.forEach((floor, i) => {
  const r = rows[i]!;
  console.log(
    `${floor.toFixed(3)} | ${pct(r.questions / n)} | ${pct(r.evidence / Math.max(1, evidenceFacts))} | ${pct(r.others / Math.max(1, otherCos.length))} | ${(r.matched / n).toFixed(1)} (${pct(r.share / n)})`,
  );
});
const peak = gap.indexOf(Math.max(...gap));
console.log(`evidence matched minus other facts matched peaks at ${FLOORS[peak]?.toFixed(3)} (${pct(gap[peak] ?? 0)})`);
await Promise.all(subs.map((s) => s.stop()));
await rt.close();
