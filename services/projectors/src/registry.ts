import { channelAccessProjector } from './access/channel-access.js';
import { auditProjector } from './audit/audit.js';
import { deadLettersProjector } from './dead-letters.js';
import { documentsProjector } from './documents.js';
import { embeddingsProjector } from './embeddings.js';
import { factsProjector } from './facts.js';
import { entitiesProjector, graphProjector } from './graph.js';
import { keywordProjector } from './keyword.js';
import { lifecycleProjector } from './lifecycle.js';
import { reconcilerProjector } from './reconciler.js';
import { statsProjector } from './stats.js';
import { syncJobsProjector } from './sync/sync-jobs.js';
import { syncSchedulesProjector } from './sync/sync-schedules.js';
import { wikiProjector } from './wiki.js';

/** Every projector of a process, in pipeline order (upstream first); `atlas run <name>` runs one by its name. */
export const PROJECTORS = [
  documentsProjector,
  factsProjector,
  keywordProjector,
  embeddingsProjector,
  entitiesProjector,
  graphProjector,
  wikiProjector,
  lifecycleProjector,
  syncJobsProjector,
  syncSchedulesProjector,
  statsProjector,
  reconcilerProjector,
  deadLettersProjector,
  channelAccessProjector,
  auditProjector,
] as const;
/** The name of one of PROJECTORS (its consumer group is `atlas.<name>`). */
export type ProjectorName = (typeof PROJECTORS)[number]['name'];
/** The names of PROJECTORS, in their order. */
export const PROJECTOR_NAMES = PROJECTORS.map((p) => p.name) as ProjectorName[];
