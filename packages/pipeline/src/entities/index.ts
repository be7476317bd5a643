export {
  type EntityLlm,
  type EntityLlmMessage,
  LlmAnswer,
  LlmEntityExtractor,
  type LlmEntityExtractorOptions,
  type LlmExtractorStats,
  parseLlmAnswer,
  toExtraction,
} from './llm.js';
export {
  CONTEXT_MAX,
  clip,
  DECISION_NAME_MAX,
  type DecisionParts,
  decisionParts,
  factBody,
  findKnownPerson,
  findMeetings,
  findProjects,
  findTeams,
  isoDate,
  MAX_RELATED_PER_FACT,
  OFFLINE_CONFIDENCE,
  OfflineEntityExtractor,
  questionEntities,
  statedValidUntil,
  technologyName,
} from './offline/index.js';
export { findOwnerChanges, type KnownOwner, type Ownership, ownershipOf } from './ownership.js';
export type { EntityExtraction, EntityExtractionInput, EntityExtractor, KnownDecision, KnownPerson } from './port.js';
export {
  choicesOf,
  findSupersessions,
  MAX_SUPERSESSIONS_PER_DECISION,
  type NewDecision,
  replacementCue,
} from './supersede.js';
