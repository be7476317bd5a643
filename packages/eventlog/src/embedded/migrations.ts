import type { MigrationDb } from '@atlas/db';
import { runMigrations } from '@atlas/db';
import type { Migration } from 'kysely';
import { sql } from 'kysely';

/** Tables of the embedded event log (Postgres or PGlite). Offsets are int8; read them with Number(). */
const migrations: Record<string, Migration> = {
  '0001_eventlog': {
    async up(db: MigrationDb) {
      await sql`create table if not exists eventlog_topics (
        name text primary key, partitions int not null, created_at timestamptz not null default now())`.execute(db);
      await sql`create table if not exists eventlog_partitions (
        topic text not null, partition int not null, next_offset int8 not null default 0,
        primary key (topic, partition))`.execute(db);
      await sql`create table if not exists eventlog_records (
        topic text not null, partition int not null, "offset" int8 not null, key text not null, type text not null,
        value bytea not null, timestamp int8 not null, primary key (topic, partition, "offset"))`.execute(db);
      await sql`create index if not exists eventlog_records_time on eventlog_records (topic, partition, timestamp)`.execute(
        db,
      );
      await sql`create table if not exists eventlog_offsets (
        group_id text not null, topic text not null, partition int not null, next_offset int8 not null,
        updated_at timestamptz not null default now(), primary key (group_id, topic, partition))`.execute(db);
      await sql`create table if not exists eventlog_members (
        group_id text not null, member_id text not null, heartbeat_at int8 not null, primary key (group_id, member_id))`.execute(
        db,
      );
      await sql`create table if not exists eventlog_leases (
        group_id text not null, topic text not null, partition int not null, member_id text not null,
        expires_at int8 not null, primary key (group_id, topic, partition))`.execute(db);
      await sql`create table if not exists eventlog_schemas (
        id serial primary key, subject text not null, fingerprint text not null, schema_json text not null,
        registered_at timestamptz not null default now(), unique (subject, fingerprint))`.execute(db);
    },
  },
};

/** Applies the event log's migrations (idempotent; safe from several processes: Kysely takes a lock). */
export const migrateEventLog = (db: MigrationDb): Promise<void> => runMigrations(db, 'eventlog', migrations);
