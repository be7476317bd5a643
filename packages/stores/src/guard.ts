import {
  type BreakerLogger,
  type CircuitBreaker,
  type DependencyName,
  dependencyBreaker,
  type GuardedMethod,
  guardPort,
} from '@atlas/core';
import type { DocumentStore } from './documents/port.js';
import type { GraphStore } from './graph/port.js';
import type { KeywordIndex } from './keyword/port.js';
import type { VectorStore } from './vector/port.js';

/**
 * Timeout (ms) of a store call that moves a projector batch or a whole channel (bulk writes, truncates, channel
 * deletes, whole-channel reads for the wiki or an import plan), and of a cold start (the first search of a channel
 * whose in-memory matrix is not loaded yet). The spec's 5 s is the timeout of a query; a batch of thousands of facts
 * on the embedded database can take longer without anything being wrong, and such a call timing out would count
 * against the breaker and pause ingestion for nothing. An unreachable server still fails these calls at once
 * (connection refused, terminated), which counts as usual.
 */
export const BULK_TIMEOUT_MS = 120_000;

const BULK: GuardedMethod = { timeoutMs: BULK_TIMEOUT_MS };

/** A guarded store: the port to use, and its breaker (for health, listeners and shutdown). */
export interface GuardedStore<T> {
  port: T;
  breaker: CircuitBreaker;
}

export interface GuardStoreOptions {
  /** The breaker's name, e.g. `graph_store:neo4j` (default: the dependency name). */
  name?: string;
  /** Gets the breaker's openings and closings at info level (spec "Alerts": an info log entry). */
  logger?: BreakerLogger | null;
  /** Breaker settings for tests (spec defaults otherwise: 3 failures, 30 s streak, 30 s reset, the timeout below). */
  breaker?: { timeoutMs?: number; resetMs?: number; streakMs?: number; failureThreshold?: number };
}

const guarded = <T extends object>(
  dependency: DependencyName,
  store: T,
  opts: GuardStoreOptions,
  methods: { [K in keyof T]?: GuardedMethod },
  timeoutFor?: (method: string, args: readonly unknown[]) => number | undefined,
): GuardedStore<T> => {
  const breaker = dependencyBreaker(dependency, {
    name: opts.name ?? dependency,
    logger: opts.logger ?? null,
    ...opts.breaker,
  });
  return {
    port: guardPort(store, breaker, { errorCode: 'STORE_UNAVAILABLE', methods, ...(timeoutFor ? { timeoutFor } : {}) }),
    breaker,
  };
};

/**
 * The vector store behind its breaker (spec: vector store, 5 s): searches, similarities and counts at 5 s; writes,
 * deletes and `vectorsOf` (the wiki reads a channel's vectors) at BULK_TIMEOUT_MS; a search of a channel that is not
 * warm yet (VectorStore.isWarm false: its matrix loads first) at BULK_TIMEOUT_MS too; `warm` (start-up loading) and
 * `isWarm` unguarded. Every failure is AtlasError STORE_UNAVAILABLE (retriable).
 */
export const guardVectorStore = (store: VectorStore, opts: GuardStoreOptions = {}): GuardedStore<VectorStore> =>
  guarded(
    'vector_store',
    store,
    opts,
    {
      truncate: BULK,
      replaceForMessages: BULK,
      deleteChannel: BULK,
      vectorsOf: BULK,
      warm: 'bypass',
      isWarm: 'bypass',
    },
    (method, args) => {
      if ((method !== 'search' && method !== 'matches') || !store.isWarm) return undefined;
      const q = args[0] as { channelId?: string | null } | undefined;
      return store.isWarm(q?.channelId ?? null) ? undefined : BULK_TIMEOUT_MS;
    },
  );

/**
 * The graph store behind its breaker (spec: graph store, 5 s): reads and `ping` at 5 s; applyMessageGraphs,
 * truncate and deleteChannel at BULK_TIMEOUT_MS; `close` unguarded. Failures: STORE_UNAVAILABLE (retriable), which
 * the graph projector answers by queueing the writes for backfill and the query service by answering semantically.
 */
export const guardGraphStore = (store: GraphStore, opts: GuardStoreOptions = {}): GuardedStore<GraphStore> =>
  guarded('graph_store', store, opts, {
    applyMessageGraphs: BULK,
    truncate: BULK,
    deleteChannel: BULK,
    close: 'bypass',
  });

/**
 * The keyword index behind its breaker (the document store's 5 s: Postgres full text lives there, Elasticsearch is
 * a store of its own): search at 5 s; replaceForMessages, truncate, deleteChannel at BULK_TIMEOUT_MS; adapter helpers
 * (`close`, `drop`, `ensureIndex`) unguarded. Failures: STORE_UNAVAILABLE (retriable).
 */
export const guardKeywordIndex = <T extends KeywordIndex>(store: T, opts: GuardStoreOptions = {}): GuardedStore<T> =>
  guarded('keyword_index', store, opts, {
    replaceForMessages: BULK,
    truncate: BULK,
    deleteChannel: BULK,
    ...({ close: 'bypass', drop: 'bypass', ensureIndex: 'bypass' } as Record<string, GuardedMethod>),
  } as { [K in keyof T]?: GuardedMethod });

/** Document store methods that move a batch or a whole channel (BULK_TIMEOUT_MS); every other call has 5 s. */
const DOCUMENT_BULK = [
  'truncate',
  'upsertChannel',
  'upsertMessages',
  'markMessageDeleted',
  'replaceFacts',
  'replaceGraphLinks',
  'deleteChannelData',
  'applyChannelSettings',
  'messagesBefore',
  'messageHashes',
  'getMessagesIn',
  'getMessages', // the wiki reads every source message of a channel at once
  'channelsWithRetention',
] as const;

/**
 * The document store behind its breaker (spec: document store, 5 s; critical: down, the system pauses): reads of
 * the query service at 5 s, the projectors' writes and whole-channel reads (DOCUMENT_BULK) at BULK_TIMEOUT_MS.
 * Failures: STORE_UNAVAILABLE (retriable; projectors retry their batch with backoff, routes answer 503).
 */
export const guardDocumentStore = <T extends DocumentStore>(store: T, opts: GuardStoreOptions = {}): GuardedStore<T> =>
  guarded(
    'document_store',
    store,
    opts,
    Object.fromEntries(DOCUMENT_BULK.map((m) => [m, BULK])) as { [K in keyof T]?: GuardedMethod },
  );
