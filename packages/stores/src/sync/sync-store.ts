import type {
  StoredEvent,
  SyncCancelled,
  SyncJobError,
  SyncJobStatus,
  SyncJobUpdated,
  SyncRequested,
  SyncStage,
} from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { type Expression, type Kysely, sql } from 'kysely';
import type { SyncTables } from './tables.js';

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
const newerCursor = (a: Expression<string | null>, b: Expression<string | null>) =>
  // Raw: a nested case over length() reads plainer in SQL than in the builder.
  sql<string | null>`case when ${b} is null then ${a} when ${a} is null then ${b}
    when length(${b}) > length(${a}) or (length(${b}) = length(${a}) and ${b} > ${a}) then ${b} else ${a} end`;

/**
 * The sync job read store (spec "Sync job", "Sync history entry"), on PGlite or PostgreSQL through Kysely. Written
 * only by the sync-jobs projector (`apply`, idempotent and order-tolerant across its two topics: a job's row keeps
 * the SyncJobUpdated with the highest seq; a request only fills the request fields); read by the API and the sync
 * worker. Needs migrateSync. Errors: the database's (the runner retries).
 */
export class SyncStore {
  private readonly db: Kysely<SyncTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<SyncTables>();
  }

  /** Folds SyncRequested, SyncCancelled and SyncJobUpdated events (other types are ignored). */
  async apply(events: readonly StoredEvent[]): Promise<void> {
    for (const e of events as readonly SyncEvent[]) {
      if (e.type === 'SyncRequested') await this.request(e.data);
      else if (e.type === 'SyncCancelled') await this.cancelRequest(e.data);
      else if (e.type === 'SyncJobUpdated') await this.update(e.data);
    }
  }

  private async request(d: SyncRequested): Promise<void> {
    await this.db
      .insertInto('sync_jobs')
      .values({
        job_id: d.jobId,
        channel_id: d.channelId,
        connection_id: d.connectionId,
        platform: d.platform,
        force: d.force,
        estimated_messages: d.estimatedMessages,
        requested_by: d.requestedBy,
        requested_at: d.requestedAt,
        started_at: d.requestedAt,
        total_messages: d.estimatedMessages,
        estimated_completion: null,
      })
      .onConflict((oc) =>
        oc.column('job_id').doUpdateSet((eb) => ({
          connection_id: eb.ref('excluded.connection_id'),
          platform: eb.ref('excluded.platform'),
          force: eb.ref('excluded.force'),
          estimated_messages: eb.ref('excluded.estimated_messages'),
          requested_by: eb.ref('excluded.requested_by'),
          requested_at: eb.ref('excluded.requested_at'),
        })),
      )
      .execute();
  }

  private async cancelRequest(d: SyncCancelled): Promise<void> {
    await this.db
      .updateTable('sync_jobs')
      .set((eb) => ({ cancel_requested_at: eb.fn.coalesce('cancel_requested_at', eb.val(d.cancelledAt)) }))
      .where('job_id', '=', d.jobId)
      .execute();
  }

  /**
   * The job's row and, when it has a cursor or completed, the channel's state, in one transaction: a reader that sees
   * the job completed also sees the channel's last_sync (GET /api/sync/schedules right after a sync finished).
   */
  private async update(d: SyncJobUpdated): Promise<void> {
    await this.db.transaction().execute((trx) => this.updateIn(trx, d));
  }

  private async updateIn(db: Kysely<SyncTables>, d: SyncJobUpdated): Promise<void> {
    await db
      .insertInto('sync_jobs')
      .values({
        job_id: d.jobId,
        channel_id: d.channelId,
        seq: d.seq,
        status: d.status,
        stage: d.stage,
        total_messages: d.totalMessages,
        processed_messages: d.processedMessages,
        failing_messages: d.failingMessages,
        percentage: d.percentage,
        started_at: d.startedAt,
        estimated_completion: d.estimatedCompletion,
        completed_at: d.completedAt,
        cursor: d.cursor,
        messages_synced: d.messagesSynced,
        facts_extracted: d.factsExtracted,
        entities_created: d.entitiesCreated,
        error: d.error === null ? null : JSON.stringify(d.error),
        updated_at: d.updatedAt,
      })
      .onConflict((oc) =>
        oc
          .column('job_id')
          .doUpdateSet((eb) => ({
            seq: eb.ref('excluded.seq'),
            status: eb.ref('excluded.status'),
            stage: eb.ref('excluded.stage'),
            total_messages: eb.ref('excluded.total_messages'),
            processed_messages: eb.ref('excluded.processed_messages'),
            failing_messages: eb.ref('excluded.failing_messages'),
            percentage: eb.ref('excluded.percentage'),
            started_at: eb.ref('excluded.started_at'),
            estimated_completion: eb.ref('excluded.estimated_completion'),
            completed_at: eb.ref('excluded.completed_at'),
            cursor: eb.ref('excluded.cursor'),
            messages_synced: eb.ref('excluded.messages_synced'),
            facts_extracted: eb.ref('excluded.facts_extracted'),
            entities_created: eb.ref('excluded.entities_created'),
            error: eb.ref('excluded.error'),
            updated_at: eb.ref('excluded.updated_at'),
          }))
          .where('sync_jobs.seq', '<', (eb) => eb.ref('excluded.seq')),
      )
      .execute();
    const completed = d.status === 'completed';
    if (d.cursor === null && !completed) return;
    await db
      .insertInto('sync_channels')
      .values({
        channel_id: d.channelId,
        cursor: d.cursor,
        last_sync: completed ? d.completedAt : null,
        last_job_id: completed ? d.jobId : null,
        updated_at: d.updatedAt,
      })
      .onConflict((oc) =>
        oc.column('channel_id').doUpdateSet((eb) => ({
          cursor: newerCursor(eb.ref('sync_channels.cursor'), eb.ref('excluded.cursor')),
          last_sync: eb.fn('greatest', ['sync_channels.last_sync', 'excluded.last_sync']),
          last_job_id: eb
            .case()
            .when(
              eb.and([
                eb('excluded.last_sync', 'is not', null),
                eb.or([
                  eb('sync_channels.last_sync', 'is', null),
                  eb('excluded.last_sync', '>=', eb.ref('sync_channels.last_sync')),
                ]),
              ]),
            )
            .then(eb.ref('excluded.last_job_id'))
            .else(eb.ref('sync_channels.last_job_id'))
            .end(),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }

  /** The job, or null when unknown. */
  async getJob(jobId: string): Promise<SyncJobRecord | null> {
    const row = await this.db.selectFrom('sync_jobs').selectAll().where('job_id', '=', jobId).executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** The channel's queued or running job (the newest when several), or null. */
  async activeJob(channelId: string): Promise<SyncJobRecord | null> {
    const row = await this.db
      .selectFrom('sync_jobs')
      .selectAll()
      .where('channel_id', '=', channelId)
      .where('status', 'in', ['queued', 'running'])
      .orderBy('started_at', (ob) => ob.desc().nullsLast())
      .orderBy('job_id')
      .limit(1)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** The channel's jobs, newest first (started_at), at most `limit` (spec "GET /api/sync/history"). */
  async history(channelId: string, limit: number): Promise<SyncJobRecord[]> {
    const rows = await this.db
      .selectFrom('sync_jobs')
      .selectAll()
      .where('channel_id', '=', channelId)
      .orderBy('started_at', (ob) => ob.desc().nullsLast())
      .orderBy('job_id')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  /** Every queued or running job, oldest first: what a starting sync worker resumes. */
  async openJobs(): Promise<SyncJobRecord[]> {
    const rows = await this.db
      .selectFrom('sync_jobs')
      .selectAll()
      .where('status', 'in', ['queued', 'running'])
      .orderBy('started_at', (ob) => ob.asc().nullsLast())
      .orderBy('job_id')
      .execute();
    return rows.map(toRecord);
  }

  /** The channel's incremental cursor and last completed sync, or null when no job has fetched it yet. */
  async channelState(channelId: string): Promise<SyncChannelState | null> {
    const row = await this.db
      .selectFrom('sync_channels')
      .select(['channel_id', 'cursor', 'last_sync', 'last_job_id'])
      .where('channel_id', '=', channelId)
      .executeTakeFirst();
    return row
      ? {
          channel_id: row.channel_id,
          cursor: row.cursor ?? null,
          last_sync: iso(row.last_sync),
          last_job_id: row.last_job_id ?? null,
        }
      : null;
  }

  /**
   * The channel's Slack threads that have stored replies, most recently active first, with the newest stored reply
   * (read-only over the document store's `messages` table, same database): where late replies are looked for.
   */
  async threadHeads(channelId: string, limit: number): Promise<ThreadHead[]> {
    const rows = await this.db
      .selectFrom('messages')
      .select((eb) => ['thread_ts', eb.fn.max('id').as('latest')])
      .where('channel_id', '=', channelId)
      .where('platform', '=', 'platform_a')
      .where('thread_ts', 'is not', null)
      .where('id', '<>', (eb) => eb.ref('thread_ts'))
      .where('deleted_at', 'is', null)
      .groupBy('thread_ts')
      .orderBy((eb) => eb.fn.max('ts'), 'desc')
      .limit(limit)
      .execute();
    return rows.map((x) => ({ threadTs: x.thread_ts as string, latestReplyTs: x.latest }));
  }

  /**
   * What a job added to its channel since `since` (ISO 8601, the job's started_at), read-only over the document
   * store's tables (same database), so the figures survive a restart of the job: facts first stored since then, and
   * entities whose first mention is such a fact (spec "Sync history entry" facts_extracted, entities_created).
   */
  async outcomeSince(channelId: string, since: string): Promise<{ facts: number; entities: number }> {
    const r = await this.db
      .selectNoFrom((eb) => [
        eb
          .selectFrom('memories')
          .select((c) => c.fn.countAll().as('n'))
          .where('channel_id', '=', channelId)
          .where('created_at', '>=', since)
          .as('facts'),
        eb
          .selectFrom(
            eb
              .selectFrom('memory_entities as me')
              .innerJoin('memories as m', 'm.id', 'me.fact_id')
              .select('me.entity_id')
              .where('me.channel_id', '=', channelId)
              .groupBy('me.entity_id')
              .having((h) => h.fn.min('m.created_at'), '>=', since)
              .as('x'),
          )
          .select((c) => c.fn.countAll().as('n'))
          .as('entities'),
      ])
      .executeTakeFirst();
    return { facts: Number(r?.facts ?? 0), entities: Number(r?.entities ?? 0) };
  }

  /** Empties the store (before a replay rebuilds it). */
  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table sync_jobs, sync_channels`.execute(this.db);
  }
}
