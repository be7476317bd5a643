import { AtlasError } from '@atlas/core';
import { COMPATIBILITY, SchemaRegistry as ConfluentClient, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { SchemaRegistry } from '../registry.js';

/**
 * The SchemaRegistry port on a Confluent-compatible registry (Confluent, or Apicurio's ccompat API)
 * through @kafkajs/confluent-schema-registry. Subjects are registered with BACKWARD compatibility:
 * a new version must read data written with the previous one, else the registry refuses it
 * (AtlasError CONFLICT). An unreachable registry is AtlasError STORE_UNAVAILABLE (retriable).
 */
export class ConfluentSchemaRegistry implements SchemaRegistry {
  private readonly client: ConfluentClient;
  private readonly byId = new Map<number, { subject: string; schemaJson: string }>();

  constructor(host: string) {
    this.client = new ConfluentClient({ host, retry: { retries: 2 } });
  }

  async register(subject: string, schemaJson: string): Promise<number> {
    try {
      const { id } = await this.client.register(
        { type: SchemaType.AVRO, schema: schemaJson },
        { subject, compatibility: COMPATIBILITY.BACKWARD },
      );
      this.byId.set(id, { subject, schemaJson });
      return id;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/incompatible|409|422/i.test(message)) {
        throw new AtlasError('CONFLICT', `schema registry refused ${subject}: ${message}`, {
          cause: err,
          details: { subject },
        });
      }
      throw new AtlasError('STORE_UNAVAILABLE', `schema registry unavailable: ${message}`, {
        retriable: true,
        cause: err,
      });
    }
  }

  async getSchema(id: number): Promise<{ subject: string; schemaJson: string }> {
    const cached = this.byId.get(id);
    if (cached) return cached;
    try {
      const schema = (await this.client.getSchema(id)) as unknown as { schema(): unknown; name?: string };
      const hit = { subject: schema.name ?? '', schemaJson: JSON.stringify(schema.schema()) };
      this.byId.set(id, hit);
      return hit;
    } catch (err) {
      throw new AtlasError('NOT_FOUND', `schema id ${id} is not in the registry`, { cause: err });
    }
  }
}
