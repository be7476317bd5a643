import { groupOf } from '@atlas/eventlog';
import type { PlatformClientOptions } from '@atlas/platforms';
import { platformClient } from '@atlas/platforms';
import {
  type SyncJobDeps,
  type SyncSchedulerDeps,
  type SyncWorker,
  type SyncWorkerOptions,
  startSyncWorker,
} from '@atlas/projectors';
import type { Runtime } from './runtime.js';
import { activeProjectors } from './runtime.js';

/**
 * The sync job dependencies of a runtime: its stores and log, SYNC_BATCH_SIZE and SYNC_MAX_MESSAGES, the live platform
 * client on PLATFORM_A_API_URL / PLATFORM_B_API_URL (the mock platform when ADAPTER_MOCK is true), and the stage
 * waits of the projectors this deployment runs. Sync never waits on an LLM: with LLM_BASE_URL (LLM entity
 * extraction) building_graph does not wait for the entities and graph projectors, and with an LLM quality tier (LLM
 * wiki summaries) the wiki is left to the wiki scheduler, which regenerates stale wikis once the projectors are idle.
 */
export const syncDepsOf = (
  rt: Runtime,
  over: Partial<SyncJobDeps> & { client?: PlatformClientOptions } = {},
): SyncJobDeps => {
  const active = new Set(activeProjectors(rt));
  const groups = (...names: string[]) => names.filter((n) => active.has(n)).map((name) => groupOf({ name }));
  const llmGraph = Boolean(rt.cfg.LLM_BASE_URL);
  const { client, ...rest } = over;
  return {
    eventLog: rt.eventLog,
    sync: rt.sync,
    documents: rt.documents,
    connections: rt.connections,
    platformClient: (credentials) =>
      platformClient(credentials, {
        slackApiUrl: rt.cfg.PLATFORM_A_API_URL,
        discordApiUrl: rt.cfg.PLATFORM_B_API_URL,
        mock: rt.cfg.ADAPTER_MOCK, // the generated mock platform instead of the platforms' APIs
        ...client,
      }),
    batchSize: rt.cfg.SYNC_BATCH_SIZE,
    maxMessages: rt.cfg.SYNC_MAX_MESSAGES,
    stageGroups: {
      messages: groups('facts', 'documents'),
      facts: groups('documents', 'keyword', 'embeddings'),
      graphFacts: llmGraph ? [] : groups('entities'),
      graph: llmGraph ? [] : groups('graph', 'documents'),
    },
    generateWiki:
      rt.wikiGenerator && !rt.llm.quality ? (channelId) => rt.wikiGenerator!.generate(channelId, 'incremental') : null,
    ...rest,
  };
};

/** Starts the sync worker on a runtime (`atlas start`, `atlas run sync-worker`). */
export const startRuntimeSyncWorker = (
  rt: Runtime,
  over: Partial<SyncJobDeps> & { client?: PlatformClientOptions } = {},
  opts: SyncWorkerOptions = {},
): Promise<SyncWorker> => startSyncWorker(syncDepsOf(rt, over), opts);

/** The scheduler's dependencies on a runtime: its stores, log and SYNC_MAX_MESSAGES. */
export const syncSchedulerDepsOf = (rt: Runtime, over: Partial<SyncSchedulerDeps> = {}): SyncSchedulerDeps => ({
  eventLog: rt.eventLog,
  schedules: rt.syncSchedules,
  sync: rt.sync,
  connections: rt.connections,
  documents: rt.documents,
  maxMessages: rt.cfg.SYNC_MAX_MESSAGES,
  ...over,
});
