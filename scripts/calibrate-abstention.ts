/**
 * `npx tsx scripts/calibrate-abstention.ts`: calibrates ask's abstention floor (packages/query/src/ask/abstain.ts
 * ABSTAIN_COSINE_FLOOR) on the LoCoMo dev conversations (../shared/data/locomo), ingested as bench:retrieval ingests
 * them (one channel per conversation). Every question is retrieved for as the ask engine retrieves (findSources: the
 * question's retrievalQuery, regex route, graph expansion for graph/both, max_results 10) in a channel, and the
 * engine's evidence is kept: the best raw cosine of the query to a source and the sources' content-term coverage.
 * Three sets: answerable (categories 1-4, asked in their own conversation's channel), LoCoMo category 5 (adversarial:
 * no answer in the conversation, asked in its own channel) and cross-conversation (the category 1-4 questions of
 * each conversation asked in the next conversation's channel: no answer there either; an extra check, not the
 * calibration target). The criterion picks a floor: the largest (steps of 0.01) wrongly abstaining on at most 5 % of
 * the answerable questions. Printed: for a few keyword keeps (sources holding at least that share of the query's
 * content terms are not abstained on; none: cosine alone), the criterion's floor and the share of each set abstained
 * on there; then, for floors around the criterion's under the engine's rule (`abstains`: cosine < floor and coverage
 * < KEYWORD_KEEP), the shares under that rule and under the cosine alone. The embedder is the configured local model
 * (EMBEDDING_LOCAL_MODEL: use-lite, e5-small-v2, ...; ATLAS_MODELS_DIR for the ONNX models). Last, the person check
 * (personMismatch) per number of best sources looked at, alone and beside the cosine rule at the map's floor (it
 * chose PERSON_TOP). ABSTAIN_SHOW=n prints the n lowest-cosine answerable questions to stderr; PERSON_SHOW=1 the
 * category 5 questions the check does not catch at 1 best source, with their 3 best sources.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { questionEntities } from '@atlas/pipeline';
import { loadLocomo } from '@atlas/pipeline/testing';
import {
  ABSTAIN_COSINE_FLOOR,
  AskBody,
  type AskEvidence,
  type AskPorts,
  findSources,
  graphExpansion,
  KEYWORD_KEEP,
  PERSON_TOP,
  personMismatch,
  retrievalQuery,
} from '@atlas/query';
import { openRuntime } from '@atlas/runtime';
import { table } from './bench/fill.js';
import { ingestLocomo } from './bench/locomo.js';

const FILE = path.resolve(import.meta.dirname, '../../shared/data/locomo/locomo-dev.json');
const MAX_WRONG = 0.05;
const set = loadLocomo(FILE);
const raw = JSON.parse(readFileSync(FILE, 'utf8')) as {
  sample_id: string;
  qa: { question: string; category: number }[];
}[];
const channels = set.channels.map((c) => c.channelId);
type Asked = { set: 'answerable' | 'category 5' | 'cross-conversation'; question: string; channelId: string };
const asked: Asked[] = [
  ...set.questions.map((q): Asked => ({ set: 'answerable', question: q.question, channelId: q.channelId })),
  ...raw.flatMap((c) =>
    c.qa
      .filter((q) => q.category === 5)
      .map((q): Asked => ({ set: 'category 5', question: q.question, channelId: `locomo-${c.sample_id}` })),
  ),
  ...set.questions.map(
    (q): Asked => ({
      set: 'cross-conversation',
      question: q.question,
      channelId: channels[(channels.indexOf(q.channelId) + 1) % channels.length]!,
    }),
  ),
];

const started = performance.now();
const rt = await openRuntime(
  loadConfig({
    ATLAS_DATA_DIR: 'memory://',
    DATABASE_URL: '',
    KAFKA_BROKERS: '',
    EMBEDDING_PROVIDER: 'local',
    EMBEDDING_LOCAL_MODEL: process.env.EMBEDDING_LOCAL_MODEL,
    ATLAS_MODELS_DIR: process.env.ATLAS_MODELS_DIR,
  }),
);
const emb = rt.embeddings;
if (!emb) throw new Error(`no embeddings: ${rt.embeddingsUnavailable}`);
const subs = await ingestLocomo(rt, set);
const facts = (await rt.documents.counts()).facts;
const ports: AskPorts = {
  search: { documents: rt.documents, keyword: rt.keyword, vectors: { embedder: emb.embedder, store: emb.vectors } },
  documents: rt.documents,
  graphRetrieval: graphExpansion(rt.graph, questionEntities),
  store: rt.ask,
  llm: { quality: null, fast: null },
};
const body = AskBody.parse({ question: 'x', max_results: 10 });
const measured: (Asked & { evidence: AskEvidence; sources: number; mismatchAt: Map<number, boolean> })[] = [];
/** The `top` values of the person check measured (PERSON_TOP among them). */
const TOPS = [...new Set([1, 2, 3, 5, PERSON_TOP])].sort((a, b) => a - b);
for (const a of asked) {
  const found = await findSources(ports, a.question, retrievalQuery(a.question), {
    channelId: a.channelId,
    body: { ...body, question: a.question },
  });
  if (!found) throw new Error('search unavailable');
  const mismatchAt = new Map(TOPS.map((t) => [t, personMismatch(a.question, found.sources, t) !== null]));
  measured.push({ ...a, evidence: found.evidence, sources: found.sources.length, mismatchAt });
  if (process.env.PERSON_SHOW && a.set === 'category 5' && !mismatchAt.get(1))
    console.error(
      `${a.question}\n${found.sources
        .slice(0, 3)
        .map((s) => `   ${s.fact.author_name}: ${s.fact.memory_text.slice(0, 140)}`)
        .join('\n')}`,
    );
}

const sets = ['answerable', 'category 5', 'cross-conversation'] as const;
const of = (s: (typeof sets)[number]) => measured.filter((m) => m.set === s);
const cosineOf = (m: (typeof measured)[number]) => m.evidence.bestCosine ?? Number.POSITIVE_INFINITY;
/**
 * Whether a question is abstained on at `floor` with the keyword keep `keep` (sources holding at least that share of
 * the query's content terms are kept; Infinity: cosine alone): `abstains` with those values.
 */
const abstainsAt = (m: (typeof measured)[number], floor: number, keep: number, top = 0) =>
  m.sources === 0 ||
  (top > 0 && m.mismatchAt.get(top) === true) ||
  (cosineOf(m) < floor && m.evidence.termCoverage < keep);
/** The share of set `s` abstained on; `top` > 0 adds the person check over that many best sources. */
const share = (s: (typeof sets)[number], floor: number, keep: number, top = 0) => {
  const xs = of(s);
  return xs.filter((m) => abstainsAt(m, floor, keep, top)).length / xs.length;
};
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const quantiles = (s: (typeof sets)[number]) => {
  const xs = of(s)
    .map(cosineOf)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  return [0.05, 0.1, 0.5, 0.9].map((p) => xs[Math.floor(p * (xs.length - 1))]!.toFixed(3)).join(' / ');
};
/** The criterion: the largest floor (0.01 steps) keeping wrong abstentions on answerable questions ≤ MAX_WRONG. */
const criterion = (keep: number) => {
  let chosen = 0;
  for (let i = 0; i <= 100; i++) if (share('answerable', i / 100, keep) <= MAX_WRONG) chosen = i / 100;
  return chosen;
};

console.log(
  `${emb.embedder.id}: ${facts} facts in ${set.channels.length} conversations; ${of('answerable').length} answerable (categories 1-4), ${of('category 5').length} category 5, ${of('cross-conversation').length} cross-conversation questions`,
);
console.log(`best-source cosine p5 / p10 / p50 / p90:`);
for (const s of sets) console.log(`  ${s}: ${quantiles(s)}`);

// The keyword keep: each candidate at its own criterion floor (the engine uses KEYWORD_KEEP).
const KEEPS = [0.5, 0.6, 0.75, 1, Number.POSITIVE_INFINITY];
console.log(`
keyword keep (sources with at least this share of the query's terms are kept), each at its criterion floor:`);
console.log(
  table(
    ['keep', 'criterion floor', 'cat 5 abstained', '1-4 wrongly abstained', 'cross-conv. abstained'],
    KEEPS.map((keep) => {
      const floor = criterion(keep);
      return [
        `${Number.isFinite(keep) ? keep.toFixed(2) : 'none (cosine only)'}${keep === KEYWORD_KEEP ? ' (KEYWORD_KEEP)' : ''}`,
        floor.toFixed(2),
        pct(share('category 5', floor, keep)),
        pct(share('answerable', floor, keep)),
        pct(share('cross-conversation', floor, keep)),
      ];
    }),
  ),
);

const chosen = criterion(KEYWORD_KEEP);
const current = ABSTAIN_COSINE_FLOOR[emb.embedder.id];
const floors = [
  ...new Set(
    [-0.1, -0.05, -0.03, -0.02, -0.01, 0, 0.01, 0.02, 0.05, 0.1]
      .map((d) => Math.round((chosen + d) * 100) / 100)
      .concat(current ?? []),
  ),
].sort((a, b) => a - b);
console.log(
  `
abstained on, per floor (rule "engine": cosine < floor and term coverage < KEYWORD_KEEP ${KEYWORD_KEEP}; rule "cosine": cosine < floor):`,
);
console.log(
  table(
    [
      'floor',
      'cat 5 abstained (engine)',
      '1-4 wrongly abstained (engine)',
      'cross-conv. abstained (engine)',
      'cat 5 (cosine)',
      '1-4 wrongly (cosine)',
      'cross-conv. (cosine)',
    ],
    floors.map((floor) => [
      `${floor.toFixed(2)}${floor === chosen ? ' (criterion)' : ''}${floor === current ? ' (in the map)' : ''}`,
      pct(share('category 5', floor, KEYWORD_KEEP)),
      pct(share('answerable', floor, KEYWORD_KEEP)),
      pct(share('cross-conversation', floor, KEYWORD_KEEP)),
      pct(share('category 5', floor, Number.POSITIVE_INFINITY)),
      pct(share('answerable', floor, Number.POSITIVE_INFINITY)),
      pct(share('cross-conversation', floor, Number.POSITIVE_INFINITY)),
    ]),
  ),
);
// The person check (personMismatch), alone and beside the cosine rule at the map's floor, per number of best sources.
const floorInMap = current ?? chosen;
console.log(
  `\nthe person check (the question names one author; none of the best sources is theirs or names them), per number of best sources looked at; "with floor": beside the cosine rule at ${floorInMap.toFixed(2)}:`,
);
console.log(
  table(
    [
      'best sources',
      'cat 5 (person alone)',
      '1-4 wrongly (person alone)',
      'cat 5 (with floor)',
      '1-4 wrongly (with floor)',
      'cross-conv. (with floor)',
    ],
    TOPS.map((top) => [
      `${top}${top === PERSON_TOP ? ' (PERSON_TOP)' : ''}`,
      pct(share('category 5', -1, 0, top)),
      pct(share('answerable', -1, 0, top)),
      pct(share('category 5', floorInMap, KEYWORD_KEEP, top)),
      pct(share('answerable', floorInMap, KEYWORD_KEEP, top)),
      pct(share('cross-conversation', floorInMap, KEYWORD_KEEP, top)),
    ]),
  ),
);
console.log(
  `\ncriterion (largest floor with ≤ ${pct(MAX_WRONG)} of answerable questions abstained on, engine rule): ${chosen.toFixed(2)}; in ABSTAIN_COSINE_FLOOR: ${current ?? 'none'}; ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
const show = Number(process.env.ABSTAIN_SHOW ?? 0);
for (const m of of('answerable')
  .sort((a, b) => cosineOf(a) - cosineOf(b))
  .slice(0, show))
  console.error(
    `${cosineOf(m).toFixed(3)} cov ${m.evidence.termCoverage.toFixed(2)} ${m.channelId}: ${m.question} → ${retrievalQuery(m.question)}`,
  );
await Promise.all(subs.map((s) => s.stop()));
await rt.close();
