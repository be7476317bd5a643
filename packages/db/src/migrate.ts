import { type Kysely, type Migration, Migrator, sql } from 'kysely';

/**
 * The database as a migration sees it: the handle openDatabase returns, before any store names its tables. Each
 * store's migrations create their tables on it; the store then narrows it to its own tables (`withTables<T>()`).
 */
export type MigrationDb = Kysely<unknown>;

/**
 * Applies one store's migrations, tracked in its own table (`<name>_migrations`) so that each
 * read store can be dropped and rebuilt on its own. Idempotent; Kysely takes a lock on servers.
 */
export const runMigrations = async (
  db: MigrationDb,
  name: string,
  migrations: Record<string, Migration>,
): Promise<void> => {
  // Pin the bookkeeping tables to this connection's schema: Kysely would otherwise see another schema's tables.
  const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s;
  const migrator = new Migrator({
    db,
    ...(schema ? { migrationTableSchema: schema } : {}),
    provider: { getMigrations: async () => migrations },
    migrationTableName: `${name}_migrations`,
    migrationLockTableName: `${name}_migrations_lock`,
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
};
