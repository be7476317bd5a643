/**
 * Lifecycle cues (issue 27 point 1): the offline rules that read a message as moving a decision or an action item.
 * Pure and deterministic; no LLM.
 */

import type { LifecycleCueName } from '@atlas/core';

/** What a later message says about an earlier decision or action item. */
export type LifecycleCue = LifecycleCueName;

/** Code, quotes and links do not speak for the author: they are blanked before cues are read. */
const strip = (text: string): string =>
  text
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/`[^`]*`/g, ' ')
    .replace(/^>.*$/gm, ' ')
    .replace(/<https?:[^>]*>|https?:\/\/\S+/g, ' ')
    .replace(/[’‘]/g, "'")
    .trim();

/** Agreement: "+1", "agreed", "let's do it", "decided", "sounds good", "lgtm", a thumbs-up (at the message's start). */
const AGREE =
  /^\W{0,3}(\+1|:\+1:|:thumbsup:|👍|agreed\b|agree\b|i agree\b|sounds good\b|sounds great\b|sgtm\b|lgtm\b|let'?s do (it|that|this)\b|let'?s go with (it|that|this)\b|decided\b|deal\b|ship it\b|yes,? let'?s\b|ok(ay)?,? let'?s (do|go)\b|makes sense,? let'?s\b|that works\b)/i;

/** Completion said in the past or perfect: "done", "shipped", "merged", "fixed in", "released", "it's deployed". */
const DONE = [
  /^\W{0,3}(done|fixed|merged|shipped|deployed|released|landed|resolved|completed)\b/i,
  /\b(is|was|are|were|has been|have been|got|just|now|already|finally|been) (done|fixed|merged|shipped|deployed|released|landed|resolved|completed|published|pushed)\b/i,
  /\b(i|we|i'?ve|we'?ve) (just |now |already |finally )?(did it|fixed it|merged|shipped|deployed|released|pushed|published|landed)\b/i,
  /\b(pr|fix|patch|change|it|that|this) (is |has been )?(merged|shipped|deployed|landed)\b/i,
  /\bfixed in\b|\bit'?s (done|fixed|live|out)\b|\bthat'?s (done|fixed)\b/i,
  // A requested thing handed over or tried: "here it is", "sent it", "it worked".
  /^\W{0,3}(here (it is|you go|they are)|sent( it)?\b|just tested\b|(it|that) worked\b)|\b(it|that) worked\b/i,
];

/** Dropping an action item: "won't do", "dropping it", "not needed", "never mind". */
const DROP =
  /\b(won'?t (do|fix|happen)|wontfix|will not (do|fix)|(dropping|drop|dropped|scrapping|scrap|scrapped|abandoning|abandoned|cancel(l?ing|l?ed)?) (it|this|that|the (idea|plan|task|pr))|(is|it'?s|that'?s|no longer|not) (really )?needed( anymore| any more)?\b|not needed\b|never ?mind\b|nvm\b|forget (it|that|about it)\b|no need (for|to do) (it|that|this)|not going to (do|happen))/i;

/** Reverting: "revert", "roll back", "let's go back to X". */
const REVERT =
  /\b(revert(ed|ing|s)?|roll(ed|ing)? ?back|let'?s go back to|go(ing)? back to|went back to|back (it )?out)\b/i;

/** Proposal language: the decision is proposed until someone agrees. */
const PROPOSE =
  /\b(should we|shall we|could we|can we|how about|what about|what if we|i propose|i'?d propose|proposal:|i suggest|we could|maybe we (should|could)|let'?s consider|thoughts on|would it make sense to)\b/i;

/** Negated completion ("not fixed", "isn't merged yet"): no `done` cue. */
const NOT_DONE =
  /\b(not|n't|never) (yet )?(been )?(done|fixed|merged|shipped|deployed|released|resolved)\b|\bnot yet\b/i;

/**
 * The cues of one message's text, in a fixed order (agree, done, drop, revert); [] when none. A question (ends with
 * `?`) carries no cue but `revert` asked as "revert?" is not one either. Pure.
 */
export const messageCues = (text: string): LifecycleCue[] => {
  const s = strip(text);
  if (!s || /\?\s*$/.test(s)) return [];
  const out: LifecycleCue[] = [];
  if (s.length <= 160 && AGREE.test(s)) out.push('agree');
  if (DONE.some((re) => re.test(s)) && !NOT_DONE.test(s)) out.push('done');
  if (DROP.test(s)) out.push('drop');
  if (REVERT.test(s)) out.push('revert');
  return out;
};

/** True when `text` proposes rather than decides ("should we…", "I propose…", "how about…"). Pure. */
export const isProposal = (text: string): boolean => PROPOSE.test(strip(text));

/** True when `text` asks to go back to an earlier choice ("revert", "let's go back to X"). Pure. */
export const isRevert = (text: string): boolean => REVERT.test(strip(text));

const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const ymd = (d: Date): string => d.toISOString().slice(0, 10);
const plusDays = (d: Date, n: number): Date => new Date(d.getTime() + n * 86_400_000);

/**
 * The due date a text states, as YYYY-MM-DD (UTC) relative to `at` (ISO 8601, the message time), or null:
 * "by friday" (the next Friday after `at`), "tomorrow", "today"/"tonight"/"eod", "end of (the) week"/"eow"/"this week"
 * (that week's Friday), "next week" (next Monday), "2018-02-15", "feb 15"/"15 feb", "by the 15th". Pure.
 */
export const dueDateOf = (text: string, at: string): string | null => {
  const s = strip(text).toLowerCase();
  const base = new Date(at);
  if (Number.isNaN(base.getTime())) return null;
  const iso = s.match(/\b(20\d\d)-(\d\d)-(\d\d)\b/);
  if (iso) return `${iso[1]}-${iso[2]}-${iso[3]}`;
  const wd = s.match(/\b(?:by|before|until|due|on|this|next) (sun|mon|tues|wednes|thurs|fri|satur)day\b/);
  if (wd) {
    const target = DAYS.findIndex((d) => d.startsWith(wd[1]!));
    const diff = (target - base.getUTCDay() + 7) % 7 || 7;
    return ymd(plusDays(base, diff));
  }
  if (/\btomorrow\b/.test(s)) return ymd(plusDays(base, 1));
  if (/\b(today|tonight|eod|end of (the )?day)\b/.test(s)) return ymd(base);
  if (/\b(eow|end of (the )?week|this week)\b/.test(s)) return ymd(plusDays(base, (5 - base.getUTCDay() + 7) % 7));
  if (/\bnext week\b/.test(s)) return ymd(plusDays(base, (1 - base.getUTCDay() + 7) % 7 || 7));
  const md =
    s.match(
      /\b(?:by|before|until|due|on) (jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* (\d{1,2})(?:st|nd|rd|th)?\b/,
    ) ??
    s.match(
      /\b(?:by|before|until|due|on) (\d{1,2})(?:st|nd|rd|th)? (jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b/,
    );
  if (md) {
    const [mon, day] = /^\d/.test(md[1]!) ? [md[2]!, md[1]!] : [md[1]!, md[2]!];
    let d = new Date(Date.UTC(base.getUTCFullYear(), MONTHS.indexOf(mon), Number(day)));
    if (d.getTime() < base.getTime() - 86_400_000)
      d = new Date(Date.UTC(base.getUTCFullYear() + 1, MONTHS.indexOf(mon), Number(day)));
    return ymd(d);
  }
  const nth = s.match(/\bby the (\d{1,2})(?:st|nd|rd|th)\b/);
  if (nth) {
    let d = new Date(Date.UTC(base.getUTCFullYear(), base.getUTCMonth(), Number(nth[1])));
    if (d.getTime() < base.getTime() - 86_400_000)
      d = new Date(Date.UTC(base.getUTCFullYear(), base.getUTCMonth() + 1, Number(nth[1])));
    return ymd(d);
  }
  return null;
};
