import { normalizeEntityName, type Supersession } from '@atlas/core';
import { GENERIC_NOUNS, STOPWORDS, TECH } from '../facts/lexicon.js';
import type { KnownDecision } from './port.js';

/** A decision of the message being extracted: a KnownDecision plus the text of the fact it came from. */
export interface NewDecision extends KnownDecision {
  /** The fact's memory text (replacement language is looked for here). */
  text: string;
}

/** At most this many earlier decisions are flagged by one new decision (the most recent ones). */
export const MAX_SUPERSESSIONS_PER_DECISION = 3;

const TECH_NAMES: ReadonlySet<string> = new Set([...TECH.values()].map((t) => normalizeEntityName(t.name)));

/**
 * Replacement language: the new decision replaces an earlier choice. Group 1 (when present) is the object of the
 * cue, the thing replaced ("instead of X", "switch from X", "drop X", "replace X", "no longer use X").
 */
const REPLACEMENT: readonly RegExp[] = [
  /\b(?:instead of|rather than|in place of|replac(?:e|es|ed|ing)|(?:switch|switched|switching|move|moved|moving|migrate|migrated|migrating) (?:away )?from|drop(?:s|ped|ping)?|ditch(?:es|ed|ing)?|abandon(?:s|ed|ing)?|deprecat(?:e|es|ed|ing)|no longer (?:use|uses|using|need|needs|support|supports)|stop(?:s|ped)? using|get(?:ting)? rid of|rip(?:ped)? out) ((?:the |our |their )?[\w.+#/-]+(?: [\w.+#/-]+){0,2})/i,
  /\b(?:mov|migrat|switch|port|transition)\w*\b[^.;]{0,40}?\bfrom ((?:the )?[\w.+#/-]+(?: [\w.+#/-]+){0,2}) (?:to|over to|onto)\b/i,
  /\b(?:switch(?:es|ed|ing)?|mov(?:e|es|ed|ing)|migrat(?:e|es|ed|ing)|go(?:ing)? back|went back|revert(?:s|ed|ing)?) (?:over |back )?to\b/i,
  /\bno longer\b/i,
];

/** The replacement cue of `text` and the object it names (normalised, '' when the cue names none), or null. */
export const replacementCue = (text: string): { cue: string; object: string } | null => {
  for (const re of REPLACEMENT) {
    const m = text.match(re);
    if (m) {
      const object = normalizeEntityName((m[1] ?? '').replace(/^(?:the|our|their) /i, ''));
      return { cue: m[0], object: STOPWORDS.has(object.split(' ')[0] ?? '') ? '' : object };
    }
  }
  return null;
};

/** A release announcement's decision name (offline extractor: "Release Fulcro 2.1.5"). */
const RELEASE_NAME = /^(?:release|publish|ship)\b/i;

/**
 * The choices of a decision: its topic keys that name a technology (TECH lexicon) or a project, read from its
 * name (a key whose words all appear in the name, and that is not a lowercase dictionary-like word there).
 */
export const choicesOf = (d: KnownDecision): Set<string> => {
  const name = d.name;
  const normName = ` ${normalizeEntityName(name).replace(/[^\p{L}\p{N}.+#/ ]+/gu, ' ')} `;
  const out = new Set<string>();
  for (const k of d.topicKeys) {
    if (TECH_NAMES.has(k)) out.add(k);
    else if (normName.includes(` ${k} `) && properIn(name, k)) out.add(k);
  }
  return out;
};

/** True when `key` is written in `name` like a name: capitalised, camelCase, or with `.`, `-`, `/` or digits. */
const properIn = (name: string, key: string): boolean => {
  const words = key.split(' ').map((w) => w.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  const written = name.match(new RegExp(words.join('[\\s_-]+'), 'i'))?.[0];
  return written !== undefined && (/^\p{Lu}/u.test(written) || /[a-z][A-Z]/.test(written) || /[./\d_-]/.test(written));
};

/**
 * Weight of one shared topic key: 2 for a technology, project, identifier (`core.async`, `s/map-of`) or a
 * phrase of two or more words; 1 for a lone word; 0 for stop words, generic nouns and one-word keys frequent among
 * the channel's decisions (in ≥ 3 of them and ≥ 40%: the channel's own subject, like `clojure` in #clojure).
 */
const keyWeight = (key: string, choice: boolean, frequent: ReadonlySet<string>): number => {
  if (frequent.has(key) || STOPWORDS.has(key) || GENERIC_NOUNS.has(key)) return 0;
  if (choice || /[./\d#+-]/.test(key)) return 2;
  const words = key.split(' ').filter((w) => !STOPWORDS.has(w) && !GENERIC_NOUNS.has(w));
  return Math.min(words.length, 2);
};

const frequentKeys = (earlier: readonly KnownDecision[]): Set<string> => {
  const df = new Map<string, number>();
  for (const d of earlier) for (const k of new Set(d.topicKeys)) df.set(k, (df.get(k) ?? 0) + 1);
  const out = new Set<string>();
  for (const [k, n] of df) if (!k.includes(' ') && n >= 3 && n >= 0.4 * earlier.length) out.add(k);
  return out;
};

/**
 * Supersessions of a message's new decisions over the channel's earlier ones (spec "Memory validity",
 * "Decision record": superseded_by, invalid_at, potential_contradiction). Pure and deterministic.
 *
 * Same topic (conservative): the shared topic keys weigh ≥ 2 (see keyWeight: one shared technology or project,
 * one shared multi-word phrase or identifier, or two shared lone words; one shared generic tag is not enough).
 * Then:
 * - certain=true (the earlier fact gets superseded_by and invalid_at) when the new fact uses replacement language
 *   ("instead of", "switch(ed) to", "replace", "no longer", "moving from X to Y", "migrate", "drop X") whose object,
 *   if it names one, is among the earlier decision's keys; or when the choice changed in the same slot (a shared
 *   non-choice key, and each side has a technology/project the other lacks); or for a newer release of the same
 *   project ("Release Fulcro 2.1.8" after "Release Fulcro 2.1.5");
 * - certain=false (potential contradiction) otherwise, except for a restatement (same decision name).
 * Only decisions of earlier messages are compared (messageTs strictly before), so re-extracting a message whose
 * decisions are already in the channel state supersedes nothing of its own. invalidAt is the new message's
 * timestamp (ISO 8601). At most MAX_SUPERSESSIONS_PER_DECISION per new decision, most recent first.
 * Callers should drop decisions superseded with certain=true from the channel state, so a third decision on the
 * topic supersedes the second, not the first again.
 */
export const findSupersessions = (
  newDecisions: readonly NewDecision[],
  earlier: readonly KnownDecision[],
): Supersession[] => {
  const frequent = frequentKeys(earlier);
  const out: Supersession[] = [];
  for (const nd of newDecisions) {
    const newChoices = choicesOf(nd);
    const newKeys = new Set(nd.topicKeys);
    const cue = replacementCue(nd.text);
    const found: Supersession[] = [];
    const candidates = earlier
      .filter((d) => d.messageTs < nd.messageTs && d.factId !== nd.factId)
      .sort((a, b) => (a.messageTs < b.messageTs ? 1 : a.messageTs > b.messageTs ? -1 : 0));
    for (const old of candidates) {
      if (found.length >= MAX_SUPERSESSIONS_PER_DECISION) break;
      if (normalizeEntityName(old.name) === normalizeEntityName(nd.name)) continue;
      const oldChoices = choicesOf(old);
      const shared = old.topicKeys.filter((k) => newKeys.has(k));
      const weight = shared.reduce((s, k) => s + keyWeight(k, newChoices.has(k) || oldChoices.has(k), frequent), 0);
      if (weight < 2) continue;
      const sharedSlot = shared.some(
        (k) => !newChoices.has(k) && !oldChoices.has(k) && keyWeight(k, false, frequent) > 0,
      );
      const changedChoice =
        sharedSlot &&
        [...newChoices].some((c) => !oldChoices.has(c)) &&
        [...oldChoices].some((c) => !newChoices.has(c));
      const cueHitsOld =
        cue !== null && (cue.object === '' || old.topicKeys.some((k) => ` ${cue.object} `.includes(` ${k} `)));
      const newerRelease =
        RELEASE_NAME.test(nd.name) &&
        RELEASE_NAME.test(old.name) &&
        [...newChoices].some((c) => oldChoices.has(c) && !frequent.has(c));
      const certain = cueHitsOld || changedChoice || newerRelease;
      const reason = cueHitsOld
        ? `replaced ("${cue!.cue}")`
        : changedChoice
          ? `changed choice on ${shared.filter((k) => !newChoices.has(k) && !oldChoices.has(k)).join(', ')}`
          : newerRelease
            ? `newer release of ${[...newChoices].filter((c) => oldChoices.has(c)).join(', ')}`
            : `same topic (${shared.join(', ')}) without replacement language`;
      found.push({
        factId: old.factId,
        supersededBy: nd.factId,
        oldEntityId: old.entityId,
        newEntityId: nd.entityId,
        invalidAt: nd.messageTs,
        certain,
        reason,
      });
    }
    out.push(...found);
  }
  return out;
};
