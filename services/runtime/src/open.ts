import path from 'node:path';
import { AtlasError, type BreakerLogger, BreakerSet, type Config } from '@atlas/core';
import { type EmbeddedLogOptions, eventLogKind, TimeSlicedDialect, TimeSlicer } from '@atlas/eventlog';
import {
  type FactExtractor,
  LlmEntityExtractor,
  LlmFactExtractor,
  OfflineEntityExtractor,
  OfflineFactExtractor,
} from '@atlas/pipeline';
import { instrumentLlmChains, RuntimeMetrics, WikiGenerator } from '@atlas/projectors';
import { HttpWebSearchProvider, type LlmChains, llmChainsFromConfig } from '@atlas/providers';
import { CredentialKeyring, estimateLlmCostUsd, type GuardedStore, loadMasterKey, openDatabase } from '@atlas/stores';
import { completionSummarizer } from '@atlas/wiki';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { auditSink, stderrAuditLog } from './audit-wiring.js';
import { lifecycleGraphSource } from './lifecycle-wiki.js';
import { migrateStores, openEventLog, openStores, type RuntimeStores } from './open-stores.js';
import type { Runtime, RuntimeStep } from './runtime.js';

/** `x` with a checkpoint of `slicer` before each `extract` (the same object otherwise: instanceof holds). */
const slicedExtractor = <T extends { extract(input: never): Promise<unknown> }>(x: T, slicer: TimeSlicer): T => {
  const sliced = Object.create(x) as T;
  const extract = x.extract.bind(x) as (input: unknown) => Promise<unknown>;
  Object.defineProperty(sliced, 'extract', {
    value: async (input: unknown) => {
      await slicer.checkpoint();
      return extract(input);
    },
  });
  return sliced;
};

/** Where the embedded database lives inside ATLAS_DATA_DIR. */
export const pgliteDir = (cfg: Config): string =>
  cfg.ATLAS_DATA_DIR.startsWith('memory://') ? 'memory://' : path.join(cfg.ATLAS_DATA_DIR, 'pglite');

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

/**
 * Opens the database (PGlite in ATLAS_DATA_DIR, or PostgreSQL when DATABASE_URL is set), applies every store's
 * migrations, registers the Avro schemas and creates the topics, then the stores and providers. `onStep` hears each
 * step as it starts. The migrations, the schema registration and the topics run as background work of the runtime's
 * TimeSlicer (PROJECTION_SLICE_MS): the event loop gets a turn at least every slice meanwhile; opening PGlite itself is
 * one synchronous step.
 * `createCredentialKey` (`atlas start`, `atlas run`): create the data dir's credential master key now if there is none,
 * and say so once on stderr; otherwise it is created on first use (the first credential stored).
 * Errors: AtlasError INVALID_REQUEST for a configuration that cannot run (FACT_EXTRACTOR=llm without an LLM), and
 * whatever opening the database or a migration throws.
 */
export const openRuntime = async (
  cfg: Config,
  logOptions: EmbeddedLogOptions = {},
  opts: { onStep?: (step: RuntimeStep) => void; createCredentialKey?: boolean } = {},
): Promise<Runtime> => {
  const slicer = new TimeSlicer(cfg.PROJECTION_SLICE_MS);
  opts.onStep?.('opening the database');
  const database = await openDatabase({
    url: cfg.DATABASE_URL,
    dataDir: pgliteDir(cfg),
    wrapDialect: (dialect) => new TimeSlicedDialect(dialect, slicer),
  });
  opts.onStep?.('migrating');
  // As background work: the migrations give the event loop its turns (`atlas start` answers /api/health meanwhile).
  await slicer.background(() => migrateStores(cfg, database.db));
  opts.onStep?.('registering event schemas');
  const eventLog = await openEventLog(cfg, database.db, slicer, logOptions);
  opts.onStep?.('opening the stores');
  const { log, logger } = breakerLogOf(cfg);
  // The master key of stored credentials: CREDENTIAL_MASTER_KEY, else the data dir's key file (generated on first
  // use, said once), else (memory://) a key of this process; the keyring of per-connection data keys beside it.
  const masterKey = loadMasterKey(cfg, {
    create: opts.createCredentialKey,
    onGenerated: (file) =>
      log.warn(
        { path: file },
        `generated a credential master key at ${file} (owner-only): it decrypts the stored connection credentials; back it up with the data dir, or set CREDENTIAL_MASTER_KEY (docs/credentials.md)`,
      ),
  });
  const keyring = CredentialKeyring.open(cfg.ATLAS_DATA_DIR, masterKey);
  if (keyring.entries().length > 0 && keyring.storedMasterKeyId !== keyring.masterKeyId)
    log.warn(
      { stored_key_id: keyring.storedMasterKeyId, key_id: keyring.masterKeyId },
      'the credential keyring is wrapped under another master key: stored connection credentials cannot be read (restore the key, or re-enter the credentials)',
    );
  // Every store, the embedder, the LLM providers and web search behind a breaker of this runtime's set.
  const breakers = new BreakerSet();
  const guard = <T>(g: GuardedStore<T>): T => {
    breakers.add(g.breaker);
    return g.port;
  };
  // Legacy v1 envelopes were only ever written under CREDENTIAL_MASTER_KEY (or the former public key): read with it.
  const legacyMaster = masterKey.source === 'env' ? masterKey.cipher : undefined;
  const stores = await openStores(cfg, database, guard, logger, keyring, legacyMaster);
  // Legacy envelopes (directly under CREDENTIAL_MASTER_KEY) move to data keys on first start; orphan data keys go.
  const moved = await slicer.background(() => stores.connections.migrateEnvelopes());
  if (moved.migrated > 0 || moved.unreadable > 0)
    log.warn(
      { ...moved },
      `connection credentials: ${moved.migrated} moved to per-connection data keys, ${moved.unreadable} unreadable under the master key (re-enter those credentials)`,
    );
  const metrics = new RuntimeMetrics();
  // Every LLM call of the chains is counted (Prometheus, this process) and added to the usage ledger (all processes).
  const llm = instrumentLlmChains(llmChainsFromConfig(cfg, logger), (usage) => {
    metrics.recordLlm(usage);
    stores.stats.recordLlmUsage(usage).catch((err: unknown) => log.warn({ err }, 'LLM usage not recorded'));
  });
  for (const chain of [llm.fast, llm.quality]) breakers.add(...(chain?.breakers().map((l) => l.breaker) ?? []));
  const webSearch = cfg.WEB_SEARCH_URL
    ? new HttpWebSearchProvider({
        url: cfg.WEB_SEARCH_URL,
        apiKey: cfg.WEB_SEARCH_API_KEY,
        logger,
        breaker: { resetMs: cfg.BREAKER_RESET_MS },
      })
    : null;
  if (webSearch) breakers.add(webSearch.breaker);
  // REDIS_URL: the shared store of the API's rate limits (several API processes count together); connects on first use.
  const redis = cfg.REDIS_URL
    ? new Redis(cfg.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: true })
    : null;
  redis?.on('error', () => undefined); // the limiter's in-memory insurance answers while Redis is away
  // The API's audit trail (docs/access.md "Audit trail"): entries appended without waiting; flushed before closing.
  const audit = auditSink(eventLog, stderrAuditLog(cfg.LOG_LEVEL));
  return {
    cfg,
    database,
    eventLog,
    logKind: eventLogKind(cfg),
    ...stores,
    // CPU work between queries (the offline extractors): a checkpoint before each message's extraction.
    extractor: slicedExtractor(factExtractorOf(cfg, llm.fast), slicer),
    // The fast tier's chain (primary → secondary, breakers); no LLM: the offline extractor.
    entityExtractor: slicedExtractor(
      llm.fast ? new LlmEntityExtractor({ llm: llm.fast, model: cfg.LLM_FAST_MODEL }) : new OfflineEntityExtractor(),
      slicer,
    ),
    wikiGenerator: wikiGeneratorOf(cfg, stores, llm),
    llm,
    breakers,
    webSearch,
    metrics,
    writeIntents: true,
    credentialMasterKey: masterKey,
    slicer,
    redis,
    auditSink: audit,
    close: async () => {
      await audit.flush(); // the entries of the last requests reach the log before it closes
      redis?.disconnect();
      llm.fast?.shutdown();
      llm.quality?.shutdown();
      await stores.vectorSpaces?.close();
      breakers.shutdown();
      await stores.graph.close();
      await eventLog.close();
      await database.close();
    },
  };
};

/** Breaker openings and closings are info log entries (spec "Alerts (operational)"), JSON lines on stderr (pino). */
const breakerLogOf = (cfg: Config): { log: pino.Logger; logger: BreakerLogger } => {
  const log = pino({ level: cfg.LOG_LEVEL, base: { component: 'breaker' } }, pino.destination(2));
  const logger = {
    info: (obj: object | string, msg?: string) => (typeof obj === 'string' ? log.info(obj) : log.info(obj, msg)),
  };
  return { log, logger };
};

/**
 * Wiki generation over the stores (null without embeddings: topics are clusters of fact vectors), with topic
 * summaries by the quality tier when there is one (through its chain: primary → secondary, breakers).
 */
const wikiGeneratorOf = (cfg: Config, stores: RuntimeStores, llm: LlmChains): WikiGenerator | null => {
  const { documents, embeddings, graph, wiki } = stores;
  if (!embeddings) return null;
  const quality = llm.quality;
  return new WikiGenerator({
    documents,
    vectors: embeddings.vectors,
    // The model of the active vector space, read from the registry at each run (a switch made by another process is
    // followed before the run reads vectors): it picks the clustering's thresholds (clusterParamsOf in @atlas/wiki).
    embedderId: async () => {
      await stores.vectorSpaces?.refresh();
      return embeddings.embedder.id;
    },
    // Decision entities with their lifecycle state (the Decisions page shows it: docs/decisions.md).
    graph: lifecycleGraphSource(graph, stores.lifecycle),
    wiki,
    // Channel settings: wiki_enabled off keeps the scheduler's passes away from the channel.
    wikiEnabledMany: async (channelIds) => {
      const settings = await documents.channelSettingsMany(channelIds);
      return channelIds.map((id) => settings.get(id)?.wiki_enabled !== false);
    },
    summarizer: quality
      ? completionSummarizer(cfg.LLM_QUALITY_MODEL, async (messages) => {
          const r = await quality.complete({ messages, temperature: 0 });
          // Priced as the usage ledger prices it: the wiki version records its generation_cost_usd.
          const costUsd = estimateLlmCostUsd(r.model, r.usage.prompt_tokens, r.usage.completion_tokens);
          return { text: r.text, costUsd };
        })
      : null,
  });
};
