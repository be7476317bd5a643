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
import { createEmbedder, createEmbedderForModel, type Embedder, type EmbedderLogger } from '@atlas/providers';
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
  LifecycleStore,
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
  migrateLifecycle,
  migrateStats,
  migrateSync,
  migrateSyncSchedules,
  migrateVectorSpaces,
  migrateVectors,
  migrateWiki,
  StatsStore,
  SyncScheduleStore,
  SyncStore,
  ThreadRootStore,
  type VectorSpace,
  VectorSpaceRegistry,
  vectorStoreKind,
  WikiJobStore,
  WikiStore,
} from '@atlas/stores';
import type { WikiPage, WikiStructure } from '@atlas/wiki';
import { sql } from 'kysely';
import type { Runtime } from './runtime.js';
import { type SpaceHandle, VectorSpaces } from './vector-spaces.js';

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
  | 'vectorSpaces'
  | 'wiki'
  | 'wikiJobs'
  | 'ask'
  | 'apiKeys'
  | 'connections'
  | 'sync'
  | 'syncSchedules'
  | 'stats'
  | 'lifecycle'
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
    migrateLifecycle,
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
  const { embeddings, vectorSpaces, reason } = await openEmbeddings(cfg, database, logger, guard);
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
    vectorSpaces,
    embeddingsUnavailable: reason,
    wiki: new WikiStore<WikiPage, WikiStructure>(db),
    wikiJobs: new WikiJobStore(db),
    ask: new AskStore(db),
    apiKeys: new ApiKeyStore(db),
    connections: new ConnectionStore(db, keyring, master),
    sync: new SyncStore(db),
    syncSchedules: new SyncScheduleStore(db),
    stats: new StatsStore(db),
    lifecycle: new LifecycleStore(db),
    intents: new IntentStore(db),
    deadLetters: new DeadLetterStore(db),
    access: new ChannelAccessStore(db, { refreshIntervalMs: cfg.ACL_REFRESH_INTERVAL_MS }),
    audit: new AuditStore(db, { retentionDays: cfg.AUDIT_RETENTION_DAYS }),
  };
};

/**
 * The embedder and vector store configuration asks for (each behind its breaker), or why there are none. Vectors live
 * in vector spaces (docs/models.md "Changing the model"): the registry's active space serves search and the
 * embeddings projector; when it holds another model than the configured one, it keeps serving (with its own model's
 * embedder) until a rebuild (rebuildVectorSpace) has replayed atlas.facts into a space of the configured model. A data
 * dir from before spaces has its vector table adopted as the first active space. When the active space's model
 * cannot be had here (an ONNX model no longer cached, an endpoint no longer configured), the configured model's space
 * is made active at once, empty until rebuilt (search is keyword-only meanwhile), with a warning.
 */
const openEmbeddings = async (
  cfg: Config,
  database: DatabaseHandle,
  logger: EmbedderLogger,
  guard: Guard,
): Promise<{ embeddings: Runtime['embeddings']; vectorSpaces: VectorSpaces | null; reason: string | null }> => {
  const { db } = database;
  const target = createEmbedder(cfg, { logger });
  if (!target) return { embeddings: null, vectorSpaces: null, reason: 'EMBEDDING_PROVIDER is none' };
  const kind = vectorStoreKind(cfg);
  const registry = new VectorSpaceRegistry(db);
  try {
    await migrateVectorSpaces(db);
    await migrateEmbeddingBacklog(db);
    if (!(await registry.active())) await adoptFirstSpace(cfg, db, registry, target, kind);
  } catch (err) {
    await target.close?.();
    return {
      embeddings: null,
      vectorSpaces: null,
      reason: `no vector store: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  guard({ port: target, breaker: target.breaker as GuardedStore<unknown>['breaker'] });
  const embedders = new Map<string, Embedder | null>([[target.id, target]]);
  const open = async (space: VectorSpace): Promise<SpaceHandle> => {
    // Qdrant makes its collection on first use; pgvector's table is made here, beside the other stores.
    if (kind === 'pgvector') await migrateVectors(db, space.dim, space.index);
    const raw = createVectorStore(cfg, db, space.dim, space.index);
    const store = guard(
      guardVectorStore(raw, {
        name: `vector_store:${kind}`,
        logger,
        // pgvector in the embedded database: errors count, with the bulk timeout (see openStores).
        breaker: {
          resetMs: cfg.BREAKER_RESET_MS,
          ...(kind === 'pgvector' && database.kind === 'pglite' ? { timeoutMs: BULK_TIMEOUT_MS } : {}),
        },
      }),
    );
    if (!embedders.has(space.model)) {
      const e = createEmbedderForModel(space.model, cfg, { logger });
      if (e) guard({ port: e, breaker: e.breaker as GuardedStore<unknown>['breaker'] });
      embedders.set(space.model, e);
    }
    return {
      space,
      embedder: embedders.get(space.model) ?? null,
      store,
      drop: () => raw.drop(),
    };
  };
  const spaces = new VectorSpaces({ registry, open, target });
  try {
    await spaces.load();
    if (!spaces.active().embedder) {
      const old = spaces.active().space;
      logger.warn?.(
        { model: old.model, space: old.id },
        `the vector space's model ${old.model} is not available here: search uses ${target.id}, whose vectors are being rebuilt (keyword search meanwhile)`,
      );
      const { handle } = await spaces.beginBuilding(kind, cfg.QDRANT_COLLECTION);
      await spaces.activate(handle.space.id);
    }
  } catch (err) {
    await spaces.close();
    return {
      embeddings: null,
      vectorSpaces: null,
      reason: `no vector store: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  return {
    embeddings: { embedder: spaces.embedder, vectors: spaces.store, backlog: new EmbeddingBacklog(db) },
    vectorSpaces: spaces,
    reason: null,
  };
};

/**
 * Registers the first active space: the pre-space vector table of a data dir that has one (pgvector
 * `vector_facts_<dim>` with rows: the model most of its vectors carry), else an empty space of the configured model.
 */
const adoptFirstSpace = async (
  cfg: Config,
  db: Db,
  registry: VectorSpaceRegistry,
  target: Embedder,
  kind: 'pgvector' | 'qdrant',
): Promise<void> => {
  if (kind === 'pgvector') {
    const tables = await sql<{ name: string }>`select table_name as name from information_schema.tables
      where table_name ~ '^vector_facts_[0-9]+$' and table_schema = current_schema()`.execute(db);
    let best: { table: string; model: string; dim: number; n: number } | null = null;
    for (const { name } of tables.rows) {
      const rows = await sql<{ model: string; n: number }>`select model, count(*)::int as n from ${sql.raw(name)}
        group by model order by n desc limit 1`.execute(db);
      const top = rows.rows[0];
      if (top && (!best || Number(top.n) > best.n))
        best = { table: name, model: top.model, dim: Number(name.replace('vector_facts_', '')), n: Number(top.n) };
    }
    if (best) {
      await registry.create({ model: best.model, dim: best.dim, state: 'active', kind, index: best.table });
      return;
    }
  }
  await registry.create({
    model: target.id,
    dim: target.dim,
    state: 'active',
    kind,
    qdrantPrefix: cfg.QDRANT_COLLECTION,
  });
};
