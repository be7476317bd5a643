import type {
  FactsExtracted,
  LifecycleEvidence,
  LifecycleFact,
  LifecycleItem,
  LifecycleKind,
  LifecycleResolution,
  LifecycleSignal,
  LifecycleState,
  MessageIngested,
  Supersession,
} from '@atlas/core';

export type {
  ActionState,
  DecisionState,
  LifecycleEvidence,
  LifecycleFact,
  LifecycleItem,
  LifecycleKind,
  LifecycleResolution,
  LifecycleSignal,
  LifecycleState,
  LifecycleTransition,
} from '@atlas/core';

import { dueDateOf, isProposal, isRevert, type LifecycleCue, messageCues } from './cues.js';

/** A certain or uncertain supersession between two facts (from EntitiesExtracted). */
export type LifecycleSupersession = Pick<Supersession, 'factId' | 'supersededBy' | 'invalidAt' | 'certain'>;

/** Characters of a message kept as evidence excerpt. */
export const LIFECYCLE_EXCERPT_CHARS = 160;
/** A top-level cue applies to a top-level item at most this long before it (no thread needed). */
export const ADJACENT_WINDOW_MS = 15 * 60_000;

const excerptOf = (text: string): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= LIFECYCLE_EXCERPT_CHARS ? flat : `${flat.slice(0, LIFECYCLE_EXCERPT_CHARS - 1)}…`;
};

/** The evidence record of a message. Pure. */
export const evidenceOf = (m: MessageIngested): LifecycleEvidence => ({
  messageId: m.messageId,
  platformMessageId: m.platformMessageId,
  permalink: m.permalink,
  authorId: m.author.id,
  authorName: m.author.name,
  excerpt: excerptOf(m.text),
});

/**
 * The signal of a message (its cues), or null when it carries none, is a bot's, or is a system message. Pure.
 */
export const signalOf = (m: MessageIngested): LifecycleSignal | null => {
  if (m.author.isBot || (m.subtype && m.subtype !== 'thread_broadcast')) return null;
  const cues = messageCues(m.text);
  if (cues.length === 0) return null;
  return {
    channelId: m.channelId,
    timestamp: m.timestamp,
    threadTs: m.threadTs,
    replyToId: m.replyToId,
    cues,
    message: evidenceOf(m),
  };
};

/**
 * The lifecycle facts of one message's fact set: its decision and action-item facts, and its question facts in
 * proposal language ("should we…?"). Pure; [] for none.
 */
export const lifecycleFactsOf = (set: FactsExtracted): LifecycleFact[] => {
  const out: LifecycleFact[] = [];
  for (const f of set.facts) {
    const proposal =
      f.factType === 'question' && isProposal(f.memoryText) && /\b(we|us|our|let'?s)\b/i.test(f.memoryText);
    if (f.factType !== 'decision' && f.factType !== 'action_item' && !proposal) continue;
    out.push({
      factId: f.factId,
      channelId: set.channelId,
      factType: f.factType,
      memoryText: f.memoryText,
      actionTags: f.actionTags,
      sourceText: set.sourceText,
      messageTs: f.messageTs,
      threadTs: f.threadTs,
      message: {
        messageId: set.messageId,
        platformMessageId: set.sourceMessageId,
        permalink: f.permalink,
        authorId: f.authorId,
        authorName: f.authorName,
        excerpt: excerptOf(set.sourceText || f.memoryText),
      },
    });
  }
  return out;
};

const DEADLINE_TAG =
  /\b(mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(tomorrow|tonight|today|eod|eow|noon|next|this|end of|by|before|until)\b|\d/i;

/**
 * An action item's owner from its action tags ([verb, owner, deadline], any of them absent): the first tag that is not
 * the leading lowercase verb and not a deadline. Null when none. Pure.
 */
export const ownerOf = (tags: readonly string[]): string | null => {
  for (let i = 0; i < tags.length; i++) {
    const t = tags[i]!.trim();
    if (!t || (i === 0 && /^[a-z]+$/.test(t)) || DEADLINE_TAG.test(t) || t === 'someone') continue;
    return t;
  }
  return null;
};

/** The conversation a message belongs to: its thread root id (a top-level message is its own root). */
const rootOf = (threadTs: string | null, platformMessageId: string): string => threadTs ?? platformMessageId;

/** Which state a cue moves, and to what. */
const MOVES: Record<LifecycleCue, { from: LifecycleState; to: LifecycleState; rule: string }> = {
  agree: { from: 'proposed', to: 'decided', rule: 'agreed' },
  done: { from: 'open', to: 'done', rule: 'done' },
  drop: { from: 'open', to: 'dropped', rule: 'dropped' },
  revert: { from: 'decided', to: 'reverted', rule: 'reverted' },
};

interface Step {
  at: string;
  order: number;
  apply: () => void;
}

/**
 * Derives a channel's decisions and action items with their histories (issue 27 point 1), deterministically:
 * - each fact opens an item: a decision `decided`, or `proposed` when its message proposes ("should we…", "I propose…",
 *   "how about…"; a question fact in proposal language too); an action item `open`, its owner from the action tags
 *   and its due date from the text;
 * - a certain supersession (EntitiesExtracted) whose earlier fact is a proposed or decided decision moves it to
 *   `superseded`, or to `reverted` when the superseding message goes back ("revert", "let's go back to X"), its
 *   evidence the superseding message, supersededBy the new item; an uncertain one (potential_contradiction) does the
 *   same once an admin resolved its pair as `later` (`resolutions`; issue 27 point 5), and nothing otherwise;
 * - a later message with a cue moves the latest item of its conversation (same thread or reply chain; a top-level
 *   message also reaches top-level items of the ADJACENT_WINDOW_MS before it) that its cue applies to: agree
 *   proposed → decided, done open → done, drop open → dropped, revert decided → reverted. Every item of that item's
 *   message in the same state moves with it. A message never moves its own items.
 * Items come back sorted by creation time then id; inputs may come in any order. Pure.
 */
export const deriveLifecycle = (input: {
  facts: readonly LifecycleFact[];
  signals: readonly LifecycleSignal[];
  supersessions: readonly LifecycleSupersession[];
  resolutions?: readonly LifecycleResolution[];
}): LifecycleItem[] => {
  const laterStands = new Set(
    (input.resolutions ?? []).filter((r) => r.outcome === 'later').map((r) => `${r.factId}\u0000${r.supersededBy}`),
  );
  const items = new Map<string, LifecycleItem>();
  const facts = [...input.facts].sort(
    (a, b) => a.messageTs.localeCompare(b.messageTs) || a.factId.localeCompare(b.factId),
  );
  for (const f of facts) {
    const kind: LifecycleKind = f.factType === 'action_item' ? 'action_item' : 'decision';
    const proposed = kind === 'decision' && (f.factType === 'question' || isProposal(f.memoryText));
    const state: LifecycleState = kind === 'action_item' ? 'open' : proposed ? 'proposed' : 'decided';
    items.set(f.factId, {
      itemId: f.factId,
      channelId: f.channelId,
      kind,
      state,
      title: f.memoryText,
      owner: kind === 'action_item' ? ownerOf(f.actionTags) : f.message.authorName,
      dueDate: kind === 'action_item' ? dueDateOf(f.memoryText, f.messageTs) : null,
      createdAt: f.messageTs,
      updatedAt: f.messageTs,
      supersededBy: null,
      source: f.message,
      threadTs: f.threadTs,
      transitions: [
        { from: null, to: state, at: f.messageTs, rule: proposed ? 'proposed' : 'opened', evidence: f.message },
      ],
    });
  }
  const factById = new Map(facts.map((f) => [f.factId, f]));
  const move = (item: LifecycleItem, to: LifecycleState, at: string, rule: string, evidence: LifecycleEvidence) => {
    item.transitions.push({ from: item.state, to, at, rule, evidence });
    item.state = to;
    item.updatedAt = at;
  };

  const steps: Step[] = [];
  // Supersessions, at the superseding message's time.
  for (const s of input.supersessions) {
    if (!s.certain && !laterStands.has(`${s.factId}\u0000${s.supersededBy}`)) continue;
    const old = items.get(s.factId);
    const by = factById.get(s.supersededBy);
    if (!old || !by || old.kind !== 'decision') continue;
    steps.push({
      at: by.messageTs,
      order: 0,
      apply: () => {
        if (old.state !== 'decided' && old.state !== 'proposed') return;
        const revert = isRevert(by.sourceText || by.memoryText);
        old.supersededBy = by.factId;
        move(old, revert ? 'reverted' : 'superseded', by.messageTs, revert ? 'reverted' : 'superseded', by.message);
      },
    });
  }
  // Cues, at their message's time.
  const itemList = [...items.values()];
  for (const sig of input.signals) {
    steps.push({ at: sig.timestamp, order: 1, apply: () => applySignal(sig, itemList, move) });
  }
  steps.sort((a, b) => a.at.localeCompare(b.at) || a.order - b.order);
  for (const s of steps) s.apply();
  return itemList.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.itemId.localeCompare(b.itemId));
};

const applySignal = (
  sig: LifecycleSignal,
  items: readonly LifecycleItem[],
  move: (item: LifecycleItem, to: LifecycleState, at: string, rule: string, evidence: LifecycleEvidence) => void,
): void => {
  const root = rootOf(sig.threadTs, sig.message.platformMessageId);
  const t = Date.parse(sig.timestamp);
  const inConversation = (i: LifecycleItem): boolean => {
    if (i.channelId !== sig.channelId || i.source.messageId === sig.message.messageId) return false;
    if (i.createdAt >= sig.timestamp) return false;
    if (rootOf(i.threadTs, i.source.platformMessageId) === root && sig.threadTs !== null) return true;
    if (sig.replyToId && sig.replyToId === i.source.platformMessageId) return true;
    // Top-level after top-level: adjacent in time.
    return sig.threadTs === null && i.threadTs === null && t - Date.parse(i.createdAt) <= ADJACENT_WINDOW_MS;
  };
  for (const cue of sig.cues) {
    const m = MOVES[cue];
    const candidates = items.filter((i) => i.state === m.from && inConversation(i));
    if (candidates.length === 0) continue;
    const latest = candidates.reduce((a, b) => (b.createdAt > a.createdAt ? b : a));
    for (const i of candidates)
      if (i.source.messageId === latest.source.messageId) move(i, m.to, sig.timestamp, m.rule, sig.message);
  }
};
