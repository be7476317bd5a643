import type { AtlasError } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { type Kysely, sql } from 'kysely';
import { centroidOf, iso, parsed, toSummary, type VersionRow } from './rows.js';
import { saveRound, writeClusters } from './save.js';
import { readSourceDigests } from './source-digests.js';
import type { WikiTables } from './tables.js';
import type {
  StoredWikiCluster,
  WikiSaveMeta,
  WikiSourceDigests,
  WikiSourceRow,
  WikiStatus,
  WikiVersion,
  WikiVersionSummary,
} from './types.js';

/** The current pages with their content (from the page row, or since 0005 from its revision). Raw: a text cast in coalesce. */
const CURRENT_PAGES = sql`select coalesce(p.page::text, r.page) as page from wiki_pages p
  left join wiki_page_revisions r on r.channel_id = p.channel_id and r.page_id = p.page_id and r.hash = p.hash`;

/**
 * The wiki's store: topic clusters per channel, the current pages and structure per channel, every generated version
 * (the previous current one archived when a new one is saved), and per-channel generation state. Page and structure
 * shapes are the wiki package's (`P`, `S`), stored as JSON text (migration 0008) and returned as saved. Needs migrateWiki.
 */
export class WikiStore<P extends { id: string } = { id: string } & Record<string, unknown>, S = unknown> {
  private readonly db: Kysely<WikiTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<WikiTables>();
  }

  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table wiki_clusters, wiki_pages, wiki_page_revisions, wiki_structures, wiki_versions, wiki_state,
      wiki_sources, wiki_channel_deletions, wiki_jobs`.execute(this.db);
  }

  /**
   * Deletes everything of a channel's wiki (ChannelDataDeleted): clusters, current pages and their revisions, structure,
   * every version, sources, generation state (stale flag included) and job history. Returns the current pages it had (what
   * pageCount said). Idempotent. `requestedAt` (ISO 8601, the deletion's request time) is remembered: savePages then
   * refuses a generation that started before it, which read the deleted data.
   */
  async deleteChannel(channelId: string, requestedAt?: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      if (requestedAt)
        await trx
          .insertInto('wiki_channel_deletions')
          .values({ channel_id: channelId, requested_at: requestedAt })
          .onConflict((oc) =>
            oc.column('channel_id').doUpdateSet((eb) => ({
              requested_at: eb.fn('greatest', ['wiki_channel_deletions.requested_at', 'excluded.requested_at']),
            })),
          )
          .execute();
      const pages = await trx.deleteFrom('wiki_pages').where('channel_id', '=', channelId).executeTakeFirst();
      for (const table of [
        'wiki_clusters',
        'wiki_page_revisions',
        'wiki_structures',
        'wiki_versions',
        'wiki_sources',
        'wiki_state',
        'wiki_jobs',
      ] as const)
        await trx.deleteFrom(table).where('channel_id', '=', channelId).execute();
      return Number(pages.numDeletedRows);
    });
  }

  /** How many pages the channel's current wiki has (0 before the first generation). */
  async pageCount(channelId: string): Promise<number> {
    const r = await this.db
      .selectFrom('wiki_pages')
      .select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n'))
      .where('channel_id', '=', channelId)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /**
   * The topic cluster each of `factIds` belongs to in its channel's current wiki (the cluster whose member_ids hold
   * it; every fact is in at most one stored cluster), by fact id: the memory's `cluster_id` (spec "Memory" detail
   * form). A fact the wiki has not clustered yet (no generation since it was extracted, or no vector) is absent.
   * One read over the GIN index of member_ids (migration 0009).
   */
  async clusterIdsOf(factIds: readonly string[]): Promise<Map<string, string>> {
    const ids = [...new Set(factIds)];
    const out = new Map<string, string>();
    for (let i = 0; i < ids.length; i += 1000) {
      const chunk = ids.slice(i, i + 1000);
      // Raw: a lateral unnest and the array overlap operator (served by the GIN index).
      const rows = await sql<{ fact_id: string; id: string }>`select m as fact_id, c.id from wiki_clusters c
          cross join lateral unnest(c.member_ids) m
        where c.member_ids && ${chunk}::text[] and m = any(${chunk}::text[])
        order by c.id`.execute(this.db);
      for (const r of rows.rows) if (!out.has(r.fact_id)) out.set(r.fact_id, r.id);
    }
    return out;
  }

  /** The channel's stored clusters, ordered by id. */
  async clusters(channelId: string): Promise<StoredWikiCluster[]> {
    const rows = await sql<{
      id: string;
      channel_id: string;
      centroid: unknown;
      centroid_f32: string | null;
      member_ids: string[];
      coherence: number;
      parent_id: string | null;
    }>`select id, channel_id, case when centroid_f32 is null then centroid end as centroid, centroid_f32, member_ids,
      coherence, parent_id from wiki_clusters
      where channel_id = ${channelId} order by id`.execute(this.db);
    return rows.rows.map((r) => ({
      id: r.id,
      channel_id: r.channel_id,
      centroid: centroidOf(r.centroid_f32, r.centroid),
      member_ids: r.member_ids,
      coherence: Number(r.coherence),
      parent_id: r.parent_id,
    }));
  }

  /** Replaces all of the channel's clusters with `clusters` (an empty list removes them). */
  async replaceClusters(channelId: string, clusters: readonly StoredWikiCluster[]): Promise<void> {
    await this.db
      .transaction()
      .execute((trx) => writeClusters(trx, [{ channelId, meta: { clusters: { replace: true, clusters } } }]));
  }

  /**
   * Writes only what changed of the channel's clusters: upserts `changed` (by id) and deletes `removedIds`; the
   * other stored clusters stay as they are.
   */
  async updateClusters(
    channelId: string,
    changed: readonly StoredWikiCluster[],
    removedIds: readonly string[],
  ): Promise<void> {
    await this.db
      .transaction()
      .execute((trx) =>
        writeClusters(trx, [{ channelId, meta: { clusters: { replace: false, changed, removedIds } } }]),
      );
  }

  /**
   * Saves a generated wiki as the channel's current pages and structure and as a new version (number = last + 1),
   * archiving the previous current version at `meta.generatedAt`; clears is_stale (unless marked again since
   * `meta.staleSeq`) and is_generating, and records the run in the state.
   * Returns the new version's summary. Throws AtlasError CONFLICT when the channel's data was deleted after the
   * generation started (see deleteChannel); nothing is saved then.
   */
  async savePages(
    channelId: string,
    wiki: { structure: S; pages: readonly P[] },
    meta: WikiSaveMeta,
  ): Promise<WikiVersionSummary> {
    const [r] = await this.savePagesMany([{ channelId, wiki, meta }]);
    if (r instanceof Error) throw r;
    return r!;
  }

  /**
   * savePages for several generations in one transaction, each statement covering all of them (a batched pass over
   * the stale channels writes its wikis in about ten statements instead of ten per channel). Returns, in order, each
   * item's new version summary, or the AtlasError CONFLICT of an item whose channel's data was deleted after its
   * generation started (that item saves nothing; the others are saved). Any other failure rolls back every item and
   * throws. The same channel twice: saved one after the other (versions n and n + 1), in the order given.
   */
  async savePagesMany(
    items: readonly { channelId: string; wiki: { structure: S; pages: readonly P[] }; meta: WikiSaveMeta }[],
  ): Promise<(WikiVersionSummary | AtlasError)[]> {
    if (items.length === 0) return [];
    // Rounds of distinct channels (a channel's second item sees its first one's version).
    const rounds: number[][] = [];
    const roundOf = new Map<string, number>();
    items.forEach((it, i) => {
      const r = (roundOf.get(it.channelId) ?? -1) + 1;
      roundOf.set(it.channelId, r);
      if (!rounds[r]) rounds[r] = [];
      rounds[r]!.push(i);
    });
    const out: (WikiVersionSummary | AtlasError)[] = new Array(items.length);
    await this.db.transaction().execute(async (trx) => {
      for (const round of rounds) await saveRound(trx, round, items, out);
    });
    return out;
  }

  /** The channel's current page `pageId`, or null. */
  async page(channelId: string, pageId: string): Promise<P | null> {
    const r = await sql<{ page: unknown }>`${CURRENT_PAGES} where p.channel_id = ${channelId}
      and p.page_id = ${pageId}`.execute(this.db);
    return r.rows[0] ? parsed<P>(r.rows[0].page) : null;
  }

  /** All of the channel's current pages, ordered by page id. */
  async pages(channelId: string): Promise<P[]> {
    const r = await sql<{ page: unknown }>`${CURRENT_PAGES} where p.channel_id = ${channelId}
      order by p.page_id`.execute(this.db);
    return r.rows.map((x) => parsed<P>(x.page));
  }

  /** The channel's current structure, or null before the first generation. */
  async structure(channelId: string): Promise<S | null> {
    const row = await this.db
      .selectFrom('wiki_structures')
      .select('structure')
      .where('channel_id', '=', channelId)
      .executeTakeFirst();
    return row ? parsed<S>(row.structure) : null;
  }

  /** The channel's version summaries, newest first, at most `limit` (default 10, spec). */
  async versions(channelId: string, limit = 10): Promise<WikiVersionSummary[]> {
    const rows = await this.db
      .selectFrom('wiki_versions')
      .select(['version_number', 'channel_id', 'generated_at', 'archived_at', 'page_count', 'model'])
      .where('channel_id', '=', channelId)
      .orderBy('version_number', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toSummary);
  }

  /**
   * The channel's version current at `asOf` (issue 27 point 2, "As of a date"): the newest one generated at or before
   * that ISO 8601 instant, as a summary; null when none was generated by then.
   */
  async versionAsOf(channelId: string, asOf: string): Promise<WikiVersionSummary | null> {
    const row = await this.db
      .selectFrom('wiki_versions')
      .select(['version_number', 'channel_id', 'generated_at', 'archived_at', 'page_count', 'model'])
      .where('channel_id', '=', channelId)
      .where('generated_at', '<=', asOf)
      .orderBy('generated_at', 'desc')
      .orderBy('version_number', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toSummary(row) : null;
  }

  /** Version `n` of the channel with its snapshot, or null. */
  async version(channelId: string, n: number): Promise<WikiVersion<P, S> | null> {
    const r = await sql<
      VersionRow & { snapshot: unknown }
    >`select version_number, channel_id, generated_at, archived_at, page_count, model, snapshot from wiki_versions
      where channel_id = ${channelId} and version_number = ${n}`.execute(this.db);
    const x = r.rows[0];
    if (!x) return null;
    const snap = parsed<{
      structure: S;
      pages?: P[];
      page_refs?: [string, string][];
      metadata?: Record<string, unknown>;
    }>(x.snapshot);
    let pages = snap.pages ?? [];
    if (snap.page_refs) {
      // Assembled from the page revisions the snapshot references.
      const refs = snap.page_refs;
      const revs = await sql<{ page_id: string; hash: string; page: unknown }>`select page_id, hash, page
        from wiki_page_revisions where channel_id = ${channelId}
        and hash = any(${refs.map((r) => r[1])}::text[])`.execute(this.db);
      const byKey = new Map(revs.rows.map((r) => [`${r.page_id}\u0000${r.hash}`, r.page]));
      pages = refs.flatMap(([id, h]) => {
        const page = byKey.get(`${id}\u0000${h}`);
        return page === undefined ? [] : [parsed<P>(page)];
      });
    }
    return {
      ...toSummary(x),
      structure: snap.structure,
      pages,
      metadata: snap.metadata ?? {},
    };
  }

  /**
   * Digests of what the channel's wiki is generated from, computed in SQL without reading the rows out (one query
   * each): every fact of the channel (the fields the wiki reads, supersessions included), every message a fact came
   * from (deleted ones left out), and the authors of the channel's messages. Reads the document store's tables
   * (same database). Compared with the stored sources, they tell an incremental run what to read.
   */
  async sourceDigests(channelId: string): Promise<WikiSourceDigests> {
    return (await this.sourceDigestsMany([channelId])).get(channelId)!;
  }

  /** sourceDigests of several channels in one query, by channel id (every channel asked for is in the map). */
  sourceDigestsMany(channelIds: readonly string[]): Promise<Map<string, WikiSourceDigests>> {
    return readSourceDigests(this.db, channelIds);
  }

  /** What the channel's current version was generated from (savePages meta.sources), every row. */
  async sources(channelId: string): Promise<WikiSourceRow[]> {
    const r = await sql<Omit<WikiSourceRow, 'body'> & { body: string }>`select kind, id, digest, body from wiki_sources
      where channel_id = ${channelId}`.execute(this.db);
    return r.rows.map((x) => ({ kind: x.kind, id: x.id, digest: x.digest, body: JSON.parse(x.body) as unknown }));
  }

  /**
   * The channels among `messages` whose current wiki was generated from one of those messages (a `message` source):
   * a retraction of such a message's facts or entities changes the wiki.
   */
  async channelsCiting(messages: readonly { channelId: string; messageId: string }[]): Promise<Set<string>> {
    if (messages.length === 0) return new Set();
    const r = await sql<{ channel_id: string }>`select distinct s.channel_id from wiki_sources s
      join unnest(${messages.map((m) => m.channelId)}::text[], ${messages.map((m) => m.messageId)}::text[]) as t(c, m)
        on s.channel_id = t.c and s.id = t.m
      where s.kind = 'message'`.execute(this.db);
    return new Set(r.rows.map((x) => x.channel_id));
  }

  /**
   * The channel's current version: its summary, generation metadata and the source fingerprint it was generated from
   * (savePages meta.sourceFingerprint), without the pages (null: none yet).
   */
  async currentVersion(
    channelId: string,
  ): Promise<(WikiVersionSummary & { metadata: Record<string, unknown>; source_fingerprint: string | null }) | null> {
    return (await this.currentVersions([channelId])).get(channelId) ?? null;
  }

  /** currentVersion of several channels in one query; channels without a version are absent from the map. */
  async currentVersions(
    channelIds: readonly string[],
  ): Promise<
    Map<string, WikiVersionSummary & { metadata: Record<string, unknown>; source_fingerprint: string | null }>
  > {
    const out = new Map<
      string,
      WikiVersionSummary & { metadata: Record<string, unknown>; source_fingerprint: string | null }
    >();
    if (channelIds.length === 0) return out;
    const v = await sql<VersionRow & { metadata: unknown; source_fingerprint: string | null }>`select distinct on
        (v.channel_id) v.version_number, v.channel_id, v.generated_at, v.archived_at, v.page_count, v.model,
        coalesce(v.metadata, v.snapshot::jsonb -> 'metadata') as metadata, st.source_fingerprint
      from wiki_versions v left join wiki_state st on st.channel_id = v.channel_id
      where v.channel_id = any(${[...new Set(channelIds)]}::text[]) and v.archived_at is null
      order by v.channel_id, v.version_number desc`.execute(this.db);
    for (const x of v.rows)
      out.set(x.channel_id, {
        ...toSummary(x),
        metadata: parsed<Record<string, unknown>>(x.metadata) ?? {},
        source_fingerprint: x.source_fingerprint,
      });
    return out;
  }

  /**
   * The last generation of each channel that has a current version (of `channelIds`, or of every channel with null):
   * what GET /api/wiki/metadata reports. `page_count` the current pages (pageCount), `duration_ms` the generation's
   * duration (savePages meta.durationMs, null when it was not recorded), `cost_usd` what its LLM summaries cost
   * (metadata.summaries.costUsd; 0 when no LLM wrote any), `model` the summaries' model (`extractive` without an
   * LLM). Channels never generated are absent.
   */
  async generations(
    channelIds: readonly string[] | null,
  ): Promise<
    Map<
      string,
      { version_number: number; page_count: number; duration_ms: number | null; cost_usd: number; model: string }
    >
  > {
    const only = channelIds === null ? sql`` : sql`and s.channel_id = any(${[...new Set(channelIds)]}::text[])`;
    const r = await sql<{
      channel_id: string;
      version_number: number;
      duration_ms: number | null;
      pages: number;
      cost: string | null;
      model: string | null;
    }>`select s.channel_id, s.current_version as version_number, s.last_duration_ms as duration_ms,
        (select count(*) from wiki_pages p where p.channel_id = s.channel_id)::int as pages, v.model,
        coalesce(v.metadata, v.snapshot::jsonb -> 'metadata') -> 'summaries' ->> 'costUsd' as cost
      from wiki_state s left join wiki_versions v on v.channel_id = s.channel_id
        and v.version_number = s.current_version
      where s.current_version is not null ${only}`.execute(this.db);
    const out = new Map<
      string,
      { version_number: number; page_count: number; duration_ms: number | null; cost_usd: number; model: string }
    >();
    for (const x of r.rows) {
      const cost = x.cost == null ? 0 : Number(x.cost);
      out.set(x.channel_id, {
        version_number: Number(x.version_number),
        page_count: Number(x.pages),
        duration_ms: x.duration_ms == null ? null : Number(x.duration_ms),
        cost_usd: Number.isFinite(cost) ? cost : 0,
        model: x.model ?? 'extractive',
      });
    }
    return out;
  }

  /** The channel's generation state (all flags false / fields null for a channel never generated nor marked). */
  async status(channelId: string): Promise<WikiStatus> {
    const r = await sql<{
      is_generating: boolean;
      is_stale: boolean;
      last_generated_at: unknown;
      current_version: number | null;
      last_duration_ms: number | null;
    }>`select is_generating, is_stale, last_generated_at, current_version, last_duration_ms from wiki_state
      where channel_id = ${channelId}`.execute(this.db);
    const x = r.rows[0];
    return {
      channel_id: channelId,
      is_generating: x?.is_generating ?? false,
      is_stale: x?.is_stale ?? false,
      last_generated_at: iso(x?.last_generated_at),
      current_version: x?.current_version == null ? null : Number(x.current_version),
      last_duration_ms: x?.last_duration_ms == null ? null : Number(x.last_duration_ms),
    };
  }

  /**
   * Marks the channels' wikis stale (spec "Wiki generation": new knowledge marks the wiki dirty) and bumps their
   * stale_seq; cleared by savePages unless another markStale came in during that generation.
   */
  async markStale(...channelIds: string[]): Promise<void> {
    const ids = [...new Set(channelIds)];
    if (ids.length === 0) return;
    // Raw: an insert from unnest.
    await sql`insert into wiki_state (channel_id, is_stale, stale_seq)
      select id, true, 1 from unnest(${ids}::text[]) as t(id)
      on conflict (channel_id) do update set is_stale = true, stale_seq = wiki_state.stale_seq + 1`.execute(this.db);
  }

  /**
   * Marks stale every channel that has a wiki (a current version), as markStale does; after a vector space switch
   * (docs/models.md) their next runs cluster the new model's vectors. Returns how many were marked.
   */
  async markAllStale(): Promise<number> {
    const r = await this.db
      .updateTable('wiki_state')
      .set((eb) => ({ is_stale: true, stale_seq: eb('stale_seq', '+', 1) }))
      .where('current_version', 'is not', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** The channel's stale_seq (0 for a channel never marked): pass it to savePages as meta.staleSeq. */
  async staleSeq(channelId: string): Promise<number> {
    const row = await this.db
      .selectFrom('wiki_state')
      .select('stale_seq')
      .where('channel_id', '=', channelId)
      .executeTakeFirst();
    return Number(row?.stale_seq ?? 0);
  }

  /** Clears is_stale when the channel's stale_seq is still `staleSeq` (nothing marked it since it was read). */
  async clearStale(channelId: string, staleSeq: number): Promise<void> {
    await this.db
      .updateTable('wiki_state')
      .set({ is_stale: false })
      .where('channel_id', '=', channelId)
      .where('stale_seq', '=', staleSeq)
      .execute();
  }

  /** Ids of the channels whose wiki is stale, least recently generated first. */
  async staleChannels(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('wiki_state')
      .select('channel_id')
      .where('is_stale', '=', true)
      .orderBy('last_generated_at', (ob) => ob.asc().nullsFirst())
      .orderBy('channel_id')
      .execute();
    return rows.map((x) => x.channel_id);
  }

  /**
   * Starts a generation of the channel in one statement: sets is_generating and returns the channel's stale_seq (as
   * staleSeq), read before the generation reads its sources so that anything marked stale meanwhile keeps it stale.
   * savePages clears is_generating; a run that does not save clears it with setGenerating(false).
   */
  async beginGeneration(channelId: string): Promise<number> {
    return (await this.beginGenerations([channelId])).get(channelId)!;
  }

  /** beginGeneration of several channels in one statement (in id order): their stale_seq by channel id. */
  async beginGenerations(channelIds: readonly string[]): Promise<Map<string, number>> {
    if (channelIds.length === 0) return new Map();
    // Raw: an insert from unnest in id order (locks taken in that order).
    const r = await sql<{ channel_id: string; stale_seq: string | number }>`insert into wiki_state
      (channel_id, is_generating) select id, true from unnest(${[...new Set(channelIds)].sort()}::text[]) as t(id)
      order by id on conflict (channel_id) do update set is_generating = true
      returning channel_id, stale_seq`.execute(this.db);
    return new Map(r.rows.map((x) => [x.channel_id, Number(x.stale_seq ?? 0)]));
  }

  /** Sets the channel's is_generating flag. */
  async setGenerating(channelId: string, generating: boolean): Promise<void> {
    await this.db
      .insertInto('wiki_state')
      .values({ channel_id: channelId, is_generating: generating })
      .onConflict((oc) =>
        oc.column('channel_id').doUpdateSet((eb) => ({ is_generating: eb.ref('excluded.is_generating') })),
      )
      .execute();
  }
}
