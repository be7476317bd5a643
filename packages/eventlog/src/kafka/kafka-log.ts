import { randomUUID } from 'node:crypto';
import { type AnyStoredEvent, AtlasError, type NewEvent } from '@atlas/core';
import { type Admin, Kafka, type KafkaConfig, logLevel, type Message, type Producer } from 'kafkajs';
import type { EventCodec } from '../codec.js';
import { partitionForKey } from '../partitioner.js';
import type { EventLog, LagRow, ResetTarget, SubscribeOptions, Subscription } from '../port.js';
import { KafkaSubscription } from './consumer.js';

export interface KafkaLogOptions {
  brokers: string[];
  clientId?: string;
  /** Partitions of topics this client creates (default 4). */
  defaultPartitions?: number;
  /** Replication factor of topics this client creates (default 1). */
  replicationFactor?: number;
  /** Consumer session timeout, ms (default 30000; the broker's minimum is 6000). */
  sessionTimeoutMs?: number;
  /** Heartbeat interval while a handler runs, ms (default 3000). */
  heartbeatMs?: number;
  /** Largest produce request per partition, bytes (default 800 KiB, below the broker's 1 MiB batch limit). */
  maxRequestBytes?: number;
  /**
   * Prefix of every topic and consumer group on the cluster (`<namespace>.atlas.messages`), so several
   * deployments or test runs can share one cluster. Callers always see the names without it.
   */
  namespace?: string;
  /**
   * How long the broker lets a transaction stay open before it aborts it, ms (default 20000; kafkajs's own default is
   * 60000). A process killed in the middle of an append leaves its transaction open (every process has a transactional
   * id of its own, so nothing fences it), and read-committed consumers of the partitions it wrote see nothing after
   * it until the broker aborts it: this bounds that stall. An append's sends take well under a second each.
   */
  transactionTimeoutMs?: number;
  logLevel?: logLevel;
}

const TYPE_HEADER = 'atlas-event-type';

/** Names a kafkajs failure as AtlasError STORE_UNAVAILABLE (retriable) when the broker cannot be reached. */
export const kafkaUnavailable = (cause: unknown): AtlasError =>
  new AtlasError('STORE_UNAVAILABLE', `Kafka unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, {
    retriable: true,
    cause,
  });

/**
 * The EventLog on Kafka (kafkajs). Appends go through one transactional, idempotent producer, so a
 * multi-event append is all or nothing (consumers read committed); the partition of an event is
 * murmur2(key) as on the embedded log. Consumers commit an offset only after the handler succeeded,
 * share partitions through consumer-group rebalances, and are reset and measured through the admin client.
 */
export class KafkaEventLog implements EventLog {
  readonly kafka: Kafka;
  readonly opts: Required<Omit<KafkaLogOptions, 'logLevel'>>;
  private admin: Admin | undefined;
  private producer: Producer | undefined;
  private connecting: Promise<void> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly topics = new Map<string, number>();
  private readonly subs = new Set<KafkaSubscription>();

  constructor(
    readonly codec: EventCodec,
    opts: KafkaLogOptions,
  ) {
    this.opts = {
      clientId: 'atlas',
      defaultPartitions: 4,
      replicationFactor: 1,
      sessionTimeoutMs: 30_000,
      heartbeatMs: 3000,
      maxRequestBytes: 800 * 1024,
      namespace: '',
      transactionTimeoutMs: 20_000,
      ...opts,
    };
    const config: KafkaConfig = {
      clientId: this.opts.clientId,
      brokers: opts.brokers,
      logLevel: opts.logLevel ?? logLevel.NOTHING,
      retry: { retries: 5, initialRetryTime: 100 },
    };
    this.kafka = new Kafka(config);
  }

  private async connect(): Promise<{ admin: Admin; producer: Producer }> {
    this.connecting ??= (async () => {
      // The admin client is kept across a producer replacement (replaceProducer); a new producer each time.
      const admin = this.admin ?? this.kafka.admin();
      const producer = this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        transactionalId: `${this.opts.clientId}-${randomUUID()}`,
        transactionTimeout: this.opts.transactionTimeoutMs,
        allowAutoTopicCreation: false,
      });
      try {
        if (!this.admin) await admin.connect();
        this.admin = admin;
        await producer.connect();
      } catch (err) {
        this.connecting = undefined;
        throw kafkaUnavailable(err);
      }
      this.producer = producer;
    })();
    await this.connecting;
    return { admin: this.admin!, producer: this.producer! };
  }

  /** The cluster's name of a topic or group (with the namespace). */
  name(n: string): string {
    return this.opts.namespace ? `${this.opts.namespace}.${n}` : n;
  }

  /** The caller's name of a cluster topic or group (without the namespace). */
  unname(n: string): string {
    return this.opts.namespace && n.startsWith(`${this.opts.namespace}.`) ? n.slice(this.opts.namespace.length + 1) : n;
  }

  /** The admin client (connected). */
  async adminClient(): Promise<Admin> {
    return (await this.connect()).admin;
  }

  async ensureTopics(topics: readonly { name: string; partitions?: number }[]): Promise<void> {
    const { admin } = await this.connect();
    const missing = topics.filter((t) => !this.topics.has(t.name));
    if (missing.length === 0) return;
    const existing = new Set(await admin.listTopics());
    const create = missing.filter((t) => !existing.has(this.name(t.name)));
    if (create.length > 0) {
      await admin
        .createTopics({
          waitForLeaders: true,
          topics: create.map((t) => ({
            topic: this.name(t.name),
            numPartitions: t.partitions ?? this.opts.defaultPartitions,
            replicationFactor: this.opts.replicationFactor,
          })),
        })
        .catch((err: unknown) => {
          if (!(err instanceof Error && /already exists/i.test(err.message))) throw err;
        });
    }
    for (const t of missing) await this.partitions(t.name);
  }

  async partitions(topic: string): Promise<number | null> {
    const cached = this.topics.get(topic);
    if (cached !== undefined) return cached;
    const { admin } = await this.connect();
    try {
      const meta = await admin.fetchTopicMetadata({ topics: [this.name(topic)] });
      const n = meta.topics[0]?.partitions.length ?? 0;
      if (n === 0) return null;
      this.topics.set(topic, n);
      return n;
    } catch (err) {
      if (err instanceof Error && /does not host this topic|UNKNOWN_TOPIC/i.test(err.message)) return null;
      throw err;
    }
  }

  async append(topic: string, events: readonly NewEvent[]): Promise<{ partition: number; offset: number }[]> {
    if (events.length === 0) return [];
    await this.ensureTopics([{ name: topic }]);
    const partitions = this.topics.get(topic)!;
    const encoded = await Promise.all(events.map((e) => this.codec.encode(e.type, e.data)));
    // One transaction at a time per producer; each send stays under the broker's batch size limit.
    const run = this.queue.then(() => this.sendInTransaction(topic, events, encoded, partitions));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async sendInTransaction(topic: string, events: readonly NewEvent[], encoded: Buffer[], partitions: number) {
    const { producer } = await this.connect();
    const byPartition = new Map<number, number[]>();
    events.forEach((e, i) => {
      const p = partitionForKey(e.key, partitions);
      byPartition.set(p, [...(byPartition.get(p) ?? []), i]);
    });
    const positions: { partition: number; offset: number }[] = new Array(events.length);
    let tx: Awaited<ReturnType<Producer['transaction']>>;
    try {
      tx = await producer.transaction();
    } catch (err) {
      await this.replaceProducer(producer);
      throw kafkaUnavailable(err);
    }
    try {
      for (const [partition, indexes] of byPartition) {
        for (const chunk of this.chunks(indexes, encoded)) {
          const messages: Message[] = chunk.map((i) => ({
            key: events[i]!.key,
            value: encoded[i]!,
            partition,
            headers: { [TYPE_HEADER]: events[i]!.type },
          }));
          const meta = await tx.send({ topic: this.name(topic), messages });
          const base = Number(meta.find((m) => m.partition === partition)?.baseOffset ?? -1);
          chunk.forEach((i, k) => {
            positions[i] = { partition, offset: base + k };
          });
        }
      }
      await tx.commit();
    } catch (err) {
      // An abort that fails (the broker is gone) leaves kafkajs's transaction manager in ABORTING, where every later
      // transaction() throws: the process would never append again. A new producer (new transactional id) takes its
      // place; the broker aborts the old one's open transaction after transactionTimeoutMs.
      const aborted = await tx.abort().then(
        () => true,
        () => false,
      );
      if (!aborted) await this.replaceProducer(producer);
      throw err instanceof AtlasError ? err : kafkaUnavailable(err);
    }
    return positions;
  }

  /** Drops a producer whose transaction state is broken; the next append connects a new one. */
  private async replaceProducer(producer: Producer): Promise<void> {
    if (this.producer !== producer) return;
    this.producer = undefined;
    this.connecting = undefined;
    await producer.disconnect().catch(() => undefined);
  }

  private *chunks(indexes: number[], encoded: Buffer[]): Generator<number[]> {
    let chunk: number[] = [];
    let bytes = 0;
    for (const i of indexes) {
      const size = encoded[i]!.length + 64;
      if (chunk.length > 0 && bytes + size > this.opts.maxRequestBytes) {
        yield chunk;
        chunk = [];
        bytes = 0;
      }
      chunk.push(i);
      bytes += size;
    }
    if (chunk.length > 0) yield chunk;
  }

  async subscribe(opts: SubscribeOptions): Promise<Subscription> {
    await this.ensureTopics(opts.topics.map((name) => ({ name })));
    const sub = new KafkaSubscription(this, opts, () => this.subs.delete(sub));
    this.subs.add(sub);
    await sub.start();
    return sub;
  }

  /** Decodes one fetched record. */
  async decode(
    topic: string,
    partition: number,
    m: { offset: string; key: Buffer | null; value: Buffer | null; timestamp: string },
  ) {
    const { type, data } = await this.codec.decode(m.value ?? Buffer.alloc(0));
    return {
      topic: this.unname(topic),
      partition,
      offset: Number(m.offset),
      key: m.key?.toString('utf8') ?? '',
      type,
      data,
      timestamp: Number(m.timestamp),
    } as AnyStoredEvent;
  }

  async resetOffsets(group: string, topic: string, to: ResetTarget): Promise<void> {
    const { admin } = await this.connect();
    if ((await this.partitions(topic)) === null) throw new AtlasError('NOT_FOUND', `topic '${topic}' does not exist`);
    const ends = await admin.fetchTopicOffsets(this.name(topic));
    let targets: { partition: number; offset: string }[];
    if (to === 'earliest') targets = ends.map((e) => ({ partition: e.partition, offset: e.low }));
    else if (to === 'latest') targets = ends.map((e) => ({ partition: e.partition, offset: e.high }));
    else {
      const at = await admin.fetchTopicOffsetsByTimestamp(this.name(topic), to.timestamp);
      targets = at.map((a) => {
        const end = ends.find((e) => e.partition === a.partition)!;
        return { partition: a.partition, offset: Number(a.offset) < 0 ? end.high : a.offset };
      });
    }
    // Members that just left may still be on the broker's books for a moment: retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.setOffsets({ groupId: this.name(group), topic: this.name(topic), partitions: targets });
        return;
      } catch (err) {
        if (attempt < 20 && err instanceof Error && /no running instances/i.test(err.message)) {
          await new Promise((r) => setTimeout(r, 500));
          continue;
        }
        throw new AtlasError(
          'CONFLICT',
          `cannot reset offsets of group '${group}' while it has running members: stop them first`,
          {
            cause: err,
            details: { group, topic },
          },
        );
      }
    }
  }

  async lag(group: string, topics?: readonly string[]): Promise<LagRow[]> {
    const { admin } = await this.connect();
    const committed = await admin.fetchOffsets({
      groupId: this.name(group),
      ...(topics ? { topics: topics.map((t) => this.name(t)) } : {}),
    });
    const rows: LagRow[] = [];
    for (const t of committed.sort((a, b) => a.topic.localeCompare(b.topic))) {
      const ends = await admin.fetchTopicOffsets(t.topic);
      const topic = this.unname(t.topic);
      for (const e of ends.sort((a, b) => a.partition - b.partition)) {
        const c = Number(t.partitions.find((p) => p.partition === e.partition)?.offset ?? -1);
        const end = Number(e.high);
        const committedOffset = c < 0 ? null : c;
        rows.push({
          group,
          topic,
          partition: e.partition,
          committedOffset,
          endOffset: end,
          lag: end - (committedOffset ?? Number(e.low)),
        });
      }
    }
    return rows;
  }

  /** Null: Kafka cannot count a key's unread events without reading them (EventLog.pendingByKey; use lag()). */
  async pendingByKey(): Promise<null> {
    return null;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subs].map((s) => s.stop()));
    await this.queue;
    await this.producer?.disconnect().catch(() => undefined);
    await this.admin?.disconnect().catch(() => undefined);
    this.connecting = undefined;
  }
}
