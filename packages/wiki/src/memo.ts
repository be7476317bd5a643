// The memo tables of wiki rendering, owned by whoever renders: no module-level state.
import type { SourceMessage, WikiCitation, WikiFact } from './types.js';

/** A tag of a cluster's facts with its count (titles.ts rankedTags). */
export interface RankedTag {
  key: string;
  display: string;
  count: number;
  entity: boolean;
}

/**
 * Memo tables a render reads through its RenderContext. Each is keyed by an object that never changes under it (a
 * fact, a message, a citation, a facts array) or by a string (bounded: cleared past its limit), so a table may
 * outlive a run: a long-lived generator keeps one RenderMemo (WikiGenerateDeps.renderMemo) and hands the same fact
 * and message objects to run after run, so an incremental run builds and verifies only what is new or changed.
 * Without one, a render starts from empty tables; the output is the same either way.
 */
export class RenderMemo {
  /** Per message, the user ids its text mentions without a label (context.ts mentionKey). */
  readonly mentioned = new WeakMap<SourceMessage, string[]>();
  /**
   * Per fact object: the citation (or null) built for it against `msg` under user names `names` (mentionKey), and the
   * excerpt used. A new object (a changed fact or message) misses.
   */
  readonly cited = new WeakMap<
    WikiFact,
    { msg: SourceMessage; names: string; citation: WikiCitation | null; excerpt: string | null }
  >();
  /** Citations verified against a message object under user names (mentionKey), per citation object. */
  readonly verified = new WeakMap<WikiCitation, { msg: SourceMessage; names: string }>();
  /** page-text.ts factText per memory_text (at most FACT_TEXT_MAX entries). */
  readonly factTexts = new Map<string, string>();
  /** titles.ts titleCase per tag (at most FACT_TEXT_MAX entries). */
  readonly titleCases = new Map<string, string>();
  /** titles.ts rankedTags per facts array (the caller must not change the array afterwards). */
  readonly rankedTags = new WeakMap<readonly WikiFact[], RankedTag[]>();
  /** Lower-cased tags and text of a fact (titles.ts onTopicTest). */
  readonly factTerms = new WeakMap<WikiFact, { tags: string[]; text: string }>();
  /** contentTokens of a fact's memory_text (pages/faq.ts). */
  readonly tokens = new WeakMap<WikiFact, Set<string>>();
  /** Per fact, per glossary term: how the fact speaks of it (pages/glossary.ts termMatcher). */
  readonly termScores = new WeakMap<WikiFact, Map<string, number>>();
  /** Per glossary term, its patterns (at most 10,000 entries). */
  readonly termPatterns = new Map<string, { named: RegExp; defines: RegExp }>();
  /** pages/activity.ts weekStart per UTC day (at most 100,000 entries). */
  readonly weekStarts = new Map<string, string>();
}
