import path from 'node:path';
import {
  AtlasError,
  type BreakerLogger,
  type CircuitBreaker,
  type Config,
  CredentialCipher,
  TOPICS,
} from '@atlas/core';
import {
  ConfluentSchemaRegistry,
  EmbeddedEventLog,
  type EmbeddedLogOptions,
  EventCodec,
  type EventLog,
  groupOf,
  KafkaEventLog,
  KyselySchemaRegistry,
  type LagRow,
  migrateEventLog,
  type Projector,
  type ResetTarget,
  runProjector,
  type Subscription,
} from '@atlas/eventlog';
import {
  type EntityExtractor,
  type FactExtractor,
  LlmEntityExtractor,
  LlmFactExtractor,
  OfflineEntityExtractor,
  OfflineFactExtractor,
} from '@atlas/pipeline';
import {
  createEmbedder,
  type Embedder,
  HttpWebSearchProvider,
  type LlmChains,
  llmChainsFromConfig,
} from '@atlas/providers';
import {
  AskStore,
  BULK_TIMEOUT_MS,
  ConnectionStore,
  type DatabaseHandle,
  DeadLetterStore,
  ElasticsearchKeywordIndex,
  EmbeddingBacklog,
  EntityBacklog,
  EntityStateStore,
  type GraphStore,
  type GuardedStore,
  guardDocumentStore,
  guardGraphStore,
  guardKeywordIndex,
  guardVectorStore,
  IntentStore,
  type KeywordIndex,
  KyselyDocumentStore,
  migrateAsk,
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
  Neo4jGraphStore,
  openDatabase,
  PgVectorStore,
  PostgresGraphStore,
  PostgresKeywordIndex,
  QdrantVectorStore,
  StatsStore,
  SyncScheduleStore,
  SyncStore,
  ThreadRootStore,
  type VectorStore,
  WikiStore,
} from '@atlas/stores';
import { completionSummarizer, type WikiPage, type WikiStructure } from '@atlas/wiki';
import { pino } from 'pino';
import { deadLettersProjector, type RedriveDeps } from './dead-letters.js';
import { documentsProjector } from './documents.js';
import { backfillEmbeddings, type EmbeddingsDeps, embeddingsProjector, retryVectorWrite } from './embeddings.js';
import { factsProjector } from './facts.js';
import { backfillEntities, entitiesProjector, graphProjector, retryGraphWrite } from './graph.js';
import { keywordProjector } from './keyword.js';
import type { LlmRecoveryDeps } from './llm-recovery.js';
import { instrumentLlmChains, RuntimeMetrics } from './metrics.js';
import { type ReconcileDeps, reconcilerProjector } from './reconciler.js';
import { backfillOnRecovery, withCleanup } from './recovery.js';
import { statsProjector } from './stats.js';
import { syncJobsProjector } from './sync/sync-jobs.js';
import { syncSchedulesProjector } from './sync/sync-schedules.js';
import { WikiGenerator, wikiProjector } from './wiki.js';

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
  /** The wiki's clusters, pages, versions and generation state (beside the other stores). */
  wiki: WikiStore<WikiPage, WikiStructure>;
  /** Ask sessions, their messages and feedback (the query service's own store, beside the others). */
  ask: AskStore;
  /**
   * Connections and their channel lists, credentials encrypted under CREDENTIAL_MASTER_KEY (unset outside production:
   * the public development key, warned about once per process when a credential is first stored).
   */
  connections: ConnectionStore;
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
   * The circuit breakers of this runtime's stores and embedder (spec "Dependency circuit breaker"): document_store,
   * keyword_index, graph_store, vector_store, embedding_provider (the LLM chains' are in `llm`). For /api/health.
   */
  breakers: CircuitBreaker[];
  /** Web search for ask's external sub-queries (WEB_SEARCH_URL, behind its 5 s breaker); null: none configured. */
  webSearch: HttpWebSearchProvider | null;
  /** The stats projector's read store (every /api/stats route) and the LLM usage ledger. */
  stats: StatsStore;
  /** Prometheus metrics of this process's projectors and LLM calls (the API's /metrics appends them). */
  metrics: RuntimeMetrics;
  /** Write intents (the reconciler projector's read store, spec "Write intent (two-phase persist)"). */
  intents: IntentStore;
  /** Dead letters (the dead-letters projector's read store). */
  deadLetters: DeadLetterStore;
  /**
   * Whether fact sets get write intents (WriteIntentCreated, store outcomes, the reconciler projector); on by
   * default. Set before the projectors start (bench:import turns it off for its baseline).
   */
  writeIntents: boolean;
  close(): Promise<void>;
}

/** Where the embedded database lives inside ATLAS_DATA_DIR. */
export const pgliteDir = (cfg: Config): string =>
  cfg.ATLAS_DATA_DIR.startsWith('memory://') ? 'memory://' : path.join(cfg.ATLAS_DATA_DIR, 'pglite');

/**
 * Opens the database (PGlite in ATLAS_DATA_DIR, or PostgreSQL when DATABASE_URL is set), applies
 * every store's migrations, registers the Avro schemas and creates the topics.
 */
/**
 * The fact extractor configuration asks for (FACT_EXTRACTOR): the fast LLM tier (`llm`, or `auto` with LLM_BASE_URL
 * set) or the regex fast path (`offline`, or `auto` without an LLM). `llm` without a configured provider fails at start
 * (AtlasError INVALID_REQUEST).
 */
export const factExtractorOf = (cfg: Config, fast: LlmChains['fast']): FactExtractor => {
  const mode = cfg.FACT_EXTRACTOR === 'auto' ? (fast ? 'llm' : 'offline') : cfg.FACT_EXTRACTOR;
  if (mode === 'offline') return new OfflineFactExtractor();
  if (!fast)
    throw new AtlasError('INVALID_REQUEST', 'FACT_EXTRACTOR=llm needs LLM_BASE_URL (no LLM provider is configured)');
  return new LlmFactExtractor({ llm: fast, model: cfg.LLM_FAST_MODEL });
};

export const openRuntime = async (cfg: Config, logOptions: EmbeddedLogOptions = {}): Promise<Runtime> => {
  const database = await openDatabase({ url: cfg.DATABASE_URL, dataDir: pgliteDir(cfg) });
  const { db } = database;
  await migrateEventLog(db);
  await migrateDocuments(db);
  await migrateKeywordIndex(db);
  await migrateFactsState(db);
  await migrateEntityState(db);
  if (!cfg.NEO4J_URL) await migrateGraph(db);
  await migrateWiki(db);
  await migrateAsk(db);
  await migrateConnections(db);
  await migrateSync(db);
  await migrateSyncSchedules(db);
  await migrateStats(db);
  await migrateIntents(db);
  await migrateDeadLetters(db);
  const cipher = CredentialCipher.fromConfig(cfg, (m) => process.emitWarning(m, { code: 'ATLAS_DEV_CREDENTIAL_KEY' }));
  const registry = cfg.SCHEMA_REGISTRY_URL
    ? new ConfluentSchemaRegistry(cfg.SCHEMA_REGISTRY_URL)
    : new KyselySchemaRegistry(db);
  const codec = new EventCodec(registry);
  await codec.init();
  const eventLog: EventLog = cfg.KAFKA_BROKERS
    ? new KafkaEventLog(codec, {
        brokers: cfg.KAFKA_BROKERS.split(',').map((b) => b.trim()),
        clientId: cfg.KAFKA_CLIENT_ID,
        defaultPartitions: cfg.EVENTLOG_PARTITIONS,
        replicationFactor: cfg.KAFKA_REPLICATION_FACTOR,
        sessionTimeoutMs: cfg.KAFKA_SESSION_TIMEOUT_MS,
        namespace: cfg.KAFKA_NAMESPACE,
      })
    : new EmbeddedEventLog(db, codec, { defaultPartitions: cfg.EVENTLOG_PARTITIONS, ...logOptions });
  await eventLog.ensureTopics(Object.values(TOPICS).map((name) => ({ name })));
  // Breaker openings and closings are info log entries (spec "Alerts (operational)"), JSON lines on stderr (pino).
  const breakerLog = pino({ level: cfg.LOG_LEVEL, base: { component: 'breaker' } }, pino.destination(2));
  const breakerLogger = {
    info: (obj: object | string, msg?: string) =>
      typeof obj === 'string' ? breakerLog.info(obj) : breakerLog.info(obj, msg),
  };
  // Every store and the embedder behind its breaker (packages/stores guard.ts, GuardedEmbedder).
  const breakers: CircuitBreaker[] = [];
  const reset = { resetMs: cfg.BREAKER_RESET_MS };
  // A store in the embedded database (PGlite: one in-process engine that runs one statement at a time) cannot be
  // unreachable; a query waiting behind a projector's batch is busy, not down. Its breakers count errors, with the
  // bulk timeout; the spec's 5 s applies to stores on a server (DATABASE_URL, Neo4j, Elasticsearch, Qdrant).
  const embedded = { ...reset, timeoutMs: BULK_TIMEOUT_MS };
  const onDb = database.kind === 'pglite' ? embedded : reset;
  const guard = <T>(g: GuardedStore<T>): T => {
    breakers.push(g.breaker);
    return g.port;
  };
  const { embeddings, reason } = await openEmbeddings(cfg, database, breakerLogger, guard);
  if (embeddings && 'breaker' in embeddings.embedder) breakers.push(embeddings.embedder.breaker as CircuitBreaker);
  const graph: GraphStore = guard(
    guardGraphStore(
      cfg.NEO4J_URL
        ? new Neo4jGraphStore({
            url: cfg.NEO4J_URL,
            user: cfg.NEO4J_USER,
            password: cfg.NEO4J_PASSWORD,
            database: cfg.NEO4J_DATABASE,
            namespace: cfg.NEO4J_NAMESPACE,
            entityThreshold: cfg.ENTITY_THRESHOLD,
          })
        : new PostgresGraphStore(db, { entityThreshold: cfg.ENTITY_THRESHOLD }),
      {
        name: `graph_store:${cfg.NEO4J_URL ? 'neo4j' : 'postgres'}`,
        logger: breakerLogger,
        breaker: cfg.NEO4J_URL ? reset : onDb,
      },
    ),
  );
  const wiki = new WikiStore<WikiPage, WikiStructure>(db);
  const ask = new AskStore(db);
  const stats = new StatsStore(db);
  const metrics = new RuntimeMetrics();
  // Every LLM call of the chains is counted (Prometheus, this process) and added to the usage ledger (all processes).
  const llm = instrumentLlmChains(llmChainsFromConfig(cfg, breakerLogger), (usage) => {
    metrics.recordLlm(usage);
    stats.recordLlmUsage(usage).catch((err: unknown) => breakerLog.warn({ err }, 'LLM usage not recorded'));
  });
  const webSearch = cfg.WEB_SEARCH_URL
    ? new HttpWebSearchProvider({
        url: cfg.WEB_SEARCH_URL,
        apiKey: cfg.WEB_SEARCH_API_KEY,
        logger: breakerLogger,
        breaker: reset,
      })
    : null;
  if (webSearch) breakers.push(webSearch.breaker);
  const documents = guard(guardDocumentStore(new KyselyDocumentStore(db), { logger: breakerLogger, breaker: onDb }));
  return {
    cfg,
    database,
    eventLog,
    logKind: cfg.KAFKA_BROKERS ? 'kafka' : 'embedded',
    documents,
    keyword: guard(
      guardKeywordIndex<KeywordIndex>(
        cfg.ELASTICSEARCH_URL
          ? new ElasticsearchKeywordIndex({ url: cfg.ELASTICSEARCH_URL, index: cfg.ELASTICSEARCH_INDEX })
          : new PostgresKeywordIndex(db),
        {
          name: `keyword_index:${cfg.ELASTICSEARCH_URL ? 'elasticsearch' : 'postgres'}`,
          logger: breakerLogger,
          breaker: cfg.ELASTICSEARCH_URL ? reset : onDb,
        },
      ),
    ),
    threads: new ThreadRootStore(db),
    extractor: factExtractorOf(cfg, llm.fast),
    // The fast tier's chain (primary → secondary, breakers); no LLM: the offline extractor.
    entityExtractor: llm.fast
      ? new LlmEntityExtractor({ llm: llm.fast, model: cfg.LLM_FAST_MODEL })
      : new OfflineEntityExtractor(),
    graph,
    graphKind: cfg.NEO4J_URL ? 'neo4j' : 'postgres',
    entityState: new EntityStateStore(db),
    entityBacklog: new EntityBacklog(db),
    embeddings,
    embeddingsUnavailable: reason,
    wiki,
    ask,
    connections: new ConnectionStore(db, cipher),
    sync: new SyncStore(db),
    syncSchedules: new SyncScheduleStore(db),
    wikiGenerator: embeddings
      ? new WikiGenerator({
          documents,
          vectors: embeddings.vectors,
          graph,
          wiki,
          // Channel settings: wiki_enabled off keeps the scheduler's passes away from the channel.
          wikiEnabledMany: async (channelIds) => {
            const settings = await documents.channelSettingsMany(channelIds);
            return channelIds.map((id) => settings.get(id)?.wiki_enabled !== false);
          },
          // The quality tier writes topic summaries (through its chain: primary → secondary, breakers).
          summarizer: llm.quality
            ? completionSummarizer(cfg.LLM_QUALITY_MODEL, async (messages) => {
                return (await llm.quality!.complete({ messages, temperature: 0 })).text;
              })
            : null,
        })
      : null,
    llm,
    breakers,
    webSearch,
    stats,
    metrics,
    intents: new IntentStore(db),
    deadLetters: new DeadLetterStore(db),
    writeIntents: true,
    close: async () => {
      llm.fast?.shutdown();
      llm.quality?.shutdown();
      await embeddings?.embedder.close?.();
      for (const b of breakers) b.shutdown();
      await graph.close();
      await eventLog.close();
      await database.close();
    },
  };
};

/** The embedder and vector store configuration asks for, or why there are none. */
const openEmbeddings = async (
  cfg: Config,
  database: DatabaseHandle,
  logger: BreakerLogger,
  guard: <T>(g: GuardedStore<T>) => T,
): Promise<{ embeddings: Runtime['embeddings']; reason: string | null }> => {
  const { db } = database;
  const embedder = createEmbedder(cfg, { logger });
  if (!embedder) return { embeddings: null, reason: 'EMBEDDING_PROVIDER is none' };
  try {
    // Qdrant when configured (its collection is made on first use); else pgvector beside the other stores.
    if (!cfg.QDRANT_URL) await migrateVectors(db, embedder.dim);
    await migrateEmbeddingBacklog(db);
  } catch (err) {
    return { embeddings: null, reason: `no vector store: ${err instanceof Error ? err.message : String(err)}` };
  }
  const raw: VectorStore = cfg.QDRANT_URL
    ? new QdrantVectorStore({
        url: cfg.QDRANT_URL,
        apiKey: cfg.QDRANT_API_KEY,
        collection: cfg.QDRANT_COLLECTION,
        dim: embedder.dim,
      })
    : new PgVectorStore(db, embedder.dim, {
        // Only this process writes an embedded database, so its in-memory channel matrices stay current.
        memoryIndexMaxVectors: cfg.DATABASE_URL
          ? 0
          : Math.floor((cfg.VECTOR_MEMORY_INDEX_MB * 2 ** 20) / (4 * embedder.dim)),
      });
  const vectors = guard(
    guardVectorStore(raw, {
      name: `vector_store:${cfg.QDRANT_URL ? 'qdrant' : 'pgvector'}`,
      logger,
      // pgvector in the embedded database: errors count, with the bulk timeout (see openRuntime).
      breaker: {
        resetMs: cfg.BREAKER_RESET_MS,
        ...(!cfg.QDRANT_URL && database.kind === 'pglite' ? { timeoutMs: BULK_TIMEOUT_MS } : {}),
      },
    }),
  );
  return { embeddings: { embedder, vectors, backlog: new EmbeddingBacklog(db) }, reason: null };
};

export const PROJECTORS = [
  documentsProjector,
  factsProjector,
  keywordProjector,
  embeddingsProjector,
  entitiesProjector,
  graphProjector,
  wikiProjector,
  syncJobsProjector,
  syncSchedulesProjector,
  statsProjector,
  reconcilerProjector,
  deadLettersProjector,
] as const;
export type ProjectorName = (typeof PROJECTORS)[number]['name'];
export const PROJECTOR_NAMES = PROJECTORS.map((p) => p.name) as ProjectorName[];

/** The projectors this runtime runs: embeddings only when it has an embedder and a vector store. */
export const activeProjectors = (rt: Runtime): string[] =>
  PROJECTOR_NAMES.filter(
    (n) => (n !== 'embeddings' || rt.embeddings !== null) && (n !== 'reconciler' || rt.writeIntents),
  );

type Logger = { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };

const projectorOf = (name: string) => {
  const p = PROJECTORS.find((x) => x.name === name);
  if (!p)
    throw new AtlasError('INVALID_REQUEST', `unknown projector '${name}' (one of: ${PROJECTOR_NAMES.join(', ')})`);
  return p;
};

/** The dependencies of each projector, from the runtime. */
const depsOf = (rt: Runtime, name: string): unknown => {
  if (name === 'documents') return { documents: rt.documents };
  if (name === 'keyword') return { keyword: rt.keyword };
  if (name === 'entities' || name === 'graph') return entityDeps(rt);
  if (name === 'wiki') return { wiki: rt.wiki };
  if (name === 'sync-jobs') return { sync: rt.sync };
  if (name === 'sync-schedules') return { schedules: rt.syncSchedules };
  if (name === 'stats') return { stats: rt.stats };
  if (name === 'reconciler') return { intents: rt.intents };
  if (name === 'dead-letters') return { deadLetters: rt.deadLetters };
  if (name === 'embeddings') return embeddingDeps(rt);
  return {
    extractor: rt.extractor,
    eventLog: rt.eventLog,
    threads: rt.threads,
    qualityThreshold: rt.cfg.QUALITY_THRESHOLD,
    intents: rt.writeIntents ? { vector: rt.embeddings !== null } : null,
  };
};

/** Dependencies of the embeddings projector, its backfill and its reconciler retries. */
export const embeddingDeps = (rt: Runtime) => {
  if (!rt.embeddings)
    throw new AtlasError('INVALID_REQUEST', `the embeddings projector cannot run: ${rt.embeddingsUnavailable}`);
  return { ...rt.embeddings, intentLog: rt.writeIntents ? rt.eventLog : null };
};

/**
 * What the reconcile pass needs on this runtime (runReconcilePass, POST /api/admin/reconcile): the intent store, the
 * log, each store projector's retry over its backlog (vector: none without embeddings; with nothing queued, a vector
 * store that holds every fact of the message counts as written), and whether an intent's fact set is still its
 * message's current one (the message has facts in the document store and no newer intent).
 */
export const reconcileDeps = (rt: Runtime): ReconcileDeps => ({
  intents: rt.intents,
  eventLog: rt.eventLog,
  retry: {
    vector: rt.embeddings
      ? async (intent) => {
          const deps = embeddingDeps(rt);
          const queued = await retryVectorWrite(deps, intent);
          if (queued) return queued;
          // Nothing queued: the write may have happened without a report (a backfill before write intents existed).
          const ids = await rt.intents.messageFactIds(intent.message_id);
          const stored = ids.length > 0 ? await deps.vectors.vectorsOf(ids) : new Map();
          return ids.length > 0 && stored.size === ids.length ? { outcome: 'written' } : null;
        }
      : null,
    graph: (intent) => retryGraphWrite(entityDeps(rt), intent),
  },
  isCurrent: async (intent) => {
    if (!(await rt.intents.messageHasFacts(intent.message_id))) return false;
    const { intents } = await rt.intents.list({ messageId: intent.message_id, limit: 100 });
    return !intents.some((x) => x.extracted_at && intent.extracted_at && x.extracted_at > intent.extracted_at);
  },
});

/** What dead-letter re-drives need on this runtime: the store, the log, and a wait for the dead-letters projector. */
export const redriveDeps = (rt: Runtime): RedriveDeps => ({
  deadLetters: rt.deadLetters,
  eventLog: rt.eventLog,
  // At most 5 s: the dead-letters projector may run in another process (or none).
  settled: () =>
    Promise.race([waitForProjectors(rt, ['dead-letters'], 20), new Promise<void>((r) => setTimeout(r, 5000).unref())]),
});

/**
 * What the LLM recovery re-drive needs on this runtime (llm-recovery.ts), or null when facts are not extracted by the
 * LLM (FACT_EXTRACTOR resolves to `offline`): the dead-letter store, the re-drive, and a one-token probe of the fast
 * chain.
 */
export const llmRecoveryDeps = (rt: Runtime): LlmRecoveryDeps | null => {
  const fast = rt.llm.fast;
  if (!fast || !(rt.extractor instanceof LlmFactExtractor)) return null;
  return {
    deadLetters: rt.deadLetters,
    redrive: redriveDeps(rt),
    probe: async () => {
      await fast.complete({ messages: [{ role: 'user', content: 'Reply with OK.' }], maxTokens: 1, temperature: 0 });
    },
  };
};

/** Dependencies of the entities and graph projectors and of the entity backfill. */
export const entityDeps = (rt: Runtime) => ({
  extractor: rt.entityExtractor,
  eventLog: rt.eventLog,
  state: rt.entityState,
  backlog: rt.entityBacklog,
  graph: rt.graph,
  intentLog: rt.writeIntents ? rt.eventLog : null,
});

/** Drains the entity backlog (POST /api/admin/backfill/entities). */
export const backfillRuntimeEntities = (rt: Runtime) => backfillEntities(entityDeps(rt));

/** Starts one projector as a member of its consumer group (`atlas run <projector>`). */
export const startProjector = async (rt: Runtime, name: string, log?: Logger): Promise<Subscription> => {
  const sub = await runProjector(
    rt.eventLog,
    rt.metrics.instrument(projectorOf(name) as Projector<unknown>),
    depsOf(rt, name),
    { log },
  );
  const off = recoveryBackfill(rt, name, log);
  return off ? withCleanup(sub, off) : sub;
};

/**
 * Backfill on recovery (spec "Degraded behaviour when a dependency fails"), in the process that runs the projector
 * whose writes were queued: `embeddings` drains the embedding backlog when the embedding provider's or the vector
 * store's breaker closes again; `graph` and `entities` drain the entity backlog when the graph store's or the fast
 * LLM tier's breakers close again. Returns the listener's remover, or null.
 */
const recoveryBackfill = (rt: Runtime, name: string, log?: Logger): (() => void) | null => {
  const of = (...deps: string[]) => rt.breakers.filter((b) => b.dependency !== null && deps.includes(b.dependency));
  if (name === 'embeddings' && rt.embeddings)
    return backfillOnRecovery(
      of('embedding_provider', 'vector_store'),
      () => backfillEmbeddings(depsOf(rt, name) as EmbeddingsDeps),
      log,
    );
  if (name === 'graph') return backfillOnRecovery(of('graph_store'), () => backfillRuntimeEntities(rt), log);
  if (name === 'entities' && rt.llm.fast)
    return backfillOnRecovery(
      rt.llm.fast.breakers().map((b) => b.breaker),
      () => backfillRuntimeEntities(rt),
      log,
    );
  return null;
};

/** Starts every projector of the embedded profile. */
export const startProjectors = async (rt: Runtime, log?: Logger): Promise<Subscription[]> =>
  Promise.all(activeProjectors(rt).map((n) => startProjector(rt, n, log)));

/**
 * Producers before their consumers: facts appends to atlas.facts, entities to atlas.graph, and documents
 * reads all three topics. Checked in this order, a pass that sees lag 0 everywhere proves the pipeline
 * idle (each upstream group had committed, so appended, everything before its consumers were checked).
 */
const PIPELINE_ORDER = [
  'facts',
  'entities',
  'keyword',
  'embeddings',
  'graph',
  'reconciler',
  'documents',
  'wiki',
  'sync-jobs',
  'sync-schedules',
  'stats',
  'dead-letters',
];

/** Total lag of every projector group on the topics it reads (upstream groups first). */
export const projectorLag = async (rt: Runtime, names: readonly string[] = activeProjectors(rt)): Promise<number> => {
  let total = 0;
  const ordered = [...names].sort((a, b) => PIPELINE_ORDER.indexOf(a) - PIPELINE_ORDER.indexOf(b));
  for (const name of ordered) {
    const p = projectorOf(name);
    for (const row of await rt.eventLog.lag(groupOf(p), p.topics)) total += row.lag;
  }
  return total;
};

/** Lag rows of every projector's consumer group on the topics it reads. */
export const projectorLagRows = async (rt: Runtime): Promise<LagRow[]> => {
  const rows: LagRow[] = [];
  for (const p of PROJECTORS.filter((x) => activeProjectors(rt).includes(x.name)))
    rows.push(...(await rt.eventLog.lag(groupOf(p), p.topics)));
  return rows;
};

/** Waits until the given projectors have caught up (lag 0), polling every `pollMs`. */
export const waitForProjectors = async (
  rt: Runtime,
  names: readonly string[] = activeProjectors(rt),
  pollMs = 100,
): Promise<void> => {
  while ((await projectorLag(rt, names)) > 0) await new Promise((r) => setTimeout(r, pollMs));
};

export interface ReplayResult {
  projector: string;
  /** Events the projector's group had to read again (its lag right after the reset). */
  events: number;
  seconds: number;
}

/**
 * Replays one projector (`atlas replay`): resets its consumer group's offsets on each of its topics
 * to `from`, empties its read store when replaying from the beginning, and runs it until it has caught
 * up. The projector must not be running elsewhere (Kafka refuses to reset a group with members).
 */
export const replayProjector = async (
  rt: Runtime,
  name: string,
  from: ResetTarget = 'earliest',
  log?: Logger,
): Promise<ReplayResult> => {
  const p = projectorOf(name) as Projector<unknown>;
  const t0 = performance.now();
  for (const topic of p.topics) await rt.eventLog.resetOffsets(groupOf(p), topic, from);
  if (from === 'earliest') await p.reset?.(depsOf(rt, name));
  const events = await projectorLag(rt, [name]);
  const sub = await startProjector(rt, name, log);
  try {
    await waitForProjectors(rt, [name]);
  } finally {
    await sub.stop();
  }
  return { projector: name, events, seconds: Math.round(performance.now() - t0) / 1000 };
};
