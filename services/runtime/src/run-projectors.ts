import { groupOf, type Projector, type ResetTarget, runProjector, type Subscription } from '@atlas/eventlog';
import { backfillEmbeddings, type EmbeddingsDeps } from '@atlas/projectors';
import { projectorLag, waitForProjectors } from './lag.js';
import { backfillRuntimeEntities, depsOf } from './projector-deps.js';
import { rebuildVectorSpace, startVectorSpaceRebuild } from './rebuild-embeddings.js';
import { backfillOnRecovery, withCleanup } from './recovery.js';
import { activeProjectors, type ProjectorLogger, projectorOf, type Runtime } from './runtime.js';
import { startRuntimeWikiWorker } from './wiki-wiring.js';

/** Starts one projector as a member of its consumer group (`atlas run <projector>`). */
export const startProjector = async (rt: Runtime, name: string, log?: ProjectorLogger): Promise<Subscription> => {
  const sub = await runProjector(
    rt.eventLog,
    rt.metrics.instrument(projectorOf(name) as Projector<unknown>),
    depsOf(rt, name),
    { log, slicer: rt.slicer }, // background work: the API beside it is served between slices
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
const recoveryBackfill = (rt: Runtime, name: string, log?: ProjectorLogger): (() => void) | null => {
  const of = (...deps: string[]) => rt.breakers.ofDependency(...deps);
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
export const startProjectors = async (rt: Runtime, log?: ProjectorLogger): Promise<Subscription[]> => {
  const subs = await Promise.all(activeProjectors(rt).map((n) => startProjector(rt, n, log)));
  // The model changed (or a rebuild was interrupted): the vector index is rebuilt beside the serving one.
  const rebuild = activeProjectors(rt).includes('embeddings') ? startVectorSpaceRebuild(rt, log) : null;
  if (rebuild) subs.push(rebuild);
  // The wiki worker runs the wiki's refresh and rebuild jobs beside the wiki projector.
  const wikiWorker = activeProjectors(rt).includes('wiki') ? await startRuntimeWikiWorker(rt, log) : null;
  return wikiWorker ? [...subs, wikiWorker] : subs;
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
 * `embeddings` is replayed into a new vector space beside the serving one instead (rebuildVectorSpace, from the
 * beginning whatever `from` says): search keeps answering, and the embeddings projectors may keep running.
 */
export const replayProjector = async (
  rt: Runtime,
  name: string,
  from: ResetTarget = 'earliest',
  log?: ProjectorLogger,
): Promise<ReplayResult> => {
  if (name === 'embeddings') {
    // A new vector space beside the serving one, switched to once caught up (rebuildVectorSpace).
    const r = await rebuildVectorSpace(rt, { force: true, log });
    return { projector: name, events: r?.events ?? 0, seconds: r?.seconds ?? 0 };
  }
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
