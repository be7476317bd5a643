import { type ContradictionOutcome, type ContradictionResolved, contradictionId } from '@atlas/core';
import { type Kysely, sql } from 'kysely';
import type { DocumentTables } from './tables.js';

/** A stored time as ISO 8601 UTC (null stays null); local, so this module and port.ts do not import each other. */
const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** One side of a potential contradiction: the fact and where it was said (issue 27, point 5). */
export interface ContradictionSide {
  memory_id: string;
  memory_text: string;
  fact_type: string;
  author_id: string;
  author_name: string;
  /** ISO 8601 UTC time of the source message. */
  message_ts: string;
  channel_id: string;
  source_message_id: string;
  /** The source message's permalink. */
  permalink: string;
}

/** An admin's resolution as the store keeps it (ContradictionResolved). */
export interface ContradictionResolutionView {
  outcome: ContradictionOutcome;
  note: string | null;
  resolved_by: string;
  /** ISO 8601 UTC. */
  resolved_at: string;
}

/**
 * A potential contradiction (a supersession stated with certain=false): an earlier fact and a later one that may
 * contradict it, both in `channel_id`. `detected_at` is the later fact's message time (the supersession's
 * invalid_at); `reason` why the extractor flagged it; `resolution` null while open.
 */
export interface ContradictionView {
  id: string;
  channel_id: string;
  status: 'open' | 'resolved';
  reason: string;
  detected_at: string;
  earlier: ContradictionSide;
  later: ContradictionSide;
  resolution: ContradictionResolutionView | null;
}

/** Filters of DocumentStore.listContradictions; `channelIds` null: every channel. */
export interface ContradictionQuery {
  channelIds: readonly string[] | null;
  status?: 'open' | 'resolved' | undefined;
  page: number;
  limit: number;
}

/** A resolution as the memory overlay reads it, by the pair it resolves. */
export interface PairResolution {
  outcome: ContradictionOutcome;
  invalid_at: string;
}

/**
 * DocumentStore.applyContradictionResolutions: one row per contradiction id, the first resolution of an id wins
 * (insert … on conflict do nothing), so a redelivery or a replay in log order writes the same rows. A resolution of an
 * id that does not match its fact pair is skipped (a recorded fact is never rejected: counted in the return value).
 */
export const writeResolutions = async (
  db: Kysely<DocumentTables>,
  resolutions: readonly ContradictionResolved[],
): Promise<{ written: number; skipped: number }> => {
  const ok = resolutions.filter((r) => r.contradictionId === contradictionId(r.factId, r.supersededBy));
  const skipped = resolutions.length - ok.length;
  let written = 0;
  // One at a time, in log order: the first resolution of an id wins within a batch as across batches.
  for (const r of ok) {
    const res = await db
      .insertInto('contradiction_resolutions')
      .values({
        id: r.contradictionId,
        channel_id: r.channelId,
        fact_id: r.factId,
        superseded_by: r.supersededBy,
        outcome: r.outcome,
        invalid_at: r.invalidAt,
        note: r.note,
        resolved_by: r.resolvedBy,
        resolved_at: r.resolvedAt,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    written += Number(res.numInsertedOrUpdatedRows ?? 0);
  }
  return { written, skipped };
};

/** The resolutions of pairs whose earlier fact is among `factIds`, by `${fact_id}:${superseded_by}`. */
export const resolutionsOf = async (
  db: Kysely<DocumentTables>,
  factIds: readonly string[],
  asOf?: string,
): Promise<Map<string, PairResolution>> => {
  if (factIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('contradiction_resolutions')
    .select(['fact_id', 'superseded_by', 'outcome', 'invalid_at'])
    .where('fact_id', 'in', [...factIds])
    // As of a date: only what an admin had resolved by then (issue 27 point 2).
    .$if(asOf !== undefined, (q) => q.where('resolved_at', '<=', asOf!))
    .execute();
  return new Map(
    rows.map((r) => [
      `${r.fact_id}:${r.superseded_by}`,
      { outcome: r.outcome as ContradictionOutcome, invalid_at: iso(r.invalid_at as Date)! },
    ]),
  );
};

type Row = {
  fact_id: string;
  superseded_by: string;
  channel_id: string;
  reason: string;
  invalid_at: Date | string;
  outcome: string | null;
  note: string | null;
  resolved_by: string | null;
  resolved_at: Date | string | null;
  e: SideRow;
  l: SideRow;
};
type SideRow = Omit<ContradictionSide, 'message_ts'> & { message_ts: string };

/**
 * The potential contradictions: every (earlier fact, later fact) pair some message stated with certain=false whose
 * two facts exist, once per pair (the newest statement's reason), joined with its resolution. Raw SQL: distinct on
 * and json_build_object over two joins of memories, which the builder does not say shortly.
 */
const pairs = (channelIds: readonly string[] | null) => sql`
  select distinct on (s.fact_id, s.superseded_by) s.fact_id, s.superseded_by, e.channel_id, s.reason, s.invalid_at,
    r.outcome, r.note, r.resolved_by, r.resolved_at,
    json_build_object('memory_id', e.id, 'memory_text', e.memory_text, 'fact_type', e.fact_type,
      'author_id', e.author_id, 'author_name', e.author_name, 'message_ts', e.message_ts, 'channel_id', e.channel_id,
      'source_message_id', e.source_message_id, 'permalink', e.permalink) as e,
    json_build_object('memory_id', l.id, 'memory_text', l.memory_text, 'fact_type', l.fact_type,
      'author_id', l.author_id, 'author_name', l.author_name, 'message_ts', l.message_ts, 'channel_id', l.channel_id,
      'source_message_id', l.source_message_id, 'permalink', l.permalink) as l
  from fact_supersessions s
  join memories e on e.id = s.fact_id
  join memories l on l.id = s.superseded_by
  left join contradiction_resolutions r on r.fact_id = s.fact_id and r.superseded_by = s.superseded_by
  where not s.certain
    ${channelIds === null ? sql`` : sql`and e.channel_id = any(${[...channelIds]}::text[])`}
  order by s.fact_id, s.superseded_by, s.invalid_at desc, s.by_message_uuid`;

const toView = (r: Row): ContradictionView => ({
  id: contradictionId(r.fact_id, r.superseded_by),
  channel_id: r.channel_id,
  status: r.outcome ? 'resolved' : 'open',
  reason: r.reason,
  detected_at: iso(r.invalid_at)!,
  earlier: side(r.e),
  later: side(r.l),
  resolution: r.outcome
    ? {
        outcome: r.outcome as ContradictionOutcome,
        note: r.note,
        resolved_by: r.resolved_by ?? '',
        resolved_at: iso(r.resolved_at)!,
      }
    : null,
});

const side = (s: SideRow): ContradictionSide => ({ ...s, message_ts: iso(s.message_ts)! });

/**
 * DocumentStore.listContradictions: newest first (the later fact's message time, then the id), `limit` per page
 * (page from 1); `total` counts every match.
 */
export const listContradictions = async (
  db: Kysely<DocumentTables>,
  q: ContradictionQuery,
): Promise<{ rows: ContradictionView[]; total: number }> => {
  if (q.channelIds !== null && q.channelIds.length === 0) return { rows: [], total: 0 };
  const status =
    q.status === 'open'
      ? sql`where x.outcome is null`
      : q.status === 'resolved'
        ? sql`where x.outcome is not null`
        : sql``;
  const r = await sql<Row & { total: number }>`select x.*, count(*) over ()::int as total
    from (${pairs(q.channelIds)}) x ${status}
    order by (x.l->>'message_ts')::timestamptz desc, x.fact_id, x.superseded_by
    limit ${q.limit} offset ${(q.page - 1) * q.limit}`.execute(db);
  const rows = r.rows.map(toView);
  // Past the last page no row carries the window count: count alone.
  if (r.rows.length === 0 && q.page > 1) {
    const c = await sql<{ n: number }>`select count(*)::int as n from (${pairs(q.channelIds)}) x ${status}`.execute(db);
    return { rows, total: Number(c.rows[0]?.n ?? 0) };
  }
  return { rows, total: Number(r.rows[0]?.total ?? 0) };
};

/**
 * DocumentStore.getContradiction: the contradiction of this id (contradictionId of its pair), or null when no
 * message states it (unknown, or its facts or supersession are gone).
 */
export const getContradiction = async (db: Kysely<DocumentTables>, id: string): Promise<ContradictionView | null> => {
  const found = await db
    .selectFrom('fact_supersessions')
    .select(['fact_id', 'superseded_by', 'channel_id'])
    .where('certain', '=', false)
    .execute();
  // The id is a hash of the pair: find the pair among the uncertain supersessions (few: a flag per topic clash).
  const pair = found.find((p) => contradictionId(p.fact_id, p.superseded_by) === id);
  if (!pair) return null;
  const r = await sql<Row>`select * from (${pairs(null)}) x
    where x.fact_id = ${pair.fact_id}::uuid and x.superseded_by = ${pair.superseded_by}::uuid`.execute(db);
  return r.rows[0] ? toView(r.rows[0]) : null;
};
