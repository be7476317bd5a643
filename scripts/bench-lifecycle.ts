/**
 * `npm run bench:lifecycle` (issue 27 point 6): the decision and action-item lifecycle on real chat. Runs the OLake and
 * Clojurians exports (by path, ../shared/data) through the offline fact and entity extractors and the lifecycle
 * derivation (`exportLifecycle`: what the facts, entities and lifecycle projectors compute), then scores the labelled
 * set in test/fixtures/lifecycle-labels.json (ids and states read from the messages; no text): recall = labelled items
 * found (an item of the label's kind opened by the labelled message), state accuracy = found items whose final state
 * is the label's, mover = found items with a labelled mover whose last transition cites that very message.
 * Prints one row per export and an overall row, then the transitions the lifecycle made on each export, then the
 * misses (`-v` lists every label).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type ChannelLifecycle,
  CLOJURIANS,
  exportLifecycle,
  type LifecycleLabel,
  type LifecycleScore,
  OLAKE,
  scoreLifecycle,
} from '@atlas/pipeline/testing';

const LABELS = path.resolve(import.meta.dirname, '../test/fixtures/lifecycle-labels.json');
const verbose = process.argv.includes('-v');
const { labels } = JSON.parse(readFileSync(LABELS, 'utf8')) as { labels: LifecycleLabel[] };

const pct = (n: number, d: number): string => (d ? `${((100 * n) / d).toFixed(1)}%` : 'n/a');
const rows: string[][] = [];
const all: LifecycleScore['results'] = [];
const transitions: string[] = [];
for (const [name, dir] of [
  ['olake', OLAKE],
  ['clojurians', CLOJURIANS],
] as const) {
  const t0 = performance.now();
  const channels: ChannelLifecycle[] = exportLifecycle(dir, name);
  const ms = performance.now() - t0;
  const s = scoreLifecycle(
    labels.filter((l) => l.export === name),
    channels,
  );
  all.push(...s.results);
  const items = channels.flatMap((c) => c.items);
  rows.push([
    name,
    String(items.length),
    String(s.labelled),
    String(s.found),
    pct(s.found, s.labelled),
    pct(s.stateCorrect, s.found),
    `${s.moverCorrect}/${s.moverLabelled}`,
    `${Math.round(ms)}`,
  ]);
  const kinds = new Map<string, number>();
  for (const i of items)
    for (const t of i.transitions.slice(1)) kinds.set(`${t.from}→${t.to}`, (kinds.get(`${t.from}→${t.to}`) ?? 0) + 1);
  const states = new Map<string, number>();
  for (const i of items) states.set(`${i.kind}:${i.state}`, (states.get(`${i.kind}:${i.state}`) ?? 0) + 1);
  transitions.push(
    `  ${name}: transitions ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}; final states ${[...states]
      .sort()
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
  );
}
const found = all.filter((r) => r.found);
const correct = found.filter((r) => r.found!.state === r.label.state);
const movers = found.filter((r) => r.label.moved_by);
const moverOk = movers.filter(
  (r) =>
    r.found!.state === r.label.state && r.found!.transitions.at(-1)?.evidence.platformMessageId === r.label.moved_by,
);
rows.push([
  'overall',
  '',
  String(all.length),
  String(found.length),
  pct(found.length, all.length),
  pct(correct.length, found.length),
  `${moverOk.length}/${movers.length}`,
  '',
]);

const head = ['export', 'items', 'labelled', 'found', 'recall', 'state accuracy', 'mover', 'ms'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(`\nDecision and action-item lifecycle on real chat (${path.relative(process.cwd(), LABELS)})\n`);
console.log(`${line(head)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
for (const r of rows) console.log(line(r));
console.log(`\n${transitions.join('\n')}\n`);
for (const r of all) {
  const ok = r.found && r.found.state === r.label.state;
  if (ok && !verbose) continue;
  const got = r.found
    ? `${r.found.state}${r.found.transitions.length > 1 ? ` by ${r.found.transitions.at(-1)!.evidence.platformMessageId}` : ''}`
    : 'not found';
  console.log(
    `  ${ok ? 'ok  ' : 'miss'} ${r.label.export}/#${r.label.channel} ${r.label.ts} ${r.label.kind}: expected ${r.label.state}${
      r.label.moved_by ? ` by ${r.label.moved_by}` : ''
    }, got ${got}`,
  );
}
