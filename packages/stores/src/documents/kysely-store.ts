import type {
  ChannelDiscovered,
  ChannelSettings,
  EntitiesExtracted,
  FactsExtracted,
  MessageIngested,
} from '@atlas/core';
import { type Kysely, sql } from 'kysely';
import { deleteChannelPart, messagesBefore, settingsOf, writeSettings } from './channel-data.js';
import type {
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
} from './port.js';
import type { DocumentTables } from './tables.js';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());
const CHUNK = 500;

/**
 * A platform_a `ts` ("1517789022.000033") as an ISO timestamp with microseconds, so ordering and
 * cursors keep Slack's precision; anything else passes through unchanged.
 */
export const preciseTimestamp = (platformTs: string, fallback: string): string => {
  const m = /^(\d{9,11})\.(\d{1,6})$/.exec(platformTs);
  if (!m) return fallback;
  const whole = new Date(Number(m[1]) * 1000).toISOString().slice(0, 19);
  return `${whole}.${m[2]!.padEnd(6, '0')}Z`;
};

/** A cursor value (ISO 8601 or epoch seconds, as platform_a writes them) as an ISO string. */
export const cursorToIso = (v: string): string =>
  /^\d{9,11}(\.\d{1,6})?$/.test(v) ? preciseTimestamp(v.includes('.') ? v : `${v}.0`, v) : v;

/** The DocumentStore on Postgres or PGlite through Kysely (one implementation for both). */
export class KyselyDocumentStore implements DocumentStore {
  private readonly db: Kysely<DocumentTables>;

  constructor(db: Kysely<unknown>) {
    this.db = db as Kysely<DocumentTables>;
  }

  async truncate(): Promise<void> {
    await sql`truncate table memories, messages, channels, memory_entities, fact_supersessions`.execute(this.db);
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
  }

  async replaceFacts(sets: readonly FactsExtracted[]): Promise<void> {
    if (sets.length === 0) return;
    // Only the last set of a message counts (a batch may hold a re-extraction).
    const last = [...new Map(sets.map((s) => [s.messageId, s])).values()];
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < last.length; i += CHUNK) {
        const chunk = last.slice(i, i + CHUNK);
        const keep = chunk.flatMap((s) => s.facts.map((f) => f.factId));
        let del = trx.deleteFrom('memories').where(
          'message_uuid',
          'in',
          chunk.map((s) => s.messageId),
        );
        if (keep.length > 0) del = del.where('id', 'not in', keep);
        await del.execute();
        const rows = chunk.flatMap((s) =>
          s.facts.map((f) => ({
            id: f.factId,
            message_uuid: s.messageId,
            channel_id: s.channelId,
            source_message_id: s.sourceMessageId,
            platform: s.platform,
            memory_text: f.memoryText,
            quality_score: f.qualityScore,
            author_id: f.authorId,
            author_name: f.authorName,
            message_ts: f.messageTs,
            thread_ts: f.threadTs,
            permalink: f.permalink,
            topic_tags: f.topicTags,
            entity_tags: f.entityTags,
            action_tags: f.actionTags,
            importance: f.importance,
            fact_type: f.factType,
            thread_context_summary: f.threadContextSummary,
            valid_at: f.validAt,
            invalid_at: null,
            superseded_by: null,
            source_lang: f.sourceLang,
            cluster_id: null,
            extractor: s.extractor,
          })),
        );
        if (rows.length === 0) continue;
        await trx
          .insertInto('memories')
          .values(rows)
          .onConflict((oc) =>
            oc.column('id').doUpdateSet((eb) => ({
              memory_text: eb.ref('excluded.memory_text'),
              quality_score: eb.ref('excluded.quality_score'),
              topic_tags: eb.ref('excluded.topic_tags'),
              entity_tags: eb.ref('excluded.entity_tags'),
              action_tags: eb.ref('excluded.action_tags'),
              importance: eb.ref('excluded.importance'),
              fact_type: eb.ref('excluded.fact_type'),
              thread_context_summary: eb.ref('excluded.thread_context_summary'),
              permalink: eb.ref('excluded.permalink'),
              extractor: eb.ref('excluded.extractor'),
              updated_at: sql`now()`,
            })),
          )
          .execute();
      }
    });
  }

  async replaceGraphLinks(sets: readonly EntitiesExtracted[]): Promise<void> {
    if (sets.length === 0) return;
    const last = [...new Map(sets.map((s) => [s.messageId, s])).values()];
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < last.length; i += CHUNK) {
        const chunk = last.slice(i, i + CHUNK);
        const ids = chunk.map((s) => s.messageId);
        await trx.deleteFrom('memory_entities').where('message_uuid', 'in', ids).execute();
        await trx.deleteFrom('fact_supersessions').where('by_message_uuid', 'in', ids).execute();
        const links = new Map<
          string,
          { fact_id: string; entity_id: string; message_uuid: string; channel_id: string }
        >();
        for (const s of chunk)
          for (const e of s.entities)
            for (const f of e.factIds)
              links.set(`${f}\u0000${e.entityId}`, {
                fact_id: f,
                entity_id: e.entityId,
                message_uuid: s.messageId,
                channel_id: s.channelId,
              });
        if (links.size > 0) {
          await trx
            .insertInto('memory_entities')
            .values([...links.values()])
            .onConflict((oc) => oc.columns(['fact_id', 'entity_id']).doNothing())
            .execute();
        }
        const sups = new Map(
          chunk.flatMap((s) =>
            s.supersessions.map((x) => [
              `${s.messageId}\u0000${x.factId}`,
              {
                by_message_uuid: s.messageId,
                channel_id: s.channelId,
                fact_id: x.factId,
                superseded_by: x.supersededBy,
                invalid_at: x.invalidAt,
                certain: x.certain,
                reason: x.reason,
              },
            ]),
          ),
        );
        if (sups.size > 0)
          await trx
            .insertInto('fact_supersessions')
            .values([...sups.values()])
            .execute();
      }
    });
  }

  /** Overlays graph links and validity (replaceGraphLinks) on memory rows. */
  private async withGraphLinks<T extends MemoryDetailView>(rows: T[]): Promise<T[]> {
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
      .orderBy('invalid_at')
      .execute();
    const byFact = new Map<string, string[]>();
    for (const e of ents) byFact.set(e.fact_id, [...(byFact.get(e.fact_id) ?? []), e.entity_id]);
    return rows.map((r) => {
      const mine = sups.filter((x) => x.fact_id === r.id);
      const certain = mine.filter((x) => x.certain).at(-1);
      return {
        ...r,
        graph_entity_ids: byFact.get(r.id) ?? r.graph_entity_ids,
        superseded_by: certain?.superseded_by ?? r.superseded_by,
        invalid_at: certain ? iso(certain.invalid_at as Date) : r.invalid_at,
        potential_contradiction: r.potential_contradiction || mine.some((x) => !x.certain),
      };
    });
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
      wiki_page_count: 0,
      settings: {
        sync_enabled: settings.sync_enabled !== false,
        wiki_enabled: settings.wiki_enabled !== false,
        graph_enabled: settings.graph_enabled !== false,
      },
    };
  }

  private channelQuery() {
    return this.db.selectFrom('channels as c').select((eb) => [
      'c.id',
      'c.name',
      'c.platform',
      'c.connected',
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

  async listMessages(channelId: string, q: { limit: number; before?: string; after?: string }): Promise<MessagePage> {
    let query = this.db
      .selectFrom('messages')
      .selectAll()
      .select(sql<string>`to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor'))
      .where('channel_id', '=', channelId)
      .where('deleted_at', 'is', null);
    if (q.before) query = query.where('ts', '<', cursorToIso(q.before));
    if (q.after) query = query.where('ts', '>', cursorToIso(q.after));
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
    return { messages: (forward ? page.reverse() : page).map(toMessageView), has_more: hasMore, next_cursor: cursor };
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

  async getMemory(id: string): Promise<MemoryDetailView | null> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
    const row = await this.db.selectFrom('memories').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return null;
    const [withLinks] = await this.withGraphLinks([toMemoryDetail(row)]);
    const { permalink: _permalink, ...detail } = withLinks!;
    return detail;
  }

  async getMemories(ids: readonly string[]): Promise<Map<string, MemoryDetailView & { permalink: string }>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('memories').selectAll().where('id', 'in', ids).execute();
    return new Map((await this.withGraphLinks(rows.map(toMemoryDetail))).map((r) => [r.id, r]));
  }

  async topicCounts(channelId: string): Promise<{ tag: string; count: number }[]> {
    const r = await sql<{ tag: string; count: number }>`select t as tag, count(*)::int as count
      from memories, unnest(topic_tags) t where channel_id = ${channelId} group by t order by count desc, t limit 500`.execute(
      this.db,
    );
    return r.rows.map((x) => ({ tag: x.tag, count: Number(x.count) }));
  }

  async entityCounts(q: { channelId?: string; limit: number }): Promise<{ name: string; count: number }[]> {
    const where = q.channelId === undefined ? sql`true` : sql`channel_id = ${q.channelId}`;
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

type ChannelRow = {
  id: string;
  name: string;
  platform: string;
  connected: boolean;
  last_sync: Date | string | null;
  message_count: number | null;
  fact_count: number | null;
};

const toChannelView = (r: ChannelRow): ChannelView => ({
  id: r.id,
  name: r.name,
  platform: r.platform,
  connected: r.connected,
  last_sync: iso(r.last_sync),
  message_count: Number(r.message_count ?? 0),
  fact_count: Number(r.fact_count ?? 0),
});

type MessageRow = DocumentTables['messages'] extends infer T ? { [K in keyof T]: unknown } : never;

const toMessageView = (r: MessageRow): MessageView => {
  const attachments = (r.attachments ?? []) as {
    id: string;
    name: string;
    url: string | null;
    mimeType: string | null;
    size: number | null;
    mediaType: string | null;
  }[];
  return {
    id: r.id as string,
    text: r.text as string,
    author: { id: r.author_id as string, name: r.author_name as string },
    timestamp: iso(r.ts as Date)!,
    thread_ts: (r.thread_ts as string | null) ?? null,
    reactions: (r.reactions ?? []) as MessageView['reactions'],
    attachments: attachments.map((a) => ({
      id: a.id,
      name: a.name,
      url: a.url,
      mime_type: a.mimeType,
      size: a.size,
      media_type: a.mediaType,
    })),
    has_media: Boolean(r.has_media),
  };
};

type MemoryRow = {
  [K in keyof DocumentTables['memories']]: unknown;
};

const toMemoryDetail = (r: MemoryRow): MemoryDetailView & { permalink: string } => ({
  id: r.id as string,
  memory_text: r.memory_text as string,
  quality_score: Number(r.quality_score),
  tier: r.tier as string,
  channel_id: r.channel_id as string,
  author_name: r.author_name as string,
  message_ts: iso(r.message_ts as Date)!,
  topic_tags: r.topic_tags as string[],
  entity_tags: r.entity_tags as string[],
  importance: r.importance as string,
  fact_type: r.fact_type as string,
  source_message_id: r.source_message_id as string,
  permalink: r.permalink as string,
  cluster_id: (r.cluster_id as string | null) ?? null,
  platform: r.platform as string,
  author_id: r.author_id as string,
  thread_ts: (r.thread_ts as string | null) ?? null,
  action_tags: r.action_tags as string[],
  graph_entity_ids: (r.graph_entity_ids as string[]) ?? [],
  thread_context_summary: r.thread_context_summary as string,
  valid_at: iso(r.valid_at as Date)!,
  invalid_at: iso((r.invalid_at as Date | null) ?? null),
  superseded_by: (r.superseded_by as string | null) ?? null,
  potential_contradiction: Boolean(r.potential_contradiction),
  source_lang: r.source_lang as string,
});

const toMemoryList = (r: MemoryRow): MemoryListView => {
  const d = toMemoryDetail(r);
  return {
    id: d.id,
    memory_text: d.memory_text,
    quality_score: d.quality_score,
    tier: d.tier,
    channel_id: d.channel_id,
    author_name: d.author_name,
    message_ts: d.message_ts,
    topic_tags: d.topic_tags,
    entity_tags: d.entity_tags,
    importance: d.importance,
    fact_type: d.fact_type,
    source_message_id: d.source_message_id,
    permalink: d.permalink,
  };
};
