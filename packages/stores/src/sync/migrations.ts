import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * Tables of the sync job store (spec "Sync job", "Sync history entry"; idempotent), written only by the sync-jobs
 * projector from SyncRequested / SyncCancelled (atlas.commands) and SyncJobUpdated (atlas.sync-jobs):
 * - `sync_jobs`: one row per job, its latest state (`seq` = the highest SyncJobUpdated folded, 0 = only requested),
 *   progress counts, times, the job's own cursor, its outcome counts and error (jsonb, spec "Sync errors");
 * - `sync_channels`: per channel, the incremental cursor (the newest platform id any job fetched past), the last
 *   completed sync and its job.
 */
export const migrateSync = (db: MigrationDb) =>
  runMigrations(db, 'sync', {
    '0001_sync_jobs': {
      async up(db: MigrationDb) {
        await sql`create table if not exists sync_jobs (job_id text primary key, channel_id text not null,
          connection_id text, platform text, force boolean not null default false,
          estimated_messages integer not null default 0, requested_by text, requested_at timestamptz,
          cancel_requested_at timestamptz, seq integer not null default 0,
          status text not null default 'queued', stage text, total_messages integer not null default 0,
          processed_messages integer not null default 0, failing_messages integer not null default 0,
          percentage double precision not null default 0, started_at timestamptz, estimated_completion timestamptz,
          completed_at timestamptz, cursor text, messages_synced integer not null default 0,
          facts_extracted integer not null default 0, entities_created integer not null default 0, error jsonb,
          updated_at timestamptz not null default now())`.execute(db);
        await sql`create index if not exists sync_jobs_channel on sync_jobs (channel_id, started_at desc)`.execute(db);
        await sql`create index if not exists sync_jobs_open on sync_jobs (status)
          where status in ('queued', 'running')`.execute(db);
        await sql`create table if not exists sync_channels (channel_id text primary key, cursor text,
          last_sync timestamptz, last_job_id text, updated_at timestamptz not null default now())`.execute(db);
      },
    },
  });
