import type { Kysely } from 'kysely';
import type { DocumentTables } from './tables.js';

/** A message row as upsertMessages writes it: the fields that version its text. */
interface VersionedRow {
  channel_id: string;
  id: string;
  text: string;
  ts: string;
  edited_at: string | null;
}

const key = (channelId: string, id: string) => `${channelId}\u0000${id}`;
const CHUNK = 500;

/**
 * Records the texts of edited messages before upsertMessages overwrites them (message_versions, migration 0006). For
 * every message of `rows` (in event order) that at least one row marks edited (`edited_at` set), one version per text
 * it had: the stored row's (from its edit time, or its own time when never edited, unless deleted) and each of these
 * rows' (from `edited_at ?? ts`); a later one of the same instant wins. Messages never edited write nothing, so an
 * import of unedited history costs one read of nothing. Idempotent: replaying the same events writes the same rows.
 */
export const writeMessageVersions = async (
  db: Kysely<DocumentTables>,
  rows: readonly VersionedRow[],
): Promise<void> => {
  const edited = [
    ...new Map(rows.filter((r) => r.edited_at !== null).map((r) => [key(r.channel_id, r.id), r])).values(),
  ];
  if (edited.length === 0) return;
  const versions = new Map<string, { channel_id: string; id: string; valid_from: string; text: string }>();
  const add = (channelId: string, id: string, at: Date | string, text: string) => {
    const validFrom = new Date(at).toISOString();
    versions.set(`${key(channelId, id)}\u0000${validFrom}`, { channel_id: channelId, id, valid_from: validFrom, text });
  };
  for (let i = 0; i < edited.length; i += CHUNK) {
    const chunk = edited.slice(i, i + CHUNK);
    const wanted = new Set(chunk.map((r) => key(r.channel_id, r.id)));
    const stored = await db
      .selectFrom('messages')
      .select(['channel_id', 'id', 'text', 'ts', 'edited_at', 'deleted_at'])
      .where('channel_id', 'in', [...new Set(chunk.map((r) => r.channel_id))])
      .where('id', 'in', [...new Set(chunk.map((r) => r.id))])
      .execute();
    for (const s of stored)
      if (wanted.has(key(s.channel_id, s.id)) && s.deleted_at === null)
        add(s.channel_id, s.id, s.edited_at ?? s.ts, s.text);
  }
  const editedKeys = new Set(edited.map((r) => key(r.channel_id, r.id)));
  for (const r of rows)
    if (editedKeys.has(key(r.channel_id, r.id))) add(r.channel_id, r.id, r.edited_at ?? r.ts, r.text);
  const values = [...versions.values()];
  for (let i = 0; i < values.length; i += CHUNK)
    await db
      .insertInto('message_versions')
      .values(values.slice(i, i + CHUNK))
      .onConflict((oc) =>
        oc.columns(['channel_id', 'id', 'valid_from']).doUpdateSet((eb) => ({ text: eb.ref('excluded.text') })),
      )
      .execute();
};

/**
 * The text each of these messages of one channel had at `asOf` (ISO 8601): for a message edited after `asOf`, the
 * text of its latest version from at or before then (message_versions); when its versions all come later (an import
 * or sync that met the message already edited never saw its first text), the earliest one known. Absent from the
 * map: the message shows its stored text (not edited since `asOf`).
 */
export const textsAsOf = async (
  db: Kysely<DocumentTables>,
  channelId: string,
  rows: readonly { id: string; edited_at: Date | string | null }[],
  asOf: string,
): Promise<Map<string, string>> => {
  const at = Date.parse(asOf);
  const ids = rows.filter((r) => r.edited_at !== null && new Date(r.edited_at).getTime() > at).map((r) => r.id);
  const out = new Map<string, string>();
  if (ids.length === 0) return out;
  const versions = await db
    .selectFrom('message_versions')
    .select(['id', 'text', 'valid_from'])
    .where('channel_id', '=', channelId)
    .where('id', 'in', ids)
    .orderBy('valid_from', 'asc')
    .execute();
  // Ascending: the earliest version first, then each one from at or before asOf (millisecond precision) over it.
  for (const v of versions) if (!out.has(v.id) || new Date(v.valid_from).getTime() <= at) out.set(v.id, v.text);
  return out;
};

/** Removes a deleted message's versions with its text (DocumentStore.markMessageDeleted). */
export const deleteMessageVersions = async (
  db: Kysely<DocumentTables>,
  channelId: string,
  id: string,
): Promise<void> => {
  await db.deleteFrom('message_versions').where('channel_id', '=', channelId).where('id', '=', id).execute();
};
