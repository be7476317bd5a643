import type {
  StoredEvent,
  SyncCancelled,
  SyncJobError,
  SyncJobStatus,
  SyncJobUpdated,
  SyncRequested,
  SyncStage,
} from '@atlas/core';
import { type Kysely, sql } from 'kysely';

/**
 * One sync job as the store keeps it (spec "Sync job" and "Sync history entry" fields, plus what the worker needs to
 * resume it: force, connection, cursor, cancel request). Times ISO 8601 UTC or null; counts are messages.
 */
export interface SyncJobRecord {
  job_id: string;
  channel_id: string;
  connection_id: string | null;
  platform: 'platform_a' | 'platform_b' | null;
  force: boolean;
  estimated_messages: number;
  requested_by: string | null;
  requested_at: string | null;
  /** Set when a SyncCancelled was folded; the worker cancels such a job if it is still open. */
  cancel_requested_at: string | null;
  /** Highest SyncJobUpdated.seq folded; 0 when only the request is known. */
  seq: number;
  status: SyncJobStatus;
  stage: SyncStage | null;
  total_messages: number;
  processed_messages: number;
  failing_messages: number;
  /** 0..100. */
  percentage: number;
  /** The job's started_at: when it was requested (the POST response's started_at). */
  started_at: string | null;
  estimated_completion: string | null;
  completed_at: string | null;
  /** The platform id after which this job continues fetching (resume point after a restart). */
  cursor: string | null;
  messages_synced: number;
  facts_extracted: number;
  entities_created: number;
  error: SyncJobError | null;
  updated_at: string;
}

/** A channel's sync state: the incremental cursor (null before any fetch), its last completed sync and job. */
export interface SyncChannelState {
  channel_id: string;
  cursor: string | null;
  last_sync: string | null;
  last_job_id: string | null;
}

/** A Slack thread of a channel and its newest stored reply (platform ids), for late-reply checks. */
export interface ThreadHead {
  threadTs: string;
  latestReplyTs: string;
}

type SyncEvent = StoredEvent<'SyncRequested'> | StoredEvent<'SyncCancelled'> | StoredEvent<'SyncJobUpdated'>;

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());
const parsed = <T>(v: unknown): T | null =>
  (v === null || v === undefined ? null : typeof v === 'string' ? JSON.parse(v) : v) as T | null;

const toRecord = (r: Record<string, unknown>): SyncJobRecord => ({
  job_id: r.job_id as string,
  channel_id: r.channel_id as string,
  connection_id: (r.connection_id as string | null) ?? null,
  platform: (r.platform as SyncJobRecord['platform']) ?? null,
  force: Boolean(r.force),
  estimated_messages: Number(r.estimated_messages),
  requested_by: (r.requested_by as string | null) ?? null,
  requested_at: iso(r.requested_at),
  cancel_requested_at: iso(r.cancel_requested_at),
  seq: Number(r.seq),
  status: r.status as SyncJobStatus,
  stage: (r.stage as SyncStage | null) ?? null,
  total_messages: Number(r.total_messages),
  processed_messages: Number(r.processed_messages),
  failing_messages: Number(r.failing_messages),
  percentage: Number(r.percentage),
  started_at: iso(r.started_at),
  estimated_completion: iso(r.estimated_completion),
  completed_at: iso(r.completed_at),
  cursor: (r.cursor as string | null) ?? null,
  messages_synced: Number(r.messages_synced),
  facts_extracted: Number(r.facts_extracted),
  entities_created: Number(r.entities_created),
  error: parsed<SyncJobError>(r.error),
  updated_at: iso(r.updated_at)!,
});

/** The greater of two platform ids (Slack ts or Discord snowflake): longer is newer, then text order. SQL. */
const newerCursor = (a: ReturnType<typeof sql>, b: ReturnType<typeof sql>) =>
  sql`case when ${b} is null then ${a} when ${a} is null then ${b}
    when length(${b}) > length(${a}) or (length(${b}) = length(${a}) and ${b} > ${a}) then ${b} else ${a} end`;

/**
 * The sync job read store (spec "Sync job", "Sync history entry"), on PGlite or PostgreSQL through Kysely. Written
 * only by the sync-jobs projector (`apply`, idempotent and order-tolerant across its two topics: a job's row keeps
 * the SyncJobUpdated with the highest seq; a request only fills the request fields); read by the API and the sync
 * worker. Needs migrateSync. Errors: the database's (the runner retries).
 */
export class SyncStore {
  constructor(private readonly db: Kysely<unknown>) {}

  /** Folds SyncRequested, SyncCancelled and SyncJobUpdated events (other types are ignored). */
  async apply(events: readonly StoredEvent[]): Promise<void> {
    for (const e of events as readonly SyncEvent[]) {
      if (e.type === 'SyncRequested') await this.request(e.data);
      else if (e.type === 'SyncCancelled') await this.cancelRequest(e.data);
      else if (e.type === 'SyncJobUpdated') await this.update(e.data);
    }
  }

  private async request(d: SyncRequested): Promise<void> {
    await sql`insert into sync_jobs (job_id, channel_id, connection_id, platform, force, estimated_messages,
        requested_by, requested_at, started_at, total_messages, estimated_completion)
      values (${d.jobId}, ${d.channelId}, ${d.connectionId}, ${d.platform}, ${d.force}, ${d.estimatedMessages},
        ${d.requestedBy}, ${d.requestedAt}::timestamptz, ${d.requestedAt}::timestamptz, ${d.estimatedMessages}, null)
      on conflict (job_id) do update set connection_id = excluded.connection_id, platform = excluded.platform,
        force = excluded.force, estimated_messages = excluded.estimated_messages,
        requested_by = excluded.requested_by, requested_at = excluded.requested_at`.execute(this.db);
  }

  private async cancelRequest(d: SyncCancelled): Promise<void> {
    await sql`update sync_jobs set cancel_requested_at = coalesce(cancel_requested_at, ${d.cancelledAt}::timestamptz)
      where job_id = ${d.jobId}`.execute(this.db);
  }

  private async update(d: SyncJobUpdated): Promise<void> {
    await sql`insert into sync_jobs (job_id, channel_id, seq, status, stage, total_messages, processed_messages,
        failing_messages, percentage, started_at, estimated_completion, completed_at, cursor, messages_synced,
        facts_extracted, entities_created, error, updated_at)
      values (${d.jobId}, ${d.channelId}, ${d.seq}, ${d.status}, ${d.stage}, ${d.totalMessages},
        ${d.processedMessages}, ${d.failingMessages}, ${d.percentage}, ${d.startedAt}::timestamptz,
        ${d.estimatedCompletion}::timestamptz, ${d.completedAt}::timestamptz, ${d.cursor}, ${d.messagesSynced},
        ${d.factsExtracted}, ${d.entitiesCreated}, ${d.error === null ? null : JSON.stringify(d.error)}::jsonb,
        ${d.updatedAt}::timestamptz)
      on conflict (job_id) do update set seq = excluded.seq, status = excluded.status, stage = excluded.stage,
        total_messages = excluded.total_messages, processed_messages = excluded.processed_messages,
        failing_messages = excluded.failing_messages, percentage = excluded.percentage,
        started_at = excluded.started_at, estimated_completion = excluded.estimated_completion,
        completed_at = excluded.completed_at, cursor = excluded.cursor, messages_synced = excluded.messages_synced,
        facts_extracted = excluded.facts_extracted, entities_created = excluded.entities_created,
        error = excluded.error, updated_at = excluded.updated_at
      where sync_jobs.seq < excluded.seq`.execute(this.db);
    const completed = d.status === 'completed';
    if (d.cursor === null && !completed) return;
    await sql`insert into sync_channels (channel_id, cursor, last_sync, last_job_id, updated_at)
      values (${d.channelId}, ${d.cursor}, ${completed ? d.completedAt : null}::timestamptz,
        ${completed ? d.jobId : null}, ${d.updatedAt}::timestamptz)
      on conflict (channel_id) do update set
        cursor = ${newerCursor(sql`sync_channels.cursor`, sql`excluded.cursor`)},
        last_sync = greatest(sync_channels.last_sync, excluded.last_sync),
        last_job_id = case when excluded.last_sync is not null
          and (sync_channels.last_sync is null or excluded.last_sync >= sync_channels.last_sync)
          then excluded.last_job_id else sync_channels.last_job_id end,
        updated_at = excluded.updated_at`.execute(this.db);
  }

  /** The job, or null when unknown. */
  async getJob(jobId: string): Promise<SyncJobRecord | null> {
    const r = await sql<Record<string, unknown>>`select * from sync_jobs where job_id = ${jobId}`.execute(this.db);
    return r.rows[0] ? toRecord(r.rows[0]) : null;
  }

  /** The channel's queued or running job (the newest when several), or null. */
  async activeJob(channelId: string): Promise<SyncJobRecord | null> {
    const r = await sql<Record<string, unknown>>`select * from sync_jobs
      where channel_id = ${channelId} and status in ('queued', 'running')
      order by started_at desc nulls last, job_id limit 1`.execute(this.db);
    return r.rows[0] ? toRecord(r.rows[0]) : null;
  }

  /** The channel's jobs, newest first (started_at), at most `limit` (spec "GET /api/sync/history"). */
  async history(channelId: string, limit: number): Promise<SyncJobRecord[]> {
    const r = await sql<Record<string, unknown>>`select * from sync_jobs where channel_id = ${channelId}
      order by started_at desc nulls last, job_id limit ${limit}`.execute(this.db);
    return r.rows.map(toRecord);
  }

  /** Every queued or running job, oldest first: what a starting sync worker resumes. */
  async openJobs(): Promise<SyncJobRecord[]> {
    const r = await sql<Record<string, unknown>>`select * from sync_jobs where status in ('queued', 'running')
      order by started_at nulls last, job_id`.execute(this.db);
    return r.rows.map(toRecord);
  }

  /** The channel's incremental cursor and last completed sync, or null when no job has fetched it yet. */
  async channelState(channelId: string): Promise<SyncChannelState | null> {
    const r = await sql<Record<string, unknown>>`select channel_id, cursor, last_sync, last_job_id
      from sync_channels where channel_id = ${channelId}`.execute(this.db);
    const row = r.rows[0];
    return row
      ? {
          channel_id: row.channel_id as string,
          cursor: (row.cursor as string | null) ?? null,
          last_sync: iso(row.last_sync),
          last_job_id: (row.last_job_id as string | null) ?? null,
        }
      : null;
  }

  /**
   * The channel's Slack threads that have stored replies, most recently active first, with the newest stored reply
   * (read-only over the document store's `messages` table, same database): where late replies are looked for.
   */
  async threadHeads(channelId: string, limit: number): Promise<ThreadHead[]> {
    const r = await sql<{ thread_ts: string; latest: string }>`select thread_ts, max(id) as latest from messages
      where channel_id = ${channelId} and platform = 'platform_a' and thread_ts is not null and id <> thread_ts
        and deleted_at is null
      group by thread_ts order by max(ts) desc limit ${limit}`.execute(this.db);
    return r.rows.map((x) => ({ threadTs: x.thread_ts, latestReplyTs: x.latest }));
  }

  /**
   * What a job added to its channel since `since` (ISO 8601, the job's started_at), read-only over the document
   * store's tables (same database), so the figures survive a restart of the job: facts first stored since then, and
   * entities whose first mention is such a fact (spec "Sync history entry" facts_extracted, entities_created).
   */
  async outcomeSince(channelId: string, since: string): Promise<{ facts: number; entities: number }> {
    const r = await sql<{ facts: string | number; entities: string | number }>`select
        (select count(*) from memories where channel_id = ${channelId} and created_at >= ${since}::timestamptz) as facts,
        (select count(*) from (select me.entity_id from memory_entities me join memories m on m.id = me.fact_id
          where me.channel_id = ${channelId} group by me.entity_id
          having min(m.created_at) >= ${since}::timestamptz) x) as entities`.execute(this.db);
    return { facts: Number(r.rows[0]?.facts ?? 0), entities: Number(r.rows[0]?.entities ?? 0) };
  }

  /** Empties the store (before a replay rebuilds it). */
  async truncate(): Promise<void> {
    await sql`truncate table sync_jobs, sync_channels`.execute(this.db);
  }
}
