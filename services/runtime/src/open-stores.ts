import { type BreakerLogger, type Config, type CredentialCipher, TOPICS } from '@atlas/core';
import type { Db } from '@atlas/db';
import {
  createEventLog,
  createSchemaRegistry,
  type EmbeddedLogOptions,
  EventCodec,
  type EventLog,
  migrateEventLog,
  type TimeSlicer,
} from '@atlas/eventlog';
import { createEmbedder } from '@atlas/providers';
import {
  ApiKeyStore,
  AskStore,
  AuditStore,
  BULK_TIMEOUT_MS,
  ChannelAccessStore,
  ConnectionStore,
  type CredentialKeyring,
  createGraphStore,
  createKeywordIndex,
  createVectorStore,
  type DatabaseHandle,
  DeadLetterStore,
  EmbeddingBacklog,
  EntityBacklog,
  EntityStateStore,
  type GuardedStore,
  graphStoreKind,
  guardDocumentStore,
  guardGraphStore,
  guardKeywordIndex,
  guardVectorStore,
  IntentStore,
  KyselyDocumentStore,
  keywordIndexKind,
  migrateAccess,
  migrateApiKeys,
  migrateAsk,
  migrateAudit,
  migrateConnections,
  migrateDeadLetters,
  migrateDocuments,
  migrateEmbeddingBacklog,
  migrateEntityState,
  migrateFactsState,
  migrateGraph,
  migrateIntents,
  migrateKeywordIndex,
  migrateStats,
  migrateSync,
  migrateSyncSchedules,
  migrateVectors,
  migrateWiki,
  StatsStore,
  SyncScheduleStore,
  SyncStore,
  ThreadRootStore,
  vectorStoreKind,
  WikiJobStore,
  WikiStore,
} from '@atlas/stores';
import type { WikiPage, WikiStructure } from '@atlas/wiki';
import type { Runtime } from './runtime.js';

/** Puts a guarded store's breaker in the runtime's breakers and returns its port. */
export type Guard = <T>(g: GuardedStore<T>) => T;

/** The read stores of a runtime, each guarded store behind its breaker (joined through `guard`). */
export type RuntimeStores = Pick<
  Runtime,
  | 'documents'
  | 'keyword'
  | 'threads'
  | 'graph'
  | 'graphKind'
  | 'entityState'
  | 'entityBacklog'
  | 'embeddings'
  | 'embeddingsUnavailable'
  | 'wiki'
  | 'wikiJobs'
  | 'ask'
  | 'apiKeys'
  | 'connections'
  | 'sync'
  | 'syncSchedules'
  | 'stats'
  | 'intents'
  | 'deadLetters'
  | 'access'
  | 'audit'
>;

/**
 * Applies every store's migrations to `db`, in order (the graph's only without NEO4J_URL; the vector store's are
 * openEmbeddings'). Throws what a migration throws.
 */
export const migrateStores = async (cfg: Config, db: Db): Promise<void> => {
  for (const migrate of [
    migrateEventLog,
    migrateDocuments,
    migrateKeywordIndex,
    migrateFactsState,
    migrateEntityState,
    ...(cfg.NEO4J_URL ? [] : [migrateGraph]),
    migrateWiki,
    migrateAsk,
    migrateApiKeys,
    migrateConnections,
    migrateSync,
    migrateSyncSchedules,
    migrateStats,
    migrateIntents,
    migrateDeadLetters,
    migrateAccess,
    migrateAudit,
  ])
    await migrate(db);
};

/**
 * The event log configuration picks (createEventLog), its codec's schemas registered (createSchemaRegistry) and every
 * topic of TOPICS made, as background work of `slicer`. Throws what the registry and the log throw.
 */
export const openEventLog = async (
  cfg: Config,
  db: Db,
  slicer: TimeSlicer,
  logOptions: EmbeddedLogOptions,
): Promise<EventLog> => {
  const codec = new EventCodec(createSchemaRegistry(cfg, db));
  await slicer.background(() => codec.init());
  const eventLog = createEventLog(cfg, db, codec, logOptions);
  await slicer.background(() => eventLog.ensureTopics(Object.values(TOPICS).map((name) => ({ name }))));
  return eventLog;
};

/**
 * The read stores on `database`, the document store, keyword index, graph and vectors behind their breakers (joined
 * through `guard`, openings logged to `logger`). A store in the embedded database (PGlite: one in-process engine that
 * runs one statement at a time) cannot be unreachable; a query waiting behind a projector's batch is busy, not down.
 * Its breakers count errors, with the bulk timeout (BULK_TIMEOUT_MS); the spec's 5 s applies to stores on a server
 * (DATABASE_URL, Neo4j, Elasticsearch, Qdrant). Connection credentials are encrypted under data keys of
 * `keyring`, legacy v1 envelopes read under `master` (CREDENTIAL_MASTER_KEY).
 */
export const openStores = async (
  cfg: Config,
  database: DatabaseHandle,
  guard: Guard,
  logger: BreakerLogger,
  keyring: CredentialKeyring,
  master?: CredentialCipher,
): Promise<RuntimeStores> => {
  const { db } = database;
  const reset = { resetMs: cfg.BREAKER_RESET_MS };
  const onDb = database.kind === 'pglite' ? { ...reset, timeoutMs: BULK_TIMEOUT_MS } : reset;
  const { embeddings, reason } = await openEmbeddings(cfg, database, logger, guard);
  const graphKind = graphStoreKind(cfg);
  const graph = guard(
    guardGraphStore(createGraphStore(cfg, db), {
      name: `graph_store:${graphKind}`,
      logger,
      breaker: graphKind === 'neo4j' ? reset : onDb,
    }),
  );
  const keywordKind = keywordIndexKind(cfg);
  return {
    documents: guard(guardDocumentStore(new KyselyDocumentStore(db), { logger, breaker: onDb })),
    keyword: guard(
      guardKeywordIndex(createKeywordIndex(cfg, db), {
        name: `keyword_index:${keywordKind}`,
        logger,
        breaker: keywordKind === 'elasticsearch' ? reset : onDb,
      }),
    ),
    threads: new ThreadRootStore(db),
    graph,
    graphKind,
    entityState: new EntityStateStore(db),
    entityBacklog: new EntityBacklog(db),
    embeddings,
    embeddingsUnavailable: reason,
    wiki: new WikiStore<WikiPage, WikiStructure>(db),
    wikiJobs: new WikiJobStore(db),
    ask: new AskStore(db),
    apiKeys: new ApiKeyStore(db),
    connections: new ConnectionStore(db, keyring, master),
    sync: new SyncStore(db),
    syncSchedules: new SyncScheduleStore(db),
    stats: new StatsStore(db),
    intents: new IntentStore(db),
    deadLetters: new DeadLetterStore(db),
    access: new ChannelAccessStore(db, { refreshIntervalMs: cfg.ACL_REFRESH_INTERVAL_MS }),
    audit: new AuditStore(db, { retentionDays: cfg.AUDIT_RETENTION_DAYS }),
  };
};

/** The embedder and vector store configuration asks for (each behind its breaker), or why there are none. */
const openEmbeddings = async (
  cfg: Config,
  database: DatabaseHandle,
  logger: BreakerLogger,
  guard: Guard,
): Promise<{ embeddings: Runtime['embeddings']; reason: string | null }> => {
  const { db } = database;
  const embedder = createEmbedder(cfg, { logger });
  if (!embedder) return { embeddings: null, reason: 'EMBEDDING_PROVIDER is none' };
  const kind = vectorStoreKind(cfg);
  try {
    // Qdrant makes its collection on first use; pgvector's table is made here, beside the other stores.
    if (kind === 'pgvector') await migrateVectors(db, embedder.dim);
    await migrateEmbeddingBacklog(db);
  } catch (err) {
    return { embeddings: null, reason: `no vector store: ${err instanceof Error ? err.message : String(err)}` };
  }
  const vectors = guard(
    guardVectorStore(createVectorStore(cfg, db, embedder.dim), {
      name: `vector_store:${kind}`,
      logger,
      // pgvector in the embedded database: errors count, with the bulk timeout (see openStores).
      breaker: {
        resetMs: cfg.BREAKER_RESET_MS,
        ...(kind === 'pgvector' && database.kind === 'pglite' ? { timeoutMs: BULK_TIMEOUT_MS } : {}),
      },
    }),
  );
  if ('breaker' in embedder) guard({ port: embedder, breaker: embedder.breaker as GuardedStore<unknown>['breaker'] });
  return { embeddings: { embedder, vectors, backlog: new EmbeddingBacklog(db) }, reason: null };
};
