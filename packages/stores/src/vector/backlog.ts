import type { FactsExtracted } from '@atlas/core';
import { type Kysely, sql } from 'kysely';
import { runMigrations } from '../migrate.js';

/**
 * Fact sets waiting for embeddings (spec "Ingestion pipeline": when the embedding provider is down,
 * facts are stored text-only and queued for embedding backfill). One row per message; a newer set of
 * the same message replaces the queued one.
 */
export const migrateEmbeddingBacklog = (db: Kysely<unknown>) =>
  runMigrations(db, 'embedding_backlog', {
    '0001_embedding_backlog': {
      async up(db: Kysely<unknown>) {
        await sql`create table if not exists embedding_backlog (message_id uuid primary key, payload jsonb not null,
          queued_at timestamptz not null default now())`.execute(db);
      },
    },
  });

export class EmbeddingBacklog {
  constructor(private readonly db: Kysely<unknown>) {}

  async add(sets: readonly FactsExtracted[]): Promise<void> {
    for (const s of sets) {
      await sql`insert into embedding_backlog (message_id, payload) values (${s.messageId}::uuid, ${JSON.stringify(s)}::jsonb)
        on conflict (message_id) do update set payload = excluded.payload, queued_at = now()`.execute(this.db);
    }
  }

  /** The oldest `limit` queued sets. */
  async take(limit: number): Promise<FactsExtracted[]> {
    const r = await sql<{
      payload: FactsExtracted | string;
    }>`select payload from embedding_backlog order by queued_at, message_id limit ${limit}`.execute(this.db);
    return r.rows.map((x) => (typeof x.payload === 'string' ? (JSON.parse(x.payload) as FactsExtracted) : x.payload));
  }

  /** The queued sets of these messages (message id → set); absent when not queued. */
  async get(messageIds: readonly string[]): Promise<Map<string, FactsExtracted>> {
    if (messageIds.length === 0) return new Map();
    const r = await sql<{ payload: FactsExtracted | string }>`select payload from embedding_backlog
      where message_id = any(${[...messageIds]}::uuid[])`.execute(this.db);
    const sets = r.rows.map((x) =>
      typeof x.payload === 'string' ? (JSON.parse(x.payload) as FactsExtracted) : x.payload,
    );
    return new Map(sets.map((s) => [s.messageId, s]));
  }

  async remove(messageIds: readonly string[]): Promise<void> {
    if (messageIds.length === 0) return;
    await sql`delete from embedding_backlog where message_id = any(${[...messageIds]}::uuid[])`.execute(this.db);
  }

  /** Drops a channel's queued sets (ChannelDataDeleted). */
  async deleteChannel(channelId: string): Promise<void> {
    await sql`delete from embedding_backlog where payload->>'channelId' = ${channelId}`.execute(this.db);
  }

  async count(): Promise<number> {
    const r = await sql<{ n: number }>`select count(*)::int as n from embedding_backlog`.execute(this.db);
    return Number(r.rows[0]?.n ?? 0);
  }

  async truncate(): Promise<void> {
    await sql`truncate table embedding_backlog`.execute(this.db);
  }
}
