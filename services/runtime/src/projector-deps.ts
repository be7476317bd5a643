import { AtlasError } from '@atlas/core';
import { LlmFactExtractor } from '@atlas/pipeline';
import {
  backfillEntities,
  type ChannelCommandDeps,
  type LlmRecoveryDeps,
  type ReconcileDeps,
  type RedriveDeps,
  type RetentionDeps,
  retryGraphWrite,
  retryVectorWrite,
} from '@atlas/projectors';
import { waitForProjectors } from './lag.js';
import { activeProjectors, type Runtime } from './runtime.js';

/** The dependencies of the projector `name` on this runtime (the facts projector's for a name not listed). */
export const depsOf = (rt: Runtime, name: string): unknown => {
  if (name === 'documents') return { documents: rt.documents };
  if (name === 'keyword') return { keyword: rt.keyword };
  if (name === 'entities' || name === 'graph') return entityDeps(rt);
  if (name === 'wiki') return { wiki: rt.wiki };
  if (name === 'sync-jobs') return { sync: rt.sync };
  if (name === 'sync-schedules') return { schedules: rt.syncSchedules };
  if (name === 'stats') return { stats: rt.stats };
  if (name === 'lifecycle') return { lifecycle: rt.lifecycle };
  if (name === 'reconciler') return { intents: rt.intents };
  if (name === 'dead-letters') return { deadLetters: rt.deadLetters };
  if (name === 'channel-access') return { access: rt.access };
  if (name === 'audit') return { audit: rt.audit };
  if (name === 'embeddings') return embeddingDeps(rt);
  return {
    extractor: rt.extractor,
    eventLog: rt.eventLog,
    threads: rt.threads,
    qualityThreshold: rt.cfg.QUALITY_THRESHOLD,
    intents: rt.writeIntents ? { vector: rt.embeddings !== null } : null,
  };
};

/** What channel commands read on this runtime: its log and the projectors it runs (activeProjectors). */
export const channelCommandDeps = (rt: Runtime): ChannelCommandDeps => ({
  eventLog: rt.eventLog,
  activeProjectors: () => activeProjectors(rt),
});

/** What the retention pass reads on this runtime: its documents, its log and the projectors it runs. */
export const retentionDeps = (rt: Runtime): RetentionDeps => ({ ...channelCommandDeps(rt), documents: rt.documents });

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
