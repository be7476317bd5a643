import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import avro from 'avsc';

/** Folder of the `.avsc` files: the contract between writers and projectors (ARCHITECTURE.md). */
export const SCHEMAS_DIR = path.resolve(import.meta.dirname, '../../../schemas');

export interface EventSchema {
  /** Event type name, e.g. `MessageIngested` (the record's short name). */
  type: string;
  /** Full Avro name, e.g. `atlas.events.MessageIngested`; also the registry subject. */
  fullName: string;
  /** Canonical JSON text of the schema as registered. */
  json: string;
  avro: avro.Type;
}

/**
 * Loads every `schemas/*.avsc` (the current reader schemas). Throws when a file is not valid Avro.
 */
export const loadSchemas = (dir: string = SCHEMAS_DIR): Map<string, EventSchema> => {
  const out = new Map<string, EventSchema>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.avsc'))
    .sort()) {
    const raw = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { name: string; namespace?: string };
    const type = avro.Type.forSchema(raw as avro.Schema);
    const fullName = raw.namespace ? `${raw.namespace}.${raw.name}` : raw.name;
    out.set(raw.name, { type: raw.name, fullName, json: JSON.stringify(raw), avro: type });
  }
  return out;
};
