import { type MigrationDb, runMigrations } from '@atlas/db';
import { sql } from 'kysely';

/**
 * Table of the API key store (docs/access.md "API keys"; idempotent): `api_keys` with key_id (`key_` + 16 hex), name,
 * role (`admin` | `member` | `reader`), key_hash (SHA-256 hex of the key, unique; the key itself is never stored),
 * prefix (the key's first 12 characters, for people to tell keys apart), scope (jsonb or null: `{connections,
 * channels}`), identity (jsonb or null: `{platform, user_id}`), created_at, last_used_at, expires_at, revoked_at.
 */
export const migrateApiKeys = (db: MigrationDb) =>
  runMigrations(db, 'api_keys', {
    '0001_api_keys': {
      async up(db: MigrationDb) {
        await sql`create table if not exists api_keys (key_id text primary key, name text not null,
          role text not null check (role in ('admin', 'member', 'reader')), key_hash text not null unique,
          prefix text not null, scope jsonb, identity jsonb, created_at timestamptz not null,
          last_used_at timestamptz, expires_at timestamptz, revoked_at timestamptz)`.execute(db);
      },
    },
  });
