import type { AnyStoredEvent } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { type MigrationDb, runMigrations } from '@atlas/db';
import { type Kysely, sql } from 'kysely';
import type { SyncTables } from './tables.js';

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
export const migrateSyncSchedules = (db: MigrationDb) =>
  runMigrations(db, 'sync_schedules', {
    '0001_sync_schedules': {
      async up(db: MigrationDb) {
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
  private readonly db: Kysely<Pick<SyncTables, 'sync_schedules'>>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<Pick<SyncTables, 'sync_schedules'>>();
  }

  /** Folds SyncScheduleUpdated events (other types are ignored). */
  async apply(events: readonly AnyStoredEvent[]): Promise<void> {
    for (const e of events) {
      if (e.type !== 'SyncScheduleUpdated') continue;
      const d = e.data;
      await this.db
        .insertInto('sync_schedules')
        .values({ channel_id: d.channelId, schedule: d.schedule, enabled: d.enabled, updated_at: d.updatedAt })
        .onConflict((oc) =>
          oc
            .column('channel_id')
            .doUpdateSet((eb) => ({
              schedule: eb.ref('excluded.schedule'),
              enabled: eb.ref('excluded.enabled'),
              updated_at: eb.ref('excluded.updated_at'),
            }))
            .where('sync_schedules.updated_at', '<=', (eb) => eb.ref('excluded.updated_at')),
        )
        .execute();
    }
  }

  /** The channel's schedule, or null when none was saved. */
  async get(channelId: string): Promise<SyncScheduleRecord | null> {
    const row = await this.db
      .selectFrom('sync_schedules')
      .selectAll()
      .where('channel_id', '=', channelId)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Every saved schedule, by channel id; `enabledOnly` leaves out the disabled ones (what the scheduler fires). */
  async list(opts: { enabledOnly?: boolean } = {}): Promise<SyncScheduleRecord[]> {
    let q = this.db.selectFrom('sync_schedules').selectAll().orderBy('channel_id');
    if (opts.enabledOnly) q = q.where('enabled', '=', true);
    return (await q.execute()).map(toRecord);
  }

  /** Empties the store (before a replay rebuilds it). */
  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table sync_schedules`.execute(this.db);
  }
}
