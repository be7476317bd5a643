/**
 * Records one binary fixture per event schema version: schemas/fixtures/<Type>.v<N>.bin (Avro body)
 * beside <Type>.v<N>.avsc (the writer schema). Run after changing a schema: `npx tsx scripts/record-schema-fixtures.ts`.
 * Existing fixtures are never overwritten; a changed schema gets the next version number.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadSchemas, SAMPLE_EVENTS_FOR_FIXTURES, SCHEMAS_DIR } from './schema-fixture-support.js';

const dir = path.join(SCHEMAS_DIR, 'fixtures');
mkdirSync(dir, { recursive: true });
for (const schema of loadSchemas().values()) {
  const versions = readdirSync(dir).filter((f) => f.startsWith(`${schema.type}.v`) && f.endsWith('.avsc'));
  if (versions.some((f) => readFileSync(path.join(dir, f), 'utf8') === schema.json)) continue;
  const n = versions.length + 1;
  const base = path.join(dir, `${schema.type}.v${n}`);
  if (existsSync(`${base}.bin`)) throw new Error(`${base}.bin exists`);
  writeFileSync(`${base}.avsc`, schema.json);
  writeFileSync(
    `${base}.bin`,
    schema.avro.toBuffer(SAMPLE_EVENTS_FOR_FIXTURES[schema.type as keyof typeof SAMPLE_EVENTS_FOR_FIXTURES]),
  );
  console.log(`recorded ${base}.bin`);
}
