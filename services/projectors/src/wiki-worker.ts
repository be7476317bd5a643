import { type AnyStoredEvent, AtlasError, TOPICS, type WikiRefreshRequested } from '@atlas/core';
import type { EventLog, Subscription } from '@atlas/eventlog';
import type { WikiJobRecord, WikiJobStore } from '@atlas/stores';
import type { WikiGenerateResult } from '@atlas/wiki';

/** The wiki worker's consumer group on atlas.commands. */
export const WIKI_WORKER_GROUP = 'atlas.wiki-worker';

/** What the wiki worker reads and writes. */
export interface WikiWorkerDeps {
  eventLog: Pick<EventLog, 'subscribe'>;
  /** The job history read model (WikiJobStore). */
  jobs: Pick<WikiJobStore, 'save' | 'job' | 'openJobs'>;
  /** The wiki store's generation flag (spec "Wiki" status is_generating). */
  wiki: { setGenerating(channelId: string, generating: boolean): Promise<void> };
  /** Generates one channel's wiki and saves it as a new version (WikiGenerator.generate). */
  generate(channelId: string, mode: 'full' | 'incremental'): Promise<WikiGenerateResult>;
  log?: { warn(obj: object, msg: string): void };
  now?: () => Date;
}

/** A running wiki worker: a member of its consumer group (a Subscription) that also runs the jobs. */
export interface WikiWorker extends Subscription {
  /** Resolves when no job is queued or running in this worker. */
  idle(): Promise<void>;
  /** Stops taking commands and waits for the running jobs; queued ones stay queued for the next worker. */
  stop(): Promise<void>;
}

/** A job record for a command (a fresh, queued job). */
const queuedOf = (c: WikiRefreshRequested): WikiJobRecord => ({
  job_id: c.jobId,
  channel_id: c.channelId,
  mode: c.mode,
  status: 'queued',
  requested_by: c.requestedBy,
  requested_at: c.requestedAt,
  started_at: null,
  completed_at: null,
  version_number: null,
  skipped: false,
  facts: 0,
  pages_rebuilt: 0,
  duration_ms: null,
  error: null,
});

/**
 * Starts the wiki worker (spec "Wiki": refresh and rebuild jobs): a member of the consumer group `atlas.wiki-worker`
 * on atlas.commands. A WikiRefreshRequested records its job as `queued` in the job history (WikiJobStore) and runs
 * it, one job at a time per channel: `running` (is_generating set) → `completed` with the version it saved, or
 * `failed` with the error's code and message. A redelivered command of a job already recorded is not run twice. On
 * start it resumes every job the history shows queued or running (a process that stopped mid-run runs it again).
 */
export const startWikiWorker = async (deps: WikiWorkerDeps): Promise<WikiWorker> => {
  const now = deps.now ?? (() => new Date());
  const tails = new Map<string, Promise<void>>();
  const taken = new Set<string>();
  let stopping = false;

  const run = async (job: WikiJobRecord) => {
    if (stopping) return; // stays queued: the next worker runs it
    const started = { ...job, status: 'running' as const, started_at: now().toISOString() };
    await deps.wiki.setGenerating(job.channel_id, true);
    await deps.jobs.save(started);
    try {
      const r = await deps.generate(job.channel_id, job.mode);
      // An incremental run that found nothing changed returns before touching the flag set above.
      if (r.skipped) await deps.wiki.setGenerating(job.channel_id, false);
      await deps.jobs.save({
        ...started,
        mode: r.mode,
        status: 'completed',
        completed_at: now().toISOString(),
        version_number: r.version,
        skipped: r.skipped === true,
        facts: r.facts,
        pages_rebuilt: r.pagesRebuilt,
        duration_ms: Math.round(r.durationMs),
      });
    } catch (err) {
      await deps.wiki.setGenerating(job.channel_id, false).catch(() => undefined);
      await deps.jobs.save({
        ...started,
        status: 'failed',
        completed_at: now().toISOString(),
        error: {
          code: err instanceof AtlasError ? err.code : 'INTERNAL_ERROR',
          message: err instanceof Error ? err.message : String(err),
        },
      });
    }
  };

  const enqueue = (job: WikiJobRecord) => {
    if (taken.has(job.job_id)) return;
    taken.add(job.job_id);
    const tail = (tails.get(job.channel_id) ?? Promise.resolve())
      .then(() => run(job))
      .catch((err: unknown) => deps.log?.warn({ jobId: job.job_id, err }, 'wiki worker: job crashed'))
      .finally(() => {
        taken.delete(job.job_id);
        if (tails.get(job.channel_id) === tail) tails.delete(job.channel_id);
      });
    tails.set(job.channel_id, tail);
  };

  const handle = async (batch: AnyStoredEvent[]) => {
    for (const e of batch) {
      if (e.type !== 'WikiRefreshRequested') continue;
      const known = await deps.jobs.job(e.data.jobId);
      if (known && known.status !== 'queued' && known.status !== 'running') continue; // ended: a redelivery
      const job = known ?? queuedOf(e.data);
      if (!known) await deps.jobs.save(job);
      enqueue(job);
    }
  };

  for (const job of await deps.jobs.openJobs()) enqueue(job);
  const sub: Subscription = await deps.eventLog.subscribe({
    group: WIKI_WORKER_GROUP,
    topics: [TOPICS.commands],
    handler: handle,
    onError: (err) => deps.log?.warn({ err }, 'wiki worker: command batch will be retried'),
  });

  return {
    group: WIKI_WORKER_GROUP,
    assignment: () => sub.assignment(),
    idle: async () => {
      while (tails.size > 0) await Promise.all([...tails.values()]);
    },
    stop: async () => {
      stopping = true;
      await sub.stop();
      await Promise.all([...tails.values()]);
    },
  };
};
