import { createHash } from 'node:crypto';
import { AtlasError } from '@atlas/core';
import { type Kysely, sql } from 'kysely';
import { iso, parsed } from './rows.js';
import type { WikiTables } from './tables.js';
import type { WikiSaveMeta, WikiVersionSummary } from './types.js';

const CHUNK = 100;

/**
 * A centroid as stored (migration 0007): its components as little-endian float32, base64 (2 KB for 384 dimensions,
 * under the TOAST threshold, where the JSON array was 3 KB and compressed on every write).
 */
const centroidText = (v: readonly number[]): string => {
  const b = Buffer.allocUnsafe(v.length * 4);
  for (let i = 0; i < v.length; i++) b.writeFloatLE(v[i]!, i * 4);
  return b.toString('base64');
};

/** JSON with object keys sorted (jsonb reorders keys, so a page read back hashes as the page saved). */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : x,
  );

/** Content hash of a page (sha1 of its canonical JSON). */
const pageHash = (p: unknown): string => createHash('sha1').update(canonical(p)).digest('hex');

/** One generation savePagesMany writes. */
type SaveItem<P, S> = { channelId: string; wiki: { structure: S; pages: readonly P[] }; meta: WikiSaveMeta };

/**
 * Writes the items `idx` of savePagesMany (distinct channels) inside its transaction: every statement covers all of
 * them. Fills `out[i]` with the new version's summary, or the CONFLICT error of a channel deleted since its generation
 * started (nothing of that item is written).
 */
export async function saveRound<P extends { id: string }, S>(
  trx: Kysely<WikiTables>,
  idx: readonly number[],
  items: readonly SaveItem<P, S>[],
  out: (WikiVersionSummary | AtlasError)[],
): Promise<void> {
  const ids = idx.map((i) => items[i]!.channelId);
  // Serialises concurrent saves of these channels: the upsert locks their state rows until commit (in id order, so
  // two batches over overlapping channels cannot deadlock). Raw: an insert from unnest in a chosen order.
  await sql`insert into wiki_state (channel_id) select id from unnest(${[...ids].sort()}::text[]) as t(id) order by id
    on conflict (channel_id) do update set channel_id = excluded.channel_id`.execute(trx);
  // Per channel: the last version number, a deletion of its data requested after this generation started, and the
  // current pages' content hashes, in one round trip. Raw: json_agg and an unnest of two arrays.
  const head = await sql<{ c: string; n: number | null; deleted_at: unknown; current: unknown }>`select t.c,
      (select max(version_number) from wiki_versions where channel_id = t.c) as n,
      (select max(requested_at) from wiki_channel_deletions where channel_id = t.c
        and requested_at > t.g::timestamptz) as deleted_at,
      (select coalesce(json_agg(json_build_array(page_id, hash)), '[]'::json) from wiki_pages
        where channel_id = t.c) as current
    from unnest(${ids}::text[], ${idx.map((i) => items[i]!.meta.generatedAt)}::text[]) as t(c, g)`.execute(trx);
  const heads = new Map(head.rows.map((h) => [h.c, h]));
  const gone: { c: string; p: string }[] = [];
  const pageRows: { c: string; p: P; h: string; at: string }[] = [];
  const versions: { i: number; n: number; hashes: string[] }[] = [];
  for (const i of idx) {
    const { channelId, wiki, meta } = items[i]!;
    const h = heads.get(channelId)!;
    if (h.deleted_at != null) {
      out[i] = new AtlasError(
        'CONFLICT',
        `the data of channel ${channelId} was deleted at ${iso(h.deleted_at)}, after this generation started (${meta.generatedAt}): its pages are not saved`,
        { details: { channel_id: channelId } },
      );
      continue;
    }
    // Only changed pages are written: the current rows are compared by content hash, each distinct content is kept
    // once in wiki_page_revisions, and the version's snapshot references (page id, hash) pairs.
    const current = new Map(parsed<[string, string | null][]>(h.current) ?? []);
    const unchanged = new Set(meta.unchangedPageIds ?? []);
    const hashes = wiki.pages.map((p) => (unchanged.has(p.id) ? current.get(p.id) : null) ?? pageHash(p));
    const pageIds = new Set(wiki.pages.map((p) => p.id));
    for (const id of current.keys()) if (!pageIds.has(id)) gone.push({ c: channelId, p: id });
    wiki.pages.forEach((p, k) => {
      if (current.get(p.id) !== hashes[k]) pageRows.push({ c: channelId, p, h: hashes[k]!, at: meta.generatedAt });
    });
    versions.push({ i, n: Number(h.n ?? 0) + 1, hashes });
  }
  if (versions.length === 0) return;
  if (gone.length > 0)
    // Raw: delete … using an unnest of (channel, page) pairs.
    await sql`delete from wiki_pages p using unnest(${gone.map((g) => g.c)}::text[], ${gone.map((g) => g.p)}::text[])
      as t(c, p) where p.channel_id = t.c and p.page_id = t.p`.execute(trx);
  for (let k = 0; k < pageRows.length; k += CHUNK) {
    const chunk = pageRows.slice(k, k + CHUNK);
    await trx
      .insertInto('wiki_pages')
      .values(chunk.map(({ c, p, h, at }) => ({ channel_id: c, page_id: p.id, page: null, updated_at: at, hash: h })))
      .onConflict((oc) =>
        oc.columns(['channel_id', 'page_id']).doUpdateSet((eb) => ({
          page: null,
          updated_at: eb.ref('excluded.updated_at'),
          hash: eb.ref('excluded.hash'),
        })),
      )
      .execute();
    await trx
      .insertInto('wiki_page_revisions')
      .values(chunk.map(({ c, p, h }) => ({ channel_id: c, page_id: p.id, hash: h, page: JSON.stringify(p) })))
      .onConflict((oc) => oc.columns(['channel_id', 'page_id', 'hash']).doNothing())
      .execute();
  }
  // The previous versions archived, the new ones inserted, the structures and the states updated: one statement (the
  // archiving update sees the table as it was before the insert). Raw: data-modifying CTEs over a values list.
  const rows = versions.map(({ i, n, hashes }) => {
    const { channelId, wiki, meta } = items[i]!;
    const snapshot = {
      structure: wiki.structure,
      page_refs: wiki.pages.map((p, k) => [p.id, hashes[k]!]),
      metadata: meta.metadata ?? {},
    };
    return sql`(${channelId}::text, ${n}::int, ${meta.generatedAt}::timestamptz, ${wiki.pages.length}::int,
      ${meta.model}::text, ${JSON.stringify(snapshot)}::text, ${JSON.stringify(meta.metadata ?? {})}::jsonb,
      ${JSON.stringify(wiki.structure)}::text, ${meta.staleSeq ?? null}::bigint,
      ${meta.durationMs == null ? null : Math.round(meta.durationMs)}::int, ${meta.sourceFingerprint ?? null}::text)`;
  });
  await sql`with v (channel_id, n, generated_at, page_count, model, snapshot, metadata, structure, stale_seq,
      duration_ms, fingerprint) as (values ${sql.join(rows)}),
    archived as (
      update wiki_versions w set archived_at = v.generated_at from v
      where w.channel_id = v.channel_id and w.archived_at is null returning 1
    ), version as (
      insert into wiki_versions (channel_id, version_number, generated_at, archived_at, page_count, model, snapshot,
        metadata)
      select channel_id, n, generated_at, null, page_count, model, snapshot, metadata from v returning 1
    ), structure as (
      insert into wiki_structures (channel_id, structure, updated_at)
      select channel_id, structure, generated_at from v
      on conflict (channel_id) do update set structure = excluded.structure, updated_at = excluded.updated_at
      returning 1
    )
    update wiki_state s set is_generating = false,
      is_stale = case when v.stale_seq is null then false else s.stale_seq <> v.stale_seq end,
      last_generated_at = v.generated_at, current_version = v.n, last_duration_ms = v.duration_ms,
      source_fingerprint = v.fingerprint
    from v where s.channel_id = v.channel_id`.execute(trx);
  const saved = versions.map(({ i }) => items[i]!);
  await writeSources(trx, saved);
  await writeClusters(trx, saved);
  for (const { i, n } of versions) {
    const { channelId, wiki, meta } = items[i]!;
    out[i] = {
      version_number: n,
      channel_id: channelId,
      generated_at: iso(meta.generatedAt)!,
      archived_at: null,
      page_count: wiki.pages.length,
      model: meta.model,
    };
  }
}

/**
 * Writes the items' clusters inside savePages' transaction: all of a channel's (replace), or the changed ones and
 * the removals; one statement per kind of change over all items.
 */
export async function writeClusters(
  trx: Kysely<WikiTables>,
  items: readonly { channelId: string; meta: Pick<WikiSaveMeta, 'clusters'> }[],
): Promise<void> {
  const replaced = items.filter((it) => it.meta.clusters?.replace).map((it) => it.channelId);
  if (replaced.length > 0) await trx.deleteFrom('wiki_clusters').where('channel_id', 'in', replaced).execute();
  const removed = items.flatMap(({ channelId, meta }) =>
    meta.clusters && !meta.clusters.replace ? meta.clusters.removedIds.map((id) => ({ c: channelId, id })) : [],
  );
  if (removed.length > 0)
    // Raw: delete … using an unnest of (channel, cluster) pairs.
    await sql`delete from wiki_clusters w using unnest(${removed.map((r) => r.c)}::text[],
      ${removed.map((r) => r.id)}::text[]) as t(c, id) where w.channel_id = t.c and w.id = t.id`.execute(trx);
  const upsert = items.flatMap(({ channelId, meta }) => {
    const w = meta.clusters;
    return (w ? (w.replace ? w.clusters : w.changed) : []).map((c) => ({ channelId, c }));
  });
  for (let i = 0; i < upsert.length; i += CHUNK) {
    await trx
      .insertInto('wiki_clusters')
      .values((eb) =>
        upsert.slice(i, i + CHUNK).map(({ channelId, c }) => ({
          channel_id: channelId,
          id: c.id,
          centroid: null,
          centroid_f32: centroidText(c.centroid),
          member_ids: [...c.member_ids],
          coherence: c.coherence,
          parent_id: c.parent_id,
          updated_at: eb.fn<string>('now'),
        })),
      )
      .onConflict((oc) =>
        oc.columns(['channel_id', 'id']).doUpdateSet((eb) => ({
          centroid: null,
          centroid_f32: eb.ref('excluded.centroid_f32'),
          member_ids: eb.ref('excluded.member_ids'),
          coherence: eb.ref('excluded.coherence'),
          parent_id: eb.ref('excluded.parent_id'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }
}

/** Applies the items' meta.sources inside savePages' transaction, one statement per kind of change over all items. */
async function writeSources(
  trx: Kysely<WikiTables>,
  items: readonly { channelId: string; meta: WikiSaveMeta }[],
): Promise<void> {
  const replaced = items.filter((it) => it.meta.sources?.replace).map((it) => it.channelId);
  if (replaced.length > 0) await trx.deleteFrom('wiki_sources').where('channel_id', 'in', replaced).execute();
  const removed = items.flatMap(({ channelId, meta }) =>
    (meta.sources?.remove ?? []).map((r) => ({ c: channelId, k: r.kind, id: r.id })),
  );
  if (removed.length > 0)
    // Raw: delete … using an unnest of (channel, kind, id) triples.
    await sql`delete from wiki_sources s using unnest(${removed.map((r) => r.c)}::text[],
      ${removed.map((r) => r.k)}::text[], ${removed.map((r) => r.id)}::text[]) as t(c, k, id)
      where s.channel_id = t.c and s.kind = t.k and s.id = t.id`.execute(trx);
  const upsert = items.flatMap(({ channelId, meta }) => (meta.sources?.upsert ?? []).map((r) => ({ channelId, r })));
  for (let i = 0; i < upsert.length; i += CHUNK * 5) {
    const chunk = upsert.slice(i, i + CHUNK * 5);
    await trx
      .insertInto('wiki_sources')
      .values(
        chunk.map(({ channelId, r }) => ({
          channel_id: channelId,
          kind: r.kind,
          id: r.id,
          digest: r.digest,
          body: JSON.stringify(r.body ?? null),
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['channel_id', 'kind', 'id'])
          .doUpdateSet((eb) => ({ digest: eb.ref('excluded.digest'), body: eb.ref('excluded.body') })),
      )
      .execute();
  }
}
