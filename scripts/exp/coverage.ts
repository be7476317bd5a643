import path from 'node:path';
import { OfflineFactExtractor } from '@atlas/pipeline';
import { loadLocomo } from '../bench/locomo.js';

const set = loadLocomo(path.resolve(import.meta.dirname, '../../../shared/data/locomo/locomo-dev.json'));
const ex = new OfflineFactExtractor();
const ev = new Set(set.questions.flatMap((q) => q.evidence.map((e) => `${q.channelId}|${e}`)));
let n = 0,
  ok = 0,
  any = 0,
  allOk = 0;
const misses: string[] = [];
for (const m of set.messages) {
  const facts = ex.extractSync({ message: m, thread: null });
  const best = Math.max(0, ...facts.map((f) => f.qualityScore));
  if (best >= 0.5) allOk++;
  if (!ev.has(`${m.channelId}|${m.platformMessageId}`)) continue;
  n++;
  if (facts.length) any++;
  if (best >= 0.5) ok++;
  else
    misses.push(
      `${best.toFixed(2)} [${facts.map((f) => f.factType + ' ' + f.qualityScore).join(', ')}] ${m.text.slice(0, 160)}`,
    );
}
console.log({
  evidenceTurns: n,
  withAnyFact: any,
  withFactGte05: ok,
  allMessages: set.messages.length,
  allGte05: allOk,
});
for (const s of misses.slice(0, Number(process.env.N ?? 40))) console.log(s);
