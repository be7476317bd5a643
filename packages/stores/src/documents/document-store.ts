import type {
  ChannelDiscovered,
  ChannelSettings,
  ContradictionResolved,
  DigestPosted,
  EntitiesExtracted,
  FactsExtracted,
  MessageIngested,
} from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { type Kysely, sql } from 'kysely';
import { deleteChannelPart, messagesBefore, settingsOf, writeSettings } from './channel-data.js';
import {
  type ContradictionQuery,
  type ContradictionView,
  getContradiction,
  listContradictions,
  resolutionsOf,
  writeResolutions,
} from './contradictions.js';
import { deleteMessageVersions, textsAsOf, writeMessageVersions } from './message-versions.js';
import type {
  AsOfRead,
  ChannelDataPart,
  ChannelDetailView,
  ChannelView,
  DocumentStore,
  ExpiredMessage,
  MemoryDetailView,
  MemoryListView,
  MemoryQuery,
  MessagePage,
  MessageView,
  TopicWindowRow,
} from './port.js';
import {
  cursorToIso,
  iso,
  preciseTimestamp,
  toChannelView,
  toMemoryDetail,
  toMemoryList,
  toMessageView,
} from './rows.js';
import type { DocumentTables } from './tables.js';
import { CHUNK, writeFacts, writeGraphLinks } from './writes.js';

export { cursorToIso, preciseTimestamp } from './rows.js';

/** The DocumentStore on Postgres or PGlite through Kysely (one implementation for both). */
export class KyselyDocumentStore implements DocumentStore {
  private readonly db: Kysely<DocumentTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<DocumentTables>();
  }

  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table memories, messages, message_versions, channels, memory_entities, fact_supersessions,
      contradiction_resolutions, digest_posts`.execute(this.db);
  }

  async upsertChannel(c: ChannelDiscovered, syncedAt: Date): Promise<void> {
    const row = {
      id: c.channelId,
      platform: c.platform,
      workspace_id: c.workspaceId,
      workspace_name: c.workspaceName,
      name: c.name,
      is_private: c.isPrivate,
      member_count: c.memberCount,
      topic: c.topic,
      platform_created_at: c.createdAt,
      last_sync: syncedAt,
    };
    await this.db
      .insertInto('channels')
      .values(row)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          ...row,
          last_sync: sql`greatest(${eb.ref('channels.last_sync')}, ${eb.ref('excluded.last_sync')})`,
          updated_at: sql`now()`,
        })),
      )
      .execute();
  }

  async upsertMessages(messages: readonly MessageIngested[]): Promise<void> {
    const rows = messages.map((m) => ({
      channel_id: m.channelId,
      id: m.platformMessageId,
      message_uuid: m.messageId,
      platform: m.platform,
      text: m.text,
      author_id: m.author.id,
      author_name: m.author.name,
      author_is_bot: m.author.isBot,
      ts: m.platform === 'platform_a' ? preciseTimestamp(m.platformMessageId, m.timestamp) : m.timestamp,
      thread_ts: m.threadTs,
      reply_to_id: m.replyToId,
      subtype: m.subtype,
      reactions: JSON.stringify(m.reactions),
      attachments: JSON.stringify(m.attachments),
      has_media: m.attachments.length > 0,
      edited_at: m.editedAt,
      permalink: m.permalink,
      content_hash: m.contentHash,
    }));
    // The texts an edited message had, before the upsert overwrites its text (as of a date shows the text of then).
    await writeMessageVersions(this.db, rows);
    // The last event of a message wins inside one batch too.
    const latest = [...new Map(rows.map((r) => [`${r.channel_id}\u0000${r.id}`, r])).values()];
    for (let i = 0; i < latest.length; i += CHUNK) {
      await this.db
        .insertInto('messages')
        .values(latest.slice(i, i + CHUNK))
        .onConflict((oc) =>
          oc.columns(['channel_id', 'id']).doUpdateSet((eb) => ({
            text: eb.ref('excluded.text'),
            author_id: eb.ref('excluded.author_id'),
            author_name: eb.ref('excluded.author_name'),
            author_is_bot: eb.ref('excluded.author_is_bot'),
            thread_ts: eb.ref('excluded.thread_ts'),
            reply_to_id: eb.ref('excluded.reply_to_id'),
            subtype: eb.ref('excluded.subtype'),
            reactions: eb.ref('excluded.reactions'),
            attachments: eb.ref('excluded.attachments'),
            has_media: eb.ref('excluded.has_media'),
            edited_at: eb.ref('excluded.edited_at'),
            permalink: eb.ref('excluded.permalink'),
            content_hash: eb.ref('excluded.content_hash'),
            deleted_at: null,
          })),
        )
        .execute();
    }
  }

  async markMessageDeleted(channelId: string, platformMessageId: string, deletedAt: string): Promise<void> {
    await this.db
      .updateTable('messages')
      .set({ deleted_at: deletedAt, text: '', reactions: '[]', attachments: '[]', has_media: false })
      .where('channel_id', '=', channelId)
      .where('id', '=', platformMessageId)
      .execute();
    await deleteMessageVersions(this.db, channelId, platformMessageId);
  }

  replaceFacts(sets: readonly FactsExtracted[]): Promise<void> {
    return writeFacts(this.db, sets);
  }

  replaceGraphLinks(sets: readonly EntitiesExtracted[]): Promise<void> {
    return writeGraphLinks(this.db, sets);
  }

  /**
   * Overlays graph links and validity (replaceGraphLinks) on memory rows; with `asOf`, only the supersessions and
   * contradiction flags raised by messages at or before it (their invalid_at is that message's time).
   */
  private async withGraphLinks<T extends MemoryDetailView>(rows: T[], asOf?: string): Promise<T[]> {
    if (rows.length === 0) return rows;
    const ids = rows.map((r) => r.id);
    const ents = await this.db
      .selectFrom('memory_entities')
      .select(['fact_id', 'entity_id'])
      .where('fact_id', 'in', ids)
      .orderBy('entity_id')
      .execute();
    const sups = await this.db
      .selectFrom('fact_supersessions')
      .selectAll()
      .where('fact_id', 'in', ids)
      .$if(asOf !== undefined, (q) => q.where('invalid_at', '<=', asOf!))
      .orderBy('invalid_at')
      .execute();
    const resolved = await resolutionsOf(
      this.db,
      [...new Set(sups.filter((x) => !x.certain).map((x) => x.fact_id))],
      asOf,
    );
    const byFact = new Map<string, string[]>();
    for (const e of ents) byFact.set(e.fact_id, [...(byFact.get(e.fact_id) ?? []), e.entity_id]);
    return rows.map((r) => {
      // A potential contradiction an admin resolved (ContradictionResolved): `later` supersedes like a certain
      // supersession (invalid_at the later fact's time); `earlier` and `both` clear the flag, supersede nothing.
      const mine = sups
        .filter((x) => x.fact_id === r.id)
        .map((x) => {
          const res = x.certain ? undefined : resolved.get(`${x.fact_id}:${x.superseded_by}`);
          const invalidAt = res?.outcome === 'later' ? res.invalid_at : iso(x.invalid_at as Date)!;
          return { ...x, invalidAt, supersedes: x.certain || res?.outcome === 'later', open: !x.certain && !res };
        });
      const certain = mine
        .filter((x) => x.supersedes)
        .sort((a, b) => a.invalidAt.localeCompare(b.invalidAt))
        .at(-1);
      // The row's own validity (never written today) counts as of asOf only when it was already invalid then.
      const own = asOf === undefined || (r.invalid_at !== null && r.invalid_at <= asOf);
      return {
        ...r,
        graph_entity_ids: byFact.get(r.id) ?? r.graph_entity_ids,
        superseded_by: certain?.superseded_by ?? (own ? r.superseded_by : null),
        invalid_at: certain ? certain.invalidAt : own ? r.invalid_at : null,
        potential_contradiction: r.potential_contradiction || mine.some((x) => x.open),
      };
    });
  }

  applyContradictionResolutions(
    resolutions: readonly ContradictionResolved[],
  ): Promise<{ written: number; skipped: number }> {
    return writeResolutions(this.db, resolutions);
  }

  listContradictions(q: ContradictionQuery): Promise<{ rows: ContradictionView[]; total: number }> {
    return listContradictions(this.db, q);
  }

  getContradiction(id: string): Promise<ContradictionView | null> {
    return getContradiction(this.db, id);
  }

  deleteChannelData(channelId: string, part: ChannelDataPart): Promise<number> {
    return deleteChannelPart(this.db, channelId, part);
  }

  applyChannelSettings(channelId: string, settings: ChannelSettings): Promise<boolean> {
    return writeSettings(this.db, channelId, settings);
  }

  async channelSettings(channelId: string): Promise<ChannelSettings | null> {
    const row = await this.db.selectFrom('channels').select('settings').where('id', '=', channelId).executeTakeFirst();
    return row ? settingsOf(row.settings as Record<string, unknown>) : null;
  }

  async channelSettingsMany(channelIds: readonly string[]): Promise<Map<string, ChannelSettings>> {
    const ids = [...new Set(channelIds)];
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('channels').select(['id', 'settings']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, settingsOf(r.settings as Record<string, unknown>)]));
  }

  async channelsWithRetention(): Promise<{ channelId: string; retentionDays: number }[]> {
    const rows = await this.db
      .selectFrom('channels')
      .select(['id', 'settings'])
      .where(sql<boolean>`settings ? 'retention_days' and jsonb_typeof(settings->'retention_days') = 'number'`)
      .orderBy('id')
      .execute();
    return rows.flatMap((r) => {
      const days = settingsOf(r.settings as Record<string, unknown>).retention_days;
      return days === null ? [] : [{ channelId: r.id, retentionDays: days }];
    });
  }

  async channelsWithDigest(): Promise<{ channelId: string; days: number; lastPost: DigestPosted | null }[]> {
    const rows = await this.db
      .selectFrom('channels as c')
      .leftJoin('digest_posts as d', 'd.channel_id', 'c.id')
      .select([
        'c.id',
        'c.settings',
        'd.platform',
        'd.connection_id',
        'd.period_start',
        'd.period_end',
        'd.days',
        'd.platform_message_id',
        'd.citations',
        'd.posted_at',
      ])
      .where(sql<boolean>`c.settings->>'digest_enabled' = 'true'`)
      .orderBy('c.id')
      .execute();
    const iso = (t: unknown) => new Date(t as string).toISOString();
    return rows.map((r) => ({
      channelId: r.id,
      days: settingsOf(r.settings as Record<string, unknown>).digest_days,
      lastPost:
        r.platform === null
          ? null
          : {
              channelId: r.id,
              platform: r.platform as DigestPosted['platform'],
              connectionId: r.connection_id!,
              periodStart: iso(r.period_start),
              periodEnd: iso(r.period_end),
              days: r.days!,
              platformMessageId: r.platform_message_id!,
              citations: r.citations!,
              postedAt: iso(r.posted_at),
            },
    }));
  }

  async recordDigestPosts(posts: readonly DigestPosted[]): Promise<void> {
    for (const p of posts) {
      const row = {
        channel_id: p.channelId,
        platform: p.platform,
        connection_id: p.connectionId,
        period_start: p.periodStart,
        period_end: p.periodEnd,
        days: p.days,
        platform_message_id: p.platformMessageId,
        citations: p.citations,
        posted_at: p.postedAt,
      };
      // The latest period end wins (a replay in log order ends with the same row).
      await this.db
        .insertInto('digest_posts')
        .values(row)
        .onConflict((oc) =>
          oc.column('channel_id').doUpdateSet(row).where(sql<boolean>`digest_posts.period_end <= excluded.period_end`),
        )
        .execute();
    }
  }

  messagesBefore(channelId: string, before: string, limit: number): Promise<ExpiredMessage[]> {
    return messagesBefore(this.db, channelId, before, limit);
  }

  async listChannels(): Promise<ChannelView[]> {
    const rows = await this.channelQuery().orderBy('c.name').execute();
    return rows.map(toChannelView);
  }

  async getChannel(channelId: string): Promise<ChannelDetailView | null> {
    const row = await this.channelQuery()
      .select(['c.created_at', 'c.platform_created_at', 'c.settings'])
      .where('c.id', '=', channelId)
      .executeTakeFirst();
    if (!row) return null;
    const tags = await sql<{ entities: number; topics: number }>`select
        (select count(distinct entity_id) from memory_entities where channel_id = ${channelId})::int as entities,
        (select count(distinct t) from memories, unnest(topic_tags) t where channel_id = ${channelId})::int as topics`.execute(
      this.db,
    );
    const settings = (row.settings ?? {}) as Record<string, unknown>;
    return {
      ...toChannelView(row),
      created_at: iso(row.platform_created_at ?? row.created_at)!,
      entity_count: Number(tags.rows[0]?.entities ?? 0),
      topic_count: Number(tags.rows[0]?.topics ?? 0),
      settings: {
        sync_enabled: settings.sync_enabled !== false,
        wiki_enabled: settings.wiki_enabled !== false,
        graph_enabled: settings.graph_enabled !== false,
      },
    };
  }

  async channelIds(): Promise<string[]> {
    return (await this.db.selectFrom('channels').select('id').execute()).map((r) => r.id);
  }

  async newestMessageTimes(channelIds: readonly string[]): Promise<Map<string, string>> {
    const ids = [...new Set(channelIds)];
    if (ids.length === 0) return new Map();
    // A lateral top-1 per channel walks messages_channel_ts from the newest end (no scan of a channel's history).
    const rows = await sql<{ channel_id: string; ts: Date | string }>`select c.id as channel_id, m.ts
      from unnest(${ids}::text[]) as c(id)
      cross join lateral (select ts from messages where channel_id = c.id and deleted_at is null
        order by ts desc limit 1) m`.execute(this.db);
    return new Map(rows.rows.map((r) => [r.channel_id, new Date(r.ts).toISOString()]));
  }

  async knownChannels(channelIds: readonly string[]): Promise<Set<string>> {
    const ids = [...new Set(channelIds)];
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('channels').select('id').where('id', 'in', ids).execute();
    return new Set(rows.map((r) => r.id));
  }

  async contentCounts(
    channelId: string | null,
    channels?: readonly string[],
  ): Promise<{ authors: number; messages: number; media: number; facts: number; entities: number }> {
    const m = sql.join(
      [
        channelId === null ? sql`true` : sql`channel_id = ${channelId}`,
        channels ? sql`channel_id = any(${[...channels]}::text[])` : sql`true`,
      ],
      sql` and `,
    );
    const r = await sql<{ authors: number; messages: number; media: number; facts: number; entities: number }>`select
        (select count(distinct author_id) from messages where ${m} and deleted_at is null)::int as authors,
        (select count(*) from messages where ${m} and deleted_at is null)::int as messages,
        (select count(*) from messages where ${m} and deleted_at is null and has_media)::int as media,
        (select count(*) from memories where ${m})::int as facts,
        (select count(distinct entity_id) from memory_entities where ${m})::int as entities`.execute(this.db);
    const row = r.rows[0]!;
    return {
      authors: Number(row.authors),
      messages: Number(row.messages),
      media: Number(row.media),
      facts: Number(row.facts),
      entities: Number(row.entities),
    };
  }

  private channelQuery() {
    return this.db.selectFrom('channels as c').select((eb) => [
      'c.id',
      'c.name',
      'c.platform',
      'c.last_sync',
      eb
        .selectFrom('messages as m')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('m.channel_id', '=', 'c.id')
        .where('m.deleted_at', 'is', null)
        .as('message_count'),
      eb
        .selectFrom('memories as f')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('f.channel_id', '=', 'c.id')
        .as('fact_count'),
    ]);
  }

  async listMessages(
    channelId: string,
    q: { limit: number; before?: string | undefined; after?: string | undefined; asOf?: string | undefined },
  ): Promise<MessagePage> {
    let query = this.db
      .selectFrom('messages')
      .selectAll()
      .select(sql<string>`to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor'))
      .where('channel_id', '=', channelId)
      .where('deleted_at', 'is', null);
    if (q.before) query = query.where('ts', '<', cursorToIso(q.before));
    if (q.after) query = query.where('ts', '>', cursorToIso(q.after));
    // At the API's millisecond precision: a message shown at 10:00:00.123Z counts as of 10:00:00.123Z.
    if (q.asOf) query = query.where('ts', '<', new Date(Date.parse(q.asOf) + 1).toISOString());
    // With only `after`, the page is the messages right after it (paging forward); otherwise the newest before `before`.
    const forward = Boolean(q.after) && !q.before;
    const dir = forward ? 'asc' : 'desc';
    const rows = await query
      .orderBy('ts', dir)
      .orderBy('id', dir)
      .limit(q.limit + 1)
      .execute();
    const page = rows.slice(0, q.limit);
    const hasMore = rows.length > q.limit;
    const cursor = hasMore ? (page[page.length - 1]?.cursor ?? null) : null;
    // As of a date, a message edited since shows the text it had then.
    const then = q.asOf ? await textsAsOf(this.db, channelId, page, q.asOf) : new Map<string, string>();
    const shown = page.map((r) => (then.has(r.id) ? { ...r, text: then.get(r.id)! } : r));
    return { messages: (forward ? shown.reverse() : shown).map(toMessageView), has_more: hasMore, next_cursor: cursor };
  }

  async getMessages(channelId: string, ids: readonly string[]): Promise<MessageView[]> {
    const out: MessageView[] = [];
    for (let i = 0; i < ids.length; i += 1000) {
      const rows = await this.db
        .selectFrom('messages')
        .selectAll()
        .where('channel_id', '=', channelId)
        .where('id', 'in', ids.slice(i, i + 1000))
        .where('deleted_at', 'is', null)
        .execute();
      out.push(...rows.map(toMessageView));
    }
    return out;
  }

  async getMessagesIn(
    keys: readonly { channelId: string; id: string }[],
  ): Promise<{ channelId: string; message: MessageView }[]> {
    const wanted = new Set(keys.map((k) => `${k.channelId}\u0000${k.id}`));
    const out: { channelId: string; message: MessageView }[] = [];
    for (let i = 0; i < keys.length; i += 1000) {
      const chunk = keys.slice(i, i + 1000);
      const rows = await this.db
        .selectFrom('messages')
        .selectAll()
        .where('channel_id', 'in', [...new Set(chunk.map((k) => k.channelId))])
        .where('id', 'in', [...new Set(chunk.map((k) => k.id))])
        .where('deleted_at', 'is', null)
        .execute();
      for (const r of rows)
        if (wanted.delete(`${r.channel_id}\u0000${r.id}`))
          out.push({ channelId: r.channel_id, message: toMessageView(r) });
    }
    return out;
  }

  async messageHashes(channelId: string): Promise<Map<string, string>> {
    const rows = await this.db
      .selectFrom('messages')
      .select(['id', 'content_hash'])
      .where('channel_id', '=', channelId)
      .where('deleted_at', 'is', null)
      .execute();
    return new Map(rows.map((r) => [r.id, r.content_hash]));
  }

  async listMemories(q: MemoryQuery): Promise<{ rows: MemoryListView[]; total: number }> {
    let base = this.db.selectFrom('memories').where('channel_id', '=', q.channelId);
    if (q.topic) base = base.where(sql<boolean>`${q.topic} = any(topic_tags)`);
    if (q.entity) base = base.where(sql<boolean>`${q.entity} = any(entity_tags)`);
    if (q.importance) base = base.where('importance', '=', q.importance);
    if (q.factType) base = base.where('fact_type', '=', q.factType);
    if (q.since) base = base.where('message_ts', '>=', q.since);
    if (q.until) base = base.where('message_ts', '<=', q.until);
    if (q.asOf) base = base.where('message_ts', '<=', q.asOf);
    const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const rows = await base
      .selectAll()
      .orderBy('message_ts', 'desc')
      .orderBy('id')
      .limit(q.limit)
      .offset((q.page - 1) * q.limit)
      .execute();
    return { rows: rows.map(toMemoryList), total: Number(total.n) };
  }

  async getMemory(id: string, at: AsOfRead = {}): Promise<MemoryDetailView | null> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
    const row = await this.db
      .selectFrom('memories')
      .selectAll()
      .where('id', '=', id)
      .$if(at.asOf !== undefined, (q) => q.where('message_ts', '<=', at.asOf!))
      .executeTakeFirst();
    if (!row) return null;
    const [withLinks] = await this.withGraphLinks([toMemoryDetail(row)], at.asOf);
    const { permalink: _permalink, ...detail } = withLinks!;
    return detail;
  }

  async getMemories(
    ids: readonly string[],
    at: AsOfRead = {},
  ): Promise<Map<string, MemoryDetailView & { permalink: string }>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('memories')
      .selectAll()
      .where('id', 'in', ids)
      .$if(at.asOf !== undefined, (q) => q.where('message_ts', '<=', at.asOf!))
      .execute();
    return new Map((await this.withGraphLinks(rows.map(toMemoryDetail), at.asOf)).map((r) => [r.id, r]));
  }

  async topicCounts(channelId: string): Promise<{ tag: string; count: number }[]> {
    const r = await sql<{ tag: string; count: number }>`select t as tag, count(*)::int as count
      from memories, unnest(topic_tags) t where channel_id = ${channelId} group by t order by count desc, t limit 500`.execute(
      this.db,
    );
    return r.rows.map((x) => ({ tag: x.tag, count: Number(x.count) }));
  }

  async topicWindow(channelId: string, start: string, end: string): Promise<TopicWindowRow[]> {
    const from = new Date(start);
    const to = new Date(end);
    const before = new Date(2 * from.getTime() - to.getTime());
    const r = await sql<{ tag: string; count: number; previous: number; first_seen: Date | string }>`
      with tags as (select t as tag, message_ts from memories, unnest(topic_tags) t where channel_id = ${channelId}
        and message_ts < ${to})
      select tag,
        count(*) filter (where message_ts >= ${from})::int as count,
        count(*) filter (where message_ts >= ${before} and message_ts < ${from})::int as previous,
        min(message_ts) as first_seen
      from tags group by tag
      having count(*) filter (where message_ts >= ${from}) > 0
      order by count desc, tag limit 200`.execute(this.db);
    return r.rows.map((x) => ({
      tag: x.tag,
      count: Number(x.count),
      previous: Number(x.previous),
      firstSeen: new Date(x.first_seen).toISOString(),
    }));
  }

  async entityCounts(q: {
    channelId?: string | undefined;
    channels?: readonly string[] | undefined;
    limit: number;
  }): Promise<{ name: string; count: number }[]> {
    const where = sql.join(
      [
        q.channelId === undefined ? sql`true` : sql`channel_id = ${q.channelId}`,
        q.channels === undefined ? sql`true` : sql`channel_id = any(${[...q.channels]}::text[])`,
      ],
      sql` and `,
    );
    const r = await sql<{ name: string; count: number }>`select e as name, count(*)::int as count
      from memories, unnest(entity_tags) e where ${where} group by e order by count desc, e limit ${q.limit}`.execute(
      this.db,
    );
    return r.rows.map((x) => ({ name: x.name, count: Number(x.count) }));
  }

  async qualityStats(): Promise<{ avgQualityScore: number; highImportanceFacts: number; decisionCount: number }> {
    const r = await sql<{
      avg: number | null;
      high: number;
      decisions: number;
    }>`select avg(quality_score)::float8 as avg,
      (count(*) filter (where importance = 'high'))::int as high, (count(*) filter (where fact_type = 'decision'))::int as decisions
      from memories`.execute(this.db);
    const row = r.rows[0]!;
    return {
      avgQualityScore: Number(row.avg ?? 0),
      highImportanceFacts: Number(row.high),
      decisionCount: Number(row.decisions),
    };
  }

  async counts(): Promise<{ channels: number; messages: number; facts: number }> {
    const r = await sql<{ channels: number; messages: number; facts: number }>`select
      (select count(*) from channels)::int as channels,
      (select count(*) from messages where deleted_at is null)::int as messages,
      (select count(*) from memories)::int as facts`.execute(this.db);
    const row = r.rows[0]!;
    return { channels: Number(row.channels), messages: Number(row.messages), facts: Number(row.facts) };
  }
}
