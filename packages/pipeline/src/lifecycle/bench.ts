/**
 * The lifecycle on a real Slack export, the way the projectors run it (issue 27 point 6): each channel's messages, in
 * order, through the offline fact extractor (facts of quality ≥ QUALITY_THRESHOLD kept), the offline entity extractor
 * (the channel's people, decisions and owners carried along, as the entities projector does; its supersessions kept),
 * and the lifecycle derivation. For the benchmark and the suites (`@atlas/pipeline/testing`), not used at run time.
 */
import type { FactsExtracted, Supersession } from '@atlas/core';
import { OfflineEntityExtractor } from '../entities/offline/index.js';
import type { KnownDecision, KnownOwner, KnownPerson } from '../entities/port.js';
import { OfflineFactExtractor } from '../facts/offline-extractor.js';
import { preprocess } from '../facts/preprocess.js';
import { selectFacts } from '../facts/select.js';
import { SlackExport } from '../test-support.js';
import {
  deriveLifecycle,
  type LifecycleFact,
  type LifecycleItem,
  type LifecycleSignal,
  lifecycleFactsOf,
  signalOf,
} from './derive.js';

export { CLOJURIANS, OLAKE } from '../test-support.js';

/** One channel's lifecycle on an export: its folder name, its id and its items. */
export interface ChannelLifecycle {
  name: string;
  channelId: string;
  items: LifecycleItem[];
}

/** A label of the benchmark set (test/fixtures/lifecycle-labels.json): ids and states only, no text. */
export interface LifecycleLabel {
  /** `olake` or `clojurians`. */
  export: string;
  /** Channel folder name. */
  channel: string;
  /** The platform message id (Slack ts) of the message that opened the item. */
  ts: string;
  kind: 'decision' | 'action_item';
  /** The expected final state. */
  state: string;
  /** The platform message id of the message that moved it to that state, when one did. */
  moved_by?: string | null;
}

/**
 * Runs the lifecycle on every channel of the Slack export at `dir` (or the `only` channels), with facts kept at
 * `threshold` (the runtime's QUALITY_THRESHOLD default, 0.5). Deterministic.
 */
export const exportLifecycle = (dir: string, workspace: string, only?: readonly string[], threshold = 0.5) => {
  const slack = new SlackExport(dir, workspace);
  const facts = new OfflineFactExtractor();
  const entities = new OfflineEntityExtractor();
  const out: ChannelLifecycle[] = [];
  for (const name of slack.channelNames()) {
    if (only && !only.includes(name)) continue;
    let people: KnownPerson[] = [];
    let decisions: (KnownDecision & { messageId: string })[] = [];
    let owners: KnownOwner[] = [];
    const lf: LifecycleFact[] = [];
    const signals: LifecycleSignal[] = [];
    const supersessions: Supersession[] = [];
    let channelId = name;
    for (const input of slack.inputs(name)) {
      const m = input.message;
      channelId = m.channelId;
      const signal = signalOf(m);
      if (signal) signals.push(signal);
      const kept = selectFacts(facts.extractSync(input), threshold);
      if (kept.length === 0) continue;
      const set: FactsExtracted = {
        messageId: m.messageId,
        platform: m.platform,
        channelId: m.channelId,
        sourceMessageId: m.platformMessageId,
        extractor: facts.id,
        extractedAt: m.timestamp,
        facts: kept,
        sourceText: preprocess(m).text.slice(0, 1000),
        contextText: '',
      };
      lf.push(...lifecycleFactsOf(set));
      const x = entities.extractSync({ facts: set, people, decisions, owners });
      people = [...people, ...x.people.filter((p) => !people.some((q) => q.name === p.name))];
      const replaced = new Set(x.supersessions.filter((s) => s.certain && s.oldEntityId).map((s) => s.oldEntityId));
      decisions = [
        ...decisions.filter((d) => !replaced.has(d.entityId)),
        ...x.decisions.map((d) => ({ ...d, messageId: m.messageId })),
      ];
      const stated = new Set((x.owners ?? []).map((o) => o.subjectKey));
      owners = [...owners.filter((o) => !stated.has(o.subjectKey)), ...(x.owners ?? [])];
      supersessions.push(...x.supersessions);
    }
    out.push({ name, channelId, items: deriveLifecycle({ facts: lf, signals, supersessions }) });
  }
  return out;
};

/** Scores of one export: labelled items found, and found items whose final state (and mover) match. */
export interface LifecycleScore {
  labelled: number;
  found: number;
  stateCorrect: number;
  /** Of the found items whose expected state came from a later message, those moved by that very message. */
  moverCorrect: number;
  moverLabelled: number;
  /** recall = found / labelled; stateAccuracy = stateCorrect / found (0 when nothing found). */
  recall: number;
  stateAccuracy: number;
  /** Per label: the item's state found (null when the item was not found). */
  results: { label: LifecycleLabel; found: LifecycleItem | null }[];
}

/**
 * Scores `labels` of one export against its lifecycle: a label is found when an item of its kind opened at its
 * channel's message `ts` (a decision label is also found by a decision item of that message whatever kind the
 * extractor gave, likewise an action item); its state is correct when the item's final state equals the label's.
 * Pure.
 */
export const scoreLifecycle = (
  labels: readonly LifecycleLabel[],
  channels: readonly ChannelLifecycle[],
): LifecycleScore => {
  const byChannel = new Map(channels.map((c) => [c.name, c.items]));
  const results = labels.map((label) => {
    const items = (byChannel.get(label.channel) ?? []).filter((i) => i.source.platformMessageId === label.ts);
    // Several facts of one message: the item whose state matches speaks for it, else the first of the kind.
    const ofKind = items.filter((i) => i.kind === label.kind);
    const found = ofKind.find((i) => i.state === label.state) ?? ofKind[0] ?? null;
    return { label, found };
  });
  const found = results.filter((r) => r.found);
  const stateCorrect = found.filter((r) => r.found!.state === r.label.state).length;
  const withMover = found.filter((r) => r.label.moved_by);
  const moverCorrect = withMover.filter(
    (r) =>
      r.found!.state === r.label.state && r.found!.transitions.at(-1)?.evidence.platformMessageId === r.label.moved_by,
  ).length;
  return {
    labelled: labels.length,
    found: found.length,
    stateCorrect,
    moverCorrect,
    moverLabelled: withMover.length,
    recall: labels.length ? found.length / labels.length : 0,
    stateAccuracy: found.length ? stateCorrect / found.length : 0,
    results,
  };
};
