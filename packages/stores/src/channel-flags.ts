import type { MigrationDb } from '@atlas/db';
import { type QueryExecutorProvider, sql } from 'kysely';

/**
 * A projector's own copy of one channel setting (ChannelSettingsUpdated, in the order of its topic), so that a replay
 * honours each setting for exactly the events that came after it. One table per projector state: rows are
 * (channel_id, enabled); a channel without a row is enabled (the default).
 */
export const channelFlagsMigration = (table: string) => ({
  async up(db: MigrationDb) {
    await sql`create table if not exists ${sql.table(table)} (channel_id text primary key,
      enabled boolean not null)`.execute(db);
  },
});

/** Which of these channels have the flag off. `db`: the database or a store's transaction, whatever its tables. */
export const disabledChannels = async (
  db: QueryExecutorProvider,
  table: string,
  channelIds: readonly string[],
): Promise<Set<string>> => {
  if (channelIds.length === 0) return new Set();
  // Raw: the table is named per projector, so no store's table interface names it.
  const r = await sql<{ channel_id: string }>`select channel_id from ${sql.table(table)}
    where not enabled and channel_id = any(${[...new Set(channelIds)]}::text[])`.execute(db);
  return new Set(r.rows.map((x) => x.channel_id));
};

/** Sets a channel's flag (idempotent upsert). */
export const setChannelEnabled = async (
  db: QueryExecutorProvider,
  table: string,
  channelId: string,
  enabled: boolean,
): Promise<void> => {
  // Raw: the table is named per projector (see disabledChannels).
  await sql`insert into ${sql.table(table)} (channel_id, enabled) values (${channelId}, ${enabled})
    on conflict (channel_id) do update set enabled = excluded.enabled`.execute(db);
};
