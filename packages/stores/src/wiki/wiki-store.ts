import { createHash } from 'node:crypto';
import { AtlasError } from '@atlas/core';
import { type Kysely, sql } from 'kysely';

/** A topic cluster as stored (structurally the wiki's TopicCluster). */
export interface StoredWikiCluster {
  id: string;
  channel_id: string;
  /** Unit-length mean of the members' unit vectors. */
  centroid: number[];
  member_ids: string[];
  /** Mean cosine of the members to the centroid, in [0, 1]. */
  coherence: number;
  parent_id: string | null;
}

/** Spec "Wiki" version summary. Times ISO 8601 UTC; archived_at is null for the current version. */
export interface WikiVersionSummary {
  version_number: number;
  channel_id: string;
  generated_at: string;
  archived_at: string | null;
  page_count: number;
  model: string;
}

/** A version with its snapshot: the structure, the pages and the generation metadata as saved. */
export interface WikiVersion<P, S> extends WikiVersionSummary {
  structure: S;
  pages: P[];
  metadata: Record<string, unknown>;
}

/** Per-channel generation state (spec "Wiki generation" flags, plus the last run). Times ISO 8601 UTC. */
export interface WikiStatus {
  channel_id: string;
  is_generating: boolean;
  is_stale: boolean;
  last_generated_at: string | null;
  current_version: number | null;
  last_duration_ms: number | null;
}

/** What savePages records with a version. */
export interface WikiSaveMeta {
  /** ISO 8601 UTC: the version's generated_at (and the previous version's archived_at). */
  generatedAt: string;
  /** Model that wrote the summaries (`extractive` when no LLM was used). */
  model: string;
  /** Duration of the generation, in ms. */
  durationMs?: number;
  /** Free-form generation metadata kept in the snapshot (mode, counts, stats). */
  metadata?: Record<string, unknown>;
  /**
   * What the version was generated from (wiki_sources): `replace` drops the channel's stored sources first (a full
   * run); `upsert` writes rows by (kind, id); `remove` deletes rows. Written in the same transaction as the version.
   */
  sources?: { replace: boolean; upsert: readonly WikiSourceRow[]; remove: readonly { kind: string; id: string }[] };
  /** The digest of all the version's sources (recorded in the state; currentVersion returns it). */
  sourceFingerprint?: string;
  /**
   * The version's topic clusters, written in the same transaction as its pages (so a failed save changes neither):
   * `replace` writes the channel's clusters as `clusters` (a full run); otherwise `changed` are upserted by id and
   * `removedIds` deleted, the others left as stored (an incremental run).
   */
  clusters?:
    | { replace: true; clusters: readonly StoredWikiCluster[] }
    | { replace: false; changed: readonly StoredWikiCluster[]; removedIds: readonly string[] };
  /**
   * Ids of pages passed unchanged from the channel's current pages (an incremental run's kept pages): their stored
   * hash is reused instead of hashing them again.
   */
  unchangedPageIds?: readonly string[];
  /**
   * staleSeq() as read when the generation started: is_stale is cleared only when it is still the channel's
   * stale_seq (a markStale during the run keeps the wiki stale). Omitted: is_stale is cleared.
   */
  staleSeq?: number;
}

/** One thing a version was generated from (wiki_sources): a fact, a source message or a graph list, with its digest. */
export interface WikiSourceRow {
  kind: 'fact' | 'message' | 'graph';
  id: string;
  /** sourceDigests' digest for facts and messages; the generator's own for graph rows. */
  digest: string;
  body: unknown;
}

/**
 * Digests of what a channel's wiki is generated from, now (WikiStore.sourceDigests): per fact (every field the wiki
 * reads, supersessions included), per source message of a fact (content hash, edit, deletion, author, time,
 * attachments), and the channel's authors (platform user id → name, for mentions in excerpts).
 */
export interface WikiSourceDigests {
  /** The channel's name and platform as the document store has them (null: unknown channel). */
  channel: { id: string; name: string; platform: string } | null;
  facts: Map<string, string>;
  messages: Map<string, string>;
  authors: Map<string, string>;
}

const iso = (v: unknown): string | null => (v == null ? null : new Date(v as string | Date).toISOString());
const parsed = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
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
/**
 * A stored centroid back as numbers: from centroid_f32, each component rounded to 7 decimals (float32 carries about
 * 7 significant digits, so 0.6 reads back as 0.6; a unit vector's cosines move by under 1e-6), or from the jsonb of
 * a row written before 0007.
 */
const centroidOf = (f32: string | null, json: unknown): number[] => {
  if (f32 == null) return parsed<number[]>(json);
  const b = Buffer.from(f32, 'base64');
  const out = new Array<number>(b.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(b.readFloatLE(i * 4) * 1e7) / 1e7;
  return out;
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
/** The current pages with their content (from the page row, or since 0005 from its revision). */
const CURRENT_PAGES = sql`select coalesce(p.page::text, r.page) as page from wiki_pages p
  left join wiki_page_revisions r on r.channel_id = p.channel_id and r.page_id = p.page_id and r.hash = p.hash`;

/** A wiki_versions row's summary columns as read. */
type VersionRow = {
  version_number: number;
  channel_id: string;
  generated_at: unknown;
  archived_at: unknown;
  page_count: number;
  model: string;
};
const toSummary = (x: VersionRow): WikiVersionSummary => ({
  version_number: Number(x.version_number),
  channel_id: x.channel_id,
  generated_at: iso(x.generated_at)!,
  archived_at: iso(x.archived_at),
  page_count: Number(x.page_count),
  model: x.model,
});

/** Content hash of a page (sha1 of its canonical JSON). */
const pageHash = (p: unknown): string => createHash('sha1').update(canonical(p)).digest('hex');

/**
 * The wiki's store: topic clusters per channel, the current pages and structure per channel, every generated version
 * (the previous current one archived when a new one is saved), and per-channel generation state. Page and structure
 * shapes are the wiki package's (`P`, `S`), stored as JSON text (migration 0008) and returned as saved. Needs migrateWiki.
 */
export class WikiStore<P extends { id: string } = { id: string } & Record<string, unknown>, S = unknown> {
  constructor(private readonly db: Kysely<unknown>) {}

  async truncate(): Promise<void> {
    await sql`truncate table wiki_clusters, wiki_pages, wiki_page_revisions, wiki_structures, wiki_versions, wiki_state,
      wiki_sources, wiki_channel_deletions`.execute(this.db);
  }

  /**
   * Deletes everything of a channel's wiki (ChannelDataDeleted): clusters, current pages and their revisions, structure,
   * every version, sources and generation state (stale flag included). Returns the current pages it had (what
   * pageCount said). Idempotent. `requestedAt` (ISO 8601, the deletion's request time) is remembered: savePages then
   * refuses a generation that started before it, which read the deleted data.
   */
  async deleteChannel(channelId: string, requestedAt?: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      if (requestedAt)
        await sql`insert into wiki_channel_deletions (channel_id, requested_at) values (${channelId}, ${requestedAt})
          on conflict (channel_id) do update
          set requested_at = greatest(wiki_channel_deletions.requested_at, excluded.requested_at)`.execute(trx);
      const pages = await sql`delete from wiki_pages where channel_id = ${channelId}`.execute(trx);
      for (const table of ['wiki_clusters', 'wiki_page_revisions', 'wiki_structures', 'wiki_versions', 'wiki_sources'])
        await sql`delete from ${sql.table(table)} where channel_id = ${channelId}`.execute(trx);
      await sql`delete from wiki_state where channel_id = ${channelId}`.execute(trx);
      return Number(pages.numAffectedRows ?? 0);
    });
  }

  /** How many pages the channel's current wiki has (0 before the first generation). */
  async pageCount(channelId: string): Promise<number> {
    const r = await sql<{ n: number }>`select count(*)::int as n from wiki_pages
      where channel_id = ${channelId}`.execute(this.db);
    return Number(r.rows[0]?.n ?? 0);
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
    const r = await sql<{ structure: unknown }>`select structure from wiki_structures
      where channel_id = ${channelId}`.execute(this.db);
    return r.rows[0] ? parsed<S>(r.rows[0].structure) : null;
  }

  /** The channel's version summaries, newest first, at most `limit` (default 10, spec). */
  async versions(channelId: string, limit = 10): Promise<WikiVersionSummary[]> {
    const r = await sql<VersionRow>`select version_number, channel_id, generated_at, archived_at, page_count, model
      from wiki_versions where channel_id = ${channelId} order by version_number desc limit ${limit}`.execute(this.db);
    return r.rows.map(toSummary);
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
  async sourceDigestsMany(channelIds: readonly string[]): Promise<Map<string, WikiSourceDigests>> {
    const ids = [...new Set(channelIds)];
    const out = new Map<string, WikiSourceDigests>(
      ids.map((id) => [id, { channel: null, facts: new Map(), messages: new Map(), authors: new Map() }]),
    );
    if (ids.length === 0) return out;
    // One round trip and one value: [kind, channel, id, value] rows of kind f (fact id, digest), m (message id,
    // digest), a (author id, name), c (the channel), as JSON text (one value parses far faster than a row each on
    // PGlite). A fact's supersessions are aggregated once and joined (a subquery per fact cost twice as much).
    const r = await sql<{ j: string }>`select coalesce(json_agg(json_build_array(x.k, x.c, x.id, x.v)), '[]')::text as j
      from (select 'f' as k, m.channel_id as c, m.id::text as id,
        md5(concat_ws('|', m.memory_text,
        m.quality_score::text, m.importance, m.fact_type, array_to_string(m.topic_tags, ','),
        array_to_string(m.entity_tags, ','), m.author_name, m.message_ts::text, m.source_message_id, m.permalink,
        coalesce(m.superseded_by::text, ''), coalesce(sup.v, ''))) as v
      from memories m left join (select s.fact_id, string_agg(s.superseded_by::text || ':' || s.certain::text, ','
          order by s.invalid_at, s.superseded_by) as v
        from fact_supersessions s join memories f on f.id = s.fact_id where f.channel_id = any(${ids}::text[])
        group by s.fact_id) sup on sup.fact_id = m.id
      where m.channel_id = any(${ids}::text[])
      union all
      select 'm', channel_id, id, md5(concat_ws('|', content_hash, coalesce(edited_at::text, ''), author_name, ts::text,
        attachments::text))
      from messages where channel_id = any(${ids}::text[]) and deleted_at is null
      and (channel_id, id) in (select channel_id, source_message_id from memories
        where channel_id = any(${ids}::text[]))
      union all
      select 'a', channel_id, author_id, author_name from (select distinct on (channel_id, author_id) channel_id,
        author_id, author_name from messages where channel_id = any(${ids}::text[])
        order by channel_id, author_id, ts desc) authors
      union all
      select 'c', id, id, json_build_array(name, platform)::text from channels
      where id = any(${ids}::text[])) x`.execute(this.db);
    const rows = JSON.parse(r.rows[0]?.j ?? '[]') as [string, string, string, string][];
    for (const [k, c, id, v] of rows) {
      const d = out.get(c);
      if (!d) continue;
      if (k === 'f') d.facts.set(id, v);
      else if (k === 'm') d.messages.set(id, v);
      else if (k === 'a') d.authors.set(id, v);
      else {
        const [name, platform] = JSON.parse(v) as [string, string];
        d.channel = { id, name, platform };
      }
    }
    return out;
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
    await sql`insert into wiki_state (channel_id, is_stale, stale_seq)
      select id, true, 1 from unnest(${ids}::text[]) as t(id)
      on conflict (channel_id) do update set is_stale = true, stale_seq = wiki_state.stale_seq + 1`.execute(this.db);
  }

  /** The channel's stale_seq (0 for a channel never marked): pass it to savePages as meta.staleSeq. */
  async staleSeq(channelId: string): Promise<number> {
    const r = await sql<{ stale_seq: string | number }>`select stale_seq from wiki_state
      where channel_id = ${channelId}`.execute(this.db);
    return Number(r.rows[0]?.stale_seq ?? 0);
  }

  /** Clears is_stale when the channel's stale_seq is still `staleSeq` (nothing marked it since it was read). */
  async clearStale(channelId: string, staleSeq: number): Promise<void> {
    await sql`update wiki_state set is_stale = false where channel_id = ${channelId}
      and stale_seq = ${staleSeq}`.execute(this.db);
  }

  /** Ids of the channels whose wiki is stale, least recently generated first. */
  async staleChannels(): Promise<string[]> {
    const r = await sql<{ channel_id: string }>`select channel_id from wiki_state
      where is_stale order by last_generated_at nulls first, channel_id`.execute(this.db);
    return r.rows.map((x) => x.channel_id);
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
    const r = await sql<{ channel_id: string; stale_seq: string | number }>`insert into wiki_state
      (channel_id, is_generating) select id, true from unnest(${[...new Set(channelIds)].sort()}::text[]) as t(id)
      order by id on conflict (channel_id) do update set is_generating = true
      returning channel_id, stale_seq`.execute(this.db);
    return new Map(r.rows.map((x) => [x.channel_id, Number(x.stale_seq ?? 0)]));
  }

  /** Sets the channel's is_generating flag. */
  async setGenerating(channelId: string, generating: boolean): Promise<void> {
    await sql`insert into wiki_state (channel_id, is_generating) values (${channelId}, ${generating})
      on conflict (channel_id) do update set is_generating = excluded.is_generating`.execute(this.db);
  }
}

/** One generation savePagesMany writes. */
type SaveItem<P, S> = { channelId: string; wiki: { structure: S; pages: readonly P[] }; meta: WikiSaveMeta };

/**
 * Writes the items `idx` of savePagesMany (distinct channels) inside its transaction: every statement covers all of
 * them. Fills `out[i]` with the new version's summary, or the CONFLICT error of a channel deleted since its generation
 * started (nothing of that item is written).
 */
async function saveRound<P extends { id: string }, S>(
  trx: Kysely<unknown>,
  idx: readonly number[],
  items: readonly SaveItem<P, S>[],
  out: (WikiVersionSummary | AtlasError)[],
): Promise<void> {
  const ids = idx.map((i) => items[i]!.channelId);
  // Serialises concurrent saves of these channels: the upsert locks their state rows until commit (in id order, so
  // two batches over overlapping channels cannot deadlock).
  await sql`insert into wiki_state (channel_id) select id from unnest(${[...ids].sort()}::text[]) as t(id) order by id
    on conflict (channel_id) do update set channel_id = excluded.channel_id`.execute(trx);
  // Per channel: the last version number, a deletion of its data requested after this generation started, and the
  // current pages' content hashes, in one round trip.
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
    await sql`delete from wiki_pages p using unnest(${gone.map((g) => g.c)}::text[], ${gone.map((g) => g.p)}::text[])
      as t(c, p) where p.channel_id = t.c and p.page_id = t.p`.execute(trx);
  for (let k = 0; k < pageRows.length; k += CHUNK) {
    const chunk = pageRows.slice(k, k + CHUNK);
    await sql`insert into wiki_pages (channel_id, page_id, page, updated_at, hash) values ${sql.join(
      chunk.map(({ c, p, h, at }) => sql`(${c}, ${p.id}, null, ${at}::timestamptz, ${h})`),
    )} on conflict (channel_id, page_id) do update set page = null, updated_at = excluded.updated_at,
      hash = excluded.hash`.execute(trx);
    await sql`insert into wiki_page_revisions (channel_id, page_id, hash, page) values ${sql.join(
      chunk.map(({ c, p, h }) => sql`(${c}, ${p.id}, ${h}, ${JSON.stringify(p)})`),
    )} on conflict (channel_id, page_id, hash) do nothing`.execute(trx);
  }
  // The previous versions archived, the new ones inserted, the structures and the states updated: one statement (the
  // archiving update sees the table as it was before the insert).
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
async function writeClusters(
  trx: Kysely<unknown>,
  items: readonly { channelId: string; meta: Pick<WikiSaveMeta, 'clusters'> }[],
): Promise<void> {
  const replaced = items.filter((it) => it.meta.clusters?.replace).map((it) => it.channelId);
  if (replaced.length > 0)
    await sql`delete from wiki_clusters where channel_id = any(${replaced}::text[])`.execute(trx);
  const removed = items.flatMap(({ channelId, meta }) =>
    meta.clusters && !meta.clusters.replace ? meta.clusters.removedIds.map((id) => ({ c: channelId, id })) : [],
  );
  if (removed.length > 0)
    await sql`delete from wiki_clusters w using unnest(${removed.map((r) => r.c)}::text[],
      ${removed.map((r) => r.id)}::text[]) as t(c, id) where w.channel_id = t.c and w.id = t.id`.execute(trx);
  const upsert = items.flatMap(({ channelId, meta }) => {
    const w = meta.clusters;
    return (w ? (w.replace ? w.clusters : w.changed) : []).map((c) => ({ channelId, c }));
  });
  for (let i = 0; i < upsert.length; i += CHUNK) {
    const values = upsert
      .slice(i, i + CHUNK)
      .map(
        ({ channelId, c }) =>
          sql`(${channelId}, ${c.id}, null, ${centroidText(c.centroid)}, ${[...c.member_ids]}::text[], ${c.coherence}, ${c.parent_id}, now())`,
      );
    await sql`insert into wiki_clusters (channel_id, id, centroid, centroid_f32, member_ids, coherence, parent_id,
      updated_at) values ${sql.join(values)} on conflict (channel_id, id) do update set centroid = null,
      centroid_f32 = excluded.centroid_f32,
      member_ids = excluded.member_ids, coherence = excluded.coherence, parent_id = excluded.parent_id,
      updated_at = excluded.updated_at`.execute(trx);
  }
}

/** Applies the items' meta.sources inside savePages' transaction, one statement per kind of change over all items. */
async function writeSources(
  trx: Kysely<unknown>,
  items: readonly { channelId: string; meta: WikiSaveMeta }[],
): Promise<void> {
  const replaced = items.filter((it) => it.meta.sources?.replace).map((it) => it.channelId);
  if (replaced.length > 0) await sql`delete from wiki_sources where channel_id = any(${replaced}::text[])`.execute(trx);
  const removed = items.flatMap(({ channelId, meta }) =>
    (meta.sources?.remove ?? []).map((r) => ({ c: channelId, k: r.kind, id: r.id })),
  );
  if (removed.length > 0)
    await sql`delete from wiki_sources s using unnest(${removed.map((r) => r.c)}::text[],
      ${removed.map((r) => r.k)}::text[], ${removed.map((r) => r.id)}::text[]) as t(c, k, id)
      where s.channel_id = t.c and s.kind = t.k and s.id = t.id`.execute(trx);
  const upsert = items.flatMap(({ channelId, meta }) => (meta.sources?.upsert ?? []).map((r) => ({ channelId, r })));
  for (let i = 0; i < upsert.length; i += CHUNK * 5) {
    const chunk = upsert.slice(i, i + CHUNK * 5);
    await sql`insert into wiki_sources (channel_id, kind, id, digest, body) values ${sql.join(
      chunk.map(
        ({ channelId, r }) => sql`(${channelId}, ${r.kind}, ${r.id}, ${r.digest}, ${JSON.stringify(r.body ?? null)})`,
      ),
    )} on conflict (channel_id, kind, id) do update set digest = excluded.digest, body = excluded.body`.execute(trx);
  }
}
