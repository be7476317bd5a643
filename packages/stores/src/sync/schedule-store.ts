import type { StoredEvent, SyncScheduleUpdated } from '@atlas/core';
import { type Kysely, sql } from 'kysely';
import { runMigrations } from '../migrate.js';

/**
 * One channel's sync schedule as the store keeps it (spec "Sync schedule" without next_sync and last_sync, which the
 * API computes): `schedule` a five-field cron expression (UTC), `updated_at` when it was saved (ISO 8601 UTC).
 */
export interface SyncScheduleRecord {
  channel_id: string;
  schedule: string;
  enabled: boolean;
  updated_at: string;
}

/**
 * Table `sync_schedules` (one row per channel), written only by the sync-schedules projector from SyncScheduleUpdated
 * (atlas.commands). Idempotent.
 */
export const migrateSyncSchedules = (db: Kysely<unknown>) =>
  runMigrations(db, 'sync_schedules', {
    '0001_sync_schedules': {
      async up(db: Kysely<unknown>) {
        await sql`create table if not exists sync_schedules (channel_id text primary key, schedule text not null,
          enabled boolean not null, updated_at timestamptz not null)`.execute(db);
      },
    },
  });

const toRecord = (r: Record<string, unknown>): SyncScheduleRecord => ({
  channel_id: r.channel_id as string,
  schedule: r.schedule as string,
  enabled: Boolean(r.enabled),
  updated_at: new Date(r.updated_at as string).toISOString(),
});

/**
 * The sync schedule read store (spec "Sync schedule"), on PGlite or PostgreSQL through Kysely. Written only by the
 * sync-schedules projector (`apply`: the saved schedule with the latest updated_at wins, so redelivery and replay end
 * equal); read by the API and the scheduler. Needs migrateSyncSchedules. Errors: the database's (the runner retries).
 */
export class SyncScheduleStore {
  constructor(private readonly db: Kysely<unknown>) {}

  /** Folds SyncScheduleUpdated events (other types are ignored). */
  async apply(events: readonly StoredEvent[]): Promise<void> {
    for (const e of events) {
      if (e.type !== 'SyncScheduleUpdated') continue;
      const d = e.data as SyncScheduleUpdated;
      await sql`insert into sync_schedules (channel_id, schedule, enabled, updated_at)
        values (${d.channelId}, ${d.schedule}, ${d.enabled}, ${d.updatedAt}::timestamptz)
        on conflict (channel_id) do update set schedule = excluded.schedule, enabled = excluded.enabled,
          updated_at = excluded.updated_at
        where sync_schedules.updated_at <= excluded.updated_at`.execute(this.db);
    }
  }

  /** The channel's schedule, or null when none was saved. */
  async get(channelId: string): Promise<SyncScheduleRecord | null> {
    const r = await sql<Record<string, unknown>>`select * from sync_schedules where channel_id = ${channelId}`.execute(
      this.db,
    );
    return r.rows[0] ? toRecord(r.rows[0]) : null;
  }

  /** Every saved schedule, by channel id; `enabledOnly` leaves out the disabled ones (what the scheduler fires). */
  async list(opts: { enabledOnly?: boolean } = {}): Promise<SyncScheduleRecord[]> {
    const r = opts.enabledOnly
      ? await sql<Record<string, unknown>>`select * from sync_schedules where enabled order by channel_id`.execute(
          this.db,
        )
      : await sql<Record<string, unknown>>`select * from sync_schedules order by channel_id`.execute(this.db);
    return r.rows.map(toRecord);
  }

  /** Empties the store (before a replay rebuilds it). */
  async truncate(): Promise<void> {
    await sql`truncate table sync_schedules`.execute(this.db);
  }
}
