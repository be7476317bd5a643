import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  AuditRecorded,
  ChannelDataDeleted,
  ChannelDiscovered,
  ChannelMembershipObserved,
  ChannelSettingsUpdated,
  ContradictionResolved,
  DeadLettered,
  DeadLetterRedriven,
  DigestPosted,
  EntitiesExtracted,
  FactsExtracted,
  MessageDeleted,
  MessageIngested,
  StoreWriteApplied,
  StoreWriteFailed,
  SyncCancelled,
  SyncJobUpdated,
  SyncRequested,
  SyncScheduleUpdated,
  WikiRefreshRequested,
  WriteIntentCreated,
} from '@atlas/core';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { EventCodec } from './codec.js';
import type { SchemaRegistry } from './registry.js';
import { SAMPLE_EVENTS } from './samples.js';
import { loadSchemas, SCHEMAS_DIR } from './schemas.js';

const schemas = loadSchemas();
const zodOf = {
  ChannelDiscovered,
  MessageIngested,
  MessageDeleted,
  FactsExtracted,
  EntitiesExtracted,
  DeadLettered,
  ChannelSettingsUpdated,
  ChannelDataDeleted,
  SyncRequested,
  SyncCancelled,
  SyncJobUpdated,
  SyncScheduleUpdated,
  WriteIntentCreated,
  StoreWriteApplied,
  StoreWriteFailed,
  DeadLetterRedriven,
  WikiRefreshRequested,
  ChannelMembershipObserved,
  AuditRecorded,
  ContradictionResolved,
  DigestPosted,
} as const;

/** A registry in memory: enough to exercise the codec without a database. */
const memoryRegistry = (): SchemaRegistry => {
  const rows: { subject: string; schemaJson: string }[] = [];
  return {
    register: async (subject, schemaJson) => {
      const i = rows.findIndex((r) => r.subject === subject && r.schemaJson === schemaJson);
      if (i >= 0) return i + 1;
      rows.push({ subject, schemaJson });
      return rows.length;
    },
    getSchema: async (id) => rows[id - 1]!,
  };
};

describe('Avro schemas', () => {
  it('has a schema and a sample for every event type, and each sample fits its zod type', () => {
    expect([...schemas.keys()].sort()).toEqual(Object.keys(SAMPLE_EVENTS).sort());
    for (const [type, data] of Object.entries(SAMPLE_EVENTS)) zodOf[type as keyof typeof zodOf].parse(data);
  });

  it('round-trips every event through the Confluent wire format', async () => {
    const codec = new EventCodec(memoryRegistry(), schemas);
    await codec.init();
    for (const [type, data] of Object.entries(SAMPLE_EVENTS)) {
      const bytes = await codec.encode(type as keyof typeof SAMPLE_EVENTS, data as never);
      expect(bytes[0]).toBe(0);
      const back = await codec.decode(bytes);
      expect(back.type).toBe(type);
      expect(back.data).toEqual(data);
    }
  });

  it('reads old bytes after a field is added with a default, and refuses a field without one', () => {
    const v1 = schemas.get('MessageDeleted')!;
    const old = v1.avro.toBuffer(SAMPLE_EVENTS.MessageDeleted);
    const raw = JSON.parse(v1.json) as { fields: unknown[] };
    const v2 = avro.Type.forSchema({
      ...raw,
      fields: [...raw.fields, { name: 'reason', type: 'string', default: 'unknown' }],
    } as avro.Schema);
    expect(v2.fromBuffer(old, v2.createResolver(v1.avro))).toMatchObject({
      ...SAMPLE_EVENTS.MessageDeleted,
      reason: 'unknown',
    });
    const v3 = avro.Type.forSchema({
      ...raw,
      fields: [...raw.fields, { name: 'reason', type: 'string' }],
    } as avro.Schema);
    expect(() => v3.createResolver(v1.avro)).toThrow();
  });

  it('decodes every recorded binary fixture (one per schema version) with the current reader', () => {
    const dir = path.join(SCHEMAS_DIR, 'fixtures');
    const files = readdirSync(dir).filter((f) => f.endsWith('.bin'));
    expect(files.length).toBeGreaterThanOrEqual(schemas.size);
    for (const file of files) {
      const [type] = file.split('.');
      const writerFile = path.join(dir, file.replace(/\.bin$/, '.avsc'));
      expect(existsSync(writerFile), writerFile).toBe(true);
      const writer = avro.Type.forSchema(JSON.parse(readFileSync(writerFile, 'utf8')) as avro.Schema);
      const reader = schemas.get(type!)!;
      const value = reader.avro.fromBuffer(readFileSync(path.join(dir, file)), reader.avro.createResolver(writer));
      zodOf[type as keyof typeof zodOf].parse(value);
    }
  });

  it('reads v1 DeadLettered and EntitiesExtracted bytes with the current readers: eventData and intentId are null', () => {
    const dir = path.join(SCHEMAS_DIR, 'fixtures');
    for (const [type, field] of [
      ['DeadLettered', 'eventData'],
      ['EntitiesExtracted', 'intentId'],
    ] as const) {
      const writer = avro.Type.forSchema(
        JSON.parse(readFileSync(path.join(dir, `${type}.v1.avsc`), 'utf8')) as avro.Schema,
      );
      const reader = schemas.get(type)!;
      const v1 = reader.avro.fromBuffer(
        readFileSync(path.join(dir, `${type}.v1.bin`)),
        reader.avro.createResolver(writer),
      ) as Record<string, unknown>;
      expect(v1[field]).toBeNull();
      const v2Writer = avro.Type.forSchema(
        JSON.parse(readFileSync(path.join(dir, `${type}.v2.avsc`), 'utf8')) as avro.Schema,
      );
      const v2 = reader.avro.fromBuffer(
        readFileSync(path.join(dir, `${type}.v2.bin`)),
        reader.avro.createResolver(v2Writer),
      ) as Record<string, unknown>;
      expect(v2[field]).toBe((SAMPLE_EVENTS[type] as Record<string, unknown>)[field]);
    }
  });

  it('reads v1 and v2 DeadLettered bytes with the v3 reader: errorCode is null; v3 keeps it', () => {
    const dir = path.join(SCHEMAS_DIR, 'fixtures');
    const reader = schemas.get('DeadLettered')!;
    const read = (v: number) => {
      const writer = avro.Type.forSchema(
        JSON.parse(readFileSync(path.join(dir, `DeadLettered.v${v}.avsc`), 'utf8')) as avro.Schema,
      );
      return reader.avro.fromBuffer(
        readFileSync(path.join(dir, `DeadLettered.v${v}.bin`)),
        reader.avro.createResolver(writer),
      ) as Record<string, unknown>;
    };
    expect(read(1).errorCode).toBeNull();
    expect(read(2).errorCode).toBeNull();
    expect(read(3).errorCode).toBe(SAMPLE_EVENTS.DeadLettered.errorCode);
  });
});
