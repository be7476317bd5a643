import type {
  LifecycleFact,
  LifecycleItem,
  LifecycleKind,
  LifecycleResolution,
  LifecycleSignal,
  LifecycleState,
} from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import type { Kysely } from 'kysely';
import type { LifecycleTables } from './tables.js';

/** A certain or uncertain supersession of one message's graph contribution, as the lifecycle store keeps it. */
export interface LifecycleSupersessionRow {
  factId: string;
  supersededBy: string;
  invalidAt: string;
  certain: boolean;
}

/** What the derivation reads for one channel (LifecycleStore.inputsOf). */
export interface LifecycleInputs {
  facts: LifecycleFact[];
  signals: LifecycleSignal[];
  supersessions: LifecycleSupersessionRow[];
  resolutions: LifecycleResolution[];
}

/**
 * Filters of LifecycleStore.list (every one optional): `channelIds` the channels to read (null or absent: every
 * channel), `owner` compared case-insensitively, `since`/`until` ISO 8601: an item is in range when it was opened or
 * moved in it (updated_at ≥ since, created_at ≤ until). `limit` 1-500, `offset` from 0. Newest first (updated_at).
 */
export interface LifecycleQuery {
  channelIds?: readonly string[] | null;
  kind?: LifecycleKind;
  state?: LifecycleState;
  owner?: string;
  since?: string;
  until?: string;
  limit: number;
  offset?: number;
}

const PART_OF_TOPIC: Record<string, 'lifecycle_signals' | 'lifecycle_facts' | 'lifecycle_supersessions'> = {
  'atlas.messages': 'lifecycle_signals',
  'atlas.facts': 'lifecycle_facts',
  'atlas.graph': 'lifecycle_supersessions',
};

const parse = <T>(v: string): T => JSON.parse(v) as T;

/**
 * The lifecycle read store (issue 27 point 1), on PGlite or PostgreSQL through Kysely (migrateLifecycle). Written only
 * by the lifecycle projector: its inputs (lifecycle facts, cue signals, supersessions; each replaced per message, so a
 * redelivered event writes the same rows) and the items derived from them (replaced per channel). Read by the
 * /api/decisions routes and GET /api/graph/decisions.
 */
export class LifecycleStore {
  private readonly db: Kysely<LifecycleTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<LifecycleTables>();
  }

  /** Replaces the lifecycle facts of each message (an empty list removes them). Idempotent. */
  async replaceFacts(sets: readonly { messageId: string; channelId: string; facts: readonly LifecycleFact[] }[]) {
    if (sets.length === 0) return;
    await this.db.transaction().execute(async (tx) => {
      await tx
        .deleteFrom('lifecycle_facts')
        .where(
          'message_id',
          'in',
          sets.map((s) => s.messageId),
        )
        .execute();
      const rows = new Map<string, LifecycleTables['lifecycle_facts']>();
      for (const s of sets)
        for (const f of s.facts)
          rows.set(f.factId, {
            fact_id: f.factId,
            channel_id: s.channelId,
            message_id: s.messageId,
            message_ts: f.messageTs,
            data: JSON.stringify(f),
          });
      if (rows.size > 0)
        await tx
          .insertInto('lifecycle_facts')
          .values([...rows.values()])
          .onConflict((oc) =>
            oc.column('fact_id').doUpdateSet((eb) => ({
              channel_id: eb.ref('excluded.channel_id'),
              message_id: eb.ref('excluded.message_id'),
              message_ts: eb.ref('excluded.message_ts'),
              data: eb.ref('excluded.data'),
            })),
          )
          .execute();
    });
  }

  /**
   * Sets (or, with a null signal, removes) the cue signal of each message. Idempotent. Returns the channels whose
   * signals this added, changed or removed (only those need their items derived again).
   */
  async replaceSignals(
    entries: readonly { messageId: string; channelId: string; signal: LifecycleSignal | null }[],
  ): Promise<Set<string>> {
    const changed = new Set<string>();
    if (entries.length === 0) return changed;
    const last = new Map(entries.map((e) => [e.messageId, e]));
    await this.db.transaction().execute(async (tx) => {
      const before = await tx
        .deleteFrom('lifecycle_signals')
        .where('message_id', 'in', [...last.keys()])
        .returning(['message_id'])
        .execute();
      const old = new Set(before.map((r) => r.message_id));
      for (const e of last.values()) if (e.signal || old.has(e.messageId)) changed.add(e.channelId);
      const rows = [...last.values()]
        .filter((e) => e.signal)
        .map((e) => ({
          message_id: e.messageId,
          channel_id: e.channelId,
          ts: e.signal!.timestamp,
          data: JSON.stringify(e.signal),
        }));
      if (rows.length > 0) await tx.insertInto('lifecycle_signals').values(rows).execute();
    });
    return changed;
  }

  /** Replaces the supersessions of each message's graph contribution. Idempotent. */
  async replaceSupersessions(
    sets: readonly { messageId: string; channelId: string; supersessions: readonly LifecycleSupersessionRow[] }[],
  ) {
    if (sets.length === 0) return;
    await this.db.transaction().execute(async (tx) => {
      await tx
        .deleteFrom('lifecycle_supersessions')
        .where(
          'message_id',
          'in',
          sets.map((s) => s.messageId),
        )
        .execute();
      const rows = new Map<string, LifecycleTables['lifecycle_supersessions']>();
      for (const s of sets)
        for (const x of s.supersessions)
          rows.set(`${s.messageId}|${x.factId}|${x.supersededBy}`, {
            message_id: s.messageId,
            channel_id: s.channelId,
            fact_id: x.factId,
            superseded_by: x.supersededBy,
            invalid_at: x.invalidAt,
            certain: x.certain,
          });
      if (rows.size > 0)
        await tx
          .insertInto('lifecycle_supersessions')
          .values([...rows.values()])
          .execute();
    });
  }

  /**
   * Records admins' resolutions of potential contradictions (ContradictionResolved; docs/contradictions.md), the first
   * resolution of a contradiction id winning, so a redelivery or a replay writes the same rows. Idempotent.
   */
  async addResolutions(
    rows: readonly { contradictionId: string; channelId: string; resolution: LifecycleResolution }[],
  ): Promise<void> {
    if (rows.length === 0) return;
    await this.db
      .insertInto('lifecycle_resolutions')
      .values(
        rows.map((r) => ({
          contradiction_id: r.contradictionId,
          channel_id: r.channelId,
          fact_id: r.resolution.factId,
          superseded_by: r.resolution.supersededBy,
          outcome: r.resolution.outcome,
        })),
      )
      .onConflict((oc) => oc.column('contradiction_id').doNothing())
      .execute();
  }

  /** Removes a deleted message's facts and signal (its supersessions go with its empty EntitiesExtracted). */
  async deleteMessage(messageId: string): Promise<void> {
    await this.db.deleteFrom('lifecycle_facts').where('message_id', '=', messageId).execute();
    await this.db.deleteFrom('lifecycle_signals').where('message_id', '=', messageId).execute();
  }

  /**
   * Removes what the copy of ChannelDataDeleted read on `topic` covers (atlas.messages: the channel's signals;
   * atlas.facts: its facts; atlas.graph: its supersessions and contradiction resolutions) and the channel's derived
   * items (derived again after).
   */
  async deleteChannelPart(channelId: string, topic: string): Promise<void> {
    const table = PART_OF_TOPIC[topic];
    if (table) await this.db.deleteFrom(table).where('channel_id', '=', channelId).execute();
    if (table === 'lifecycle_supersessions')
      await this.db.deleteFrom('lifecycle_resolutions').where('channel_id', '=', channelId).execute();
    await this.db.deleteFrom('lifecycle_items').where('channel_id', '=', channelId).execute();
  }

  /** Everything the derivation reads for `channelId`. */
  async inputsOf(channelId: string): Promise<LifecycleInputs> {
    const [facts, signals, sups, resolutions] = await Promise.all([
      this.db.selectFrom('lifecycle_facts').select('data').where('channel_id', '=', channelId).execute(),
      this.db.selectFrom('lifecycle_signals').select('data').where('channel_id', '=', channelId).execute(),
      this.db.selectFrom('lifecycle_supersessions').selectAll().where('channel_id', '=', channelId).execute(),
      this.db.selectFrom('lifecycle_resolutions').selectAll().where('channel_id', '=', channelId).execute(),
    ]);
    return {
      facts: facts.map((r) => parse<LifecycleFact>(r.data)),
      signals: signals.map((r) => parse<LifecycleSignal>(r.data)),
      supersessions: sups.map((r) => ({
        factId: r.fact_id,
        supersededBy: r.superseded_by,
        invalidAt: r.invalid_at,
        certain: Boolean(r.certain),
      })),
      resolutions: resolutions.map((r) => ({
        factId: r.fact_id,
        supersededBy: r.superseded_by,
        outcome: r.outcome as LifecycleResolution['outcome'],
      })),
    };
  }

  /** Replaces the derived items of `channelId` with `items`. Idempotent. */
  async replaceItems(channelId: string, items: readonly LifecycleItem[]): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('lifecycle_items').where('channel_id', '=', channelId).execute();
      for (let i = 0; i < items.length; i += 500) {
        const chunk = items.slice(i, i + 500).map((it) => ({
          item_id: it.itemId,
          channel_id: channelId,
          kind: it.kind,
          state: it.state,
          owner: it.owner,
          due_date: it.dueDate,
          created_at: it.createdAt,
          updated_at: it.updatedAt,
          superseded_by: it.supersededBy,
          data: JSON.stringify(it),
        }));
        if (chunk.length > 0)
          await tx
            .insertInto('lifecycle_items')
            .values(chunk)
            .onConflict((oc) => oc.column('item_id').doNothing())
            .execute();
      }
    });
  }

  /** A page of items matching `q` and the total matching, newest change first (then item id). */
  async list(q: LifecycleQuery): Promise<{ items: LifecycleItem[]; total: number }> {
    if (q.channelIds && q.channelIds.length === 0) return { items: [], total: 0 };
    let base = this.db.selectFrom('lifecycle_items');
    if (q.channelIds) base = base.where('channel_id', 'in', [...q.channelIds]);
    if (q.kind) base = base.where('kind', '=', q.kind);
    if (q.state) base = base.where('state', '=', q.state);
    if (q.owner) base = base.where((eb) => eb(eb.fn('lower', ['owner']), '=', q.owner!.toLowerCase()));
    if (q.since) base = base.where('updated_at', '>=', new Date(q.since).toISOString());
    if (q.until) base = base.where('created_at', '<=', new Date(q.until).toISOString());
    const [rows, count] = await Promise.all([
      base
        .select('data')
        .orderBy('updated_at', 'desc')
        .orderBy('item_id')
        .limit(q.limit)
        .offset(q.offset ?? 0)
        .execute(),
      base.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirst(),
    ]);
    return { items: rows.map((r) => parse<LifecycleItem>(r.data)), total: Number(count?.n ?? 0) };
  }

  /** One item with its history, or null. */
  async get(itemId: string): Promise<LifecycleItem | null> {
    const row = await this.db
      .selectFrom('lifecycle_items')
      .select('data')
      .where('item_id', '=', itemId)
      .executeTakeFirst();
    return row ? parse<LifecycleItem>(row.data) : null;
  }

  /** The items opened by the facts `factIds` (a decision's item id is its fact id), by id. */
  async byIds(itemIds: readonly string[]): Promise<Map<string, LifecycleItem>> {
    const out = new Map<string, LifecycleItem>();
    for (let i = 0; i < itemIds.length; i += 500) {
      const chunk = itemIds.slice(i, i + 500);
      if (chunk.length === 0) continue;
      const rows = await this.db.selectFrom('lifecycle_items').select('data').where('item_id', 'in', chunk).execute();
      for (const r of rows) {
        const it = parse<LifecycleItem>(r.data);
        out.set(it.itemId, it);
      }
    }
    return out;
  }

  /** Empties every table (a replay rebuilds them). */
  async truncate(): Promise<void> {
    for (const table of [
      'lifecycle_facts',
      'lifecycle_signals',
      'lifecycle_supersessions',
      'lifecycle_resolutions',
      'lifecycle_items',
    ] as const)
      await this.db.deleteFrom(table).execute();
  }
}
