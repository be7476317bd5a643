// Community groups (support groups, book clubs, choirs…): Teams of community life.

import { DETERMINER, modifiersBefore, TECH_MODIFIERS } from './events.js';
import type { Span } from './spans.js';
import { technologyName } from './technologies.js';

/** Group nouns of community life: a Team with a modifier ("support group", "book club") or after a membership verb. */
const GROUP_HEAD =
  /(?<![\p{L}\p{N}_./@-])(group|club|band|choir|orchestra|community|organi[sz]ation|agency|church|congregation|association|society|troupe|crew|league|collective|nonprofit|non-profit|charity)(s)?(?![\p{L}\p{N}_]|[-/.][\p{L}\p{N}])/giu;
const GROUP_CANON: Record<string, string> = { organisation: 'organization', 'non-profit': 'nonprofit' };
const MEMBERSHIP_VERB =
  /\b(?:join(?:s|ed|ing)?|(?:is|am|are|was|were|'m|'re|been|being)\s+(?:(?:now|also|still|already|really|proud|happy)\s+)*(?:part of|a member of|member of|in)|goes to|go to|going to|went to|attend(?:s|ed|ing)?|volunteer(?:s|ed|ing)? (?:at|for|with)|found(?:ed)?|start(?:ed)?|belong(?:s|ed)? to|sing(?:s)? in|play(?:s|ed)? in)\s+$/i;

/**
 * Groups of community life a text names (spec "Graph entity": Team): `X group` with a lower-case modifier
 * ("support group", "activist group"), clubs, bands, choirs, agencies ("adoption agency"), organisations, churches
 * and communities with a non-technical modifier ("LGBTQ community", not "Clojure community"). Conservative: a group
 * noun is required, and a bare one ("the club") counts only after a membership verb ("joined the club").
 */
export const findGroups = (text: string): Span[] => {
  const out: Span[] = [];
  for (const m of text.matchAll(GROUP_HEAD)) {
    const lower = m[1]!.toLowerCase();
    const head = GROUP_CANON[lower] ?? lower;
    const start = m.index;
    const end = start + m[0].length;
    if (/^\s+of\b/i.test(text.slice(end))) continue; // "a group of people", "the community of"
    const mods = modifiersBefore(text, start, 3);
    const immediate = mods.words.at(-1) ?? '';
    if (immediate && (technologyName(immediate) || TECH_MODIFIERS.has(immediate.toLowerCase()))) continue;
    if (mods.words.some((w) => technologyName(w))) continue;
    const det = text.slice(0, mods.start);
    const detM = det.match(DETERMINER);
    const beforeDet = detM ? det.slice(0, det.length - detM[0].length) : det;
    const member = MEMBERSHIP_VERB.test(`${beforeDet.slice(-40)} `) || MEMBERSHIP_VERB.test(det.slice(-40));
    if (mods.words.length === 0 && !(member && detM && head !== 'community' && head !== 'group')) continue;
    if (mods.words.length > 0 && head === 'group' && /^(the|a|this|that)$/i.test(mods.words[0]!)) continue;
    const name = [...mods.words, head].join(' ');
    out.push({ name, index: mods.words.length > 0 ? mods.start : start, end });
  }
  return out;
};
