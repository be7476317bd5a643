import type { DatabaseHandle } from '@atlas/db';
import { type MigrationDb, runMigrations } from '@atlas/db';
import { type Kysely, sql } from 'kysely';
import { channelFlagsMigration, disabledChannels, setChannelEnabled } from '../channel-flags.js';
import type { FactsStateTables } from './tables.js';

export interface ThreadRoot {
  channelId: string;
  /** Platform message id of the root (or, on platform_b, of any message that may be replied to). */
  rootId: string;
  text: string;
  authorName: string;
}

/** A top-level message of a channel's main flow the facts projector has read: context for the next one. */
export interface ChannelTail {
  channelId: string;
  /** Platform message id ('' on a tail kept from before the flow history). */
  messageId: string;
  /** ISO 8601 UTC. */
  messageTs: string;
  text: string;
  authorName: string;
}

/** The facts projector's own state: thread roots it has seen, for thread_context_summary. */
export const migrateFactsState = (db: MigrationDb) =>
  runMigrations(db, 'facts_state', {
    '0001_thread_roots': {
      async up(db: MigrationDb) {
        await sql`create table if not exists facts_thread_roots (channel_id text not null, root_id text not null,
          text text not null, author_name text not null, primary key (channel_id, root_id))`.execute(db);
      },
    },
    '0002_channel_tails': {
      async up(db: MigrationDb) {
        await sql`create table if not exists facts_channel_tails (channel_id text primary key,
          message_ts text not null, text text not null, author_name text not null)`.execute(db);
      },
    },
    '0003_extraction_flags': channelFlagsMigration(FLAGS),
    // The flow history replaces the single tail per channel: a redelivered or late (older) message finds the message
    // that came before it, not the newest one read. The tails kept so far seed it.
    '0004_channel_flow': {
      async up(db: MigrationDb) {
        await sql`create table if not exists facts_channel_flow (channel_id text not null, message_id text not null,
          message_at timestamptz not null, message_ts text not null, text text not null, author_name text not null,
          primary key (channel_id, message_id))`.execute(db);
        await sql`create index if not exists facts_channel_flow_at on facts_channel_flow (channel_id, message_at)`.execute(
          db,
        );
        await sql`insert into facts_channel_flow (channel_id, message_id, message_at, message_ts, text, author_name)
          select channel_id, '', message_ts::timestamptz, message_ts, text, author_name from facts_channel_tails
          on conflict do nothing`.execute(db);
        await sql`drop table facts_channel_tails`.execute(db);
      },
    },
  });

/** The facts projector's copy of fact_extraction_enabled per channel. */
const FLAGS = 'facts_channel_extraction';

/**
 * The facts projector's conversation state: thread roots by (channel, root id), and each channel's main-flow
 * messages by time (the flow: what a message continues when it is no reply). Upserts are idempotent; truncate()
 * clears both (before a replay).
 */
export class ThreadRootStore {
  private readonly db: Kysely<FactsStateTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<FactsStateTables>();
  }

  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table facts_thread_roots, facts_channel_flow, facts_channel_extraction`.execute(this.db);
  }

  /** Forgets a channel's thread roots and flow (ChannelDataDeleted); its extraction setting stays. */
  async deleteChannel(channelId: string): Promise<void> {
    await this.db.deleteFrom('facts_thread_roots').where('channel_id', '=', channelId).execute();
    await this.db.deleteFrom('facts_channel_flow').where('channel_id', '=', channelId).execute();
  }

  /** Which of these channels have fact extraction off (ChannelSettingsUpdated.factExtractionEnabled). */
  extractionDisabled(channelIds: readonly string[]): Promise<Set<string>> {
    return disabledChannels(this.db, FLAGS, channelIds);
  }

  /** Records a channel's fact_extraction_enabled as the facts projector read it. */
  setExtractionEnabled(channelId: string, enabled: boolean): Promise<void> {
    return setChannelEnabled(this.db, FLAGS, channelId, enabled);
  }

  /**
   * The flow messages of each channel from `from` to `to` (ISO 8601, both included), oldest first: channel id →
   * its messages (absent: none in the range).
   */
  async flow(ranges: readonly { channelId: string; from: string; to: string }[]): Promise<Map<string, ChannelTail[]>> {
    const out = new Map<string, ChannelTail[]>();
    for (const r of ranges) {
      const rows = await this.db
        .selectFrom('facts_channel_flow')
        .select(['channel_id', 'message_id', 'message_ts', 'text', 'author_name'])
        .where('channel_id', '=', r.channelId)
        .where('message_at', '>=', r.from)
        .where('message_at', '<=', r.to)
        .orderBy('message_at')
        .orderBy('message_id')
        .execute();
      if (rows.length > 0)
        out.set(
          r.channelId,
          rows.map((x) => ({
            channelId: x.channel_id,
            messageId: x.message_id,
            messageTs: x.message_ts,
            text: x.text,
            authorName: x.author_name,
          })),
        );
    }
    return out;
  }

  /** Upserts flow messages by (channel, message id): an edit replaces the text. */
  async putFlow(messages: readonly ChannelTail[]): Promise<void> {
    const unique = [...new Map(messages.map((t) => [`${t.channelId}\u0000${t.messageId}`, t])).values()];
    for (let i = 0; i < unique.length; i += 500) {
      await this.db
        .insertInto('facts_channel_flow')
        .values(
          unique.slice(i, i + 500).map((t) => ({
            channel_id: t.channelId,
            message_id: t.messageId,
            message_at: t.messageTs,
            message_ts: t.messageTs,
            text: t.text,
            author_name: t.authorName,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['channel_id', 'message_id']).doUpdateSet((eb) => ({
            message_at: eb.ref('excluded.message_at'),
            message_ts: eb.ref('excluded.message_ts'),
            text: eb.ref('excluded.text'),
            author_name: eb.ref('excluded.author_name'),
          })),
        )
        .execute();
    }
  }

  /** Forgets flow messages (deleted): their text is no later message's context. */
  async forgetFlow(messages: readonly { channelId: string; messageId: string }[]): Promise<void> {
    for (const m of messages)
      await this.db
        .deleteFrom('facts_channel_flow')
        .where('channel_id', '=', m.channelId)
        .where('message_id', '=', m.messageId)
        .execute();
  }

  /** Forgets these thread roots (their messages were deleted), so their text is no later message's context. */
  async forget(roots: readonly { channelId: string; rootId: string }[]): Promise<void> {
    for (const r of roots)
      await this.db
        .deleteFrom('facts_thread_roots')
        .where('channel_id', '=', r.channelId)
        .where('root_id', '=', r.rootId)
        .execute();
  }

  async get(channelId: string, rootIds: readonly string[]): Promise<Map<string, ThreadRoot>> {
    if (rootIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('facts_thread_roots')
      .selectAll()
      .where('channel_id', '=', channelId)
      .where('root_id', 'in', [...new Set(rootIds)])
      .execute();
    return new Map(
      rows.map((r) => [
        r.root_id,
        { channelId: r.channel_id, rootId: r.root_id, text: r.text, authorName: r.author_name },
      ]),
    );
  }

  async put(roots: readonly ThreadRoot[]): Promise<void> {
    const unique = [...new Map(roots.map((r) => [`${r.channelId}\u0000${r.rootId}`, r])).values()];
    for (let i = 0; i < unique.length; i += 500) {
      await this.db
        .insertInto('facts_thread_roots')
        .values(
          unique
            .slice(i, i + 500)
            .map((r) => ({ channel_id: r.channelId, root_id: r.rootId, text: r.text, author_name: r.authorName })),
        )
        .onConflict((oc) =>
          oc
            .columns(['channel_id', 'root_id'])
            .doUpdateSet((eb) => ({ text: eb.ref('excluded.text'), author_name: eb.ref('excluded.author_name') })),
        )
        .execute();
    }
  }
}
