import { AtlasError } from '@atlas/core';
import { COMPATIBILITY, SchemaRegistry as ConfluentClient, SchemaType } from '@kafkajs/confluent-schema-registry';
import pRetry from 'p-retry';
import type { SchemaRegistry } from '../registry.js';

/** Error text of a failure worth another try: the network (a reused keep-alive socket the server closed) or a 5xx. */
const TRANSIENT = /socket hang up|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|EAI_AGAIN|timed? ?out|status 5\d\d/i;

/** Options of {@link ConfluentSchemaRegistry}. */
export interface ConfluentRegistryOptions {
  /** Tries of one call on a transient failure, the first included (default 5: about 3 s of backoff). */
  attempts?: number;
}

/**
 * The SchemaRegistry port on a Confluent-compatible registry (Confluent, or Apicurio's ccompat API)
 * through @kafkajs/confluent-schema-registry. Subjects are registered with BACKWARD compatibility:
 * a new version must read data written with the previous one, else the registry refuses it
 * (AtlasError CONFLICT). A transient failure (socket hang up, connection reset or refused, 5xx) is
 * tried again with exponential backoff (register is idempotent: the same schema gets the same id);
 * a registry still unreachable after that is AtlasError STORE_UNAVAILABLE (retriable).
 */
export class ConfluentSchemaRegistry implements SchemaRegistry {
  private readonly client: ConfluentClient;
  private readonly byId = new Map<number, { subject: string; schemaJson: string }>();
  private readonly attempts: number;

  constructor(host: string, opts: ConfluentRegistryOptions = {}) {
    this.client = new ConfluentClient({ host, retry: { retries: 2 } });
    this.attempts = Math.max(1, opts.attempts ?? 5);
  }

  /** Runs `call`, again on transient failures only; rethrows the last error. */
  private retrying<T>(call: () => Promise<T>): Promise<T> {
    return pRetry(call, {
      retries: this.attempts - 1,
      minTimeout: 100,
      factor: 2,
      shouldRetry: ({ error }) => TRANSIENT.test(error.message),
    });
  }

  async register(subject: string, schemaJson: string): Promise<number> {
    try {
      const { id } = await this.retrying(() =>
        this.client.register(
          { type: SchemaType.AVRO, schema: schemaJson },
          { subject, compatibility: COMPATIBILITY.BACKWARD },
        ),
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
      const schema = (await this.retrying(() => this.client.getSchema(id))) as unknown as {
        schema(): unknown;
        name?: string;
      };
      const hit = { subject: schema.name ?? '', schemaJson: JSON.stringify(schema.schema()) };
      this.byId.set(id, hit);
      return hit;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (TRANSIENT.test(message)) {
        throw new AtlasError('STORE_UNAVAILABLE', `schema registry unavailable: ${message}`, {
          retriable: true,
          cause: err,
        });
      }
      throw new AtlasError('NOT_FOUND', `schema id ${id} is not in the registry`, { cause: err });
    }
  }
}
