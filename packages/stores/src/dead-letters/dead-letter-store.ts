import { type DeadLettered, type DeadLetterRedriven, deadLetterId, type StoredEvent } from '@atlas/core';
import { type Kysely, sql } from 'kysely';

/** `pending`: waiting for an admin; `redriven`: its original event was appended again to its topic. */
export type DeadLetterStatus = 'pending' | 'redriven';

/** Attempts after which a dead letter is flagged for manual inspection (spec "Degraded behaviour": 5 failures). */
export const DEAD_LETTER_INSPECTION_ATTEMPTS = 5;

/** One dead letter as the store keeps it. Times ISO 8601 UTC. */
export interface DeadLetterRecord {
  /** UUID v5 of (group, topic, partition, offset) of the event that failed (deadLetterId). */
  id: string;
  /** The consumer group that gave up, e.g. `atlas.projector.facts`. */
  group: string;
  /** Where the original event is: topic, partition, offset. */
  topic: string;
  partition: number;
  offset: number;
  event_type: string;
  /** The original event's partition key (a channel id for the channel-keyed topics). */
  key: string;
  /** The last error message. */
  error: string;
  /** The error's code (an AtlasError's, e.g. PROVIDER_UNAVAILABLE), or null (none, or written before v3). */
  error_code: string | null;
  /** Times the projector tried the event before giving up. */
  attempts: number;
  failed_at: string;
  /** Failed `attempts` ≥ 5 times and not re-driven yet: an admin should look at it. */
  needs_inspection: boolean;
  /** Whether the original event is kept (DeadLettered v2), so the item can be re-driven. */
  redrivable: boolean;
  status: DeadLetterStatus;
  redriven_at: string | null;
  /** Where the re-drive appended the original event again, or null. */
  redriven_to: { topic: string; partition: number; offset: number } | null;
}

/** A dead letter with its original event's data (parsed JSON; null for a v1 DeadLettered that did not keep it). */
export interface DeadLetterDetail extends DeadLetterRecord {
  event_data: unknown;
}

/** Filters of `list` (all optional); `limit` 1-200, `offset` from 0. */
export interface DeadLetterQuery {
  status?: DeadLetterStatus;
  /** A consumer group (`atlas.projector.facts`) or a projector name (`facts`). */
  group?: string;
  topic?: string;
  eventType?: string;
  key?: string;
  /** The error's code (error_code). */
  errorCode?: string;
  needsInspection?: boolean;
  limit: number;
  offset?: number;
}

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());

const toRecord = (r: Record<string, unknown>): DeadLetterRecord => ({
  id: r.id as string,
  group: r.group_name as string,
  topic: r.topic as string,
  partition: Number(r.partition),
  offset: Number(r.offset),
  event_type: r.event_type as string,
  key: r.key as string,
  error: r.error as string,
  error_code: (r.error_code as string | null | undefined) ?? null,
  attempts: Number(r.attempts),
  failed_at: iso(r.failed_at)!,
  needs_inspection: r.status === 'pending' && Number(r.attempts) >= DEAD_LETTER_INSPECTION_ATTEMPTS,
  redrivable: r.event_data !== null && r.event_data !== undefined,
  status: r.status as DeadLetterStatus,
  redriven_at: iso(r.redriven_at),
  redriven_to:
    r.redrive_topic === null || r.redrive_topic === undefined
      ? null
      : { topic: r.redrive_topic as string, partition: Number(r.redrive_partition), offset: Number(r.redrive_offset) },
});

/**
 * The dead-letter read store (spec "Degraded behaviour": dead-letter queue, manual inspection after 5 failures), on
 * PGlite or PostgreSQL through Kysely. Written only by the dead-letters projector (`apply`: DeadLettered inserts an
 * item, a redelivery changes nothing; DeadLetterRedriven marks it re-driven); read by the admin routes. Needs
 * migrateDeadLetters. Errors: the database's (the runner retries).
 */
export class DeadLetterStore {
  constructor(private readonly db: Kysely<unknown>) {}

  /** Folds DeadLettered and DeadLetterRedriven events in order (other types are ignored). */
  async apply(events: readonly StoredEvent[]): Promise<void> {
    for (const e of events) {
      if (e.type === 'DeadLettered') {
        const d = e.data as DeadLettered;
        await sql`insert into dead_letters (id, group_name, topic, partition, "offset", event_type, key, error,
            error_code, attempts, failed_at, event_data, updated_at)
          values (${deadLetterId(d)}, ${d.group}, ${d.topic}, ${d.partition}, ${d.offset}, ${d.eventType}, ${d.key},
            ${d.error}, ${d.errorCode ?? null}, ${d.attempts}, ${d.failedAt}::timestamptz, ${d.eventData ?? null},
            ${new Date(e.timestamp).toISOString()}::timestamptz)
          on conflict (id) do nothing`.execute(this.db);
      } else if (e.type === 'DeadLetterRedriven') {
        const d = e.data as DeadLetterRedriven;
        await sql`update dead_letters set status = 'redriven', redriven_at = ${d.redrivenAt}::timestamptz,
            redrive_topic = ${d.topic}, redrive_partition = ${d.partition}, redrive_offset = ${d.offset},
            updated_at = ${new Date(e.timestamp).toISOString()}::timestamptz
          where id = ${d.deadLetterId}`.execute(this.db);
      }
    }
  }

  /** The dead letter with its original event's data, or null when unknown. */
  async get(id: string): Promise<DeadLetterDetail | null> {
    const r = await sql<Record<string, unknown>>`select * from dead_letters where id = ${id}`.execute(this.db);
    const row = r.rows[0];
    if (!row) return null;
    return { ...toRecord(row), event_data: row.event_data ? JSON.parse(row.event_data as string) : null };
  }

  /** Dead letters newest first (failed_at), filtered; `total` counts every match. */
  async list(q: DeadLetterQuery): Promise<{ items: DeadLetterRecord[]; total: number }> {
    const group = q.group && !q.group.includes('.') ? `atlas.projector.${q.group}` : q.group;
    const where = sql`true
      ${q.status ? sql`and status = ${q.status}` : sql``}
      ${group ? sql`and group_name = ${group}` : sql``}
      ${q.topic ? sql`and topic = ${q.topic}` : sql``}
      ${q.eventType ? sql`and event_type = ${q.eventType}` : sql``}
      ${q.key ? sql`and key = ${q.key}` : sql``}
      ${q.errorCode ? sql`and error_code = ${q.errorCode}` : sql``}
      ${
        q.needsInspection === undefined
          ? sql``
          : q.needsInspection
            ? sql`and status = 'pending' and attempts >= ${DEAD_LETTER_INSPECTION_ATTEMPTS}`
            : sql`and not (status = 'pending' and attempts >= ${DEAD_LETTER_INSPECTION_ATTEMPTS})`
      }`;
    const rows = await sql<Record<string, unknown>>`select id, group_name, topic, partition, "offset", event_type, key,
        error, error_code, attempts, failed_at, status, redriven_at, redrive_topic, redrive_partition, redrive_offset,
        (event_data is not null) as has_data
      from dead_letters where ${where} order by failed_at desc, id limit ${q.limit} offset ${q.offset ?? 0}`.execute(
      this.db,
    );
    const total = await sql<{ n: number }>`select count(*)::int as n from dead_letters where ${where}`.execute(this.db);
    return {
      items: rows.rows.map((r) => ({ ...toRecord(r), redrivable: Boolean(r.has_data) })),
      total: Number(total.rows[0]?.n ?? 0),
    };
  }

  /** Ids of the pending (not re-driven) dead letters that can be re-driven, oldest first, at most `limit`. */
  async pendingIds(limit: number): Promise<string[]> {
    const r = await sql<{ id: string }>`select id from dead_letters where status = 'pending' and event_data is not null
      order by failed_at, id limit ${limit}`.execute(this.db);
    return r.rows.map((x) => x.id);
  }

  /** Items per status and how many need inspection: `{pending, redriven, needs_inspection}`. */
  async counts(): Promise<{ pending: number; redriven: number; needs_inspection: number }> {
    const r = await sql<{ pending: number; redriven: number; inspect: number }>`select
        count(*) filter (where status = 'pending')::int as pending,
        count(*) filter (where status = 'redriven')::int as redriven,
        count(*) filter (where status = 'pending' and attempts >= ${DEAD_LETTER_INSPECTION_ATTEMPTS})::int as inspect
      from dead_letters`.execute(this.db);
    const x = r.rows[0];
    return {
      pending: Number(x?.pending ?? 0),
      redriven: Number(x?.redriven ?? 0),
      needs_inspection: Number(x?.inspect ?? 0),
    };
  }

  /** Empties the store (before a replay rebuilds it). */
  async truncate(): Promise<void> {
    await sql`truncate table dead_letters`.execute(this.db);
  }
}
