import type { SyncJobError, SyncJobUpdated, SyncStage } from '@atlas/core';
import { TOPICS } from '@atlas/core';
import { PlatformError, type ValidationResult } from '@atlas/platforms';
import type { SyncJobRecord } from '@atlas/stores';
import type { SyncJobDeps } from './types.js';

/** Percentage where each stage starts (fetching fills 0..70 by messages fetched). */
const STAGE_START: Record<SyncStage, number> = {
  fetching_messages: 0,
  extracting_facts: 70,
  building_graph: 90,
  generating_wiki: 97,
};

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
  private readonly runStart = Date.now();
  private highest: number;
  private readonly processedAtStart: number;

  constructor(
    readonly job: SyncJobRecord,
    private readonly deps: SyncJobDeps,
  ) {
    this.seq = job.seq;
    this.total = Math.max(job.total_messages, job.estimated_messages);
    this.processed = job.processed_messages;
    this.processedAtStart = job.processed_messages;
    this.failing = job.failing_messages;
    this.synced = job.messages_synced;
    this.cursor = job.cursor;
    this.highest = job.percentage;
  }

  /** 0..100, never lower than an earlier emit of this run (the total can grow while fetching). */
  percentage(): number {
    if (this.status === 'completed') return 100;
    const base = STAGE_START[this.stage];
    const now =
      this.stage !== 'fetching_messages' ? base : Math.min(70, this.total > 0 ? (70 * this.processed) / this.total : 0);
    this.highest = Math.max(this.highest, now);
    return this.highest;
  }

  /** Linear extrapolation of this run's pace; null before any progress. */
  private estimate(now: Date): string | null {
    if (this.status !== 'running') return now.toISOString();
    const pct = this.percentage();
    const done = this.processed - this.processedAtStart;
    if (pct <= 0 || (this.stage === 'fetching_messages' && done <= 0)) return null;
    const elapsed = Date.now() - this.runStart;
    const fraction =
      this.stage === 'fetching_messages' ? done / Math.max(1, this.total - this.processedAtStart) : pct / 100;
    const left = (elapsed / Math.max(fraction, 0.01)) * (1 - fraction) * (this.stage === 'fetching_messages' ? 1.4 : 1);
    return new Date(now.getTime() + left).toISOString();
  }

  async emit(error: SyncJobError | null = null): Promise<void> {
    const now = this.deps.now?.() ?? new Date();
    this.seq += 1;
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
