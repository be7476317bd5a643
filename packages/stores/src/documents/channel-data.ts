import { type ChannelSettings, DEFAULT_CHANNEL_SETTINGS } from '@atlas/core';
import { type Kysely, sql } from 'kysely';
import type { ChannelDataPart, ExpiredMessage } from './port.js';
import type { DocumentTables } from './tables.js';

/**
 * Deletes one part of a channel's data (DocumentStore.deleteChannelData): `messages` (the message rows and the
 * texts of their edits), `facts`
 * (its memories) or `graph` (its memories' entity links, the supersessions its messages stated and their
 * resolutions). Returns the rows
 * deleted of that part (links and supersessions counted together).
 */
export const deleteChannelPart = async (
  db: Kysely<DocumentTables>,
  channelId: string,
  part: ChannelDataPart,
): Promise<number> => {
  if (part === 'messages') {
    await db.deleteFrom('message_versions').where('channel_id', '=', channelId).execute();
    const r = await db.deleteFrom('messages').where('channel_id', '=', channelId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
  if (part === 'facts') {
    const r = await db.deleteFrom('memories').where('channel_id', '=', channelId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
  return db.transaction().execute(async (trx) => {
    const links = await trx.deleteFrom('memory_entities').where('channel_id', '=', channelId).executeTakeFirst();
    const sups = await trx.deleteFrom('fact_supersessions').where('channel_id', '=', channelId).executeTakeFirst();
    // Resolutions of the channel's potential contradictions (ContradictionResolved, also on atlas.graph).
    await trx.deleteFrom('contradiction_resolutions').where('channel_id', '=', channelId).execute();
    return Number(links.numDeletedRows) + Number(sups.numDeletedRows);
  });
};

/** The stored settings of a channel over the defaults (a key left unset keeps its default). */
export const settingsOf = (stored: Record<string, unknown> | null | undefined): ChannelSettings => {
  const s = stored ?? {};
  const flag = (k: keyof ChannelSettings) => (typeof s[k] === 'boolean' ? (s[k] as boolean) : true);
  const days = s.retention_days;
  return {
    sync_enabled: flag('sync_enabled'),
    wiki_enabled: flag('wiki_enabled'),
    graph_enabled: flag('graph_enabled'),
    fact_extraction_enabled: flag('fact_extraction_enabled'),
    retention_days:
      typeof days === 'number' && Number.isInteger(days) && days > 0 ? days : DEFAULT_CHANNEL_SETTINGS.retention_days,
    digest_enabled: typeof s.digest_enabled === 'boolean' ? s.digest_enabled : DEFAULT_CHANNEL_SETTINGS.digest_enabled,
    digest_days:
      typeof s.digest_days === 'number' && Number.isInteger(s.digest_days) && s.digest_days >= 1 && s.digest_days <= 31
        ? s.digest_days
        : DEFAULT_CHANNEL_SETTINGS.digest_days,
  };
};

/** Writes a channel's complete settings; false when the channel is unknown (nothing written). */
export const writeSettings = async (
  db: Kysely<DocumentTables>,
  channelId: string,
  settings: ChannelSettings,
): Promise<boolean> => {
  const r = await db
    .updateTable('channels')
    .set({ settings: sql`${JSON.stringify(settings)}::jsonb`, updated_at: sql`now()` })
    .where('id', '=', channelId)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
};

/** Messages of the channel (not deleted) whose message time is before `before` (ISO 8601), oldest first. */
export const messagesBefore = async (
  db: Kysely<DocumentTables>,
  channelId: string,
  before: string,
  limit: number,
): Promise<ExpiredMessage[]> => {
  const rows = await db
    .selectFrom('messages')
    .select(['message_uuid', 'id', 'platform', 'ts'])
    .where('channel_id', '=', channelId)
    .where('deleted_at', 'is', null)
    .where('ts', '<', before)
    .orderBy('ts')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    messageId: r.message_uuid,
    platformMessageId: r.id,
    platform: r.platform as ExpiredMessage['platform'],
    timestamp: new Date(r.ts).toISOString(),
  }));
};
