import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite/vector';
import { type Dialect, Kysely, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';

// int8 as JS number: offsets and counts stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export interface DatabaseHandle {
  db: Kysely<unknown>;
  kind: 'pglite' | 'postgres';
  /**
   * Keeps the query planner's statistics current where nothing else does: PGlite runs no autovacuum, so without
   * ANALYZE the planner guesses row counts (on 100,000 vectors it chose a sequential scan over the HNSW index:
   * 680 ms instead of 17). ANALYZEs each table of the current schema that was never analyzed or whose size moved
   * by more than 10% since; on a PostgreSQL server autovacuum does this and the call does nothing.
   * Returns the tables analyzed.
   */
  refreshStatistics(): Promise<string[]>;
  /** Closes the pool or the embedded database. */
  close(): Promise<void>;
}

/** See DatabaseHandle.refreshStatistics. */
const analyzeChangedTables = async (db: Kysely<unknown>): Promise<string[]> => {
  const tables = await sql<{ name: string; analyzed_pages: number; pages: number; analyzed: boolean }>`
    select c.relname as name, c.relpages as analyzed_pages, c.reltuples >= 0 as analyzed,
      (pg_relation_size(c.oid) / current_setting('block_size')::int)::int as pages
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where c.relkind = 'r' and n.nspname = current_schema()`.execute(db);
  const stale = tables.rows.filter(
    (t) =>
      Number(t.pages) > 0 &&
      (!t.analyzed || Math.abs(Number(t.pages) - Number(t.analyzed_pages)) > 0.1 * Number(t.analyzed_pages) + 8),
  );
  for (const t of stale) await sql`analyze ${sql.id(t.name)}`.execute(db);
  return stale.map((t) => t.name);
};

export interface OpenDatabaseOptions {
  /** postgres:// URL of a server; when absent the embedded PGlite in `dataDir` is used. */
  url?: string | undefined;
  /** Folder of the embedded database (created if missing); ignored with `url`. `memory://` keeps it in memory. */
  dataDir?: string;
  /** Postgres schema to use (created if missing); tests use one per run to stay apart. */
  schema?: string;
  /** Pool size for a server (default 10). */
  poolSize?: number;
  /** Wraps the dialect (PGlite's or PostgreSQL's) before Kysely uses it; e.g. the runtime's TimeSlicedDialect. */
  wrapDialect?: (dialect: Dialect) => Dialect;
}

/**
 * Opens the document store database: PGlite 0.4 (with pgvector, pg_trgm and btree_gin) by default, or a
 * PostgreSQL server through `pg` when a URL is given. pg_trgm and btree_gin are created in schema public when the
 * server offers them (PostgreSQL's contrib; the keyword index uses btree_gin for its channel-scoped term index and does
 * without it, slower, where it is missing). The same Kysely queries run on both
 * (ARCHITECTURE.md: "same queries, same migrations").
 */
export const openDatabase = async (opts: OpenDatabaseOptions): Promise<DatabaseHandle> => {
  if (opts.url) {
    const options = opts.schema ? `-c search_path=${opts.schema},public` : undefined;
    if (opts.schema) {
      const admin = new pg.Client({ connectionString: opts.url });
      await admin.connect();
      await admin.query(`create schema if not exists "${opts.schema}"`);
      await admin.end();
    }
    const pool = new pg.Pool({ connectionString: opts.url, max: opts.poolSize ?? 10, options });
    // A client whose connection the server ends (a restart, pg_terminate_backend, a network cut) is dropped by
    // the pool; without a listener its 'error' would crash the process. The next query reconnects or fails, and that
    // failure reaches the store's breaker (spec "Degraded behaviour": document store down).
    pool.on('error', () => undefined);
    // The same for a client checked out between two queries (a transaction): its query fails instead.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const wrap = opts.wrapDialect ?? ((d: Dialect) => d);
    const db = new Kysely<unknown>({ dialect: wrap(new PostgresDialect({ pool })) });
    await sql`create extension if not exists pg_trgm schema public`.execute(db).catch(() => undefined);
    await sql`create extension if not exists btree_gin schema public`.execute(db).catch(() => undefined);
    return { db, kind: 'postgres', refreshStatistics: async () => [], close: () => db.destroy() };
  }
  const dataDir = opts.dataDir ?? 'memory://';
  if (!dataDir.startsWith('memory://')) mkdirSync(path.dirname(path.resolve(dataDir)), { recursive: true });
  const pglite = await PGlite.create(dataDir, { extensions: { vector, pg_trgm, btree_gin } });
  const db = new Kysely<unknown>({ dialect: (opts.wrapDialect ?? ((d: Dialect) => d))(new PGliteDialect(pglite)) });
  await sql`create extension if not exists pg_trgm`.execute(db);
  await sql`create extension if not exists btree_gin`.execute(db);
  if (opts.schema) {
    await sql
      .raw(`create schema if not exists "${opts.schema}"; set search_path to "${opts.schema}", public`)
      .execute(db);
  }
  return {
    db,
    kind: 'pglite',
    refreshStatistics: () => analyzeChangedTables(db),
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}; /**
 * The shared database as openDatabase returns it: one Kysely over PGlite or pg with no tables named. A store narrows
 * it to its own tables (`db.withTables<T>()`); a migration creates its tables on it (MigrationDb).
 */
export type Db = Kysely<unknown>;
