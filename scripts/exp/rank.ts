import path from 'node:path';
import { LocalSentenceEncoder } from '@atlas/providers';
import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { loadLocomo, score } from '../bench/locomo.js';

const set = loadLocomo(path.resolve(import.meta.dirname, '../../../shared/data/locomo/locomo-dev.json'));
const STOP = new Set(
  'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself they them their theirs themselves what which who whom this that these those am is are was were be been being have has had having do does did doing a an the and but if or because as until while of at by for with about against between into through during before after above below to from up down in out on off over under again further then once here there when where why how all any both each few more most other some such no nor not only own same so than too very s t can will just don should now'.split(
    ' ',
  ),
);
const proc = (t: string) => {
  const w = t.toLowerCase();
  return STOP.has(w) ? null : stemmer(w);
};
const msgs = set.messages;
const idx = new Map(msgs.map((m, i) => [m.platformMessageId + m.channelId, i]));
const enc = new LocalSentenceEncoder();
const texts = (f: (i: number) => string) => msgs.map((_, i) => f(i));
const prev = (i: number) => (i > 0 && msgs[i - 1]!.channelId === msgs[i]!.channelId ? msgs[i - 1]! : null);
const next = (i: number) =>
  i + 1 < msgs.length && msgs[i + 1]!.channelId === msgs[i]!.channelId ? msgs[i + 1]! : null;
const variants: Record<string, string[]> = {
  raw: texts((i) => msgs[i]!.text),
  name: texts((i) => `${msgs[i]!.author.name}: ${msgs[i]!.text}`),
  namePrev: texts((i) => `${msgs[i]!.author.name}: ${msgs[i]!.text} ${prev(i)?.text ?? ''}`),
  namePrevHalf: texts((i) => `${msgs[i]!.author.name}: ${msgs[i]!.text}`),
};
const bm = (docs: string[], boostCtx = false) => {
  const by = new Map<string, MiniSearch>();
  for (const c of set.channels) {
    const ms = new MiniSearch({ fields: boostCtx ? ['text', 'ctx'] : ['text'], idField: 'i', processTerm: proc });
    ms.addAll(
      msgs
        .map((m, i) => ({
          i,
          text: docs[i],
          ctx: (prev(i)?.text ?? '') + ' ' + (next(i)?.text ?? ''),
          ch: m.channelId,
        }))
        .filter((d) => msgs[d.i]!.channelId === c.channelId),
    );
    by.set(c.channelId, ms);
  }
  return (q: { question: string; channelId: string }, o: object = {}) =>
    by
      .get(q.channelId)!
      .search(q.question, o)
      .map((r) => ({ i: Number(r.id), s: r.score }));
};
const evalR = (name: string, rank: (q: (typeof set.questions)[0]) => number[]) => {
  const per: Record<string, number[]> = {};
  for (const q of set.questions) {
    const r = score(
      rank(q).map((i) => msgs[i]!.platformMessageId),
      q.evidence,
    );
    for (const k of [String(q.category), 'all']) (per[k] ??= []).push(r.r10);
  }
  const f = (k: string) => ((per[k]!.reduce((a, b) => a + b, 0) / per[k]!.length) * 100).toFixed(1);
  console.log(name.padEnd(40), ['1', '2', '3', '4', 'all'].map(f).join('  '));
};
for (const [k, d] of Object.entries(variants).slice(0, 3)) {
  const r = bm(d);
  evalR(`bm25 ${k}`, (q) => r(q).map((x) => x.i));
}
const rc = bm(variants.name!, true);
evalR('bm25 name + ctx field w0.3', (q) => rc(q, { boost: { text: 1, ctx: 0.3 } }).map((x) => x.i));
// dense
const t0 = performance.now();
const E: Record<string, number[][]> = {};
for (const k of ['raw', 'name', 'namePrev']) E[k] = await enc.embed(variants[k]!);
console.error('embed', ((performance.now() - t0) / 1000).toFixed(1), 's');
const Q = await enc.embed(set.questions.map((q) => q.question));
const dot = (a: number[], b: number[]) => a.reduce((s, x, j) => s + x * b[j]!, 0);
const qi = new Map(set.questions.map((q, i) => [q, i]));
const dense = (k: string, q: (typeof set.questions)[0]) =>
  msgs
    .map((m, i) => ({ i, s: m.channelId === q.channelId ? dot(E[k]![i]!, Q[qi.get(q)!]!) : -9 }))
    .sort((a, b) => b.s - a.s);
for (const k of ['raw', 'name', 'namePrev'])
  evalR(`dense ${k}`, (q) =>
    dense(k, q)
      .slice(0, 10)
      .map((x) => x.i),
  );
// neighbour-smoothed dense: s_i + 0.3*max(s_prev, s_next)
evalR('dense name smoothed', (q) => {
  const d = dense('name', q);
  const s = new Map(d.map((x) => [x.i, x.s]));
  return d
    .map((x) => ({ i: x.i, s: x.s + 0.25 * Math.max(s.get(x.i - 1) ?? 0, s.get(x.i + 1) ?? 0) }))
    .sort((a, b) => b.s - a.s)
    .slice(0, 10)
    .map((x) => x.i);
});
const rn = bm(variants.name!);
const fuse = (q: (typeof set.questions)[0], wv: number, dk = 'name', kind = 'rrf') => {
  const b = rn(q);
  const d = dense(dk, q).slice(0, 100);
  const m = new Map<number, number>();
  if (kind === 'rrf') {
    b.slice(0, 100).forEach((x, r) => m.set(x.i, (m.get(x.i) ?? 0) + (1 - wv) / (60 + r)));
    d.forEach((x, r) => m.set(x.i, (m.get(x.i) ?? 0) + wv / (60 + r)));
  } else {
    const bmax = b[0]?.s ?? 1;
    const dmax = d[0]!.s;
    const dmin = d[d.length - 1]!.s;
    b.forEach((x) => m.set(x.i, (m.get(x.i) ?? 0) + (1 - wv) * (x.s / bmax)));
    d.forEach((x) => m.set(x.i, (m.get(x.i) ?? 0) + wv * ((x.s - dmin) / (dmax - dmin))));
  }
  return [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 10)
    .map((x) => x[0]);
};
for (const wv of [0.3, 0.5, 0.7]) evalR(`rrf name wv${wv}`, (q) => fuse(q, wv));
for (const wv of [0.3, 0.5, 0.7]) evalR(`minmax name wv${wv}`, (q) => fuse(q, wv, 'name', 'mm'));
for (const wv of [0.3, 0.5, 0.7]) evalR(`minmax namePrev wv${wv}`, (q) => fuse(q, wv, 'namePrev', 'mm'));
