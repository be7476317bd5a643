import type { AnyStoredEvent } from '@atlas/core';
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { SubscribeOptions, Subscription, TopicPartition } from '../port.js';

/** What a subscription uses of its KafkaEventLog (declared here so that the two files do not import each other). */
export interface KafkaSubscriptionLog {
  readonly kafka: Kafka;
  /** Timings of the group member, ms. */
  readonly opts: { readonly sessionTimeoutMs: number; readonly heartbeatMs: number };
  /** The cluster's name of a topic or group (with the namespace). */
  name(n: string): string;
  /** The caller's name of a cluster topic or group (without the namespace). */
  unname(n: string): string;
  /** Decodes one fetched record. */
  decode(
    topic: string,
    partition: number,
    m: { offset: string; key: Buffer | null; value: Buffer | null; timestamp: string },
  ): Promise<AnyStoredEvent>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * One member of a consumer group on Kafka. Offsets are resolved only after the handler succeeds
 * (kafkajs then commits them); a failed batch is sought back to its first offset and delivered again
 * after a backoff. stop() abandons a batch still in its handler: nothing of it is committed and its
 * heartbeats stop, so the group hands the partition to another member (as after a crash).
 */
export class KafkaSubscription implements Subscription {
  readonly group: string;
  private consumer: Consumer | undefined;
  private stopped = false;
  private assigned: TopicPartition[] = [];
  private readonly attempts = new Map<string, number>();
  private readonly beats = new Set<NodeJS.Timeout>();
  private inFlight = 0;

  constructor(
    private readonly log: KafkaSubscriptionLog,
    private readonly opts: SubscribeOptions,
    private readonly onStop: () => void,
  ) {
    this.group = opts.group;
  }

  assignment(): TopicPartition[] {
    return this.assigned;
  }

  async start(): Promise<void> {
    const consumer = this.log.kafka.consumer({
      groupId: this.log.name(this.opts.group),
      sessionTimeout: this.log.opts.sessionTimeoutMs,
      rebalanceTimeout: this.log.opts.sessionTimeoutMs,
      heartbeatInterval: Math.min(this.log.opts.heartbeatMs, Math.floor(this.log.opts.sessionTimeoutMs / 3)),
      allowAutoTopicCreation: false,
      maxBytesPerPartition: 1024 * 1024,
      maxWaitTimeInMs: 500,
      retry: { retries: 10 },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      this.assigned = Object.entries(e.payload.memberAssignment).flatMap(([topic, ps]) =>
        ps.map((partition) => ({ topic: this.log.unname(topic), partition })),
      );
    });
    await consumer.connect();
    for (const topic of this.opts.topics)
      await consumer.subscribe({
        topic: this.log.name(topic),
        fromBeginning: (this.opts.start ?? 'earliest') === 'earliest',
      });
    await consumer.run({
      autoCommit: true,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: (payload) => this.onBatch(payload),
    });
  }

  private async onBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    if (this.stopped || batch.messages.length === 0) return;
    const max = this.opts.maxBatch ?? 500;
    const key = `${batch.topic}:${batch.partition}`;
    for (let i = 0; i < batch.messages.length; i += max) {
      if (this.stopped || !isRunning() || isStale()) return;
      const slice = batch.messages.slice(i, i + max);
      const events: AnyStoredEvent[] = await Promise.all(
        slice.map((m) => this.log.decode(batch.topic, batch.partition, m)),
      );
      const beat = setInterval(() => void heartbeat().catch(() => undefined), this.log.opts.heartbeatMs);
      this.beats.add(beat);
      this.inFlight++;
      try {
        await this.opts.handler(events);
      } catch (err) {
        if (this.stopped) return;
        const n = (this.attempts.get(key) ?? 0) + 1;
        this.attempts.set(key, n);
        this.opts.onError?.(err, events);
        this.consumer?.seek({ topic: batch.topic, partition: batch.partition, offset: slice[0]!.offset });
        await sleep(Math.min(5000, 50 * 2 ** n));
        return;
      } finally {
        this.inFlight--;
        clearInterval(beat);
        this.beats.delete(beat);
      }
      if (this.stopped) return; // abandoned: never commit
      this.attempts.delete(key);
      resolveOffset(slice[slice.length - 1]!.offset);
      await heartbeat().catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const beat of this.beats) clearInterval(beat); // a hung batch stops heartbeating: the group evicts it
    const consumer = this.consumer;
    // A clean stop leaves the group before returning; a handler that never returns (a crash) would
    // hold disconnect forever, so then the member is given up after a grace period (the group evicts it).
    const leaving = consumer?.disconnect().catch(() => undefined);
    if (this.inFlight === 0) await leaving;
    else await Promise.race([leaving, sleep(3000)]);
    this.onStop();
  }
}
