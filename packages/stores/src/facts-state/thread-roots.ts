import { type Kysely, sql } from 'kysely';
import { runMigrations } from '../migrate.js';

export interface ThreadRoot {
  channelId: string;
  /** Platform message id of the root (or, on platform_b, of any message that may be replied to). */
  rootId: string;
  text: string;
  authorName: string;
}

interface Tables {
  facts_thread_roots: { channel_id: string; root_id: string; text: string; author_name: string };
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
  });

/** Thread roots by (channel, root id); upserts are idempotent. */
export class ThreadRootStore {
  private readonly db: Kysely<Tables>;

  constructor(db: Kysely<unknown>) {
    this.db = db as Kysely<Tables>;
  }

  async truncate(): Promise<void> {
    await sql`truncate table facts_thread_roots`.execute(this.db);
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
