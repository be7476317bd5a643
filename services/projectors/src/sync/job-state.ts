import type { SyncJobError, SyncJobUpdated, SyncStage } from '@atlas/core';
import { TOPICS } from '@atlas/core';
import { PlatformError, type ValidationResult } from '@atlas/platforms';
import type { SyncJobRecord } from '@atlas/stores';
import type { SyncJobDeps } from './types.js';

/**
 * The band of `percentage` each stage fills, in the spec's order (docs/conventions.md "Sync progress").
 * fetching_messages fills its band by messages fetched over the total known so far; extracting_facts and building_graph
 * by the projectors' measured progress over what this job appended (stage-wait.ts: committed offsets of their consumer
 * groups between where they stood when the stage began and the job's last event); generating_wiki moves from its start
 * to its end when the wiki is saved. Only a completed job reads 100. The bands follow where a sync spends its time:
 * nearly all of it in fetching and in extraction (facts, keyword index, embeddings), their split depending on the
 * platform's pace (a live platform's rate limits lengthen fetching) and the machine; so fetching and extraction share
 * the first 90 points (test/sync-progress.e2e.test.ts prints the split of its run).
 */
export const STAGE_BANDS: Readonly<Record<SyncStage, readonly [number, number]>> = {
  fetching_messages: [0, 40],
  extracting_facts: [40, 90],
  building_graph: [90, 95],
  generating_wiki: [95, 99],
};

/** How often a stage reports measured progress at most (ms), unless the percentage moved by a whole point. */
const PROGRESS_EMIT_MS = 1000;

/** The job's state, emitted as SyncJobUpdated events (atlas.sync-jobs) with a growing seq. */
export class JobState {
  seq: number;
  status: SyncJobUpdated['status'] = 'running';
  stage: SyncStage = 'fetching_messages';
  total: number;
  processed: number;
  failing: number;
  synced: number;
  cursor: string | null;
  facts = 0;
  entities = 0;
  /** Progress inside the current stage after fetching, 0..1 (measured by the stage's waits). */
  private within = 0;
  private readonly runStart = Date.now();
  private highest: number;
  /** The percentage this run started from (a resumed job keeps what it had reached). */
  private readonly startPct: number;
  private lastEmit = 0;
  private lastEmitPct = -1;

  constructor(
    readonly job: SyncJobRecord,
    private readonly deps: SyncJobDeps,
  ) {
    this.seq = job.seq;
    this.total = Math.max(job.total_messages, job.estimated_messages);
    this.processed = job.processed_messages;
    this.failing = job.failing_messages;
    this.synced = job.messages_synced;
    this.cursor = job.cursor;
    this.highest = Math.min(job.percentage, STAGE_BANDS.generating_wiki[1]);
    this.startPct = this.highest;
  }

  /** Enters a later stage (progress inside it starts at 0; the percentage never goes back). */
  enter(stage: SyncStage): void {
    this.stage = stage;
    this.within = 0;
  }

  /**
   * 0..100 by the stage's band (STAGE_BANDS) and the progress inside it; never lower than an earlier value of this
   * job (the total can grow while fetching); 100 only when completed, at most 99 before.
   */
  percentage(): number {
    if (this.status === 'completed') return 100;
    const [from, to] = STAGE_BANDS[this.stage];
    const f =
      this.stage === 'fetching_messages'
        ? this.total > 0
          ? Math.min(1, this.processed / this.total)
          : 0
        : this.within;
    this.highest = Math.max(this.highest, from + (to - from) * Math.min(1, Math.max(0, f)));
    return this.highest;
  }

  /**
   * Measured progress inside the current stage (0..1, never lower than before); emits an update when the
   * percentage moved by a whole point or PROGRESS_EMIT_MS passed since the last one.
   */
  async progress(fraction: number): Promise<void> {
    this.within = Math.max(this.within, Math.min(1, Math.max(0, fraction)));
    const pct = Math.floor(this.percentage());
    if (pct > this.lastEmitPct || Date.now() - this.lastEmit >= PROGRESS_EMIT_MS) await this.emit();
  }

  /**
   * When the job should end at the pace this run has kept (percentage points gained since it started, over the time
   * it took), always after `now`; null before any progress, and for a job that is not running (a finished job's end
   * is its completed_at; docs/conventions.md "Values that do not exist").
   */
  private estimate(now: Date): string | null {
    if (this.status !== 'running') return null;
    const pct = this.percentage();
    const gained = pct - this.startPct;
    const elapsed = Date.now() - this.runStart;
    if (gained <= 0 || elapsed <= 0) return null;
    const left = (elapsed * (100 - pct)) / gained;
    return new Date(now.getTime() + Math.max(1, left)).toISOString();
  }

  async emit(error: SyncJobError | null = null): Promise<void> {
    const now = this.deps.now?.() ?? new Date();
    this.seq += 1;
    this.lastEmit = Date.now();
    this.lastEmitPct = Math.floor(this.percentage());
    const terminal = this.status !== 'running';
    const data: SyncJobUpdated = {
      jobId: this.job.job_id,
      channelId: this.job.channel_id,
      seq: this.seq,
      status: this.status,
      stage: this.stage,
      totalMessages: this.total,
      processedMessages: this.processed,
      failingMessages: this.failing,
      percentage: Math.round(this.percentage() * 10) / 10,
      startedAt: this.job.started_at ?? now.toISOString(),
      estimatedCompletion: this.estimate(now),
      completedAt: terminal ? now.toISOString() : null,
      cursor: this.cursor,
      messagesSynced: this.synced,
      factsExtracted: this.facts,
      entitiesCreated: this.entities,
      error,
      updatedAt: now.toISOString(),
    };
    await this.deps.eventLog.append(TOPICS.syncJobs, [{ type: 'SyncJobUpdated', key: data.channelId, data }]);
  }
}

/** A validation failure as a sync error (spec "Sync errors"): credentials → AUTH_ERROR, and so on. */
export const validationError = (v: Extract<ValidationResult, { valid: false }>): PlatformError => {
  const { code, message, retry_after } = v.error;
  if (code === 'RATE_LIMITED')
    return new PlatformError('RATE_LIMIT', message, { retriable: true, retryAfter: retry_after });
  if (code === 'NETWORK_ERROR' || code === 'PLATFORM_ERROR')
    return new PlatformError('PLATFORM_ERROR', message, { retriable: true, retryAfter: retry_after });
  return new PlatformError('AUTH_ERROR', message, { retriable: false });
};

/** A failure as the spec's job error: PlatformError codes pass through; anything else is INTERNAL_ERROR. */
export const syncErrorOf = (err: unknown, failingMessageId: string | null): SyncJobError =>
  err instanceof PlatformError
    ? {
        code: err.code,
        message: err.message,
        retryAfter: err.retryAfter === undefined ? null : Math.ceil(err.retryAfter),
        failingMessageId,
      }
    : {
        code: 'INTERNAL_ERROR',
        message: err instanceof Error ? err.message : String(err),
        retryAfter: null,
        failingMessageId,
      };
