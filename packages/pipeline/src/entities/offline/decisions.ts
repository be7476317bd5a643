// Decisions (spec "Decision record").
import { lexTag } from '../../facts/lexicon.js';
import { DECISION_NAME_MAX } from './confidence.js';
import { clip, factBody, subjectRe, upperFirst } from './text.js';

type DecisionStatus = 'agreed' | 'implemented' | 'proposed';

/** The decision a fact states: a short imperative or noun phrase, who decided (null: the author), its status. */
export interface DecisionParts {
  name: string;
  /** The subject that decided as written, when it is not the author ("bob", "the core team"); null otherwise. */
  decider: string | null;
  /** True when the fact states who decided (the author or a named decider); false when implied (passive). */
  explicit: boolean;
  status: DecisionStatus;
}

const DECISION_VERBS: ReadonlyArray<[RegExp, string]> = [
  [
    /\b(?:decided|agreed|voted) (?:that |to )(?:we |they |(?:\S+ and team) )?(?:will |would |should |shall |are going to |'ll )?/i,
    '',
  ],
  [/\b(?:decided|agreed|voted) not to /i, 'Do not '],
  [/\b(?:decided|agreed|settled) on |\b(?:chose|choose|opted for|voted for|picked|selected) /i, 'Choose '],
  [/\b(?:the decision|the consensus|consensus) (?:is|was) (?:to |that )?/i, ''],
  [/\b(?:settled|settle) on /i, 'Settle on '],
  [/\b(?:went|go|going|will go|goes) with /i, 'Go with '],
  [/\bstick(?:s|ing)? with /i, 'Stick with '],
  [/\bswitch(?:ed|es|ing)? (?:over )?to /i, 'Switch to '],
  [/\bswitch(?:ed|es|ing)? from /i, 'Switch from '],
  [/\bmov(?:e|ed|es|ing) (?:over )?to /i, 'Move to '],
  [/\bmigrat(?:e|ed|es|ing) (?:over )?/i, 'Migrate '],
  [/\b(?:are |is |am )?mov(?:e|ed|es|ing) (?=\S+(?: \S+){0,3} (?:from|to) )/i, 'Move '],
  [/\bstandardi[sz](?:e|ed|es|ing) on /i, 'Standardize on '],
  [/\badopt(?:s|ed|ing)? /i, 'Adopt '],
  [/\bdrop(?:s|ped|ping)? /i, 'Drop '],
  [/\blet'?s use /i, 'Use '],
  [/\b(?:will|'ll|are going to|is going to|gonna) use /i, 'Use '],
  [
    /\b(?:just |finally |now )?(?:released|published|cut a release of|tagged) (?!to |for |in |on |at |with |from |by )/i,
    'Release ',
  ],
  [/\b(?:just |finally |now )?(?:shipped) (?!to |for |in |on |at |with |from |by )/i, 'Ship '],
  [/\b(?:just |finally |now )?merged /i, 'Merge '],
  [/\b(?:just |finally |now )?deployed /i, 'Deploy '],
  [/\b(?:just |finally |now )?deprecated /i, 'Deprecate '],
  [/\b(?:just |finally |now )?(?:removed|dropped) /i, 'Remove '],
  [/\b(?:just |finally |now )?launched /i, 'Launch '],
];
const AUXILIARIES =
  /(?:\s+(?:has|have|had|is|are|am|was|were|just|finally|now|also|all|unanimously|will|would|should|could|might|must|shall|'ll|'d|then|eventually|recently|going to|gonna))+\s*$/i;
const RELEASED_SUBJECT =
  /^(.{2,80}?)\s+(?:(?:is|was|has been|have been|are|just|now|finally)\s+)*(?:released|out|published|available|shipped|landed)\b/i;
const CLAUSE_END =
  /\s+(?:in|on|at|with|for|by|from|to|of|under|through) (?:which|whom)\b|(?<=#\d+)\s+(?=[A-Z])|\s+(?:where|whereby|who)\s|,\s+(?:which|but|and then|so|because|since|as|while|though|although|including|includes)\b|\s+(?:because|since|although|though|but|which|whereas)\s|;|\s+--?\s+|\.\s|:\s|!\s|\s\(|\.$|\s+https?:\/\//i;
const IMPLEMENTED =
  /\b(done|shipped|merged|migrated|released|published|deployed|launched|switched|moved (?:over )?to|rolled out|is out|are out|is now available|now available|completed|finished|implemented|landed)\b/i;
const PROPOSED =
  /\b(should|let'?s (?:consider|maybe|think about|discuss)|consider(?:ing)?|propos(?:e|ed|es|ing)|suggest(?:s|ed|ing)?|how about|what if|might|could|would like to)\b/i;

const cutClause = (s: string): string => {
  const m = CLAUSE_END.exec(s);
  let out = m ? s.slice(0, m.index) : s;
  // ", spent a week…", ", then tried…": a comma before a verb, pronoun or adverb starts another clause
  for (const c of out.matchAll(/,\s+([\p{L}'’]+)/gu)) {
    const w = c[1]!.toLowerCase();
    if (
      /^(there|it|this|that|thats|that's|so|then|which|who|we|they|he|she|i)$/.test(w) ||
      /PastTense|Pronoun|Gerund|Adverb|Copula|Modal|Conjunction|Preposition|Determiner/.test(lexTag(w))
    ) {
      out = out.slice(0, c.index);
      break;
    }
  }
  return out.replace(/[\s,.;:!?]+$/, '').trim();
};

/** Words a name must not end on: prepositions, articles, conjunctions, auxiliaries, possessives. */
const DANGLING_END =
  /\s+(?:in|on|at|to|for|of|from|with|by|about|into|onto|over|under|after|before|than|as|via|per|using|the|a|an|and|or|but|so|that|which|because|if|when|while|until|since|its|their|his|her|my|our|your|is|are|was|were|be|been|will|would|not|most|likely|instead)$/i;
/** Where a shorter name may end: before a preposition, conjunction or relative word, or at a comma. */
const PHRASE_BREAK =
  /,\s+|\s+(?=(?:instead of|as well as|rather than|because of|due to|in order to|in|on|at|to|for|of|from|with|by|about|into|over|under|after|before|using|via|and|or|but|so|which|that|while|until|since|when|if)\s)/gi;

/**
 * `name` at most `max` characters, cut where a phrase ends (before a preposition, conjunction or relative word, or at
 * a comma) and never on a dangling word ("Release olake 0.7.3 in"); the longest such cut keeping at least half of
 * `max`. Without one, cut at a word boundary with `…` (clip), trailing function words dropped first.
 */
export const clipPhrase = (name: string, max: number): string => {
  const t = name.replace(/\s+/g, ' ').trim();
  const trim = (s: string): string => {
    let out = s.replace(/[\s,;:.-]+$/, '');
    while (DANGLING_END.test(out)) out = out.replace(DANGLING_END, '').replace(/[\s,;:.-]+$/, '');
    return out;
  };
  if (t.length <= max) return trim(t) || t;
  let best = '';
  for (const m of t.matchAll(PHRASE_BREAK)) {
    if (m.index > max) break;
    const cut = trim(t.slice(0, m.index));
    if (cut.length > best.length) best = cut;
  }
  if (best.length >= max / 2) return best;
  const clipped = clip(t, max);
  return `${trim(clipped.replace(/…$/, ''))}…`;
};

/**
 * The decision a decision-type fact states (spec "Decision record": name, decided_by, status). The name is the
 * decision as a short imperative or noun phrase ("Use Postgres for the event log" from "alice and team decided to
 * use Postgres for the event log, because…"), at most DECISION_NAME_MAX characters; releases read "Release X 1.2".
 * status: `proposed` ("should", "let's consider"), `implemented` (done, shipped, merged, migrated, released), else
 * `agreed`.
 */
export const decisionParts = (memoryText: string, author: string): DecisionParts => {
  const fact = factBody(memoryText);
  // a changelog line, "chore(helm): suppress … by @bob in #388 (https://…)", names itself
  const changelog = /^(?:chore|fix|feat|docs|refactor|perf|test|build|ci)(?:\([\w.-]+\))?!?:\s+/i;
  const body = fact
    .replace(changelog, '')
    .replace(/\s+by @[\w.-]+(?: [A-Z][\w.-]*)? in #\d+\b/, '')
    // "the fix for issue https://github.com/o/r/issues/380#…" → "the fix for issue #380"
    .replace(/https?:\/\/github\.com\/[\w.-]+\/[\w.-]+\/(?:issues|pull)\/(\d+)\S*/g, '#$1');
  const S = new RegExp(`^(?:(?:so|then|in the end|finally|eventually|ok|now)[, ]+)*${subjectRe(author)}\\b`, 'i');
  const status: DecisionStatus = IMPLEMENTED.test(body) ? 'implemented' : PROPOSED.test(body) ? 'proposed' : 'agreed';
  let best: { index: number; name: string; subject: string } | null = changelog.test(fact)
    ? { index: 0, name: cutClause(body), subject: '' }
    : null;
  for (const [re, prefix] of DECISION_VERBS) {
    if (best && changelog.test(fact)) break;
    const m = re.exec(body);
    if (!m || (best && m.index >= best.index)) continue;
    const rest = cutClause(body.slice(m.index + m[0].length));
    if (rest.length < 2) continue;
    const clause =
      body
        .slice(0, m.index)
        .split(/[,;:]\s+|\s+(?:so|but|and then|then|because|since|when|while|that)\s+/i)
        .at(-1) ?? '';
    const subject = clause
      .replace(/^(?:(?:so|then|in the end|finally|eventually|first|now|ok|and|but)[, ]+)+/i, '')
      .replace(AUXILIARIES, '')
      .trim();
    best = { index: m.index, name: prefix + rest, subject };
  }
  if (!best) {
    const r = RELEASED_SUBJECT.exec(cutClause(body.replace(/^(?:FYI|PSA|ANN|announcing)[,:\s-]+/i, '')));
    if (r) {
      const version = /\b(?:released|out|published|available|shipped|landed)\s+in\s+(v?\d+(?:\.\d+)+[\w.-]*)/i.exec(
        body,
      );
      const what = (r[1]!.split(/,\s+/).at(-1) ?? '').replace(/^(?:the )/i, '');
      best = { index: 0, name: `Release ${what}${version ? ` in ${version[1]}` : ''}`, subject: '' };
    }
  }
  if (!best) {
    const stripped = body.replace(S, '').replace(/^\s*(?:has|have|had|is|are|will|would|'ll)\s+/i, '');
    best = { index: -1, name: cutClause(stripped) || stripped, subject: stripped === body ? '' : author };
  }
  const subject = best.subject;
  const authorAtEnd = new RegExp(`(?:^|\\s)${subjectRe(author)}$`, 'i');
  const byAuthor = subject !== '' && authorAtEnd.test(subject);
  const decider =
    byAuthor ||
    subject === '' ||
    /^(?:so|then|and|but|it|this|that|there|they|you|he|she)\b/i.test(subject) ||
    subject.split(' ').length > 4 ||
    subject.toLowerCase().includes(author.toLowerCase())
      ? null
      : subject.replace(/^(?:the|our)\s+/i, '');
  return {
    name: clipPhrase(
      upperFirst(best.name.replace(/^(?:to|that)\s+/i, '').replace(/\[[\w.-]+\/([\w.-]+) "([^"]+)"\]/g, '$1 $2')),
      DECISION_NAME_MAX,
    ),
    decider,
    explicit: byAuthor || decider !== null,
    status,
  };
};
