import type { DatabaseHandle } from '@atlas/db';
import type { Kysely } from 'kysely';
import { iso } from './rows.js';
import type { WikiTables } from './tables.js';

/** A wiki generation job's state (spec "Wiki": refresh and rebuild jobs). */
export type WikiJobStatus = 'queued' | 'running' | 'completed' | 'failed';

/**
 * One wiki generation job as the read model keeps it: requested by a WikiRefreshRequested command, run by the wiki
 * worker. Times ISO 8601 UTC; `version_number` the version it saved (null before it ends, or when it failed);
 * `skipped` an incremental run that found nothing changed; `facts` the facts it read; `duration_ms` its run time;
 * `error` the AtlasError code and message of a failed run.
 */
export interface WikiJobRecord {
  job_id: string;
  channel_id: string;
  mode: 'full' | 'incremental';
  status: WikiJobStatus;
  requested_by: string;
  requested_at: string;
  started_at: string | null;
  completed_at: string | null;
  version_number: number | null;
  skipped: boolean;
  facts: number;
  pages_rebuilt: number;
  duration_ms: number | null;
  error: { code: string; message: string } | null;
}

type Row = WikiTables['wiki_jobs'];

const recordOf = (r: Row): WikiJobRecord => ({
  job_id: r.job_id,
  channel_id: r.channel_id,
  mode: r.mode === 'incremental' ? 'incremental' : 'full',
  status: r.status as WikiJobStatus,
  requested_by: r.requested_by,
  requested_at: iso(r.requested_at)!,
  started_at: iso(r.started_at),
  completed_at: iso(r.completed_at),
  version_number: r.version_number,
  skipped: r.skipped,
  facts: r.facts,
  pages_rebuilt: r.pages_rebuilt,
  duration_ms: r.duration_ms,
  error: r.error_code ? { code: r.error_code, message: r.error_message ?? '' } : null,
});

/**
 * The wiki's job history (table wiki_jobs, migrateWiki 0010): one row per generation job, written by the wiki worker
 * and read by the wiki routes from any API process, kept across restarts. Needs migrateWiki.
 */
export class WikiJobStore {
  private readonly db: Kysely<WikiTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<WikiTables>();
  }

  /** Inserts or replaces a job's row (upsert on job_id). */
  async save(job: WikiJobRecord): Promise<void> {
    const { error, ...rest } = job;
    const row = { ...rest, error_code: error?.code ?? null, error_message: error?.message ?? null };
    await this.db
      .insertInto('wiki_jobs')
      .values(row)
      .onConflict((oc) => oc.column('job_id').doUpdateSet(row))
      .execute();
  }

  /** One job, or null. */
  async job(jobId: string): Promise<WikiJobRecord | null> {
    const r = await this.db.selectFrom('wiki_jobs').selectAll().where('job_id', '=', jobId).executeTakeFirst();
    return r ? recordOf(r) : null;
  }

  /** A channel's jobs, newest request first, at most `limit`. */
  async jobs(channelId: string, limit = 50): Promise<WikiJobRecord[]> {
    const rows = await this.db
      .selectFrom('wiki_jobs')
      .selectAll()
      .where('channel_id', '=', channelId)
      .orderBy('requested_at', 'desc')
      .limit(limit)
      .execute();
    return rows.map(recordOf);
  }

  /** The channel's oldest queued or running job (the one a second request conflicts with), or null. */
  async activeJob(channelId: string): Promise<WikiJobRecord | null> {
    const r = await this.db
      .selectFrom('wiki_jobs')
      .selectAll()
      .where('channel_id', '=', channelId)
      .where('status', 'in', ['queued', 'running'])
      .orderBy('requested_at')
      .executeTakeFirst();
    return r ? recordOf(r) : null;
  }

  /** Every queued or running job, oldest request first (what a starting worker resumes). */
  async openJobs(): Promise<WikiJobRecord[]> {
    const rows = await this.db
      .selectFrom('wiki_jobs')
      .selectAll()
      .where('status', 'in', ['queued', 'running'])
      .orderBy('requested_at')
      .execute();
    return rows.map(recordOf);
  }
}
