/**
 * `npx tsx scripts/judge-facts.ts [--facts 50] [--seed 1] [--ids sample.json] [--threshold 0.5]`: how the offline
 * fact extractor's memory texts read on real chat, for a person to judge.
 *
 * 1. Sample: for the Clojurians and OLake Slack exports (../shared/data), messages in a seeded hash order, taken
 *    until `--facts` kept facts (quality ≥ threshold) per export; each prints message text → fact text (and the
 *    Decision name of a decision fact). `--ids FILE` reuses the message ids saved there (written when absent), so a
 *    run before and a run after a change show the same messages.
 * 2. Lint: over every kept fact of both exports, the share with the author named more than once, with
 *    "<author> and team", and decision names ending on a preposition, article or conjunction (cut mid-phrase).
 *    `--decisions` prints every decision name with its fact.
 * 3. Recall: messages with at least one kept fact per export, and the LoCoMo dev evidence turns (dialogue ids of the
 *    questions of categories 1-4) whose message gives at least one kept fact.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Fact } from '@atlas/core';
import type { ExtractionInput } from '../packages/pipeline/src/facts/port.js';
import {
  answeredQuestion,
  decisionParts,
  type FlowMessage,
  OfflineFactExtractor,
  selectFacts,
} from '../packages/pipeline/src/index.js';
import { loadLocomo } from '../packages/pipeline/src/locomo.js';
import { CLOJURIANS, DATA_DIR, flowMessage, OLAKE, SlackExport } from '../packages/pipeline/src/test-support.js';

const { values } = parseArgs({
  options: {
    facts: { type: 'string', default: '50' },
    seed: { type: 'string', default: '1' },
    threshold: { type: 'string', default: '0.5' },
    ids: { type: 'string' },
    decisions: { type: 'boolean', default: false },
  },
});
const threshold = Number(values.threshold);
const wanted = Number(values.facts);
const extractor = new OfflineFactExtractor();
const kept = (input: ExtractionInput): Fact[] => selectFacts(extractor.extractSync(input), threshold);
const oneLine = (s: string, max = 300): string => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};
const hashOrder = (id: string): string => createHash('sha256').update(`${values.seed}:${id}`).digest('hex');

const exports_: Array<[string, string]> = [
  ['clojurians', CLOJURIANS],
  ['olake', OLAKE],
];
const saved: Record<string, string[]> =
  values.ids && existsSync(values.ids)
    ? (JSON.parse(readFileSync(values.ids, 'utf8')) as Record<string, string[]>)
    : {};
const chosen: Record<string, string[]> = {};

const ESC = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const DANGLING =
  /\s(?:in|on|at|to|for|of|from|with|by|about|into|onto|over|under|after|before|than|as|the|a|an|and|or|but|so|that|which|because|if|when|while|until|since|via|per|its|their|our|my|your)$/i;
const lint = { facts: 0, authorTwice: 0, andTeam: 0, decisions: 0, danglingName: 0, cutName: 0 };
const recall: string[][] = [];

for (const [name, dir] of exports_) {
  const slack = new SlackExport(dir, name);
  const inputs = slack.channelNames().flatMap((c) => slack.inputs(c));
  const byId = new Map(inputs.map((i) => [i.message.messageId, i]));
  let withFacts = 0;
  const factsOf = new Map<string, Fact[]>();
  for (const input of inputs) {
    const facts = kept(input);
    factsOf.set(input.message.messageId, facts);
    if (facts.length > 0) withFacts++;
    for (const f of facts) {
      lint.facts++;
      const author = new RegExp(`(?<![\\w.-])${ESC(f.authorName)}(?![\\w-])`, 'g');
      if ((f.memoryText.replace(/\(in reply to .*$/s, '').match(author)?.length ?? 0) > 1) lint.authorTwice++;
      if (f.memoryText.includes(`${f.authorName} and team`)) lint.andTeam++;
      if (f.factType === 'decision') {
        lint.decisions++;
        const d = decisionParts(f.memoryText, f.authorName).name;
        if (DANGLING.test(d.replace(/…$/, ''))) lint.danglingName++;
        if (d.endsWith('…')) lint.cutName++;
        if (values.decisions) console.log(`decision ${name}: ${d}  ⟵  ${oneLine(f.memoryText, 160)}`);
      }
    }
  }
  recall.push([`${name} messages with ≥1 fact`, `${withFacts} / ${inputs.length}`]);

  let ids = saved[name];
  if (!ids) {
    ids = [];
    let n = 0;
    const order = [...inputs].sort((a, b) =>
      hashOrder(a.message.messageId).localeCompare(hashOrder(b.message.messageId)),
    );
    for (const input of order) {
      const facts = factsOf.get(input.message.messageId) ?? [];
      if (facts.length === 0) continue;
      ids.push(input.message.messageId);
      n += facts.length;
      if (n >= wanted) break;
    }
  }
  chosen[name] = ids;
  console.log(`\n=== ${name}: ${ids.length} messages ===`);
  let k = 0;
  for (const id of ids) {
    const input = byId.get(id);
    if (!input) continue;
    const m = input.message;
    console.log(`\n[${name} ${++k}] ${m.author.name} #${m.channelName} ${m.platformMessageId}`);
    console.log(`  message: ${oneLine(m.text)}`);
    const facts = factsOf.get(id) ?? [];
    if (facts.length === 0) console.log('  (no fact)');
    for (const f of facts) {
      console.log(`  fact:    [${f.factType} ${f.qualityScore}] ${f.memoryText}`);
      if (f.factType === 'decision') console.log(`  name:    ${decisionParts(f.memoryText, f.authorName).name}`);
    }
  }
}
if (values.ids && !existsSync(values.ids)) writeFileSync(values.ids, JSON.stringify(chosen));

const locomo = loadLocomo(path.join(DATA_DIR, 'locomo/locomo-dev.json'));
const evidence = new Set(locomo.questions.flatMap((q) => q.evidence.map((e) => `${q.channelId}/${e}`)));
let locomoWith = 0;
let evidenceHit = 0;
let evidenceSeen = 0;
let before: (FlowMessage & { channelId: string }) | undefined;
for (const message of locomo.messages) {
  // As the facts projector reads a channel without threads: each turn may answer the question of the turn before.
  const answers = before?.channelId === message.channelId ? answeredQuestion(message, before) : null;
  const facts = kept({ message, thread: null, answers });
  before = { channelId: message.channelId, ...flowMessage(message) };
  if (facts.length > 0) locomoWith++;
  const key = `${message.channelId}/${message.platformMessageId}`;
  if (!evidence.has(key)) continue;
  evidenceSeen++;
  if (facts.length > 0) evidenceHit++;
}
recall.push([`locomo messages with ≥1 fact`, `${locomoWith} / ${locomo.messages.length}`]);
recall.push([`locomo evidence turns with ≥1 fact`, `${evidenceHit} / ${evidenceSeen} (${evidence.size} ids)`]);

const pct = (a: number, b: number) => `${a} / ${b} (${((a / Math.max(1, b)) * 100).toFixed(1)}%)`;
console.log('\n| measure | value |\n|---|---|');
for (const [k, v] of recall) console.log(`| ${k} | ${v} |`);
console.log(`| kept facts (both exports) | ${lint.facts} |`);
console.log(`| author named twice or more | ${pct(lint.authorTwice, lint.facts)} |`);
console.log(`| "<author> and team" | ${pct(lint.andTeam, lint.facts)} |`);
console.log(`| decision names ending on a function word | ${pct(lint.danglingName, lint.decisions)} |`);
console.log(`| decision names clipped with … | ${pct(lint.cutName, lint.decisions)} |`);
