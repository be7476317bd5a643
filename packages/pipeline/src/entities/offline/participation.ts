// Who takes part in what: PARTICIPATED_IN and MEMBER_OF cues around a meeting, team or group span.

import { EVENT_VERB } from './events.js';
import type { Mention } from './graph-builder.js';
import { MEETING_PARTICIPATION, NEGATION } from './meetings.js';
import type { MeetingSpan, Span } from './spans.js';
import { esc, selfPossessiveRe, selfSubjectRe } from './text.js';

/** PARTICIPATED_IN: the author (or "we") attends, speaks at, presents at, hosts or will be at the meeting. */
export const participates = (body: string, mt: MeetingSpan, author: string, mentions: readonly Mention[]): boolean => {
  const sentenceStart = Math.max(0, body.lastIndexOf('. ', mt.index) + 1);
  const before = body.slice(Math.max(sentenceStart, mt.index - 160), mt.index);
  const subject = new RegExp(`\\b${selfSubjectRe(author)}\\b`, 'gi');
  let last: RegExpExecArray | null = null;
  for (let m = subject.exec(before); m; m = subject.exec(before)) last = m;
  if (!last) return false;
  const afterSubject = before.slice(last.index + last[0].length);
  const verbs = [...afterSubject.matchAll(MEETING_PARTICIPATION)];
  const verb = verbs.at(-1);
  if (!verb || verb.index > 100) return false;
  const window = afterSubject.slice(Math.max(0, verb.index - 16), verb.index);
  if (NEGATION.test(window)) return false;
  const between = afterSubject.slice(0, verb.index);
  // another person as the subject in between ("alice said bob will attend")
  return !mentions.some((m) => m.type === 'Person' && m.name !== author && between.includes(m.name));
};

/** The sentence of `text` around [start, end): its start index and text. */
const sentenceAround = (text: string, start: number, end: number): { from: number; text: string } => {
  const cut = /[.!?](?=\s)|\s[-–—]\s|;/g;
  let from = 0;
  for (let m = cut.exec(text); m && m.index < start; m = cut.exec(text)) from = m.index + m[0].length;
  cut.lastIndex = end;
  const next = cut.exec(text);
  return { from, text: text.slice(from, next ? next.index : text.length) };
};

/** A verb of taking part written after the event: "this pride parade Caroline went to", "the group I joined". */
const AFTER_VERB =
  /^\s+(?:that\s+|which\s+)?(?:SUBJ)\s+(?:(?:just|also|finally|recently|had|has|have|was|were|is|am|are)\s+)*(?:went to|go to|goes to|attended|attend|joined|join|ran|did|took|visited|hosted|organi[sz]ed|took part in|participated in|signed up for|volunteered at|performed at|was at|were at)\b/;

/** The sentence around a span, split at it, and the regex source of the fact's subject (the author, I, we). */
const spanContext = (
  body: string,
  span: { index: number; end: number },
  author: string,
): { S: string; before: string; after: string } => {
  const sent = sentenceAround(body, span.index, span.end);
  return {
    S: selfSubjectRe(author),
    before: body.slice(sent.from, span.index),
    after: body.slice(span.end, sent.from + sent.text.length),
  };
};

/** The last mention of the subject (`S`, see subjectRe) in `text`, or null. */
const lastSubject = (text: string, S: string): RegExpExecArray | null => {
  const subject = new RegExp(`\\b${S}\\b`, 'gi');
  let last: RegExpExecArray | null = null;
  for (let m = subject.exec(text); m; m = subject.exec(text)) last = m;
  return last;
};

/**
 * PARTICIPATED_IN for a community event beyond `participates`: "explicit" when the author (or "we") governs it with
 * a participation verb in the same sentence ("Melanie signed up for a pottery class", "the parade Caroline went
 * to"), "implied" when the event is the author's ("Melanie's pottery class was fun") or the author is the sentence's
 * subject ("Melanie made it in pottery class"); null otherwise, or when negated or another person is the subject.
 */
export const takesPart = (
  body: string,
  mt: MeetingSpan,
  author: string,
  mentions: readonly Mention[],
): 'explicit' | 'implied' | null => {
  const { S, before, after } = spanContext(body, mt, author);
  if (
    NEGATION.test(before.slice(-40)) &&
    !/\b(?:can'?t wait|couldn'?t (?:be|have been) (?:more|happier))\b/i.test(before)
  )
    return null;
  const last = lastSubject(before, S);
  const otherPerson = (between: string): boolean =>
    mentions.some(
      (m) => m.type === 'Person' && m.name !== author && new RegExp(`\\b${esc(m.name)}\\b(?!['’]s)`).test(between),
    );
  if (new RegExp(AFTER_VERB.source.replace('SUBJ', S), 'i').test(after)) return 'explicit';
  if (last) {
    const afterSubject = before.slice(last.index + last[0].length);
    if (
      otherPerson(afterSubject) ||
      /\b(?:you|your|he|she|they)\b/i.test(afterSubject.replace(/\b(?:with|for|to)\s+(?:you|them|her|him)\b/gi, ''))
    )
      return null;
    if (
      /\b(?:thinking about|thinks about|wants? to|would like to|hopes? to|hoping to|plans? to|planning to|might|may|could|should|wish(?:es)? )\b/i.test(
        afterSubject,
      )
    )
      return 'implied';
    if (
      EVENT_VERB.test(
        afterSubject.replace(
          /\s*\b(?:a|an|the|this|that|my|her|his|our|their|[\p{Lu}][\p{L}]+['’]s)\s+(?:[\p{L}+'-]+\s+){0,3}$/u,
          '',
        ),
      )
    )
      return 'explicit';
    return 'implied';
  }
  // "Melanie's pottery class", "Caroline's talk": the author's event
  if (new RegExp(`\\b${selfPossessiveRe(author)}\\s+(?:[\\p{L}+'-]+\\s+){0,3}$`, 'iu').test(before)) return 'implied';
  return null;
};

/** Known people who took part alongside the author: "with Caroline", "Melanie and Caroline went". */
export const companions = (body: string, mt: MeetingSpan, mentions: readonly Mention[], author: string): string[] => {
  const sent = sentenceAround(body, mt.index, mt.end);
  return mentions
    .filter(
      (m) =>
        m.type === 'Person' &&
        m.name !== author &&
        new RegExp(`\\b(?:with|and)\\s+${esc(m.name)}\\b(?!['’]s)`, 'i').test(sent.text),
    )
    .map((m) => m.id);
};

/**
 * MEMBER_OF for a community group: "explicit" when the author joined it, is part or a member of it or goes to it
 * ("Caroline joined an activist group", "the support group Caroline goes to"), "implied" when the author went to
 * or attended it once, or it is the author's ("Caroline's support group"); null otherwise.
 */
export const groupMembership = (
  body: string,
  t: Span,
  author: string,
  mentions: readonly Mention[],
): 'explicit' | 'implied' | null => {
  const { S, before, after } = spanContext(body, t, author);
  if (NEGATION.test(before.slice(-40))) return null;
  const strip = (s: string): string =>
    s.replace(
      /\s*\b(?:a|an|the|this|that|my|her|his|our|their|[\p{Lu}][\p{L}]+['’]s)\s+(?:[\p{L}+'-]+\s+){0,3}$/u,
      ' ',
    );
  const last = lastSubject(before, S);
  const strong =
    /\b(?:join(?:s|ed|ing)?|part of|a member of|member of|goes to|go to|belong(?:s|ed)? to|sings? in|plays? in|founded|started)\s+$/i;
  const weak = /\b(?:went to|going to|attend(?:s|ed|ing)?|volunteer(?:s|ed|ing)? (?:at|for|with))\s+$/i;
  if (last) {
    const afterSubject = before.slice(last.index + last[0].length);
    const other = mentions.some((m) => m.type === 'Person' && m.name !== author && afterSubject.includes(m.name));
    if (!other && afterSubject.length <= 120) {
      const v = `${strip(afterSubject)} `.replace(/\s+$/, ' ');
      if (strong.test(v)) return 'explicit';
      if (weak.test(v)) return 'implied';
    }
  }
  const afterRe = new RegExp(
    `^\\s+(?:that\\s+|which\\s+)?${S}\\s+(?:(?:just|also|recently|has|have|had)\\s+)*(joined|goes to|go to|belongs? to|is part of|attended|went to|volunteers? at)\\b`,
    'i',
  );
  const a = after.match(afterRe);
  if (a) return /joined|goes|go to|belong|part of/i.test(a[1]!) ? 'explicit' : 'implied';
  if (new RegExp(`\\b${selfPossessiveRe(author)}\\s+(?:[\\p{L}+'-]+\\s+){0,3}$`, 'iu').test(before)) return 'implied';
  return null;
};

/** MEMBER_OF: "I'm on / I joined / I lead the X team" (author as subject right before), or "our X team" in the message. */
export const isMember = (body: string, sourceText: string, t: Span, author: string): boolean => {
  const before = body.slice(Math.max(0, t.index - 80), t.index);
  const cue = new RegExp(
    `\\b${selfSubjectRe(author)}\\s+(?:(?:is|am|'m|are|'re|has been|have been|was|just|now|recently|also)\\s+)*(?:on|in|part of|a member of|member of|joining|joined|join|leading|leads|lead|running|runs|with)\\s+(?:the\\s+)?$`,
    'i',
  );
  if (cue.test(before)) return true;
  const x = t.name.replace(/ team$/i, '');
  return (
    new RegExp(`\\b(?:our|my)\\s+${esc(x)}\\s+team\\b`, 'i').test(sourceText) ||
    new RegExp(`\\b${esc(author)}'s\\s+${esc(x)}\\s+team\\b`, 'i').test(body)
  );
};
