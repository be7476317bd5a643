import type { EntityExtraction, EntityExtractionInput, EntityExtractor } from '../port.js';
import {
  mentionMeetings,
  mentionOwnership,
  mentionPeople,
  mentionProjects,
  mentionProperNouns,
  mentionTeams,
  mentionTechnologies,
  recordDecision,
  relateCooccurrence,
  relateReleases,
} from './fact-stages.js';
import { beginFact, finishRun, startRun } from './run.js';

/**
 * The offline entity extractor (id `offline-entities@1`; port EntityExtractor): rules over one message's facts,
 * no model. Pure and deterministic: the same facts and channel state always give the same extraction.
 *
 * Per fact (spec "Graph entity", "Relationship", "Decision record"; confidences in OFFLINE_CONFIDENCE):
 * - Person: the author (0.95; the author id is never an alias), `@mentions` (0.9), entity tags naming a known
 *   person by name or alias (0.85; the name is the known display name, the spelling used an alias), distinctive
 *   known names in the text (0.7), names compromise detects (0.5, pending until confirmed).
 * - Technology: entity tags in the TECH lexicon (0.85; other spellings such as `lein` become aliases).
 * - Project: repository URLs and dependency coordinates (0.8), ownership cues (0.8), noun and version cues
 *   (0.7–0.75), bare proper nouns that are no person, place, organisation, date or technology (0.45, pending).
 * - Team: `the X team`, `team X`, `X squad/committee`, `X user/study/working group` (0.75).
 * - Meeting: named conferences and meetups keep their name, generic ones are kind plus day (see findMeetings).
 * - Decision: one per decision-type fact (see decisionParts), with decided_by, date, status and context.
 * - Relationships: DECIDED_BY, PARTICIPATED_IN, WORKS_ON, USES, MEMBER_OF, RELATED_TO, each with validFrom = the
 *   message date, validUntil from statedValidUntil, context = the fact text (≤ 300 characters), sourceFactId.
 * Supersessions come from findSupersessions over the channel's earlier decisions. Never throws on odd input.
 */
export class OfflineEntityExtractor implements EntityExtractor {
  readonly id = 'offline-entities@1';

  async extract(input: EntityExtractionInput): Promise<EntityExtraction> {
    return this.extractSync(input);
  }

  /** Synchronous form of `extract`, for batch scripts and for the LLM extractor's fallback. */
  extractSync(input: EntityExtractionInput): EntityExtraction {
    const run = startRun(input);
    for (const fact of input.facts.facts) {
      const f = beginFact(run, fact);
      const { techTags, others } = mentionPeople(run, f);
      mentionTechnologies(run, f, techTags);
      mentionMeetings(run, f);
      const teams = mentionTeams(run, f);
      mentionProjects(run, f);
      mentionOwnership(run, f);
      relateReleases(run, f, techTags);
      mentionProperNouns(run, f, others);
      if (fact.factType === 'decision') recordDecision(run, f, teams);
      relateCooccurrence(run, f);
    }
    return finishRun(run, input);
  }
}
