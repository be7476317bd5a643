import { type Kysely, sql } from 'kysely';
import { channelFlagsMigration, disabledChannels, setChannelEnabled } from '../channel-flags.js';
import { runMigrations } from '../migrate.js';

export interface ThreadRoot {
  channelId: string;
  /** Platform message id of the root (or, on platform_b, of any message that may be replied to). */
  rootId: string;
  text: string;
  authorName: string;
}

/** The last top-level message of a channel the facts projector has read: context for the next one. */
export interface ChannelTail {
  channelId: string;
  /** ISO 8601 UTC. */
  messageTs: string;
  text: string;
  authorName: string;
}

interface Tables {
  facts_thread_roots: { channel_id: string; root_id: string; text: string; author_name: string };
  facts_channel_tails: { channel_id: string; message_ts: string; text: string; author_name: string };
}

/** The facts projector's own state: thread roots it has seen, for thread_context_summary. */
export const migrateFactsState = (db: Kysely<unknown>) =>
  runMigrations(db, 'facts_state', {
    '0001_thread_roots': {
      async up(db: Kysely<unknown>) {
        await sql`create table if not exists facts_thread_roots (channel_id text not null, root_id text not null,
          text text not null, author_name text not null, primary key (channel_id, root_id))`.execute(db);
      },
    },
    '0002_channel_tails': {
      async up(db: Kysely<unknown>) {
        await sql`create table if not exists facts_channel_tails (channel_id text primary key,
          message_ts text not null, text text not null, author_name text not null)`.execute(db);
      },
    },
    '0003_extraction_flags': channelFlagsMigration(FLAGS),
  });

/** The facts projector's copy of fact_extraction_enabled per channel. */
const FLAGS = 'facts_channel_extraction';

/**
 * The facts projector's conversation state: thread roots by (channel, root id), and each channel's
 * last top-level message (its tail). Upserts are idempotent; truncate() clears both (before a replay).
 */
export class ThreadRootStore {
  private readonly db: Kysely<Tables>;

  constructor(db: Kysely<unknown>) {
    this.db = db as Kysely<Tables>;
  }

  async truncate(): Promise<void> {
    await sql`truncate table facts_thread_roots, facts_channel_tails, facts_channel_extraction`.execute(this.db);
  }

  /** Forgets a channel's thread roots and tail (ChannelDataDeleted); its extraction setting stays. */
  async deleteChannel(channelId: string): Promise<void> {
    await this.db.deleteFrom('facts_thread_roots').where('channel_id', '=', channelId).execute();
    await this.db.deleteFrom('facts_channel_tails').where('channel_id', '=', channelId).execute();
  }

  /** Which of these channels have fact extraction off (ChannelSettingsUpdated.factExtractionEnabled). */
  extractionDisabled(channelIds: readonly string[]): Promise<Set<string>> {
    return disabledChannels(this.db as Kysely<unknown>, FLAGS, channelIds);
  }

  /** Records a channel's fact_extraction_enabled as the facts projector read it. */
  setExtractionEnabled(channelId: string, enabled: boolean): Promise<void> {
    return setChannelEnabled(this.db as Kysely<unknown>, FLAGS, channelId, enabled);
  }

  /** The tails of these channels (absent: none seen yet). */
  async tails(channelIds: readonly string[]): Promise<Map<string, ChannelTail>> {
    if (channelIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('facts_channel_tails')
      .selectAll()
      .where('channel_id', 'in', [...new Set(channelIds)])
      .execute();
    return new Map(
      rows.map((r) => [
        r.channel_id,
        { channelId: r.channel_id, messageTs: r.message_ts, text: r.text, authorName: r.author_name },
      ]),
    );
  }

  /** Sets each channel's tail (the last one per channel wins). */
  async putTails(tails: readonly ChannelTail[]): Promise<void> {
    const unique = [...new Map(tails.map((t) => [t.channelId, t])).values()];
    for (let i = 0; i < unique.length; i += 500) {
      await this.db
        .insertInto('facts_channel_tails')
        .values(
          unique.slice(i, i + 500).map((t) => ({
            channel_id: t.channelId,
            message_ts: t.messageTs,
            text: t.text,
            author_name: t.authorName,
          })),
        )
        .onConflict((oc) =>
          oc.column('channel_id').doUpdateSet((eb) => ({
            message_ts: eb.ref('excluded.message_ts'),
            text: eb.ref('excluded.text'),
            author_name: eb.ref('excluded.author_name'),
          })),
        )
        .execute();
    }
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
