import { EventEmitter } from 'node:events';
import { type AnyStoredEvent, AtlasError, type NewEvent } from '@atlas/core';
import type { Db } from '@atlas/db';
import { type Kysely, sql } from 'kysely';
import type { EventCodec } from '../codec.js';
import { partitionForKey } from '../partitioner.js';
import type { EventLog, LagRow, ResetTarget, SubscribeOptions, Subscription } from '../port.js';
import { EmbeddedConsumer } from './consumer.js';
import type { EventLogTables } from './tables.js';

export interface EmbeddedLogOptions {
  /** Partitions of a topic created implicitly (default 4). */
  defaultPartitions?: number;
  /** Consumer poll interval when records keep coming, ms (default 100). */
  pollIntervalMs?: number;
  /** Longest wait between polls of an idle consumer, ms (default 1000); appends in this process wake it at once. */
  maxIdleMs?: number;
  /** A member whose heartbeat is older than this loses its partitions, ms (default 10000). */
  sessionTimeoutMs?: number;
}

const INSERT_CHUNK = 1000;

/**
 * The embedded EventLog: an append-only log in Postgres tables (PGlite by default, or a Postgres
 * server through `pg`). Per-partition offsets are allocated in the appending transaction, so an
 * append is atomic; consumer groups commit offsets with compare-and-set and share partitions
 * through leases (a member's partitions move to others when its heartbeat stops).
 */
export class EmbeddedEventLog implements EventLog {
  readonly db: Kysely<EventLogTables>;
  /** Emits 'append' (topic) so that consumers in this process wake at once instead of at the next poll. */
  readonly wake = new EventEmitter();
  readonly opts: Required<EmbeddedLogOptions>;
  private readonly topics = new Map<string, number>();
  private readonly consumers = new Set<EmbeddedConsumer>();

  constructor(
    db: Db,
    readonly codec: EventCodec,
    opts: EmbeddedLogOptions = {},
  ) {
    this.db = db as Kysely<EventLogTables>;
    this.wake.setMaxListeners(0);
    this.opts = { defaultPartitions: 4, pollIntervalMs: 100, maxIdleMs: 1000, sessionTimeoutMs: 10_000, ...opts };
  }

  async ensureTopics(topics: readonly { name: string; partitions?: number }[]): Promise<void> {
    for (const t of topics) {
      if (this.topics.has(t.name)) continue;
      const n = t.partitions ?? this.opts.defaultPartitions;
      await this.db.transaction().execute(async (trx) => {
        await sql`insert into eventlog_topics (name, partitions) values (${t.name}, ${n}) on conflict do nothing`.execute(
          trx,
        );
        const row = await trx
          .selectFrom('eventlog_topics')
          .select('partitions')
          .where('name', '=', t.name)
          .executeTakeFirstOrThrow();
        const values = Array.from({ length: row.partitions }, (_, p) => ({
          topic: t.name,
          partition: p,
          next_offset: 0,
        }));
        await trx
          .insertInto('eventlog_partitions')
          .values(values)
          .onConflict((oc) => oc.doNothing())
          .execute();
        this.topics.set(t.name, row.partitions);
      });
    }
  }

  async partitions(topic: string): Promise<number | null> {
    const cached = this.topics.get(topic);
    if (cached !== undefined) return cached;
    const row = await this.db
      .selectFrom('eventlog_topics')
      .select('partitions')
      .where('name', '=', topic)
      .executeTakeFirst();
    if (row) this.topics.set(topic, row.partitions);
    return row?.partitions ?? null;
  }

  async append(topic: string, events: readonly NewEvent[]): Promise<{ partition: number; offset: number }[]> {
    if (events.length === 0) return [];
    await this.ensureTopics([{ name: topic }]);
    const partitions = this.topics.get(topic)!;
    const encoded = await Promise.all(events.map((e) => this.codec.encode(e.type, e.data)));
    const byPartition = new Map<number, number[]>();
    events.forEach((e, i) => {
      const p = partitionForKey(e.key, partitions);
      byPartition.set(p, [...(byPartition.get(p) ?? []), i]);
    });
    const positions: { partition: number; offset: number }[] = new Array(events.length);
    const now = Date.now();
    await this.guard(() =>
      this.db.transaction().execute(async (trx) => {
        for (const [partition, indexes] of [...byPartition.entries()].sort((a, b) => a[0] - b[0])) {
          const row = await sql<{ next_offset: string | number }>`update eventlog_partitions
            set next_offset = next_offset + ${indexes.length} where topic = ${topic} and partition = ${partition}
            returning next_offset`.execute(trx);
          const base = Number(row.rows[0]!.next_offset) - indexes.length;
          const rows = indexes.map((i, k) => {
            positions[i] = { partition, offset: base + k };
            return {
              topic,
              partition,
              offset: base + k,
              key: events[i]!.key,
              type: events[i]!.type,
              value: encoded[i]!,
              timestamp: now,
            };
          });
          for (let c = 0; c < rows.length; c += INSERT_CHUNK) {
            await trx
              .insertInto('eventlog_records')
              .values(rows.slice(c, c + INSERT_CHUNK))
              .execute();
          }
        }
      }),
    );
    this.wake.emit('append', topic);
    return positions;
  }

  async subscribe(opts: SubscribeOptions): Promise<Subscription> {
    await this.ensureTopics(opts.topics.map((name) => ({ name })));
    const consumer = new EmbeddedConsumer(this, opts, () => this.consumers.delete(consumer));
    this.consumers.add(consumer);
    consumer.start();
    return consumer;
  }

  async resetOffsets(group: string, topic: string, to: ResetTarget): Promise<void> {
    const partitions = await this.partitions(topic);
    if (partitions === null) throw new AtlasError('NOT_FOUND', `topic '${topic}' does not exist`);
    for (let p = 0; p < partitions; p++) {
      const target = await this.offsetFor(topic, p, to);
      await sql`insert into eventlog_offsets (group_id, topic, partition, next_offset) values (${group}, ${topic}, ${p}, ${target})
        on conflict (group_id, topic, partition) do update set next_offset = excluded.next_offset, updated_at = now()`.execute(
        this.db,
      );
    }
    this.wake.emit('append', topic);
  }

  /** The offset a reset target means on one partition. */
  async offsetFor(topic: string, partition: number, to: ResetTarget | 'earliest' | 'latest'): Promise<number> {
    if (to === 'latest') {
      const row = await this.db
        .selectFrom('eventlog_partitions')
        .select('next_offset')
        .where('topic', '=', topic)
        .where('partition', '=', partition)
        .executeTakeFirst();
      return Number(row?.next_offset ?? 0);
    }
    const q = this.db
      .selectFrom('eventlog_records')
      .select((eb) => eb.fn.min('offset').as('first'))
      .where('topic', '=', topic)
      .where('partition', '=', partition);
    const row = await (to === 'earliest' ? q : q.where('timestamp', '>=', to.timestamp)).executeTakeFirst();
    if (row?.first !== null && row?.first !== undefined) return Number(row.first);
    return to === 'earliest' ? 0 : this.offsetFor(topic, partition, 'latest');
  }

  async lag(group: string, topics?: readonly string[]): Promise<LagRow[]> {
    const names =
      topics ??
      (
        await this.db.selectFrom('eventlog_offsets').select('topic').distinct().where('group_id', '=', group).execute()
      ).map((r) => r.topic);
    if (names.length === 0) return [];
    const rows = await this.db
      .selectFrom('eventlog_partitions as p')
      .leftJoin('eventlog_offsets as o', (j) =>
        j.onRef('o.topic', '=', 'p.topic').onRef('o.partition', '=', 'p.partition').on('o.group_id', '=', group),
      )
      .select(['p.topic', 'p.partition', 'p.next_offset as end', 'o.next_offset as committed'])
      .where('p.topic', 'in', names)
      .orderBy('p.topic')
      .orderBy('p.partition')
      .execute();
    return rows.map((r) => {
      const end = Number(r.end);
      const committed = r.committed === null ? null : Number(r.committed);
      return {
        group,
        topic: r.topic,
        partition: r.partition,
        committedOffset: committed,
        endOffset: end,
        lag: end - (committed ?? 0),
      };
    });
  }

  async pendingByKey(group: string, topic: string, types: readonly string[]): Promise<Map<string, number>> {
    if (types.length === 0) return new Map();
    // Partitions outer, each read from its committed offset up by the (topic, partition, offset) key: only the unread window.
    const rows = await this.guard(() =>
      this.db
        .selectFrom('eventlog_partitions as p')
        .leftJoin('eventlog_offsets as o', (j) =>
          j.onRef('o.topic', '=', 'p.topic').onRef('o.partition', '=', 'p.partition').on('o.group_id', '=', group),
        )
        .innerJoin('eventlog_records as r', (j) =>
          j
            .onRef('r.topic', '=', 'p.topic')
            .onRef('r.partition', '=', 'p.partition')
            .on((eb) => eb('r.offset', '>=', eb.fn.coalesce('o.next_offset', eb.lit(0)))),
        )
        .select(['r.key', (eb) => eb.fn.countAll<string | number>().as('n')])
        .where('p.topic', '=', topic)
        .where('r.type', 'in', [...types])
        .groupBy('r.key')
        .execute(),
    );
    return new Map(rows.map((r) => [r.key, Number(r.n)]));
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.stop()));
  }

  /** Turns connection-level failures into AtlasError STORE_UNAVAILABLE (retriable). */
  async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (cause) {
      if (cause instanceof AtlasError) throw cause;
      const msg = cause instanceof Error ? cause.message : String(cause);
      if (/ECONNREFUSED|ECONNRESET|terminat|closed|timeout/i.test(msg)) {
        throw new AtlasError('STORE_UNAVAILABLE', `event log store unavailable: ${msg}`, { retriable: true, cause });
      }
      throw cause;
    }
  }

  /** Decodes stored rows into events (used by the consumer). */
  async decodeRows(rows: EventLogTables['eventlog_records'][]): Promise<AnyStoredEvent[]> {
    return Promise.all(
      rows.map(async (r) => {
        const { type, data } = await this.codec.decode(Buffer.from(r.value));
        return {
          topic: r.topic,
          partition: r.partition,
          offset: Number(r.offset),
          key: r.key,
          type,
          data,
          timestamp: Number(r.timestamp),
        } as AnyStoredEvent;
      }),
    );
  }
}
