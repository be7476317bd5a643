import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from './db.js';

describe('refreshStatistics (PGlite runs no autovacuum)', () => {
  it('analyzes tables never analyzed or grown by more than 10%, and only those', async () => {
    const h = await openDatabase({ dataDir: 'memory://' });
    try {
      await sql`create table stats_probe (id int primary key, body text)`.execute(h.db);
      await sql`insert into stats_probe select g, repeat('x', 200) from generate_series(1, 2000) g`.execute(h.db);
      const estimate = async () =>
        Number(
          (
            await sql<{ n: number }>`select reltuples::int as n from pg_class where relname = 'stats_probe'`.execute(
              h.db,
            )
          ).rows[0]?.n,
        );
      expect(await estimate()).toBeLessThan(0); // never analyzed: the planner has no row count
      expect(await h.refreshStatistics()).toContain('stats_probe');
      expect(await estimate()).toBe(2000);
      expect(await h.refreshStatistics()).not.toContain('stats_probe'); // unchanged: left alone
      await sql`insert into stats_probe select g, repeat('x', 200) from generate_series(2001, 2050) g`.execute(h.db);
      expect(await h.refreshStatistics()).not.toContain('stats_probe'); // +2.5%: below the threshold
      await sql`insert into stats_probe select g, repeat('x', 200) from generate_series(2051, 4000) g`.execute(h.db);
      expect(await h.refreshStatistics()).toContain('stats_probe');
      expect(await estimate()).toBe(4000);
    } finally {
      await h.close();
    }
  });
});
