import { AtlasError, type EventDataMap, type EventType } from '@atlas/core';
import avro from 'avsc';
import type { SchemaRegistry } from './registry.js';
import { type EventSchema, loadSchemas } from './schemas.js';

const MAGIC = 0;

/**
 * Encodes event data as Avro in the Confluent wire format: byte 0 = 0, bytes 1-4 = schema id (big endian),
 * then the Avro binary body. Decoding resolves the writer's schema (from the registry) to the current
 * reader schema in `schemas/`, so old bytes stay readable after a compatible change.
 */
export class EventCodec {
  private readonly idsByType = new Map<string, number>();
  private readonly resolvers = new Map<number, { type: string; read: (buf: Buffer) => unknown }>();

  constructor(
    private readonly registry: SchemaRegistry,
    private readonly schemas: Map<string, EventSchema> = loadSchemas(),
  ) {}

  /** Registers every current schema (idempotent). Call once at start. */
  async init(): Promise<void> {
    for (const s of this.schemas.values()) this.idsByType.set(s.type, await this.registry.register(s.fullName, s.json));
  }

  /** Confluent-framed Avro bytes of `data`. Throws AtlasError INVALID_REQUEST when data does not fit the schema. */
  async encode<T extends EventType>(type: T, data: EventDataMap[T]): Promise<Buffer> {
    const schema = this.schemas.get(type);
    if (!schema) throw new AtlasError('INTERNAL_ERROR', `no Avro schema for event type ${type}`);
    let id = this.idsByType.get(type);
    if (id === undefined) {
      id = await this.registry.register(schema.fullName, schema.json);
      this.idsByType.set(type, id);
    }
    let body: Buffer;
    try {
      body = schema.avro.toBuffer(data);
    } catch (cause) {
      const paths: string[] = [];
      schema.avro.isValid(data, { errorHook: (p) => paths.push(p.join('.')) });
      throw new AtlasError('INVALID_REQUEST', `${type} does not fit its Avro schema at ${paths.join(', ') || '?'}`, {
        cause,
      });
    }
    const header = Buffer.alloc(5);
    header.writeUInt8(MAGIC, 0);
    header.writeInt32BE(id, 1);
    return Buffer.concat([header, body]);
  }

  /** Event type and data of Confluent-framed bytes. Throws AtlasError INVALID_REQUEST on a bad frame. */
  async decode(buf: Buffer): Promise<{ type: EventType; data: unknown }> {
    if (buf.length < 5 || buf.readUInt8(0) !== MAGIC) {
      throw new AtlasError('INVALID_REQUEST', 'not a Confluent-framed Avro message (bad magic byte)');
    }
    const id = buf.readInt32BE(1);
    const resolver = this.resolvers.get(id) ?? (await this.resolverFor(id));
    return { type: resolver.type as EventType, data: resolver.read(buf.subarray(5)) };
  }

  private async resolverFor(id: number): Promise<{ type: string; read: (buf: Buffer) => unknown }> {
    const { schemaJson } = await this.registry.getSchema(id);
    const writer = avro.Type.forSchema(JSON.parse(schemaJson) as avro.Schema);
    const type = (writer.name ?? '').split('.').pop() ?? '';
    const reader = this.schemas.get(type);
    if (!reader) throw new AtlasError('INTERNAL_ERROR', `schema id ${id} (${writer.name}) has no reader schema`);
    const resolver = reader.avro.createResolver(writer);
    const hit = { type, read: (b: Buffer) => reader.avro.fromBuffer(b, resolver, true) as unknown };
    this.resolvers.set(id, hit);
    return hit;
  }
}
