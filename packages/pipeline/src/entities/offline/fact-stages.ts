// The per-fact stages of the offline entity extractor, in the order OfflineEntityExtractor runs them.
import { entityUuid, normalizeEntityName } from '@atlas/core';
import { lexTag } from '../../facts/lexicon.js';
import { ownershipOf } from '../ownership.js';
import { CONTEXT_MAX, MAX_RELATED_PER_FACT, OFFLINE_CONFIDENCE } from './confidence.js';
import { decisionParts } from './decisions.js';
import { TECH_KINDS } from './events.js';
import { dedupe } from './graph-builder.js';
import { findGroups } from './groups.js';
import { findMeetings } from './meetings.js';
import { companions, groupMembership, isMember, participates, takesPart } from './participation.js';
import {
  coveredBy,
  detectNames,
  distinctive,
  isPersonName,
  NOT_A_PERSON_CONTEXT,
  nameWords,
  plausiblePersonName,
  withSurname,
} from './people.js';
import { findProjects, projectNameProblem } from './projects.js';
import { type FactScope, knownPerson, type MessageRun, note, personMention } from './run.js';
import type { Span } from './spans.js';
import { findTeams } from './teams.js';
import { findTech, technologyName } from './technologies.js';
import { clip, esc, findWord, isoDate } from './text.js';

/** The entity tags of a fact that are neither an `@mention` nor a known person. */
export interface TagsLeft {
  /** TECH lexicon display names. */
  techTags: string[];
  /** Other tags: proper-noun candidates for mentionProperNouns. */
  others: string[];
}

/**
 * People: `@mentions` (0.9), entity tags naming a known person (0.85) and distinctive known names written without
 * `@` (0.7). Returns the tags left for the later stages.
 */
export const mentionPeople = (run: MessageRun, f: FactScope): TagsLeft => {
  const { fact, body } = f;
  const mentioned = new Set<string>();
  for (const m of body.matchAll(/(?<![\w.@])@([\p{L}\p{N}][\p{L}\p{N}._-]*[\p{L}\p{N}_])/gu)) {
    const tag = fact.entityTags.find((t) => body.startsWith(`@${t}`, m.index)) ?? m[1]!;
    if (mentioned.has(tag)) continue;
    mentioned.add(tag);
    note(run, f, personMention(run, `@${tag}`, OFFLINE_CONFIDENCE.mention, fact.factId, true), m.index);
    f.covered.push(tag);
  }
  const techTags: string[] = [];
  const others: string[] = [];
  for (const tag of fact.entityTags) {
    if (mentioned.has(tag)) continue;
    const tech = technologyName(tag);
    if (tech) techTags.push(tech);
    else if (knownPerson(run, tag)) {
      note(
        run,
        f,
        personMention(run, tag, OFFLINE_CONFIDENCE.knownPersonTag, fact.factId, true),
        Math.max(0, findWord(body, tag)),
      );
      f.covered.push(tag);
    } else others.push(tag);
  }
  // distinctive known names in the text without `@`
  const words = [...body.matchAll(/[\p{L}\p{N}][\p{L}\p{N}._-]*[\p{L}\p{N}]/gu)];
  for (let i = 0; i < words.length; i++) {
    for (let n = 3; n >= 1; n--) {
      if (i + n > words.length) continue;
      const spelled = body.slice(words[i]!.index, words[i + n - 1]!.index + words[i + n - 1]![0].length);
      const k = normalizeEntityName(spelled);
      const p = run.index.byKey.get(k) ?? run.local.byKey.get(k);
      if (!p || !distinctive(k) || normalizeEntityName(p.name) === normalizeEntityName(f.authorName)) continue;
      if (f.mentions.some((x) => x.type === 'Person' && x.name === p.name)) break;
      note(
        run,
        f,
        personMention(run, spelled, OFFLINE_CONFIDENCE.knownPersonText, fact.factId, false),
        words[i]!.index,
      );
      f.covered.push(spelled);
      i += n - 1;
      break;
    }
  }
  return { techTags, others };
};

/** Technologies: the fact's TECH tags (0.85; other spellings such as `lein` become aliases). */
export const mentionTechnologies = (run: MessageRun, f: FactScope, techTags: readonly string[]): void => {
  for (const tech of techTags) {
    const at = findTech(f.body, tech);
    note(
      run,
      f,
      run.g.entity('Technology', tech, OFFLINE_CONFIDENCE.technology, f.fact.factId, at ? [at.spelling] : []),
      at?.index ?? f.body.length,
    );
  }
};

/** Meetings (findMeetings) and PARTICIPATED_IN of the author and companions; none for questions and captions. */
export const mentionMeetings = (run: MessageRun, f: FactScope): void => {
  const { fact, body, question, caption } = f;
  const meetings = findMeetings(f.prose, f.ts).filter(
    (mt) => !((question || caption) && !TECH_KINDS.has(mt.kind) && mt.kind !== 'conference' && !mt.named),
  );
  for (const mt of meetings) {
    const id = run.g.entity(
      'Meeting',
      mt.name,
      mt.named ? OFFLINE_CONFIDENCE.meetingNamed : OFFLINE_CONFIDENCE.meetingGeneric,
      fact.factId,
      [],
      { kind: mt.kind },
    );
    note(run, f, id, mt.index);
    f.covered.push(mt.name);
    if (question || caption) continue;
    const how = participates(body, mt, fact.authorName, f.mentions)
      ? 'explicit'
      : takesPart(body, mt, fact.authorName, f.mentions);
    if (!how) continue;
    run.g.relate(
      'PARTICIPATED_IN',
      f.authorId,
      id,
      how === 'explicit' ? OFFLINE_CONFIDENCE.participatedIn : OFFLINE_CONFIDENCE.participatedInImplied,
      fact,
      f.until,
    );
    for (const c of companions(body, mt, f.mentions, f.authorName))
      run.g.relate('PARTICIPATED_IN', c, id, OFFLINE_CONFIDENCE.participatedInCompanion, fact, f.until);
  }
};

/**
 * Teams (findTeams) and community groups (findGroups, not inside a team span; none for questions and captions), each
 * a Team (0.75) with the author's MEMBER_OF when stated. Returns the teams, then the groups.
 */
export const mentionTeams = (run: MessageRun, f: FactScope): Span[] => {
  const { fact, body, question, caption } = f;
  const teams = findTeams(f.prose);
  const groups =
    question || caption
      ? []
      : findGroups(f.prose).filter((gr) => !teams.some((t) => gr.index < t.end && gr.end > t.index));
  /** `t` as a Team entity noted at its position and covered from now on; its id. */
  const mentionTeam = (t: Span): string => {
    const id = run.g.entity('Team', t.name, OFFLINE_CONFIDENCE.team, fact.factId);
    note(run, f, id, t.index);
    f.covered.push(t.name);
    return id;
  };
  /** The author's MEMBER_OF `id` when groupMembership states it (memberOf if explicit, else memberOfImplied). */
  const statedMembership = (t: Span, id: string): void => {
    const how = groupMembership(body, t, fact.authorName, f.mentions);
    if (how)
      run.g.relate(
        'MEMBER_OF',
        f.authorId,
        id,
        how === 'explicit' ? OFFLINE_CONFIDENCE.memberOf : OFFLINE_CONFIDENCE.memberOfImplied,
        fact,
        f.until,
      );
  };
  for (const t of teams) {
    const id = mentionTeam(t);
    if (!question && isMember(body, run.sourceText, t, fact.authorName)) {
      run.g.relate('MEMBER_OF', f.authorId, id, OFFLINE_CONFIDENCE.memberOf, fact, f.until);
    } else if (!question && !caption) statedMembership(t, id);
  }
  for (const t of groups) statedMembership(t, mentionTeam(t));
  teams.push(...groups);
  return teams;
};

/** Projects (findProjects) that are no known person's name and not inside an explained name; WORKS_ON when stated. */
export const mentionProjects = (run: MessageRun, f: FactScope): void => {
  const { fact } = f;
  const projects = findProjects(f.body, fact.authorName).filter(
    (p) => !isPersonName(p.name, run.index, run.local) && !coveredBy(p.name, f.covered.slice(1)),
  );
  for (const p of projects) {
    const id = run.g.entity(
      'Project',
      p.name,
      p.confidence,
      fact.factId,
      p.repo ? [p.repo] : [],
      p.repo ? { repo: p.repo } : {},
    );
    note(run, f, id, p.index);
    f.covered.push(p.name);
    if (p.worksOn === 'explicit')
      run.g.relate('WORKS_ON', f.authorId, id, OFFLINE_CONFIDENCE.worksOnExplicit, fact, f.until);
    else if (p.worksOn === 'implied')
      run.g.relate('WORKS_ON', f.authorId, id, OFFLINE_CONFIDENCE.worksOnImplied, fact, f.until);
  }
};

/** Ownership ("bob now owns the billing service"): WORKS_ON (RELATED_TO for a technology) and the channel's owner. */
export const mentionOwnership = (run: MessageRun, f: FactScope): void => {
  const { fact, body } = f;
  const own = f.question ? null : ownershipOf(body, (n) => n === fact.authorName || !!knownPerson(run, n));
  if (!own) return;
  const ownerId =
    own.owner === fact.authorName
      ? f.authorId
      : personMention(run, own.owner, OFFLINE_CONFIDENCE.knownPersonText, fact.factId, false);
  const tech = technologyName(own.subject);
  const subjectId = run.g.entity(
    tech ? 'Technology' : 'Project',
    tech ?? own.subject,
    tech ? OFFLINE_CONFIDENCE.technology : OFFLINE_CONFIDENCE.projectOwned,
    fact.factId,
  );
  note(run, f, subjectId, Math.max(0, findWord(body, own.subject)));
  f.covered.push(own.subject);
  run.g.relate(tech ? 'RELATED_TO' : 'WORKS_ON', ownerId, subjectId, OFFLINE_CONFIDENCE.worksOnExplicit, fact, f.until);
  run.newOwners.push({
    subjectKey: normalizeEntityName(tech ?? own.subject),
    subject: tech ?? own.subject,
    owner: run.g.entities.get(ownerId)!.name,
    factId: fact.factId,
    messageTs: f.ts,
    change: own.change,
  });
};

/** An author announcing a release of a lexicon technology ("I released Fulcro 2.1", "Fulcro 2.1.5 released"). */
export const relateReleases = (run: MessageRun, f: FactScope, techTags: readonly string[]): void => {
  for (const tech of techTags) {
    if (
      new RegExp(
        `(?:released|published|shipped|announcing)\\s+${esc(tech)}\\b|\\b${esc(tech)}\\s+v?\\d+\\.\\d+[\\w.-]*\\s+(?:(?:is|was|has been|just|now)\\s+)*(?:released|out|published)\\b`,
        'i',
      ).test(f.body)
    )
      run.g.relate(
        'RELATED_TO',
        f.authorId,
        entityUuid(run.channelId, 'Technology', tech),
        OFFLINE_CONFIDENCE.authoredTechnology,
        f.fact,
        f.until,
      );
  }
};

/** Remaining proper nouns: people compromise knows (0.5) or first names the lexicon knows, else projects (0.45). */
export const mentionProperNouns = (run: MessageRun, f: FactScope, others: readonly string[]): void => {
  const { fact, body, covered } = f;
  const rest = others.filter((t) => !coveredBy(t, covered));
  const english = fact.sourceLang === '' || fact.sourceLang.startsWith('en');
  const detected = english
    ? detectNames(body, [...rest, ...nameWords(body).filter((w) => !coveredBy(w, covered))])
    : { people: [], skip: new Set<string>() };
  /** Mentions the person `full` at `word`'s first whole-word position (0 when absent) and marks it covered. */
  const mentionPerson = (full: string, confidence: number, known: boolean, word: string): void => {
    note(run, f, personMention(run, full, confidence, fact.factId, known), Math.max(0, findWord(body, word)));
    covered.push(full);
  };
  for (const name of detected.people) {
    if (coveredBy(name, covered)) continue;
    const full = withSurname(rest.find((t) => t === name || t.startsWith(`${name} `)) ?? name, body);
    if (knownPerson(run, name)) {
      // a known person written by full name ("Stuart Halloway" for stuarthalloway): mention it, learn the alias
      if (full.includes(' ') && knownPerson(run, full))
        mentionPerson(full, OFFLINE_CONFIDENCE.knownPersonText, true, full);
      continue;
    }
    if (!plausiblePersonName(full) || NOT_A_PERSON_CONTEXT(full).test(body)) continue;
    mentionPerson(full, OFFLINE_CONFIDENCE.detectedPerson, false, full);
  }
  for (const tag of rest) {
    if (coveredBy(tag, covered) || detected.skip.has(normalizeEntityName(tag))) continue;
    // "Stuart Halloway's talk": a first name the lexicon knows, with the capitalised surname that follows it
    const full = withSurname(tag, body);
    if (
      english &&
      /^\p{Lu}\p{Ll}+( \p{Lu}\p{Ll}+)?$/u.test(full) &&
      /FirstName|MaleName|FemaleName/.test(lexTag(tag.split(' ')[0]!.toLowerCase())) &&
      plausiblePersonName(full) &&
      !NOT_A_PERSON_CONTEXT(full).test(body)
    ) {
      mentionPerson(full, OFFLINE_CONFIDENCE.detectedPerson, false, tag);
      continue;
    }
    if (tag.split(' ').some((w) => /Place|Country|City|Region|Organization/.test(lexTag(w.toLowerCase())))) continue;
    const at = findWord(body, tag);
    if (at < 0 || projectNameProblem(tag, false)) continue;
    note(run, f, run.g.entity('Project', tag, OFFLINE_CONFIDENCE.projectBare, fact.factId), at);
  }
};

/**
 * A decision-type fact's Decision (decisionParts) with DECIDED_BY (or RELATED_TO from the deciding team), RELATED_TO
 * the technologies and projects it is about, and its record in `run.newDecisions` for supersession.
 */
export const recordDecision = (run: MessageRun, f: FactScope, teams: readonly Span[]): void => {
  const { fact, ts } = f;
  const d = decisionParts(fact.memoryText, fact.authorName);
  const deciderPerson = d.decider ? (knownPerson(run, d.decider) ?? null) : null;
  const deciderTeam = d.decider
    ? teams.find((t) => d.decider!.toLowerCase().includes(t.name.toLowerCase()))
    : undefined;
  const decidedBy = deciderPerson?.name ?? deciderTeam?.name ?? d.decider ?? f.authorName;
  const decisionId = run.g.entity(
    'Decision',
    d.name,
    d.status === 'proposed' ? OFFLINE_CONFIDENCE.decisionProposed : OFFLINE_CONFIDENCE.decision,
    fact.factId,
    [],
    { decided_by: decidedBy, date: isoDate(ts), status: d.status, context: clip(fact.memoryText, CONTEXT_MAX) },
  );
  if (deciderPerson) {
    const pid = personMention(run, deciderPerson.name, OFFLINE_CONFIDENCE.knownPersonText, fact.factId, false);
    run.g.relate('DECIDED_BY', pid, decisionId, OFFLINE_CONFIDENCE.decidedByExplicit - 0.1, fact, null);
  } else if (deciderTeam) {
    run.g.relate(
      'RELATED_TO',
      entityUuid(run.channelId, 'Team', deciderTeam.name),
      decisionId,
      OFFLINE_CONFIDENCE.teamDecided,
      fact,
      null,
    );
  } else if (!d.decider) {
    run.g.relate(
      'DECIDED_BY',
      f.authorId,
      decisionId,
      d.explicit ? OFFLINE_CONFIDENCE.decidedByExplicit : OFFLINE_CONFIDENCE.decidedByImplied,
      fact,
      null,
    );
  }
  const about = f.mentions.filter((m) => m.type === 'Technology' || m.type === 'Project');
  for (const m of about)
    run.g.relate('RELATED_TO', decisionId, m.id, OFFLINE_CONFIDENCE.decisionRelated, fact, f.until);
  const topicKeys = dedupe([...about.map((m) => m.name), ...fact.topicTags])
    .map(normalizeEntityName)
    .filter(Boolean)
    .slice(0, 10);
  run.newDecisions.push({
    entityId: decisionId,
    name: d.name,
    factId: fact.factId,
    messageTs: ts,
    decidedBy,
    topicKeys,
    text: fact.memoryText,
  });
};

/**
 * USES between the fact's projects (≥ projectCue) and technologies (explicit when a use verb joins them), then at
 * most MAX_RELATED_PER_FACT RELATED_TO co-occurrence edges between unlinked things, in text order.
 */
export const relateCooccurrence = (run: MessageRun, f: FactScope): void => {
  const { fact, body, mentions } = f;
  mentions.sort((a, b) => a.index - b.index);
  const projectsHere = mentions.filter(
    (m) => m.type === 'Project' && run.g.entities.get(m.id)!.confidence >= OFFLINE_CONFIDENCE.projectCue,
  );
  const techsHere = mentions.filter((m) => m.type === 'Technology');
  for (const p of projectsHere) {
    for (const t of techsHere) {
      const lastP = body.toLowerCase().lastIndexOf(p.name.toLowerCase(), t.index);
      const between = lastP >= 0 && t.index > lastP ? body.slice(lastP + p.name.length, t.index) : '';
      const explicit =
        between.length <= 60 &&
        !/[.;!?]\s/.test(between) &&
        /\b(uses|using|used|built (?:on|with)|written in|runs on|running on|based on|depends on|relies on|powered by|on top of)\b/i.test(
          between,
        );
      run.g.relate(
        'USES',
        p.id,
        t.id,
        explicit ? OFFLINE_CONFIDENCE.usesExplicit : OFFLINE_CONFIDENCE.usesCooccurrence,
        fact,
        f.until,
      );
    }
  }
  const things = mentions.filter((m) => m.type !== 'Person' && m.type !== 'Decision');
  let related = 0;
  for (let i = 0; i < things.length && related < MAX_RELATED_PER_FACT; i++) {
    for (let j = i + 1; j < things.length && related < MAX_RELATED_PER_FACT; j++) {
      const a = things[i]!;
      const b = things[j]!;
      if (run.g.linked(a.id, b.id)) continue;
      if (run.g.relate('RELATED_TO', a.id, b.id, OFFLINE_CONFIDENCE.relatedCooccurrence, fact, f.until)) related++;
    }
  }
};
