import type { EventLog } from '@atlas/eventlog';
import type { PlatformClient, PlatformCredentials } from '@atlas/platforms';
import type { ConnectionStore, DocumentStore, SyncStore } from '@atlas/stores';

/** What a sync job needs (the sync worker builds it from the runtime). */
export interface SyncJobDeps {
  eventLog: EventLog;
  sync: SyncStore;
  documents: DocumentStore;
  connections: ConnectionStore;
  platformClient: (credentials: PlatformCredentials) => PlatformClient;
  /** SYNC_BATCH_SIZE: top-level messages asked per page, and MessageIngested events per append. */
  batchSize: number;
  /** SYNC_MAX_MESSAGES: the first sync of a channel fetches at most this many top-level messages (with threads). */
  maxMessages: number;
  /**
   * Consumer groups each later stage waits for, per topic: `facts` (extracting_facts: the facts and documents groups
   * on atlas.messages, then documents, keyword, embeddings on atlas.facts) and `graph` (building_graph: entities on
   * atlas.facts, then graph and documents on atlas.graph). A stage with no groups does not wait (e.g. the graph
   * when entity extraction goes through an LLM: sync never waits on an LLM).
   */
  stageGroups: { messages: string[]; facts: string[]; graphFacts: string[]; graph: string[] };
  /** Regenerates the channel's wiki (generating_wiki); null: left to the wiki scheduler (stale wikis). */
  generateWiki: ((channelId: string) => Promise<unknown>) | null;
  /** Slack threads whose late replies an incremental sync looks for (the most recently active; default 25). */
  lateReplyThreads?: number;
  /** Longest wait of one stage for the projectors, ms (default 30 min); then the job completes with what it has. */
  stageTimeoutMs?: number;
  pollMs?: number;
  log?: { warn(obj: object, msg: string): void };
  now?: () => Date;
}

/** Why a job's signal aborted: a cancel request (the job ends `cancelled`) or a shutdown (it stays open to resume). */
export class JobCancelled extends Error {}
export class WorkerShutdown extends Error {}
