import { normalizeEntityName, type Supersession } from '@atlas/core';

/** Who owns what, as a channel has been told: the input of the changed-owner test. */
export interface KnownOwner {
  /** normalizeEntityName of the owned thing (a project, service, component, area). */
  subjectKey: string;
  subject: string;
  /** The owner's display name. */
  owner: string;
  /** The fact that stated it. */
  factId: string;
  /** ISO 8601 UTC time of its message. */
  messageTs: string;
}

/** One ownership statement: `owner` owns, maintains or leads `subject`; `change` when it says the owner changed. */
export interface Ownership {
  owner: string;
  subject: string;
  change: boolean;
}

const SUBJECT =
  "(?:the |our |their |its )?([\\p{L}\\p{N}][\\p{L}\\p{N}.+#/'’_-]*(?: [\\p{L}\\p{N}][\\p{L}\\p{N}.+#/'’_-]*){0,4})";
const NAME = '([\\p{L}][\\p{L}\\p{N}._-]*(?: [\\p{Lu}][\\p{L}\\p{N}._-]*)?)';
const NOW = '(?:(?:now|officially|from now on) )?';

/** Ownership phrasings, in third person as memory texts are written; group names say which is which. */
const PATTERNS: readonly RegExp[] = [
  new RegExp(
    `\\b${NAME} (?:is |will be |'ll be |has been )?${NOW}(?:the )?(?:new )?(?:owner|maintainer|lead|tech lead|point person|go-to person|dri) (?:of|for) ${SUBJECT}`,
    'gu',
  ),
  new RegExp(
    `\\b${NAME} (?:${NOW}(?:owns?|maintains?|leads|is responsible for|are responsible for|is in charge of|will own|will maintain|will lead)|(?:took|takes|is taking|will take|has taken) over(?: ownership of| maintenance of| as (?:the )?(?:owner|maintainer|lead) of)?) ${SUBJECT}`,
    'gu',
  ),
  new RegExp(
    `\\b${SUBJECT} (?:is|was|will be|has been|are) ${NOW}(?:owned|maintained|led|run|handled|managed) by ${NAME}`,
    'gu',
  ),
  new RegExp(`\\bhand(?:s|ed|ing)? (?:over )?${SUBJECT} (?:over )?to ${NAME}`, 'gu'),
];
/** Which group is the owner in each pattern (the other is the subject). */
const OWNER_GROUP = [1, 1, 2, 2];

const CHANGE =
  /\b(now|new|took over|takes over|taking over|take over|taken over|hand(?:s|ed|ing)?(?: over)?|from now on|instead|no longer|anymore|starting (?:today|now|this|next))\b/i;

/** Words that end a subject phrase ("the billing service from now on" → "billing service"). */
const SUBJECT_END = new Set(
  'from now starting until since because and but so while for going after before when with as to in on at over this next today tomorrow anymore instead'.split(
    ' ',
  ),
);

const cutSubject = (s: string): string => {
  const words = s
    .replace(/[.,;:!?)]+$/, '')
    .replace(/^(?:the|our|their|its) /i, '')
    .split(' ');
  const out: string[] = [];
  for (const w of words) {
    if (SUBJECT_END.has(w.toLowerCase())) break;
    out.push(w);
  }
  return out.join(' ').replace(/['’]s$/, '');
};

/**
 * The ownership a fact states, or null (spec "Memory validity": a changed owner supersedes the earlier fact).
 * `isPerson(name)` says whether a name is a person the channel knows (an author, a mentioned user); the
 * author's "I" is written as the author's name in memory texts. A subject that is a person, a pronoun or
 * a generic word ("it", "that", "everything") gives null. Pure.
 */
export const ownershipOf = (body: string, isPerson: (name: string) => boolean): Ownership | null => {
  for (const [i, re] of PATTERNS.entries()) {
    for (const m of body.matchAll(re)) {
      const owner = (m[OWNER_GROUP[i]!] ?? '').trim().replace(/[._-]+$/, '');
      const subject = cutSubject((m[OWNER_GROUP[i] === 1 ? 2 : 1] ?? '').trim());
      if (!owner || !subject || !isPerson(owner) || isPerson(subject)) continue;
      if (/^(?:it|this|that|these|those|everything|something|things?|stuff|them|him|her|one|all)$/i.test(subject))
        continue;
      // "owns a Lisp machine" (a possession), "maintains that library" (which one?), "leads into": not a named thing
      if (/^(?:a|an|that|this|these|those|into|some|any|my|your|his|her|every|each|no)\b/i.test(subject)) continue;
      // leading people or running an event or the tests is not owning a thing
      if (/\b(?:team|squad|group|crew|tests?|meeting|meetup)$/i.test(subject)) continue;
      return { owner, subject, change: CHANGE.test(body) };
    }
  }
  return null;
};

/**
 * Changed owners: each new ownership whose subject the channel last heard owned by someone else supersedes
 * that earlier fact, certainly when the new fact says the owner changed ("now", "took over", "handed"),
 * else as a potential contradiction. At most one supersession per new ownership (the latest earlier one).
 */
export const findOwnerChanges = (
  news: readonly (KnownOwner & { change: boolean })[],
  earlier: readonly KnownOwner[],
): Supersession[] => {
  const out: Supersession[] = [];
  for (const n of news) {
    const prev = earlier
      .filter((e) => e.subjectKey === n.subjectKey && e.factId !== n.factId && e.messageTs < n.messageTs)
      .sort((a, b) => (a.messageTs < b.messageTs ? 1 : -1))[0];
    if (!prev || normalizeEntityName(prev.owner) === normalizeEntityName(n.owner)) continue;
    out.push({
      factId: prev.factId,
      supersededBy: n.factId,
      oldEntityId: null,
      newEntityId: null,
      invalidAt: n.messageTs,
      certain: n.change,
      reason: `owner of ${n.subject} changed from ${prev.owner} to ${n.owner}`,
    });
  }
  return out;
};
