import type { FactType } from '@atlas/core';
import { HEDGES } from './lexicon.js';

/** What the rules found in a sentence, besides its type. */
export interface Classified {
  type: FactType;
  /** Action items: the verb of the commitment or request (`upgrade`), lowercase. */
  actionVerb: string | null;
  /** Action items: who should act — 'self' (the author), a mentioned name, 'someone', or null. */
  owner: string | null;
  /** A deadline phrase (`by Friday`, `tomorrow`), as written. */
  deadline: string | null;
  /** Decisions: a release, deprecation or merge announcement. */
  isRelease: boolean;
  /** Decisions: made by a group (`we`, `let's`, `the team`) or announced (a release), not a personal choice. */
  collective: boolean;
  hedged: boolean;
}

const I = "(?:i|we|i'?ve|we'?ve|i have|we have|we'?re|we are|i'?m|i am)";
const DECISION: readonly RegExp[] = [
  /\b(we|i|team|they|everyone|core team)\s+(have\s+|'ve\s+|just\s+|finally\s+)?(decided|agreed|chose|settled on|opted|voted)\b/i,
  /\b(we|i)('re| are|'m| am)? (going|gonna) (to )?(go with|switch to|move to|migrate to|adopt|drop|stick with)\b/i,
  /\b(we|i)('ll| will| shall) (go with|switch to|move to|migrate to|adopt|drop support|stick with|standardi[sz]e on)\b/i,
  /\blet'?s (go with|use|switch to|move to|stick with|adopt|drop|standardi[sz]e on)\b/i,
  /\b(we|i)('ve| have)? ?(now |just |finally )?(switched|moved|migrated|standardi[sz]ed) (over )?(to|on|from)\b/i,
  /\b(decided to|the decision (is|was)|we'?ll use|consensus (is|was))\b/i,
];
const RELEASE: readonly RegExp[] = [
  new RegExp(`\\b${I} (just |finally |now )?(released|shipped|published|merged|launched|tagged|cut a release)\\b`, 'i'),
  /\b(we|we'?ve|we have) (just |finally |now )?(deployed|deprecated|removed|dropped)\b/i,
  /\b[\w.-]+ v?\d+\.\d+[\w.-]* (is |was |has been |have been |just )?(released|out|shipped|published|available)\b/i,
  /\b(new (version|release) of|released|has been released|is now available|now available on|just landed)\b.*\bv?\d+\.\d+/i,
  /^(released|announcing|shipped|just released|new release)\b/i,
];
const ACTION: readonly RegExp[] = [
  /\b(?:i|we)(?:'ll| will| am going to|'m going to| are going to|'re going to| gonna| shall) (?:(?:also|now|then|first|definitely|\w+ly) )?(?!try\b|see\b|be\b|have\b|need\b|probably\b|just\b|let\b|get back\b)([a-z]+)/i,
  /\b(?:i|we) (?:still |also |really |definitely )?(?:need to|must) (?!say\b|admit\b|be\b|know\b|understand\b|figure\b)([a-z]+)/i,
  /\b(?:todo|to-do|action item|fixme|follow[- ]up)\b[:\s-]+(?:\w+ )?([a-z]+)?/i,
];
const REQUEST =
  /^((?:@[\w.-]+(?: [A-Z][\w.-]*)*[,:]?\s+)*)(?:(?:hi|hey|also|and|so|ok|btw|then)[,!]?\s+)?(?:please|pls|can you|could you|would you(?: mind)?|can someone|could someone|someone should)\s+(?:please\s+)?([a-z]+)/i;
const TASK_VERBS =
  /^(review|fix|merge|update|upgrade|deploy|release|publish|send|add|remove|delete|file|open|create|write|test|check|run|restart|rebase|approve|sign|submit|document|ship|bump|tag|close|move|rename|install|revert|cut)$/;
const DEADLINE =
  /\b(by|before|until|due|on) (mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(by|before) (tomorrow|tonight|eod|eow|noon|end of (the )?(day|week|month|sprint|year)|next (week|month)|the \d{1,2}(st|nd|rd|th)?|\d{1,2}(:\d\d)? ?(am|pm))\b|\b(tomorrow|tonight|this (week|afternoon|evening)|next week)\b/i;
const QUESTION_OPENER =
  /^(how (do|does|can|could|should|would|to)|what('s| is| are| does| do)|why (is|are|does|do|did)|where (is|are|do|can)|when (is|are|will|does|do)|which|who (is|knows|has)|is (there|it possible|anyone)|are there|does (anyone|anybody|somebody|it|this)|do (you|i|we|they)|can (i|we|one)|should (i|we)|any (idea|way|chance|suggestion|recommendation|tips?)s?|anyone (know|have|tried|using|else))\b/i;
const OPINION =
  /\b(i think|i believe|i feel|i'd say|imo|imho|in my (opinion|experience)|i (would |'d )?prefer|i'd rather|i (really )?(like|love|hate|dislike|enjoy)|i don'?t (like|think)|not a (big )?fan|personally|i'd (recommend|suggest|go with|use|avoid)|i (recommend|suggest)|you (should|shouldn'?t)|we should|one should|should (probably|really)|better than|worse than|(is|are|was|looks|seems) (much |way |a lot )?(better|worse|nicer|cleaner|easier|harder|simpler|faster|slower)|overkill|(the )?(best|worst|right|wrong) (way|choice|decision|approach|tool)|a (good|bad|great|terrible) (idea|fit|choice)|(is|are|was|were) (pretty |really |very |quite |so |super |kinda )?(nice|great|good|bad|lame|awesome|terrible|sexy|cool|useful|useless|painful|annoying|confusing|handy|elegant|ugly|neat|amazing|horrible|awful|weird))\b/i;

/**
 * A statement closed by a tag question ("The pic is just stunning, eh?", "Sunflowers mean warmth, right?"): it asks
 * for agreement, not for an answer, so the sentence states its content.
 */
const TAG_QUESTION =
  /[,\s-]\s*(eh|right|huh|yeah|no|ok|okay|innit|you know|isn't it|aren't they|wasn't it|don't you think|didn't it|don't they)\s*\?+[\s)]*$/i;
const tagQuestion = (s: string): boolean =>
  TAG_QUESTION.test(s) && !QUESTION_OPENER.test(s) && s.split(/\s+/).length >= 5;

/** True when a sentence is a question: it ends with `?` (a trailing link allowed) or opens with an interrogative. */
export const isQuestionSentence = (s: string): boolean =>
  (/\?[\s)]*$/.test(s.replace(/\s*https?:\/\/\S+$/, '')) && !tagQuestion(s)) ||
  (QUESTION_OPENER.test(s) && !/[.!]$/.test(s)) ||
  /^(do|does) (you|anyone|anybody) (think|know)\b/i.test(s);

const leadingAddressees = (s: string): string[] =>
  [...s.matchAll(/@([\w.-]+(?: [A-Z][\w.-]*)*)/g)].map((m) => m[1] ?? '');

/**
 * Assigns a fact type by rules, in priority order: request with an addressee/deadline → action_item;
 * question; decision (agreed/chose/switching/release announcements, unless hedged); commitment, obligation,
 * TODO or deadline → action_item; opinion markers; else observation.
 */
export const classify = (sentence: string): Classified => {
  const s = sentence.replace(/[’‘]/g, "'");
  const hedged = HEDGES.test(s);
  const deadline = s.match(DEADLINE)?.[0] ?? null;
  const base = { actionVerb: null, owner: null, deadline, isRelease: false, collective: false, hedged };
  const request = s.match(REQUEST);
  const question = isQuestionSentence(s);
  const verb = request?.[2]?.toLowerCase() ?? '';
  if (request && (!question || deadline || TASK_VERBS.test(verb) || /^\W*(please|pls)\b/i.test(s))) {
    const to = leadingAddressees(request[1] ?? '');
    return { ...base, type: 'action_item', actionVerb: verb, owner: to[0] ?? 'someone' };
  }
  if (question) return { ...base, type: 'question' };
  const isRelease =
    RELEASE.some((re) => re.test(s)) &&
    !/\bnot (been )?(released|deprecated|merged)\b|\b(since|after|before|when|until|once|if|until)\b.{0,40}\breleased\b/i.test(
      s,
    );
  if ((isRelease || DECISION.some((re) => re.test(s))) && !hedged) {
    const collective = isRelease || /\b(we|we'?ve|we'?re|let'?s|team|everyone|consensus|agreed)\b/i.test(s);
    return { ...base, type: 'decision', isRelease, collective };
  }
  for (const re of ACTION) {
    const m = s.match(re);
    if (m && !/\b(if|when|whether|unless) (i|we)\b/i.test(s.slice(0, m.index ?? 0) + m[0])) {
      return { ...base, type: 'action_item', actionVerb: m[1]?.toLowerCase() ?? null, owner: 'self' };
    }
  }
  if (deadline && /^(i|we|@)/i.test(s)) return { ...base, type: 'action_item', owner: 'self' };
  if (OPINION.test(s)) return { ...base, type: 'opinion' };
  return { ...base, type: 'observation' };
};
