import { type AnyStoredEvent, deadLetterId } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { DeadLetterDetail, DeadLetterQuery, DeadLetterRecord, DeadLetterStatus } from './port.js';
import type { DeadLetterTables } from './tables.js';

/** Attempts after which a dead letter is flagged for manual inspection (spec "Degraded behaviour": 5 failures). */
export const DEAD_LETTER_INSPECTION_ATTEMPTS = 5;

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
  private readonly db: Kysely<DeadLetterTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<DeadLetterTables>();
  }

  /** Folds DeadLettered and DeadLetterRedriven events in order (other types are ignored). */
  async apply(events: readonly AnyStoredEvent[]): Promise<void> {
    for (const e of events) {
      if (e.type === 'DeadLettered') {
        const d = e.data;
        await this.db
          .insertInto('dead_letters')
          .values({
            id: deadLetterId(d),
            group_name: d.group,
            topic: d.topic,
            partition: d.partition,
            offset: d.offset,
            event_type: d.eventType,
            key: d.key,
            error: d.error,
            error_code: d.errorCode ?? null,
            attempts: d.attempts,
            failed_at: d.failedAt,
            event_data: d.eventData ?? null,
            updated_at: new Date(e.timestamp).toISOString(),
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
      } else if (e.type === 'DeadLetterRedriven') {
        const d = e.data;
        await this.db
          .updateTable('dead_letters')
          .set({
            status: 'redriven',
            redriven_at: d.redrivenAt,
            redrive_topic: d.topic,
            redrive_partition: d.partition,
            redrive_offset: d.offset,
            updated_at: new Date(e.timestamp).toISOString(),
          })
          .where('id', '=', d.deadLetterId)
          .execute();
      }
    }
  }

  /** The dead letter with its original event's data, or null when unknown. */
  async get(id: string): Promise<DeadLetterDetail | null> {
    const row = await this.db.selectFrom('dead_letters').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return null;
    return { ...toRecord(row), event_data: row.event_data ? JSON.parse(row.event_data) : null };
  }

  /** Dead letters newest first (failed_at), filtered; `total` counts every match. */
  async list(q: DeadLetterQuery): Promise<{ items: DeadLetterRecord[]; total: number }> {
    const group = q.group && !q.group.includes('.') ? `atlas.projector.${q.group}` : q.group;
    const where = (eb: ExpressionBuilder<DeadLetterTables, 'dead_letters'>) => {
      const pendingLong = eb.and([eb('status', '=', 'pending'), eb('attempts', '>=', DEAD_LETTER_INSPECTION_ATTEMPTS)]);
      return eb.and([
        ...(q.status ? [eb('status', '=', q.status)] : []),
        ...(group ? [eb('group_name', '=', group)] : []),
        ...(q.topic ? [eb('topic', '=', q.topic)] : []),
        ...(q.eventType ? [eb('event_type', '=', q.eventType)] : []),
        ...(q.key ? [eb('key', '=', q.key)] : []),
        ...(q.errorCode ? [eb('error_code', '=', q.errorCode)] : []),
        ...(q.needsInspection === undefined ? [] : [q.needsInspection ? pendingLong : eb.not(pendingLong)]),
      ]);
    };
    const rows = await this.db
      .selectFrom('dead_letters')
      .select((eb) => [
        'id',
        'group_name',
        'topic',
        'partition',
        'offset',
        'event_type',
        'key',
        'error',
        'error_code',
        'attempts',
        'failed_at',
        'status',
        'redriven_at',
        'redrive_topic',
        'redrive_partition',
        'redrive_offset',
        eb('event_data', 'is not', null).as('has_data'),
      ])
      .where(where)
      .orderBy('failed_at', 'desc')
      .orderBy('id')
      .limit(q.limit)
      .offset(q.offset ?? 0)
      .execute();
    const total = await this.db
      .selectFrom('dead_letters')
      .select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n'))
      .where(where)
      .executeTakeFirst();
    return {
      items: rows.map((r) => ({ ...toRecord(r), redrivable: Boolean(r.has_data) })),
      total: Number(total?.n ?? 0),
    };
  }

  /** Ids of the pending (not re-driven) dead letters that can be re-driven, oldest first, at most `limit`. */
  async pendingIds(limit: number): Promise<string[]> {
    const r = await this.db
      .selectFrom('dead_letters')
      .select('id')
      .where('status', '=', 'pending')
      .where('event_data', 'is not', null)
      .orderBy('failed_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return r.map((x) => x.id);
  }

  /** Items per status and how many need inspection: `{pending, redriven, needs_inspection}`. */
  async counts(): Promise<{ pending: number; redriven: number; needs_inspection: number }> {
    const count = (eb: ExpressionBuilder<DeadLetterTables, 'dead_letters'>) => eb.fn.countAll<number>();
    const x = await this.db
      .selectFrom('dead_letters')
      .select((eb) => [
        eb.cast<number>(count(eb).filterWhere('status', '=', 'pending'), 'integer').as('pending'),
        eb.cast<number>(count(eb).filterWhere('status', '=', 'redriven'), 'integer').as('redriven'),
        eb
          .cast<number>(
            count(eb).filterWhere((f) =>
              f.and([f('status', '=', 'pending'), f('attempts', '>=', DEAD_LETTER_INSPECTION_ATTEMPTS)]),
            ),
            'integer',
          )
          .as('inspect'),
      ])
      .executeTakeFirst();
    return {
      pending: Number(x?.pending ?? 0),
      redriven: Number(x?.redriven ?? 0),
      needs_inspection: Number(x?.inspect ?? 0),
    };
  }

  /** Empties the store (before a replay rebuilds it). */
  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table dead_letters`.execute(this.db);
  }
}
