import { type AnyStoredEvent, AtlasError, type AuditAction, type AuditRecorded } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { type Kysely, sql } from 'kysely';
import type { AuditTables } from './tables.js';

/** One audit entry as the store keeps and GET /api/admin/audit answers it (AuditRecorded, snake_case, plus its id). */
export interface AuditEntryRecord {
  /** The AuditRecorded event's id (a UUID). */
  id: string;
  action: AuditAction;
  /** The caller's name; null when no credential was accepted. */
  principal: string | null;
  /** The stored key's id; null for any other caller. */
  key_id: string | null;
  method: string;
  /** The route pattern, or the path when none matched. */
  route: string;
  /** The HTTP status answered; null for `key_used`. */
  status: number | null;
  /** The client address. */
  address: string;
  /** Why access was denied; null otherwise. */
  reason: string | null;
  /** When (ISO 8601 UTC, ms). */
  at: string;
}

/**
 * A page of the listing: filters (all optional, combined with AND) and the page bounds. `since` is inclusive, `until`
 * exclusive (ISO 8601); `cursor` is a previous page's `next_cursor`; `limit` entries at most (the caller bounds it).
 */
export interface AuditQuery {
  action?: AuditAction | undefined;
  principal?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  cursor?: string | null | undefined;
  limit: number;
}

/** Entries newest first, and the cursor of the next page (null on the last). */
export interface AuditPage {
  entries: AuditEntryRecord[];
  next_cursor: string | null;
}

/** Options of AuditStore: AUDIT_RETENTION_DAYS (entries older than this are dropped and never written). */
export interface AuditStoreOptions {
  retentionDays: number;
}

const DAY_MS = 86_400_000;
/** Rows inserted per statement (ten parameters a row, well under the driver's 65,535). */
const INSERT_CHUNK = 1000;

const iso = (v: unknown): string => new Date(v as string | Date).toISOString();

/** The opaque cursor of an entry: base64url of `<at ISO>|<id>`, the listing's sort key. */
const encodeCursor = (at: string, id: string): string => Buffer.from(`${at}|${id}`).toString('base64url');

/** The sort key of a cursor; AtlasError INVALID_REQUEST for one this store did not give out. */
const decodeCursor = (cursor: string): { at: string; id: string } => {
  const raw = Buffer.from(cursor, 'base64url').toString('utf8');
  const bar = raw.indexOf('|');
  const at = raw.slice(0, bar);
  const id = raw.slice(bar + 1);
  if (bar < 0 || !id || Number.isNaN(Date.parse(at)))
    throw new AtlasError('INVALID_REQUEST', 'cursor is not one a previous page returned', {
      details: { field: 'cursor' },
    });
  return { at: new Date(at).toISOString(), id };
};

/**
 * The audit trail's read model (docs/access.md "Audit trail"), on PGlite or PostgreSQL through Kysely: one row per
 * AuditRecorded, keyed by the event's id (redelivery and replay write it once), kept AUDIT_RETENTION_DAYS. Written only
 * by the audit projector (apply); read by GET /api/admin/audit (list). Needs migrateAudit. Errors: the database's (the
 * runner retries); list throws AtlasError INVALID_REQUEST for a cursor it did not give out.
 */
export class AuditStore {
  private readonly db: Kysely<AuditTables>;
  /** How long an entry is kept, ms (AUDIT_RETENTION_DAYS). */
  readonly retentionMs: number;

  constructor(db: DatabaseHandle['db'], opts: AuditStoreOptions) {
    this.db = db.withTables<AuditTables>();
    this.retentionMs = opts.retentionDays * DAY_MS;
  }

  /** The oldest `at` (ISO 8601) an entry may have at `now` and still be kept. */
  keptSince(now: Date = new Date()): string {
    return new Date(now.getTime() - this.retentionMs).toISOString();
  }

  /**
   * Folds AuditRecorded events (other types are ignored): inserts each entry once (by id), skips one whose `at` is
   * unreadable or already past retention at `now` (a replay of an old log adds nothing that would be pruned), then
   * drops every entry past retention (prune). Returns how many entries were new.
   */
  async apply(events: readonly AnyStoredEvent[], now: Date = new Date()): Promise<number> {
    const since = Date.parse(this.keptSince(now));
    const rows = events
      .filter((e): e is AnyStoredEvent<'AuditRecorded'> => e.type === 'AuditRecorded')
      .map((e) => toRow(e.data))
      .filter((r): r is NonNullable<typeof r> => r !== null && Date.parse(r.at) >= since);
    let added = 0;
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      const r = await this.db
        .insertInto('audit_entries')
        .values(rows.slice(i, i + INSERT_CHUNK))
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      added += Number(r.numInsertedOrUpdatedRows ?? 0);
    }
    await this.prune(now);
    return added;
  }

  /** Drops the entries older than the retention bound at `now`; returns how many. */
  async prune(now: Date = new Date()): Promise<number> {
    const r = await this.db.deleteFrom('audit_entries').where('at', '<', this.keptSince(now)).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /**
   * One page of entries, newest first (by `at`, then id), matching every filter given; `next_cursor` resumes after
   * the page's last entry (null when no entry follows). Entries added meanwhile newer than the first page are not
   * seen by later pages; none is repeated or skipped.
   */
  async list(q: AuditQuery): Promise<AuditPage> {
    let sel = this.db.selectFrom('audit_entries').selectAll();
    if (q.action) sel = sel.where('action', '=', q.action);
    if (q.principal !== undefined) sel = sel.where('principal', '=', q.principal);
    if (q.since) sel = sel.where('at', '>=', iso(q.since));
    if (q.until) sel = sel.where('at', '<', iso(q.until));
    if (q.cursor) {
      const c = decodeCursor(q.cursor);
      sel = sel.where((eb) => eb.or([eb('at', '<', c.at), eb.and([eb('at', '=', c.at), eb('id', '<', c.id)])]));
    }
    const rows = await sel
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .limit(q.limit + 1)
      .execute();
    const entries = rows.slice(0, q.limit).map(fromRow);
    const last = entries[entries.length - 1];
    return { entries, next_cursor: rows.length > q.limit && last ? encodeCursor(last.at, last.id) : null };
  }

  /** Empties the store (before a replay rebuilds it). */
  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table audit_entries`.execute(this.db);
  }
}

/** An AuditRecorded as a row; null when its time is unreadable (a recorded fact is never rejected, only skipped). */
const toRow = (d: AuditRecorded) => {
  const at = Date.parse(d.at);
  if (Number.isNaN(at)) return null;
  return {
    id: d.id,
    action: d.action,
    principal: d.principal,
    key_id: d.keyId,
    method: d.method,
    route: d.route,
    status: d.status,
    address: d.address,
    reason: d.reason,
    at: new Date(at).toISOString(),
  };
};

const fromRow = (r: AuditTables['audit_entries']): AuditEntryRecord => ({
  id: r.id,
  action: r.action,
  principal: r.principal,
  key_id: r.key_id,
  method: r.method,
  route: r.route,
  status: r.status,
  address: r.address,
  reason: r.reason,
  at: iso(r.at),
});
