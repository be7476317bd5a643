import { createHash } from 'node:crypto';
import { AtlasError } from '@atlas/core';
import type { Db } from '@atlas/db';
import { type Kysely, sql } from 'kysely';

/**
 * A schema registry (the subset Atlas uses). Ids are ints, as in the Confluent wire format.
 * Embedded: a table in the log's database. Kafka profile: a Confluent-compatible registry.
 */
export interface SchemaRegistry {
  /** Registers (idempotently) a schema under a subject; returns its id. */
  register(subject: string, schemaJson: string): Promise<number>;
  /** The schema JSON of an id. Throws AtlasError NOT_FOUND for an unknown id. */
  getSchema(id: number): Promise<{ subject: string; schemaJson: string }>;
}

interface RegistryTables {
  eventlog_schemas: { id: number; subject: string; fingerprint: string; schema_json: string; registered_at: string };
}

/** The embedded registry: one row per (subject, schema fingerprint), ids from a sequence. */
export class KyselySchemaRegistry implements SchemaRegistry {
  private readonly byId = new Map<number, { subject: string; schemaJson: string }>();
  private readonly db: Kysely<RegistryTables>;

  constructor(db: Db) {
    this.db = db as Kysely<RegistryTables>;
  }

  async register(subject: string, schemaJson: string): Promise<number> {
    const fingerprint = createHash('sha256').update(schemaJson).digest('hex');
    await sql`insert into eventlog_schemas (subject, fingerprint, schema_json) values (${subject}, ${fingerprint}, ${schemaJson})
              on conflict (subject, fingerprint) do nothing`.execute(this.db);
    const row = await this.db
      .selectFrom('eventlog_schemas')
      .select(['id'])
      .where('subject', '=', subject)
      .where('fingerprint', '=', fingerprint)
      .executeTakeFirstOrThrow();
    this.byId.set(row.id, { subject, schemaJson });
    return row.id;
  }

  async getSchema(id: number): Promise<{ subject: string; schemaJson: string }> {
    const cached = this.byId.get(id);
    if (cached) return cached;
    const row = await this.db
      .selectFrom('eventlog_schemas')
      .select(['subject', 'schema_json'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new AtlasError('NOT_FOUND', `schema id ${id} is not registered`);
    const hit = { subject: row.subject, schemaJson: row.schema_json };
    this.byId.set(id, hit);
    return hit;
  }
}
