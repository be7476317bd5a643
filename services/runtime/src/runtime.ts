import { AtlasError, type BreakerSet, type Config } from '@atlas/core';
import type { EventLog, TimeSlicer } from '@atlas/eventlog';
import type { EntityExtractor, FactExtractor } from '@atlas/pipeline';
import { PROJECTOR_NAMES, PROJECTORS, type RuntimeMetrics, type WikiGenerator } from '@atlas/projectors';
import type { Embedder, HttpWebSearchProvider, LlmChains } from '@atlas/providers';
import type {
  ApiKeyStore,
  AskStore,
  AuditStore,
  ChannelAccessStore,
  ConnectionStore,
  DatabaseHandle,
  DeadLetterStore,
  EmbeddingBacklog,
  EntityBacklog,
  EntityStateStore,
  GraphStore,
  IntentStore,
  KeywordIndex,
  KyselyDocumentStore,
  LifecycleStore,
  MasterKey,
  StatsStore,
  SyncScheduleStore,
  SyncStore,
  ThreadRootStore,
  VectorStore,
  WikiJobStore,
  WikiStore,
} from '@atlas/stores';
import type { WikiPage, WikiStructure } from '@atlas/wiki';
import type { Redis } from 'ioredis';
import type { AuditSink } from './audit-wiring.js';
import type { VectorSpaces } from './vector-spaces.js';

/** Everything one Atlas process of the embedded profile wires together. */
export interface Runtime {
  cfg: Config;
  database: DatabaseHandle;
  eventLog: EventLog;
  /** 'kafka' when KAFKA_BROKERS is set, else the embedded Postgres-table log. */
  logKind: 'kafka' | 'embedded';
  documents: KyselyDocumentStore;
  keyword: KeywordIndex;
  threads: ThreadRootStore;
  extractor: FactExtractor;
  /** Entity extraction: the LLM extractor when LLM_BASE_URL is set, else the offline one. */
  entityExtractor: EntityExtractor;
  /** The knowledge graph: Neo4j when NEO4J_URL is set, else Postgres tables beside the other stores. */
  graph: GraphStore;
  graphKind: 'neo4j' | 'postgres';
  entityState: EntityStateStore;
  entityBacklog: EntityBacklog;
  /**
   * Embeddings, when configured and a vector store is available (pgvector: PGlite, or a server with the
   * extension); null means keyword-only search (the spec's degraded mode), with the reason.
   */
  embeddings: { embedder: Embedder; vectors: VectorStore; backlog: EmbeddingBacklog } | null;
  embeddingsUnavailable: string | null;
  /**
   * The vector spaces behind `embeddings` (null without embeddings): the active one, and one being rebuilt when the
   * configured model changed (rebuildVectorSpace; docs/models.md "Changing the model").
   */
  vectorSpaces: VectorSpaces | null;
  /** The wiki's clusters, pages, versions and generation state (beside the other stores). */
  wiki: WikiStore<WikiPage, WikiStructure>;
  /** The wiki's job history (refresh and rebuild jobs, written by the wiki worker). */
  wikiJobs: WikiJobStore;
  /** Ask sessions, their messages and feedback (the query service's own store, beside the others). */
  ask: AskStore;
  /** API keys (docs/access.md): hashes, roles, scopes, identities; the auth hook checks presented keys against it. */
  apiKeys: ApiKeyStore;
  /**
   * Connections and their channel lists, credentials encrypted under per-connection data keys kept in the data dir's
   * keyring, wrapped under the master key (docs/credentials.md).
   */
  connections: ConnectionStore;
  /** The master key of stored credentials (its source and file); the keyring is `connections.keyring`. */
  credentialMasterKey: MasterKey;
  /** Sync jobs and per-channel sync cursors (the sync-jobs projector's read store). */
  sync: SyncStore;
  /** Sync schedules (the sync-schedules projector's read store; the sync scheduler fires them). */
  syncSchedules: SyncScheduleStore;
  /**
   * Wiki generation over the stores (null without embeddings: topics are clusters of fact vectors), with LLM topic
   * summaries when LLM_BASE_URL is set (quality tier, LLM_QUALITY_MODEL).
   */
  wikiGenerator: WikiGenerator | null;
  /**
   * The LLM tiers (spec "LLM fallback chain": primary → secondary provider, each behind its circuit breaker): fast
   * (routing, extraction) and quality (answers); null without LLM_BASE_URL / LLM_SECONDARY_BASE_URL (offline).
   */
  llm: LlmChains;
  /**
   * The circuit breakers of this runtime (spec "Dependency circuit breaker"): document_store, keyword_index,
   * graph_store, vector_store, embedding_provider, web_search_provider and the LLM chains' llm_provider ones (also in
   * `llm`); a breaker started beside the runtime (the bot's cache_queue) joins it. For /api/health and /metrics.
   */
  breakers: BreakerSet;
  /** Web search for ask's external sub-queries (WEB_SEARCH_URL, behind its 5 s breaker); null: none configured. */
  webSearch: HttpWebSearchProvider | null;
  /** The stats projector's read store (every /api/stats route) and the LLM usage ledger. */
  stats: StatsStore;
  /** The lifecycle projector's read store (decisions and action items; /api/decisions, /api/graph/decisions). */
  lifecycle: LifecycleStore;
  /** Prometheus metrics of this process's projectors and LLM calls (the API's /metrics appends them). */
  metrics: RuntimeMetrics;
  /** Write intents (the reconciler projector's read store, spec "Write intent (two-phase persist)"). */
  intents: IntentStore;
  /** Dead letters (the dead-letters projector's read store). */
  deadLetters: DeadLetterStore;
  /**
   * Channel access (docs/access.md "Channel access"): the latest platform membership of each channel (the
   * channel-access projector's read store). Its `hiddenChannels(identity, now)` is the ChannelAccessView the API filters
   * by; private channels whose membership is older than 2 × ACL_REFRESH_INTERVAL_MS fail closed.
   */
  access: ChannelAccessStore;
  /**
   * The audit trail (docs/access.md "Audit trail"): key use, denials and admin actions (the audit projector's read
   * store, kept AUDIT_RETENTION_DAYS); GET /api/admin/audit reads it. The API appends the entries (auditSink).
   */
  audit: AuditStore;
  /**
   * Whether fact sets get write intents (WriteIntentCreated, store outcomes, the reconciler projector); on by
   * default. Set before the projectors start (bench:import turns it off for its baseline).
   */
  writeIntents: boolean;
  /**
   * The event loop's time slices (PROJECTION_SLICE_MS): the projectors run as its background work, and each query of
   * the runtime's database and each fact and entity extraction passes a checkpoint, so a projector's batch gives the
   * loop a turn at least every slice (the API's own queries never wait). Run other background work (schedulers) in
   * `slicer.background(...)` too.
   */
  slicer: TimeSlicer;
  /**
   * Where the API's auth hook sends audit entries (AuthOptions.audit): AuditRecorded on atlas.audit, appended without
   * making a request wait; an append that fails is logged. `close()` flushes it first.
   */
  auditSink: AuditSink;
  /** REDIS_URL's client (the API's rate limits count there when several processes serve it); null without. */
  redis: Redis | null;
  close(): Promise<void>;
}

/** The steps of openRuntime, in order, as reported to its `onStep` (`atlas start` shows the current one on /api/health). */
export type RuntimeStep = 'opening the database' | 'migrating' | 'registering event schemas' | 'opening the stores';

/** Every projector by name, in the order of @atlas/projectors' PROJECTORS (what `atlas run` can run one of). */
export { PROJECTOR_NAMES };

/** The projectors this runtime runs: embeddings only with an embedder and a vector store, reconciler only with write intents. */
export const activeProjectors = (rt: Runtime): string[] =>
  PROJECTOR_NAMES.filter(
    (n) => (n !== 'embeddings' || rt.embeddings !== null) && (n !== 'reconciler' || rt.writeIntents),
  );

/** The projector of that name; AtlasError INVALID_REQUEST for a name not in PROJECTOR_NAMES. */
export const projectorOf = (name: string) => {
  const p = PROJECTORS.find((x) => x.name === name);
  if (!p)
    throw new AtlasError('INVALID_REQUEST', `unknown projector '${name}' (one of: ${PROJECTOR_NAMES.join(', ')})`);
  return p;
};

/** The logger projectors report skipped and failed events to (pino's or the console's warn and error). */
export type ProjectorLogger = {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  /** Progress of long work (a vector space rebuild); optional. */
  info?(obj: object, msg: string): void;
};
