import {
  type ChannelDiscovered,
  type DeadLettered,
  type DeadLetterRedriven,
  deadLetterId,
  type EntitiesExtracted,
  type FactsExtracted,
  type MessageDeleted,
  type MessageIngested,
  type SyncJobUpdated,
} from '@atlas/core';
import type { Db } from '@atlas/db';
import { type Kysely, sql } from 'kysely';
import type { StatsTables } from './tables.js';

const json = (v: unknown) => JSON.stringify(v);
/** Rows per bulk statement (one jsonb parameter each). */
const CHUNK = 2000;

/** The last item of each key, in order (a batch may carry a message twice: the later one wins). */
const lastBy = <T>(items: readonly T[], key: (t: T) => string): T[] => [
  ...new Map(items.map((t) => [key(t), t])).values(),
];

/** Which rows of a channel a ChannelDataDeleted removes: those its topic's events wrote. */
export type StatsChannelPart = 'messages' | 'facts' | 'graph';

/**
 * The write side of the stats read store: one idempotent write per kind of event the stats projector reads
 * (services/projectors/src/stats.ts maps events to these calls). Upserts and replace-by-message, so a redelivered batch
 * or a replay gives the same rows. Bulk writes send their rows as one jsonb parameter per chunk (jsonb_to_recordset:
 * thousands of rows per statement without a parameter per value). Errors are the database's.
 */
export class StatsWriter {
  protected readonly db: Kysely<StatsTables>;

  constructor(db: Db) {
    this.db = db as Kysely<StatsTables>;
  }

  /** Empties every table the projector writes (before a replay from the earliest offset); keeps the LLM ledger. */
  async truncate(): Promise<void> {
    // truncate of several tables: not in the builder.
    await sql`truncate stats_channels, stats_messages, stats_facts, stats_entities, stats_entity_first,
      stats_sync_jobs, stats_dead_letters`.execute(this.db);
  }

  /** ChannelDiscovered: each channel's name and platform (the last of a channel in `channels` wins). */
  async upsertChannels(channels: readonly ChannelDiscovered[]): Promise<void> {
    const rows = lastBy(channels, (c) => c.channelId).map((c) => ({
      channel_id: c.channelId,
      name: c.name,
      platform: c.platform,
    }));
    await sql`insert into stats_channels (channel_id, name, platform)
      select channel_id, name, platform from jsonb_to_recordset(${json(rows)}::jsonb)
        as x(channel_id text, name text, platform text)
      on conflict (channel_id) do update set name = excluded.name, platform = excluded.platform,
        updated_at = now()`.execute(this.db);
  }

  /**
   * MessageIngested: one row per message (author, world time; a re-ingested message is live again), and a channel
   * row for a channel seen only through its messages (a sync; ChannelDiscovered's name wins).
   */
  async upsertMessages(given: readonly MessageIngested[]): Promise<void> {
    const messages = lastBy(given, (m) => `${m.channelId}\u0000${m.messageId}`);
    const channels = lastBy(messages, (m) => m.channelId).map((m) => ({
      channel_id: m.channelId,
      name: m.channelName,
      platform: m.platform,
    }));
    await sql`insert into stats_channels (channel_id, name, platform)
      select channel_id, name, platform from jsonb_to_recordset(${json(channels)}::jsonb)
        as x(channel_id text, name text, platform text)
      on conflict (channel_id) do nothing`.execute(this.db);
    const rows = messages.map((m) => ({
      channel_id: m.channelId,
      message_id: m.messageId,
      author_id: m.author.id,
      author_name: m.author.name,
      is_bot: m.author.isBot,
      ts: m.timestamp,
    }));
    for (let i = 0; i < rows.length; i += CHUNK) {
      await sql`insert into stats_messages (channel_id, message_id, author_id, author_name, is_bot, ts, deleted)
        select channel_id, message_id, author_id, author_name, is_bot, ts, false
        from jsonb_to_recordset(${json(rows.slice(i, i + CHUNK))}::jsonb)
          as x(channel_id text, message_id text, author_id text, author_name text, is_bot boolean, ts timestamptz)
        on conflict (channel_id, message_id) do update set author_id = excluded.author_id,
          author_name = excluded.author_name, is_bot = excluded.is_bot, ts = excluded.ts, deleted = false`.execute(
        this.db,
      );
    }
  }

  /** MessageDeleted: the message no longer counts (its row stays, flagged). */
  async markMessageDeleted(d: MessageDeleted): Promise<void> {
    await this.db
      .updateTable('stats_messages')
      .set({ deleted: true })
      .where('channel_id', '=', d.channelId)
      .where('message_id', '=', d.messageId)
      .execute();
  }

  /** FactsExtracted: each message's fact rows replaced by its latest set's (the last set of a message wins). */
  async replaceFacts(given: readonly FactsExtracted[]): Promise<void> {
    const sets = lastBy(given, (s) => s.messageId);
    await sql`delete from stats_facts where message_id in (select jsonb_array_elements_text(${json(
      sets.map((s) => s.messageId),
    )}::jsonb))`.execute(this.db);
    const rows = sets.flatMap((s) =>
      lastBy(s.facts, (f) => f.factId).map((f) => ({
        message_id: s.messageId,
        fact_id: f.factId,
        channel_id: s.channelId,
        author_id: f.authorId,
        author_name: f.authorName,
        fact_type: f.factType,
        importance: f.importance,
        quality: f.qualityScore,
        topic_tags: f.topicTags,
        message_ts: f.messageTs,
        extracted_at: s.extractedAt,
      })),
    );
    for (let i = 0; i < rows.length; i += CHUNK) {
      await sql`insert into stats_facts (message_id, fact_id, channel_id, author_id, author_name, fact_type,
          importance, quality, topic_tags, message_ts, extracted_at)
        select * from jsonb_to_recordset(${json(rows.slice(i, i + CHUNK))}::jsonb)
          as x(message_id text, fact_id text, channel_id text, author_id text, author_name text, fact_type text,
            importance text, quality double precision, topic_tags jsonb, message_ts timestamptz,
            extracted_at timestamptz)
        on conflict (message_id, fact_id) do nothing`.execute(this.db);
    }
  }

  /**
   * EntitiesExtracted: each message's entity rows replaced by its latest contribution's, and when each entity was
   * first seen (the earliest extraction time kept).
   */
  async replaceEntities(given: readonly EntitiesExtracted[]): Promise<void> {
    const sets = lastBy(given, (s) => s.messageId);
    await sql`delete from stats_entities where message_id in (select jsonb_array_elements_text(${json(
      sets.map((s) => s.messageId),
    )}::jsonb))`.execute(this.db);
    const rows = sets.flatMap((s) =>
      lastBy(s.entities, (x) => x.entityId).map((x) => ({
        message_id: s.messageId,
        entity_id: x.entityId,
        channel_id: s.channelId,
        type: x.type,
        name: x.name,
        seen_at: s.extractedAt,
      })),
    );
    if (rows.length === 0) return;
    await sql`insert into stats_entities (message_id, entity_id, channel_id, type, name)
      select message_id, entity_id, channel_id, type, name from jsonb_to_recordset(${json(rows)}::jsonb)
        as x(message_id text, entity_id text, channel_id text, type text, name text)
      on conflict (message_id, entity_id) do nothing`.execute(this.db);
    await sql`insert into stats_entity_first (entity_id, channel_id, type, name, first_seen_at)
      select entity_id, min(channel_id), min(type), min(name), min(seen_at)
      from jsonb_to_recordset(${json(rows)}::jsonb)
        as x(entity_id text, channel_id text, type text, name text, seen_at timestamptz)
      group by entity_id
      on conflict (entity_id) do update
        set first_seen_at = least(stats_entity_first.first_seen_at, excluded.first_seen_at)`.execute(this.db);
  }

  /** ChannelDataDeleted: deletes the channel's rows of one part (messages, facts, or entities and first sightings). */
  async deleteChannelPart(channelId: string, part: StatsChannelPart): Promise<void> {
    if (part === 'messages') await this.db.deleteFrom('stats_messages').where('channel_id', '=', channelId).execute();
    else if (part === 'facts') await this.db.deleteFrom('stats_facts').where('channel_id', '=', channelId).execute();
    else {
      await this.db.deleteFrom('stats_entities').where('channel_id', '=', channelId).execute();
      await this.db.deleteFrom('stats_entity_first').where('channel_id', '=', channelId).execute();
    }
  }

  /** SyncJobUpdated: the job's latest state (a lower or equal seq than the stored one changes nothing). */
  async recordSyncJob(d: SyncJobUpdated): Promise<void> {
    await this.db
      .insertInto('stats_sync_jobs')
      .values({
        job_id: d.jobId,
        channel_id: d.channelId,
        seq: d.seq,
        status: d.status,
        started_at: d.startedAt,
        completed_at: d.completedAt,
        messages_synced: d.messagesSynced,
        facts_extracted: d.factsExtracted,
        entities_created: d.entitiesCreated,
      })
      .onConflict((oc) =>
        oc
          .column('job_id')
          .doUpdateSet((eb) => ({
            seq: eb.ref('excluded.seq'),
            status: eb.ref('excluded.status'),
            started_at: eb.ref('excluded.started_at'),
            completed_at: eb.ref('excluded.completed_at'),
            messages_synced: eb.ref('excluded.messages_synced'),
            facts_extracted: eb.ref('excluded.facts_extracted'),
            entities_created: eb.ref('excluded.entities_created'),
          }))
          .where('stats_sync_jobs.seq', '<', (eb) => eb.ref('excluded.seq')),
      )
      .execute();
  }

  /** DeadLettered: one row per dead event (group, topic, partition, offset); a redelivery changes nothing else. */
  async addDeadLetter(d: DeadLettered): Promise<void> {
    await this.db
      .insertInto('stats_dead_letters')
      .values({
        dl_group: d.group,
        topic: d.topic,
        dl_partition: d.partition,
        dl_offset: d.offset,
        event_type: d.eventType,
        event_key: d.key,
        error: d.error,
        attempts: d.attempts,
        failed_at: d.failedAt,
        dl_id: deadLetterId(d),
      })
      .onConflict((oc) =>
        oc
          .columns(['dl_group', 'topic', 'dl_partition', 'dl_offset'])
          .doUpdateSet((eb) => ({ dl_id: eb.ref('excluded.dl_id') })),
      )
      .execute();
  }

  /** DeadLetterRedriven: the dead letter leaves the depth (its first re-drive time is kept). */
  async markDeadLetterRedriven(d: DeadLetterRedriven): Promise<void> {
    await this.db
      .updateTable('stats_dead_letters')
      .set((eb) => ({ redriven_at: eb.fn.coalesce('redriven_at', eb.val(d.redrivenAt)) }))
      .where('dl_id', '=', d.deadLetterId)
      .execute();
  }
}
