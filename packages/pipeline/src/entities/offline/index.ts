// The offline entity extractor and the rules it is made of (spec "Graph entity", "Relationship", "Decision record").
export { CONTEXT_MAX, DECISION_NAME_MAX, MAX_RELATED_PER_FACT, OFFLINE_CONFIDENCE } from './confidence.js';
export { type DecisionParts, decisionParts } from './decisions.js';
export { findEvents } from './events.js';
export { OfflineEntityExtractor } from './extractor.js';
export { findGroups } from './groups.js';
export { findMeetings } from './meetings.js';
export { findKnownPerson } from './people.js';
export { findProjects } from './projects.js';
export { questionEntities } from './search-questions.js';
export { findTeams } from './teams.js';
export { technologyName } from './technologies.js';
export { clip, factBody, isoDate } from './text.js';
export { statedValidUntil } from './validity.js';
