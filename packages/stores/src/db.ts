import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite/vector';
import { Kysely, PGliteDialect, PostgresDialect, sql } from 'kysely';
import pg from 'pg';

// int8 as JS number: offsets and counts stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export interface DatabaseHandle {
  db: Kysely<unknown>;
  kind: 'pglite' | 'postgres';
  /** Closes the pool or the embedded database. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL of a server; when absent the embedded PGlite in `dataDir` is used. */
  url?: string | undefined;
  /** Folder of the embedded database (created if missing); ignored with `url`. `memory://` keeps it in memory. */
  dataDir?: string;
  /** Postgres schema to use (created if missing); tests use one per run to stay apart. */
  schema?: string;
  /** Pool size for a server (default 10). */
  poolSize?: number;
}

/**
 * Opens the document store database: PGlite 0.4 (with pgvector and pg_trgm) by default, or a
 * PostgreSQL server through `pg` when a URL is given. The same Kysely queries run on both
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
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
    await sql`create extension if not exists pg_trgm schema public`.execute(db).catch(() => undefined);
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  const dataDir = opts.dataDir ?? 'memory://';
  if (!dataDir.startsWith('memory://')) mkdirSync(path.dirname(path.resolve(dataDir)), { recursive: true });
  const pglite = await PGlite.create(dataDir, { extensions: { vector, pg_trgm } });
  const db = new Kysely<unknown>({ dialect: new PGliteDialect({ pglite }) });
  await sql`create extension if not exists pg_trgm`.execute(db);
  if (opts.schema) {
    await sql
      .raw(`create schema if not exists "${opts.schema}"; set search_path to "${opts.schema}", public`)
      .execute(db);
  }
  return {
    db,
    kind: 'pglite',
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
};
