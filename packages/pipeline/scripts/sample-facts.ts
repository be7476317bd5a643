/**
 * Runs the offline extractor over the whole Clojurians export (day files read directly) and prints figures:
 * messages, candidates, facts ≥ threshold, facts/message, msgs/s, the type distribution and random kept facts.
 *
 *   npx tsx packages/pipeline/scripts/sample-facts.ts [--show 10] [--seed 1] [--threshold 0.5] [--dump out.jsonl]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Fact } from '@atlas/core';
import { OfflineFactExtractor, selectFacts } from '../src/index.js';
import { CLOJURIANS, SlackExport } from '../src/test-support.js';

const { values } = parseArgs({
  options: {
    show: { type: 'string', default: '10' },
    seed: { type: 'string', default: '1' },
    threshold: { type: 'string', default: '0.5' },
    dump: { type: 'string' },
  },
});
const threshold = Number(values.threshold);

/** mulberry32: a tiny seeded PRNG, so that a sample can be shown again. */
const rng = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

const slack = new SlackExport(CLOJURIANS, 'clojurians');
const inputs = slack.channelNames().flatMap((c) => slack.inputs(c));
const extractor = new OfflineFactExtractor();
const rows: Array<{ fact: Fact; text: string; channel: string }> = [];
let candidates = 0;
const started = performance.now();
for (const input of inputs) {
  const facts = extractor.extractSync(input);
  candidates += facts.length;
  for (const fact of selectFacts(facts, 0))
    rows.push({ fact, text: input.message.text, channel: input.message.channelName });
}
const seconds = (performance.now() - started) / 1000;
const kept = rows.filter((r) => r.fact.qualityScore >= threshold);

const count = (xs: readonly string[]): Record<string, number> => {
  const m = new Map<string, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return Object.fromEntries([...m].sort((a, b) => b[1] - a[1]));
};

console.log(`messages        ${inputs.length}`);
console.log(`candidates      ${candidates}`);
console.log(`facts >= ${threshold}    ${kept.length}`);
console.log(`facts/message   ${(kept.length / inputs.length).toFixed(3)}`);
console.log(`msgs/s          ${Math.round(inputs.length / seconds)} (${seconds.toFixed(2)} s)`);
console.log('types (kept)   ', count(kept.map((r) => r.fact.factType)));
console.log('importance     ', count(kept.map((r) => r.fact.importance)));
const bands = kept.map((r) => (r.fact.qualityScore >= 0.8 ? '0.8-1.0' : '0.5-0.8'));
console.log('bands          ', count(bands));

const pick = rng(Number(values.seed));
const sample = [...kept];
for (let i = sample.length - 1; i > 0; i--) {
  const j = Math.floor(pick() * (i + 1));
  [sample[i], sample[j]] = [sample[j]!, sample[i]!];
}
for (const { fact, text, channel } of sample.slice(0, Number(values.show))) {
  console.log(`\n[${fact.factType} ${fact.qualityScore} ${fact.importance}] #${channel} ${fact.authorName}`);
  console.log(`  fact:   ${fact.memoryText}`);
  console.log(`  source: ${text.replace(/\s+/g, ' ').slice(0, 240)}`);
  console.log(
    `  topics: ${fact.topicTags.join(', ')} | entities: ${fact.entityTags.join(', ')} | actions: ${fact.actionTags.join(', ')}`,
  );
}

if (values.dump) {
  writeFileSync(
    values.dump,
    rows.map((r) => JSON.stringify({ ...r.fact, source: r.text, channel: r.channel })).join('\n'),
  );
  console.log(`\nwrote ${rows.length} candidates to ${values.dump}`);
}
