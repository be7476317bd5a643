import { randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { AnyStoredEvent } from '@atlas/core';
import { type Kysely, sql } from 'kysely';
import type { ResetTarget, SubscribeOptions, Subscription, TopicPartition } from '../port.js';
import type { EventLogTables } from './tables.js';

/** What a consumer uses of its EmbeddedEventLog (declared here so that the two files do not import each other). */
export interface EmbeddedConsumerLog {
  readonly db: Kysely<EventLogTables>;
  /** Emits 'append' (topic) when this process appends. */
  readonly wake: EventEmitter;
  /** Poll and session timings, ms. */
  readonly opts: { readonly pollIntervalMs: number; readonly maxIdleMs: number; readonly sessionTimeoutMs: number };
  /** Partitions of a topic, or null when the topic does not exist. */
  partitions(topic: string): Promise<number | null>;
  /** The offset a reset target stands for in one partition. */
  offsetFor(topic: string, partition: number, to: ResetTarget | 'earliest' | 'latest'): Promise<number>;
  /** Decodes stored records into events. */
  decodeRows(rows: EventLogTables['eventlog_records'][]): Promise<AnyStoredEvent[]>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const tpKey = (tp: TopicPartition) => `${tp.topic}\u0000${tp.partition}`;

/**
 * One member of a consumer group on the embedded log. It heartbeats, takes its share of the
 * group's partitions (partition i of the sorted list goes to live member i mod n) through leases,
 * reads each owned partition from the committed offset, calls the handler, and commits with
 * compare-and-set, so a concurrent offset reset or a lost lease is never overwritten.
 */
export class EmbeddedConsumer implements Subscription {
  readonly memberId = randomUUID();
  readonly group: string;
  private running = false;
  private generation = 0;
  private loop: Promise<void> | undefined;
  private owned: TopicPartition[] = [];
  private lastHeartbeat = 0;
  private readonly retryAt = new Map<string, { at: number; attempts: number }>();
  private wakeUp: (() => void) | undefined;
  /** Current idle wait, ms: grows from pollIntervalMs to maxIdleMs while nothing arrives. */
  private idleMs = 0;
  private readonly onAppend = (topic: string) => {
    if (this.opts.topics.includes(topic)) this.wakeUp?.();
  };

  constructor(
    private readonly log: EmbeddedConsumerLog,
    private readonly opts: SubscribeOptions,
    private readonly onStop: () => void,
  ) {
    this.group = opts.group;
  }

  assignment(): TopicPartition[] {
    return this.owned;
  }

  start(): void {
    this.running = true;
    this.log.wake.on('append', this.onAppend);
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.generation++;
    this.log.wake.off('append', this.onAppend);
    this.wakeUp?.();
    const grace = Math.min(2000, this.log.opts.sessionTimeoutMs);
    await Promise.race([this.loop, sleep(grace)]);
    await this.leave().catch(() => undefined);
    this.onStop();
  }

  private async run(): Promise<void> {
    while (this.running) {
      let worked = false;
      try {
        for (const tp of await this.withNewRecords(await this.rebalance())) {
          if (!this.running) break;
          if (await this.poll(tp)) {
            worked = true;
            // A batch on the embedded database runs as one chain of microtasks (PGlite answers synchronously): give
            // the event loop a turn after each, so timers and sockets (the API beside the projectors) are served.
            await nextTurn();
          }
        }
      } catch (err) {
        if (!this.running) break;
        this.opts.onError?.(err, []);
        await sleep(this.log.opts.pollIntervalMs * 5);
      }
      if (!worked && this.running) await this.idle();
    }
  }

  private idle(): Promise<void> {
    const cap = Math.min(this.log.opts.maxIdleMs, this.log.opts.sessionTimeoutMs / 3); // keep heartbeating in time
    this.idleMs = Math.min(cap, Math.max(this.log.opts.pollIntervalMs, this.idleMs * 2));
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.idleMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.idleMs = 0;
        done();
      };
    });
  }

  /** The owned partitions whose end offset is past the group's committed offset (one query). */
  private async withNewRecords(owned: TopicPartition[]): Promise<TopicPartition[]> {
    if (owned.length === 0) return [];
    const rows = await this.log.db
      .selectFrom('eventlog_partitions as p')
      .innerJoin('eventlog_offsets as o', (j) =>
        j.onRef('o.topic', '=', 'p.topic').onRef('o.partition', '=', 'p.partition'),
      )
      .select(['p.topic', 'p.partition'])
      .where('o.group_id', '=', this.group)
      .where('p.topic', 'in', [...new Set(owned.map((tp) => tp.topic))])
      .whereRef('p.next_offset', '>', 'o.next_offset')
      .execute();
    const pending = new Set(rows.map(tpKey));
    const due = owned.filter((tp) => pending.has(tpKey(tp)));
    if (due.length > 0) this.idleMs = 0;
    return due;
  }

  /** Heartbeat and lease renewal, at most every sessionTimeout/3; returns the partitions this member owns. */
  private async rebalance(): Promise<TopicPartition[]> {
    const now = Date.now();
    const session = this.log.opts.sessionTimeoutMs;
    if (now - this.lastHeartbeat < session / 3) return this.owned;
    const { db } = this.log;
    await sql`insert into eventlog_members (group_id, member_id, heartbeat_at) values (${this.group}, ${this.memberId}, ${now})
      on conflict (group_id, member_id) do update set heartbeat_at = excluded.heartbeat_at`.execute(db);
    await db
      .deleteFrom('eventlog_members')
      .where('group_id', '=', this.group)
      .where('heartbeat_at', '<', now - 10 * session)
      .execute();
    const members = (
      await db
        .selectFrom('eventlog_members')
        .select('member_id')
        .where('group_id', '=', this.group)
        .where('heartbeat_at', '>', now - session)
        .orderBy('member_id')
        .execute()
    ).map((m) => m.member_id);
    const all: TopicPartition[] = [];
    for (const topic of [...this.opts.topics].sort()) {
      const n = (await this.log.partitions(topic)) ?? 0;
      for (let partition = 0; partition < n; partition++) all.push({ topic, partition });
    }
    const mine = all.filter((_, i) => members[i % members.length] === this.memberId);
    const mineKeys = new Set(mine.map(tpKey));
    const held = await db
      .selectFrom('eventlog_leases')
      .select(['topic', 'partition'])
      .where('group_id', '=', this.group)
      .where('member_id', '=', this.memberId)
      .execute();
    for (const h of held.filter((h) => !mineKeys.has(tpKey(h)))) {
      await db
        .deleteFrom('eventlog_leases')
        .where('group_id', '=', this.group)
        .where('topic', '=', h.topic)
        .where('partition', '=', h.partition)
        .where('member_id', '=', this.memberId)
        .execute();
    }
    const owned: TopicPartition[] = [];
    for (const tp of mine) {
      const got = await sql`insert into eventlog_leases (group_id, topic, partition, member_id, expires_at)
        values (${this.group}, ${tp.topic}, ${tp.partition}, ${this.memberId}, ${now + session})
        on conflict (group_id, topic, partition) do update set member_id = excluded.member_id, expires_at = excluded.expires_at
        where eventlog_leases.member_id = excluded.member_id or eventlog_leases.expires_at < ${now}
        returning partition`.execute(db);
      if (got.rows.length === 0) continue;
      const start = await this.log.offsetFor(tp.topic, tp.partition, this.opts.start ?? 'earliest');
      await sql`insert into eventlog_offsets (group_id, topic, partition, next_offset) values (${this.group}, ${tp.topic}, ${tp.partition}, ${start})
        on conflict do nothing`.execute(db);
      owned.push(tp);
    }
    this.owned = owned;
    this.lastHeartbeat = now;
    return owned;
  }

  /** Reads and handles one batch of a partition; true when it did work. */
  private async poll(tp: TopicPartition): Promise<boolean> {
    const key = tpKey(tp);
    const retry = this.retryAt.get(key);
    if (retry && retry.at > Date.now()) return false;
    const { db } = this.log;
    const off = await db
      .selectFrom('eventlog_offsets')
      .select('next_offset')
      .where('group_id', '=', this.group)
      .where('topic', '=', tp.topic)
      .where('partition', '=', tp.partition)
      .executeTakeFirst();
    if (!off) return false;
    const committed = Number(off.next_offset);
    const rows = await db
      .selectFrom('eventlog_records')
      .selectAll()
      .where('topic', '=', tp.topic)
      .where('partition', '=', tp.partition)
      .where('offset', '>=', committed)
      .orderBy('offset')
      .limit(this.opts.maxBatch ?? 500)
      .execute();
    if (rows.length === 0) return false;
    const batch = await this.log.decodeRows(rows);
    const generation = this.generation;
    try {
      await this.opts.handler(batch);
    } catch (err) {
      const attempts = (retry?.attempts ?? 0) + 1;
      this.retryAt.set(key, { at: Date.now() + Math.min(5000, 50 * 2 ** attempts), attempts });
      if (this.running) this.opts.onError?.(err, batch);
      return false;
    }
    this.retryAt.delete(key);
    if (generation !== this.generation || !this.running) return false; // abandoned: never commit
    const next = batch[batch.length - 1]!.offset + 1;
    await sql`update eventlog_offsets set next_offset = ${next}, updated_at = now()
      where group_id = ${this.group} and topic = ${tp.topic} and partition = ${tp.partition} and next_offset = ${committed}
      and exists (select 1 from eventlog_leases l where l.group_id = ${this.group} and l.topic = ${tp.topic}
                  and l.partition = ${tp.partition} and l.member_id = ${this.memberId})`.execute(db);
    return true;
  }

  private async leave(): Promise<void> {
    const { db } = this.log;
    await db
      .deleteFrom('eventlog_leases')
      .where('group_id', '=', this.group)
      .where('member_id', '=', this.memberId)
      .execute();
    await db
      .deleteFrom('eventlog_members')
      .where('group_id', '=', this.group)
      .where('member_id', '=', this.memberId)
      .execute();
  }
}
