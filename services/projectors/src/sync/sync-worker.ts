import { setMaxListeners } from 'node:events';
import { type AnyStoredEvent, type SyncCancelled, type SyncJobUpdated, type SyncRequested, TOPICS } from '@atlas/core';
import { groupOf, type Subscription } from '@atlas/eventlog';
import type { SyncJobRecord } from '@atlas/stores';
import PQueue from 'p-queue';
import { pause } from './stage-wait.js';
import { JobCancelled, runSyncJob, type SyncJobDeps, WorkerShutdown } from './sync-job.js';
import { syncJobsProjector } from './sync-jobs.js';

/** The sync worker's consumer group on atlas.commands. */
export const SYNC_WORKER_GROUP = 'atlas.sync-worker';

export interface SyncWorkerOptions {
  /** Jobs run at once (different channels; one channel's jobs run one after another). Default 2. */
  concurrency?: number;
  /** How long start waits for the sync-jobs projector to catch up before resuming open jobs, ms (default 30 s). */
  recoveryWaitMs?: number;
}

export interface SyncWorker {
  /** Job ids queued or running in this worker. */
  jobs(): string[];
  /** Resolves when no job is queued or running here. */
  idle(): Promise<void>;
  /**
   * Stops taking commands and interrupts running jobs without ending them (they stay `running` in the store with
   * their last cursor, so the next worker resumes them).
   */
  stop(): Promise<void>;
}

/** A job record for a command the store has not folded yet (a fresh, queued job). */
const recordOf = (c: SyncRequested): SyncJobRecord => ({
  job_id: c.jobId,
  channel_id: c.channelId,
  connection_id: c.connectionId,
  platform: c.platform,
  force: c.force,
  estimated_messages: c.estimatedMessages,
  requested_by: c.requestedBy,
  requested_at: c.requestedAt,
  cancel_requested_at: null,
  seq: 0,
  status: 'queued',
  stage: null,
  total_messages: c.estimatedMessages,
  processed_messages: 0,
  failing_messages: 0,
  percentage: 0,
  started_at: c.requestedAt,
  estimated_completion: null,
  completed_at: null,
  cursor: null,
  messages_synced: 0,
  facts_extracted: 0,
  entities_created: 0,
  error: null,
  updated_at: c.requestedAt,
});

/**
 * Starts the sync worker (docs/sync.md "Jobs"): a member of the consumer group `atlas.sync-worker` on atlas.commands.
 * SyncRequested queues a job (run by runSyncJob, at most `concurrency` at once, one at a time per channel; the command
 * is committed once queued, so a SyncCancelled behind it on the channel's partition is seen while the job runs);
 * SyncCancelled aborts the job (or ends a queued one) as `cancelled`. On start it resumes every job the store shows
 * queued or running (after waiting for the sync-jobs projector), from the job's last persisted cursor.
 */
export const startSyncWorker = async (deps: SyncJobDeps, opts: SyncWorkerOptions = {}): Promise<SyncWorker> => {
  const queue = new PQueue({ concurrency: opts.concurrency ?? 2 });
  const controllers = new Map<string, AbortController>();
  const tails = new Map<string, Promise<void>>();
  const shutdown = new AbortController();
  // Jobs this worker ran to an end: a repeated SyncRequested of one job (two schedulers firing one due time) is not
  // run again even before the store has folded the job's end. The most recent 10,000 are kept.
  const ended = new Set<string>();

  /** Ends a job that is not running here as cancelled (one more SyncJobUpdated after the store's seq). */
  const endCancelled = async (job: SyncJobRecord, at: string) => {
    const data: SyncJobUpdated = {
      jobId: job.job_id,
      channelId: job.channel_id,
      seq: job.seq + 1,
      status: 'cancelled',
      stage: job.stage,
      totalMessages: job.total_messages,
      processedMessages: job.processed_messages,
      failingMessages: job.failing_messages,
      percentage: job.percentage,
      startedAt: job.started_at ?? at,
      estimatedCompletion: null, // a finished job has no estimate (docs/conventions.md)
      completedAt: at,
      cursor: job.cursor,
      messagesSynced: job.messages_synced,
      factsExtracted: job.facts_extracted,
      entitiesCreated: job.entities_created,
      error: null,
      updatedAt: at,
    };
    await deps.eventLog.append(TOPICS.syncJobs, [{ type: 'SyncJobUpdated', key: job.channel_id, data }]);
  };

  const enqueue = (job: SyncJobRecord) => {
    if (controllers.has(job.job_id) || ended.has(job.job_id) || shutdown.signal.aborted) return;
    const ctrl = new AbortController();
    controllers.set(job.job_id, ctrl);
    const prev = tails.get(job.channel_id) ?? Promise.resolve();
    const run = prev.then(() =>
      queue.add(async () => {
        if (shutdown.signal.aborted) return;
        if (ctrl.signal.aborted) return endCancelled(job, new Date().toISOString());
        // The store may hold a later state than the command (a redelivered command of a job resumed or done).
        const latest = (await deps.sync.getJob(job.job_id)) ?? job;
        if (latest.status !== 'queued' && latest.status !== 'running') return;
        const signal = AbortSignal.any([ctrl.signal, shutdown.signal]);
        setMaxListeners(0, signal); // every platform call of the job listens to it, some in parallel
        await runSyncJob(latest.seq >= job.seq ? latest : job, deps, signal);
      }),
    );
    const tail = run
      .then(() => {
        if (shutdown.signal.aborted) return; // interrupted, not ended: the next worker resumes it
        ended.add(job.job_id);
        if (ended.size > 10_000) ended.delete(ended.values().next().value!);
      })
      .catch((err: unknown) => deps.log?.warn({ jobId: job.job_id, err }, 'sync worker: job crashed'))
      .finally(() => {
        controllers.delete(job.job_id);
        if (tails.get(job.channel_id) === tail) tails.delete(job.channel_id);
      });
    tails.set(job.channel_id, tail);
  };

  const cancel = async (c: SyncCancelled) => {
    const ctrl = controllers.get(c.jobId);
    if (ctrl) return ctrl.abort(new JobCancelled(`job ${c.jobId} cancelled`));
    const job = await deps.sync.getJob(c.jobId);
    if (job && (job.status === 'queued' || job.status === 'running')) await endCancelled(job, c.cancelledAt);
  };

  const handle = async (batch: AnyStoredEvent[]) => {
    for (const e of batch) {
      if (e.type === 'SyncRequested') enqueue(recordOf(e.data));
      else if (e.type === 'SyncCancelled') await cancel(e.data);
    }
  };

  // Resume what a stopped worker left open, once the store has folded everything up to now.
  const until = Date.now() + (opts.recoveryWaitMs ?? 30_000);
  const projected = async () =>
    (await deps.eventLog.lag(groupOf(syncJobsProjector), syncJobsProjector.topics)).every((r) => r.lag === 0);
  while (!(await projected()) && Date.now() < until) await pause(50, shutdown.signal);
  for (const job of await deps.sync.openJobs()) {
    if (job.cancel_requested_at) await endCancelled(job, job.cancel_requested_at);
    else enqueue(job);
  }

  const sub: Subscription = await deps.eventLog.subscribe({
    group: SYNC_WORKER_GROUP,
    topics: [TOPICS.commands],
    handler: handle,
    onError: (err) => deps.log?.warn({ err }, 'sync worker: command batch will be retried'),
  });

  return {
    jobs: () => [...controllers.keys()],
    idle: async () => {
      while (tails.size > 0) await Promise.all([...tails.values()]);
    },
    stop: async () => {
      shutdown.abort(new WorkerShutdown('sync worker stopping'));
      await sub.stop();
      // No queue.clear(): a cleared task's promise never settles, so its channel's tail would hold this stop forever.
      // A queued task starts, sees the shutdown and returns, leaving its job open for the next worker.
      await Promise.all([...tails.values()]);
    },
  };
};
