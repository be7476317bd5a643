import { startWikiWorker, type WikiWorker } from '@atlas/projectors';
import type { Runtime } from './runtime.js';

/**
 * Starts the wiki worker on a runtime (`atlas start`, `atlas run wiki`): WikiRefreshRequested commands on
 * atlas.commands run as jobs of the runtime's WikiGenerator, recorded in its WikiJobStore. Null without a generator
 * (no vector store: the wiki routes answer PROVIDER_UNAVAILABLE and append no command).
 */
export const startRuntimeWikiWorker = async (
  rt: Runtime,
  log?: { warn(obj: object, msg: string): void },
): Promise<WikiWorker | null> => {
  const generator = rt.wikiGenerator;
  if (!generator) return null;
  return startWikiWorker({
    eventLog: rt.eventLog,
    jobs: rt.wikiJobs,
    wiki: rt.wiki,
    generate: (channelId, mode) => generator.generate(channelId, mode),
    ...(log ? { log } : {}),
  });
};
