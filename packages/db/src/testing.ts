import { randomUUID } from 'node:crypto';
import { type DatabaseHandle, openDatabase } from './db.js';

/** A database opened for a test; `close` also drops a server schema the open created. */
export interface TestDatabase extends DatabaseHandle {
  /** A second, independent connection to the same data (another process, in production). */
  reopen(): Promise<DatabaseHandle>;
}

/**
 * The databases a suite runs on: always the embedded PGlite, plus a PostgreSQL server when
 * `ATLAS_TEST_POSTGRES_URL` is set (`.ci/run` sets it). A listed server that is unreachable makes
 * the suite fail, never skip. Each open uses a fresh schema so parallel files stay apart.
 */
export const testDatabases = (): { name: string; open: () => Promise<TestDatabase> }[] => {
  const out = [
    {
      name: 'pglite',
      open: async (): Promise<TestDatabase> => {
        const h = await openDatabase({ dataDir: 'memory://' });
        // PGlite is in-process: one instance is shared, as one process owns an embedded data dir.
        return { ...h, reopen: async () => ({ ...h, close: async () => undefined }) };
      },
    },
  ];
  const url = process.env.ATLAS_TEST_POSTGRES_URL;
  if (url) {
    out.push({
      name: 'postgres',
      open: async (): Promise<TestDatabase> => {
        const schema = `t_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
        const h = await openDatabase({ url, schema, poolSize: 4 });
        return {
          ...h,
          reopen: () => openDatabase({ url, schema, poolSize: 2 }),
          close: async () => {
            await h.close();
            const { default: pg } = await import('pg');
            const c = new pg.Client({ connectionString: url });
            await c.connect();
            await c.query(`drop schema if exists "${schema}" cascade`);
            await c.end();
          },
        };
      },
    });
  }
  return out;
};
