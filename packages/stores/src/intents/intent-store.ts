import type { AnyStoredEvent, IntentStoreName, StoredEvent, StoreWriteApplied } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { IntentTables } from './tables.js';

/** A store's part in an intent (spec: vector `pending`/`done`/`failed`; graph also `skipped`). */
export type IntentStoreStatus = 'pending' | 'done' | 'failed' | 'skipped';
/**
 * An intent's overall state: `pending` until every store is `done` or `skipped` (then `done`); `failed` once the
 * 5th retry left a store failed (permanent, spec "After 5 attempts the failure is permanent"); `abandoned` when it
 * is still pending 24 hours after it was created (spec "An intent is abandoned after 24 hours"), derived at read time.
 */
export type IntentState = 'pending' | 'done' | 'failed' | 'abandoned';

/** Spec Limits "write reconciler": retries stop after this many attempts. */
export const INTENT_MAX_ATTEMPTS = 5;
/** Spec Limits "write reconciler": only intents older than this are retried (ms). */
export const INTENT_RETRY_AFTER_MS = 5 * 60_000;
/** Spec Limits "write reconciler": an intent still pending after this is abandoned (ms). */
export const INTENT_ABANDON_AFTER_MS = 24 * 60 * 60_000;

/** One write intent as the reconciler's store keeps it. Times ISO 8601 UTC. */
export interface WriteIntentRecord {
  intent_id: string;
  message_id: string;
  channel_id: string;
  fact_count: number;
  /** The fact set's extractedAt (its version); null before WriteIntentCreated is folded. */
  extracted_at: string | null;
  /** Where the set's FactsExtracted is on atlas.facts (null before WriteIntentCreated is folded). */
  facts_partition: number | null;
  facts_offset: number | null;
  /** When phase 1 wrote the intent; null while only store outcomes are known (such rows are not listed). */
  created_at: string | null;
  vector: { status: IntentStoreStatus | null; error: string | null };
  graph: { status: IntentStoreStatus | null; error: string | null };
  retry_count: number;
  state: IntentState;
  /** When the latest reconciler attempt was reported, or null. */
  last_attempt_at: string | null;
  updated_at: string;
}

/** Filters of `list` (every one optional); `limit` 1-500, `offset` from 0. */
export interface IntentQuery {
  state?: IntentState;
  channelId?: string;
  messageId?: string;
  limit: number;
  offset?: number;
}

type IntentEvent =
  | StoredEvent<'WriteIntentCreated'>
  | StoredEvent<'StoreWriteApplied'>
  | StoredEvent<'StoreWriteFailed'>;

interface Row {
  intent_id: string;
  message_id: string;
  channel_id: string;
  fact_count: number;
  extracted_at: string | null;
  facts_partition: number | null;
  facts_offset: number | null;
  created_at: string | null;
  vector_status: IntentStoreStatus | null;
  vector_error: string | null;
  graph_status: IntentStoreStatus | null;
  graph_error: string | null;
  retry_count: number;
  state: 'pending' | 'done' | 'failed';
  last_attempt_at: string | null;
  updated_at: string;
}

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());
const terminal = (s: IntentStoreStatus | null) => s === 'done' || s === 'skipped';

/** Pure: a store's status after an outcome. `done` is final; `skipped` yields only to `done`; failures never undo. */
const afterApplied = (cur: IntentStoreStatus | null, outcome: StoreWriteApplied['outcome']): IntentStoreStatus =>
  cur === 'done' ? 'done' : outcome === 'written' ? 'done' : 'skipped';
const afterFailed = (cur: IntentStoreStatus | null): IntentStoreStatus => (terminal(cur) ? cur! : 'failed');

/** Pure: the folded state of a row (abandonment is derived at read time). */
const foldedState = (r: Row): Row['state'] => {
  if (r.created_at !== null && terminal(r.vector_status) && terminal(r.graph_status)) return 'done';
  return r.retry_count >= INTENT_MAX_ATTEMPTS ? 'failed' : 'pending';
};

const columnsOf = (store: IntentStoreName) =>
  store === 'vector' ? (['vector_status', 'vector_error'] as const) : (['graph_status', 'graph_error'] as const);

/** Pure: one event folded into a row (a new row when `row` is undefined). */
export const foldIntentEvent = (row: Row | undefined, e: IntentEvent): Row => {
  const d = e.data;
  const r: Row = row
    ? { ...row }
    : {
        intent_id: d.intentId,
        message_id: d.messageId,
        channel_id: d.channelId,
        fact_count: 0,
        extracted_at: null,
        facts_partition: null,
        facts_offset: null,
        created_at: null,
        vector_status: null,
        vector_error: null,
        graph_status: null,
        graph_error: null,
        retry_count: 0,
        state: 'pending',
        last_attempt_at: null,
        updated_at: new Date(e.timestamp).toISOString(),
      };
  if (e.type === 'WriteIntentCreated') {
    const c = e.data;
    r.fact_count = c.factCount;
    r.extracted_at = c.extractedAt;
    r.facts_partition = c.factsPartition;
    r.facts_offset = c.factsOffset;
    r.created_at = r.created_at ?? c.createdAt;
    r.vector_status = r.vector_status ?? c.vector;
    r.graph_status = r.graph_status ?? c.graph;
  } else {
    const o = e.data;
    const [statusKey, errorKey] = columnsOf(o.store);
    const cur = r[statusKey];
    const next = e.type === 'StoreWriteApplied' ? afterApplied(cur, e.data.outcome) : afterFailed(cur);
    r[statusKey] = next;
    // Only a failure folds to 'failed' (afterApplied never does).
    if (e.type === 'StoreWriteFailed' && next === 'failed') r[errorKey] = e.data.error ?? r[errorKey];
    else if (terminal(next)) r[errorKey] = null;
    if (o.attempt > 0) {
      r.retry_count = Math.max(r.retry_count, o.attempt);
      const when = e.type === 'StoreWriteApplied' ? e.data.appliedAt : e.data.failedAt;
      if (!r.last_attempt_at || Date.parse(when) > Date.parse(r.last_attempt_at)) r.last_attempt_at = when;
    }
  }
  r.state = foldedState(r);
  r.updated_at = new Date(Math.max(Date.parse(r.updated_at), e.timestamp)).toISOString();
  return r;
};

/** The state as read at `now` (a pending intent older than 24 h reads `abandoned`), as a column expression. */
const stateAt = (now: Date) => (eb: ExpressionBuilder<IntentTables, 'write_intents'>) =>
  eb
    .case()
    .when(
      eb.and([
        eb('state', '=', 'pending'),
        eb('created_at', '<', new Date(now.getTime() - INTENT_ABANDON_AFTER_MS).toISOString()),
      ]),
    )
    .then('abandoned')
    .else(eb.ref('state'))
    .end();

const toRecord = (r: Record<string, unknown>): WriteIntentRecord => ({
  intent_id: r.intent_id as string,
  message_id: r.message_id as string,
  channel_id: r.channel_id as string,
  fact_count: Number(r.fact_count),
  extracted_at: (r.extracted_at as string | null) ?? null,
  facts_partition: r.facts_partition === null || r.facts_partition === undefined ? null : Number(r.facts_partition),
  facts_offset: r.facts_offset === null || r.facts_offset === undefined ? null : Number(r.facts_offset),
  created_at: iso(r.created_at),
  vector: { status: (r.vector_status as IntentStoreStatus | null) ?? null, error: (r.vector_error as string) ?? null },
  graph: { status: (r.graph_status as IntentStoreStatus | null) ?? null, error: (r.graph_error as string) ?? null },
  retry_count: Number(r.retry_count),
  state: r.read_state as IntentState,
  last_attempt_at: iso(r.last_attempt_at),
  updated_at: iso(r.updated_at)!,
});

/**
 * The reconciler's read store of write intents (spec "Write intent (two-phase persist)"; ARCHITECTURE.md "Write
 * intents are events too"), on PGlite or PostgreSQL through Kysely. Written only by the reconciler projector (`apply`:
 * a commutative fold, so outcomes folded before their WriteIntentCreated, redeliveries and replays end equal); read
 * by the reconcile pass, the admin routes and the metrics (`countByState`). Needs migrateIntents. Errors: the
 * database's (the runner retries).
 */
export class IntentStore {
  private readonly db: Kysely<IntentTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<IntentTables>();
  }

  /** Folds WriteIntentCreated, StoreWriteApplied and StoreWriteFailed events in order (other types are ignored). */
  async apply(events: readonly AnyStoredEvent[]): Promise<void> {
    const mine = events.filter(
      (e): e is IntentEvent =>
        e.type === 'WriteIntentCreated' || e.type === 'StoreWriteApplied' || e.type === 'StoreWriteFailed',
    );
    if (mine.length === 0) return;
    const ids = [...new Set(mine.map((e) => e.data.intentId))];
    const rows = new Map<string, Row>();
    const existing = await this.db.selectFrom('write_intents').selectAll().where('intent_id', 'in', ids).execute();
    for (const x of existing) {
      rows.set(x.intent_id as string, {
        ...(x as unknown as Row),
        created_at: iso(x.created_at),
        last_attempt_at: iso(x.last_attempt_at),
        updated_at: iso(x.updated_at)!,
        retry_count: Number(x.retry_count),
        fact_count: Number(x.fact_count),
        facts_partition: x.facts_partition === null ? null : Number(x.facts_partition),
        facts_offset: x.facts_offset === null ? null : Number(x.facts_offset),
      });
    }
    for (const e of mine) rows.set(e.data.intentId, foldIntentEvent(rows.get(e.data.intentId), e));
    const values = [...rows.values()];
    // One statement for the batch: arrays of each column, unnested (raw: the builder has no unnest).
    const col = <K extends keyof Row>(k: K) => values.map((v) => v[k]);
    await sql`insert into write_intents (intent_id, message_id, channel_id, fact_count, extracted_at,
        facts_partition, facts_offset, created_at, vector_status, vector_error, graph_status, graph_error, retry_count, state, last_attempt_at, updated_at)
      select * from unnest(${col('intent_id')}::text[], ${col('message_id')}::text[], ${col('channel_id')}::text[],
        ${col('fact_count')}::int[], ${col('extracted_at')}::text[], ${col('facts_partition')}::int[],
        ${col('facts_offset')}::bigint[], ${col('created_at')}::timestamptz[],
        ${col('vector_status')}::text[], ${col('vector_error')}::text[], ${col('graph_status')}::text[],
        ${col('graph_error')}::text[], ${col('retry_count')}::int[], ${col('state')}::text[],
        ${col('last_attempt_at')}::timestamptz[], ${col('updated_at')}::timestamptz[])
      on conflict (intent_id) do update set fact_count = excluded.fact_count, extracted_at = excluded.extracted_at,
        facts_partition = excluded.facts_partition, facts_offset = excluded.facts_offset,
        created_at = excluded.created_at, vector_status = excluded.vector_status, vector_error = excluded.vector_error,
        graph_status = excluded.graph_status, graph_error = excluded.graph_error, retry_count = excluded.retry_count,
        state = excluded.state, last_attempt_at = excluded.last_attempt_at, updated_at = excluded.updated_at`.execute(
      this.db,
    );
  }

  /** The intent as read at `now`, or null when unknown (or only its outcomes are known). */
  async get(intentId: string, now: Date = new Date()): Promise<WriteIntentRecord | null> {
    const row = await this.db
      .selectFrom('write_intents')
      .selectAll()
      .select((eb) => stateAt(now)(eb).as('read_state'))
      .where('intent_id', '=', intentId)
      .where('created_at', 'is not', null)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Intents as read at `now`, newest first, filtered; `total` counts every match. */
  async list(q: IntentQuery, now: Date = new Date()): Promise<{ intents: WriteIntentRecord[]; total: number }> {
    const where = (eb: ExpressionBuilder<IntentTables, 'write_intents'>) =>
      eb.and([
        eb('created_at', 'is not', null),
        ...(q.state ? [eb(stateAt(now)(eb), '=', q.state)] : []),
        ...(q.channelId ? [eb('channel_id', '=', q.channelId)] : []),
        ...(q.messageId ? [eb('message_id', '=', q.messageId)] : []),
      ]);
    const rows = await this.db
      .selectFrom('write_intents')
      .selectAll()
      .select((eb) => stateAt(now)(eb).as('read_state'))
      .where(where)
      .orderBy('created_at', 'desc')
      .orderBy('intent_id')
      .limit(q.limit)
      .offset(q.offset ?? 0)
      .execute();
    const total = await this.db
      .selectFrom('write_intents')
      .select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n'))
      .where(where)
      .executeTakeFirst();
    return { intents: rows.map(toRecord), total: Number(total?.n ?? 0) };
  }

  /**
   * What a reconcile pass at `now` retries (spec Limits "write reconciler"): pending intents created more than 5
   * minutes and less than 24 hours before `now`, retry_count below 5, with a store still `pending` or `failed`;
   * oldest first, at most `limit`.
   */
  async retryCandidates(now: Date, limit: number): Promise<WriteIntentRecord[]> {
    const rows = await this.db
      .selectFrom('write_intents')
      .selectAll()
      .select('state as read_state')
      .where('state', '=', 'pending')
      .where('created_at', 'is not', null)
      .where('created_at', '<=', new Date(now.getTime() - INTENT_RETRY_AFTER_MS).toISOString())
      .where('created_at', '>=', new Date(now.getTime() - INTENT_ABANDON_AFTER_MS).toISOString())
      .where('retry_count', '<', INTENT_MAX_ATTEMPTS)
      .where((eb) =>
        eb.or([eb('vector_status', 'in', ['pending', 'failed']), eb('graph_status', 'in', ['pending', 'failed'])]),
      )
      .orderBy('created_at')
      .orderBy('intent_id')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  /**
   * Intents per state as read at `now`: `{pending, done, failed, abandoned}` (every key present, 0 when none), for
   * the write-intents-by-state gauge and GET /api/admin/write-intents.
   */
  async countByState(now: Date = new Date()): Promise<Record<IntentState, number>> {
    const rows = await this.db
      .selectFrom((qb) =>
        qb
          .selectFrom('write_intents')
          .select((eb) => stateAt(now)(eb).as('s'))
          .where('created_at', 'is not', null)
          .as('w'),
      )
      .select((eb) => ['w.s', eb.cast<number>(eb.fn.countAll(), 'integer').as('n')])
      .groupBy('w.s')
      .execute();
    const out: Record<IntentState, number> = { pending: 0, done: 0, failed: 0, abandoned: 0 };
    for (const x of rows) out[x.s as IntentState] = Number(x.n);
    return out;
  }

  /**
   * Whether the message has facts in the document store now (read-only over its `memories` table, same database):
   * a write intent of a message without facts (deleted, edited to nothing, channel data deleted) is superseded.
   */
  async messageHasFacts(messageId: string): Promise<boolean> {
    const r = await this.db
      .selectFrom('memories')
      .select((eb) => eb.lit(1).as('one'))
      .where('message_uuid', '=', messageId)
      .limit(1)
      .execute();
    return r.length > 0;
  }

  /** The ids of the message's facts in the document store now (read-only over `memories`), for store checks. */
  async messageFactIds(messageId: string): Promise<string[]> {
    const r = await this.db
      .selectFrom('memories')
      .select('id')
      .where('message_uuid', '=', messageId)
      .orderBy('id')
      .execute();
    return r.map((x) => String(x.id));
  }

  /** Empties the store (before a replay rebuilds it). */
  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table write_intents`.execute(this.db);
  }
}
