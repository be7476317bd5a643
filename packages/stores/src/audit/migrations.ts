import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * The audit store's table (docs/access.md "Audit trail"; idempotent): `audit_entries`, one row per AuditRecorded
 * (primary key: the event's id), indexed for the newest-first listing (`at desc, id desc`, which also serves the
 * retention delete) and for the principal filter.
 */
export const migrateAudit = (db: MigrationDb) =>
  runMigrations(db, 'audit', {
    '0001_audit_entries': {
      async up(db: MigrationDb) {
        await sql`create table if not exists audit_entries (id text primary key,
          action text not null check (action in ('key_used', 'access_denied', 'admin_action')),
          principal text, key_id text, method text not null, route text not null, status integer,
          address text not null, reason text, at timestamptz not null)`.execute(db);
        await sql`create index if not exists audit_entries_at on audit_entries (at desc, id desc)`.execute(db);
        await sql`create index if not exists audit_entries_principal on audit_entries (principal, at desc, id desc)`.execute(
          db,
        );
      },
    },
  });
