import type { Config } from '@atlas/core';
import type { Db } from '@atlas/db';
import type { EventCodec } from './codec.js';
import { EmbeddedEventLog, type EmbeddedLogOptions } from './embedded/postgres-log.js';
import { ConfluentSchemaRegistry } from './kafka/confluent-registry.js';
import { KafkaEventLog } from './kafka/kafka-log.js';
import type { EventLog } from './port.js';
import { KyselySchemaRegistry, type SchemaRegistry } from './registry.js';

/** The event log adapter configuration picks: `kafka` when KAFKA_BROKERS is set, else `embedded`. */
export const eventLogKind = (cfg: Pick<Config, 'KAFKA_BROKERS'>): 'kafka' | 'embedded' =>
  cfg.KAFKA_BROKERS ? 'kafka' : 'embedded';

/**
 * Where the Avro schemas are registered: the Confluent schema registry at SCHEMA_REGISTRY_URL, else the registry
 * table in `db` (migrateEventLog runs first). Reaches no server.
 */
export const createSchemaRegistry = (cfg: Pick<Config, 'SCHEMA_REGISTRY_URL'>, db: Db): SchemaRegistry =>
  cfg.SCHEMA_REGISTRY_URL ? new ConfluentSchemaRegistry(cfg.SCHEMA_REGISTRY_URL) : new KyselySchemaRegistry(db);

/**
 * The event log, encoding with `codec`: Kafka on KAFKA_BROKERS (comma-separated; KAFKA_CLIENT_ID, topics of
 * EVENTLOG_PARTITIONS partitions and KAFKA_REPLICATION_FACTOR replicas, KAFKA_SESSION_TIMEOUT_MS, names under
 * KAFKA_NAMESPACE), else the Postgres-table log in `db` (EVENTLOG_PARTITIONS, then `embedded`'s options: poll
 * interval, session timeout). Connects lazily; topics are made by `ensureTopics`.
 */
export const createEventLog = (cfg: Config, db: Db, codec: EventCodec, embedded: EmbeddedLogOptions = {}): EventLog =>
  cfg.KAFKA_BROKERS
    ? new KafkaEventLog(codec, {
        brokers: cfg.KAFKA_BROKERS.split(',').map((b) => b.trim()),
        clientId: cfg.KAFKA_CLIENT_ID,
        defaultPartitions: cfg.EVENTLOG_PARTITIONS,
        replicationFactor: cfg.KAFKA_REPLICATION_FACTOR,
        sessionTimeoutMs: cfg.KAFKA_SESSION_TIMEOUT_MS,
        namespace: cfg.KAFKA_NAMESPACE,
      })
    : new EmbeddedEventLog(db, codec, { defaultPartitions: cfg.EVENTLOG_PARTITIONS, ...embedded });
