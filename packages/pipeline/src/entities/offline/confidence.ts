/**
 * Confidence of each offline rule, in [0, 1]. Entities: the graph store's noisy-or of mentions decides `active`
 * against ENTITY_THRESHOLD (0.6 by default), so a rule below it (a bare proper noun, a name compromise guessed)
 * stays `pending` until another mention confirms it. Relationships follow the spec's bands ("Relationship":
 * 0.8–1.0 explicit statement, 0.5–0.8 strong implication, below 0.5 weak connection).
 */
export const OFFLINE_CONFIDENCE = {
  author: 0.95,
  mention: 0.9,
  knownPersonTag: 0.85,
  knownPersonText: 0.7,
  detectedPerson: 0.5,
  technology: 0.85,
  projectOwned: 0.8,
  projectRepo: 0.8,
  projectCue: 0.7,
  projectBare: 0.45,
  team: 0.75,
  meetingNamed: 0.8,
  meetingGeneric: 0.6,
  decision: 0.85,
  decisionProposed: 0.7,
  decidedByExplicit: 0.9,
  decidedByImplied: 0.7,
  decisionRelated: 0.6,
  teamDecided: 0.8,
  memberOf: 0.85,
  memberOfImplied: 0.6,
  participatedIn: 0.85,
  participatedInImplied: 0.6,
  participatedInCompanion: 0.6,
  worksOnExplicit: 0.85,
  worksOnImplied: 0.6,
  usesExplicit: 0.85,
  usesCooccurrence: 0.55,
  relatedCooccurrence: 0.35,
  authoredTechnology: 0.7,
} as const;

/** Longest relationship context and Decision `context` property, in characters (spec: the fact text). */
export const CONTEXT_MAX = 300;
/** Longest Decision name, in characters (cut at a word boundary, with `…`). */
export const DECISION_NAME_MAX = 80;
/** At most this many RELATED_TO co-occurrence edges per fact. */
export const MAX_RELATED_PER_FACT = 3;
