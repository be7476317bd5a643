import type { FactsExtracted } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { type MigrationDb, runMigrations } from '@atlas/db';
import { type Kysely, sql } from 'kysely';
import type { VectorTables } from './tables.js';

/**
 * Fact sets waiting for embeddings (spec "Ingestion pipeline": when the embedding provider is down,
 * facts are stored text-only and queued for embedding backfill). One row per message; a newer set of
 * the same message replaces the queued one.
 */
export const migrateEmbeddingBacklog = (db: MigrationDb) =>
  runMigrations(db, 'embedding_backlog', {
    '0001_embedding_backlog': {
      async up(db: MigrationDb) {
        await sql`create table if not exists embedding_backlog (message_id uuid primary key, payload jsonb not null,
          queued_at timestamptz not null default now())`.execute(db);
      },
    },
  });

const setOf = (payload: unknown): FactsExtracted =>
  (typeof payload === 'string' ? JSON.parse(payload) : payload) as FactsExtracted;

export class EmbeddingBacklog {
  private readonly db: Kysely<VectorTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<VectorTables>();
  }

  async add(sets: readonly FactsExtracted[]): Promise<void> {
    for (const s of sets) {
      await this.db
        .insertInto('embedding_backlog')
        .values({ message_id: s.messageId, payload: JSON.stringify(s) })
        .onConflict((oc) =>
          oc
            .column('message_id')
            .doUpdateSet((eb) => ({ payload: eb.ref('excluded.payload'), queued_at: eb.fn<string>('now') })),
        )
        .execute();
    }
  }

  /** The oldest `limit` queued sets. */
  async take(limit: number): Promise<FactsExtracted[]> {
    const rows = await this.db
      .selectFrom('embedding_backlog')
      .select('payload')
      .orderBy('queued_at')
      .orderBy('message_id')
      .limit(limit)
      .execute();
    return rows.map((x) => setOf(x.payload));
  }

  /** The queued sets of these messages (message id → set); absent when not queued. */
  async get(messageIds: readonly string[]): Promise<Map<string, FactsExtracted>> {
    if (messageIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('embedding_backlog')
      .select('payload')
      .where('message_id', 'in', [...messageIds])
      .execute();
    const sets = rows.map((x) => setOf(x.payload));
    return new Map(sets.map((s) => [s.messageId, s]));
  }

  async remove(messageIds: readonly string[]): Promise<void> {
    if (messageIds.length === 0) return;
    await this.db
      .deleteFrom('embedding_backlog')
      .where('message_id', 'in', [...messageIds])
      .execute();
  }

  /** Drops a channel's queued sets (ChannelDataDeleted). */
  async deleteChannel(channelId: string): Promise<void> {
    await this.db
      .deleteFrom('embedding_backlog')
      .where((eb) => eb(eb.ref('payload', '->>').key('channelId'), '=', channelId))
      .execute();
  }

  async count(): Promise<number> {
    const r = await this.db
      .selectFrom('embedding_backlog')
      .select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n'))
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table embedding_backlog`.execute(this.db);
  }
}
