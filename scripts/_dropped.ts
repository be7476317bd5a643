import path from 'node:path';
import { OfflineFactExtractor, selectFacts } from '@atlas/pipeline';
import { loadLocomo } from '@atlas/pipeline/testing';
const set = loadLocomo(path.resolve(import.meta.dirname, '../../shared/data/locomo/locomo-dev.json'));
const ex = new OfflineFactExtractor();
const byId = new Map(set.messages.map((m, i) => [m.channelId+'/'+m.platformMessageId, i]));
const ev = new Map<string, string[]>();
for (const q of set.questions) if (q.category <= 4) for (const e of q.evidence) ev.set(q.channelId+'/'+e, [...(ev.get(q.channelId+'/'+e) ?? []), `[c${q.category}] ${q.question}`]);
let none = 0, tot = 0;
for (const [id, qs] of ev) {
  const i = byId.get(id); if (i === undefined) continue; tot++;
  const m = set.messages[i]!;
  const pm = set.messages[i-1];
  const useCtx = pm && pm.channelId === m.channelId && pm.author.name !== m.author.name && /\?+(?=[\s"'”’)\]]|$)/.test(pm.text);
  const all = ex.extractSync({ message: m, thread: null, answers: useCtx ? { rootText: pm.text, rootAuthorName: pm.author.name, rootId: pm.platformMessageId } : null });
  const kept = selectFacts(all, 0.5);
  if (kept.length === 0) {
    none++;
    if (process.env.SHOW) console.log(`--- ${id} ${m.author.name}: ${m.text}\n  prev: ${set.messages[i-1]?.author.name}: ${set.messages[i-1]?.text.slice(0,150)}\n  cands: ${all.map(f=>f.qualityScore.toFixed(2)+' '+f.factType+' '+f.memoryText.slice(0,80)).join(' | ')}\n  q: ${qs.join(' / ')}`);
  }
}
let kept = 0, keptCtx = 0;
for (let j = 0; j < set.messages.length; j++) { const m = set.messages[j]!; const pm = set.messages[j-1];
  kept += selectFacts(ex.extractSync({ message: m, thread: null }), 0.5).length;
  const useCtx = pm && pm.channelId === m.channelId && pm.author.name !== m.author.name && /\?+(?=[\s"'”’)\]]|$)/.test(pm.text);
  keptCtx += selectFacts(ex.extractSync({ message: m, thread: null, answers: useCtx ? { rootText: pm.text, rootAuthorName: pm.author.name, rootId: pm.platformMessageId } : null }), 0.5).length; }
console.log({ kept, keptCtx, none, tot, msgs: set.messages.length, qs: set.questions.length });
