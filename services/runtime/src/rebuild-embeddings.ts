import { AtlasError } from '@atlas/core';
import { groupOf, runProjector, type Subscription } from '@atlas/eventlog';
import { embeddingsRebuildProjector } from '@atlas/projectors';
import { vectorStoreKind } from '@atlas/stores';
import type { ProjectorLogger, Runtime } from './runtime.js';

/** What a rebuild of the vector space did (`atlas replay embeddings`, the upgrade at start). */
export interface RebuildResult {
  projector: 'embeddings';
  /** The model of the new active space, and the one it replaced (null when the registry had none). */
  model: string;
  previous: string | null;
  /** Events of atlas.facts the rebuild group had to read (its lag when it started or resumed). */
  events: number;
  /** Vectors in the new space when it became active. */
  vectors: number;
  seconds: number;
}

export interface RebuildOptions {
  log?: ProjectorLogger | undefined;
  /**
   * After the switch, the rebuild keeps running this long (ms) and then catches up once more, so that facts the
   * embeddings projectors of other processes embedded into the old space before they saw the switch (they read the
   * registry every 5 s) are in the new one too. Default 12,000.
   */
  graceMs?: number;
  /** Rebuild even when the active space already holds the configured model (a fresh index of the same model). */
  force?: boolean;
  /** Polling interval of the lag (ms); default 200. */
  pollMs?: number;
  /** Set to stop a rebuild in the background (the process is stopping): it resolves null, the space stays building. */
  signal?: AbortSignal;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });

/**
 * Rebuilds the vector index in a new vector space by replaying the embeddings projector (docs/models.md "Changing the
 * model"; issue: a better model re-derives knowledge without re-fetching a message):
 * 1. a building space of the configured model is registered beside the active one (or the interrupted one resumed);
 * 2. the `embeddings-rebuild` consumer group reads atlas.facts from the beginning into it, while the active space
 *    keeps serving search and the embeddings projector keeps it current;
 * 3. once the group has caught up (lag 0), one registry transaction makes it the active space: queries embedded from
 *    then on use the new model and read the new space; a query embedded before reads the old one (VectorSpaces);
 * 4. the group keeps running for `graceMs` and catches up again, then stops; the old space's index is dropped.
 * Returns null when nothing was to do (the active space holds the configured model and not `force`) or when stopped
 * through `signal`. The runtime must have embeddings. Errors: INVALID_REQUEST without embeddings; what the log and
 * the stores throw (the building space stays registered: the next run resumes it).
 */
export const rebuildVectorSpace = async (rt: Runtime, opts: RebuildOptions = {}): Promise<RebuildResult | null> => {
  const spaces = rt.vectorSpaces;
  if (!spaces || !rt.embeddings)
    throw new AtlasError(
      'INVALID_REQUEST',
      `no vector spaces to rebuild: ${rt.embeddingsUnavailable ?? 'no embeddings'}`,
    );
  await spaces.load();
  const previous = spaces.active().space.model;
  if (!opts.force && !spaces.needsRebuild() && !spaces.building()) return null;
  const t0 = performance.now();
  const { handle, fresh } = await spaces.beginBuilding(vectorStoreKind(rt.cfg), rt.cfg.QDRANT_COLLECTION);
  const p = embeddingsRebuildProjector;
  const deps = { embedder: spaces.target, vectors: handle.store };
  if (fresh) {
    for (const topic of p.topics) await rt.eventLog.resetOffsets(groupOf(p), topic, 'earliest');
    await p.reset!(deps);
  }
  const lag = async () => (await rt.eventLog.lag(groupOf(p), p.topics)).reduce((n, r) => n + r.lag, 0);
  const caughtUp = async () => {
    while (!opts.signal?.aborted && (await lag()) > 0) await sleep(opts.pollMs ?? 200, opts.signal);
    return !opts.signal?.aborted;
  };
  const events = await lag();
  opts.log?.info?.(
    { space: handle.space.id, model: spaces.target.id, events },
    `vector space ${handle.space.id}: rebuilding ${spaces.target.id} from ${events} events of ${p.topics.join(', ')}; search serves ${previous} until it has caught up`,
  );
  let sub: Subscription | null = await runProjector(rt.eventLog, p, deps, { log: opts.log, slicer: rt.slicer });
  try {
    if (!(await caughtUp())) return null;
    const retired = await spaces.activate(handle.space.id);
    // Every wiki's clusters are of the old model's vectors: marked stale, their next runs are full (generateChannelWiki).
    await rt.wiki.markAllStale();
    const vectors = await handle.store.count();
    opts.log?.info?.(
      { space: handle.space.id, model: spaces.target.id, vectors },
      `vector space ${handle.space.id}: now active (${spaces.target.id}, ${vectors} vectors)${retired ? `; ${retired.space.model} retired` : ''}`,
    );
    await sleep(opts.graceMs ?? 12_000, opts.signal);
    if (!(await caughtUp())) return null;
    await sub.stop();
    sub = null;
    await spaces.dropRetired();
    return {
      projector: 'embeddings',
      model: spaces.target.id,
      previous,
      events,
      vectors,
      seconds: Math.round(performance.now() - t0) / 1000,
    };
  } finally {
    await sub?.stop();
  }
};

/**
 * Starts rebuildVectorSpace in the background when the active space holds another model than the configured one (or
 * a rebuild was interrupted): the upgrade of a data dir whose model changed. Returns a Subscription-like handle whose
 * stop() ends it (the building space stays registered; the next start resumes it), or null when nothing is due.
 */
export const startVectorSpaceRebuild = (
  rt: Runtime,
  log?: ProjectorLogger,
): { group: string; assignment: () => []; stop: () => Promise<void>; done: Promise<RebuildResult | null> } | null => {
  const spaces = rt.vectorSpaces;
  if (!spaces || (!spaces.needsRebuild() && !spaces.building())) return null;
  const abort = new AbortController();
  const done = rebuildVectorSpace(rt, { log, signal: abort.signal }).catch((err: unknown) => {
    log?.error({ err }, 'vector space rebuild failed (it resumes at the next start)');
    return null;
  });
  return {
    group: groupOf(embeddingsRebuildProjector),
    assignment: () => [],
    done,
    stop: async () => {
      abort.abort();
      await done;
    },
  };
};
