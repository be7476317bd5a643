/**
 * Decision and action-item lifecycle (issue 27 point 1): the shapes the pipeline derives (packages/pipeline/src/lifecycle),
 * the lifecycle projector stores (packages/stores/src/lifecycle) and the API serves (/api/decisions). Times are ISO 8601 UTC.
 */
/** What a later message says about an earlier decision or action item. */
export type LifecycleCueName = 'agree' | 'done' | 'drop' | 'revert';

/** Issue 27 point 1: what a lifecycle item is. */
export type LifecycleKind = 'decision' | 'action_item';
/** A decision's states: proposed → decided → superseded | reverted. */
export type DecisionState = 'proposed' | 'decided' | 'superseded' | 'reverted';
/** An action item's states: open → done | dropped. */
export type ActionState = 'open' | 'done' | 'dropped';
export type LifecycleState = DecisionState | ActionState;

/** The message that moved an item (or opened it). */
export interface LifecycleEvidence {
  messageId: string;
  /** The platform's message id (Slack ts, Discord snowflake). */
  platformMessageId: string;
  permalink: string;
  authorId: string;
  authorName: string;
  /** The message's first LIFECYCLE_EXCERPT_CHARS characters. */
  excerpt: string;
}

/** One state change: `from` null for the item's first state; `at` is the message time (ISO 8601 UTC). */
export interface LifecycleTransition {
  from: LifecycleState | null;
  to: LifecycleState;
  at: string;
  /** Which rule moved it: opened, proposed, agreed, superseded, reverted, done, dropped. */
  rule: string;
  evidence: LifecycleEvidence;
}

/** A decision or action item with its history; itemId is the id of the fact it came from. */
export interface LifecycleItem {
  itemId: string;
  channelId: string;
  kind: LifecycleKind;
  state: LifecycleState;
  /** The fact's memory text. */
  title: string;
  /** An action item's stated owner, a decision's author (decided_by); null when none is stated. */
  owner: string | null;
  /** YYYY-MM-DD when a due date is stated, else null. */
  dueDate: string | null;
  /** Opening message time and last transition time (ISO 8601 UTC). */
  createdAt: string;
  updatedAt: string;
  /** The item that superseded (or reverted) this decision, when one did. */
  supersededBy: string | null;
  source: LifecycleEvidence;
  /** The thread it lives in (platform thread root id), or null for a top-level message without replies. */
  threadTs: string | null;
  transitions: LifecycleTransition[];
}

/** A decision, action-item or proposal fact, with its message (what deriveLifecycle starts an item from). */
export interface LifecycleFact {
  factId: string;
  channelId: string;
  /** decision, action_item, or question (a question in proposal language proposes a decision). */
  factType: string;
  memoryText: string;
  actionTags: string[];
  /** The whole message text as the pipeline read it (proposal and revert language are read here too). */
  sourceText: string;
  /** ISO 8601 UTC message time. */
  messageTs: string;
  threadTs: string | null;
  message: LifecycleEvidence;
}

/** A later message carrying at least one cue (what moves items). */
export interface LifecycleSignal {
  channelId: string;
  /** ISO 8601 UTC message time. */
  timestamp: string;
  threadTs: string | null;
  replyToId: string | null;
  cues: LifecycleCueName[];
  message: LifecycleEvidence;
}

/**
 * An admin's resolution of a potential contradiction (ContradictionResolved, docs/contradictions.md): the pair (earlier
 * fact `factId`, later fact `supersededBy`) and which stands. `later` makes the pair's uncertain supersession count as
 * a certain one; `earlier` and `both` leave the earlier decision as it was.
 */
export interface LifecycleResolution {
  factId: string;
  supersededBy: string;
  outcome: 'earlier' | 'later' | 'both';
}
