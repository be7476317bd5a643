import { randomUUID } from 'node:crypto';
import { AtlasError } from '@atlas/core';
import { Redis, ReplyError } from 'ioredis';
import { checkTtlMs } from './memory.js';
import { type CacheQueueStore, decodeJob, encodeJob, type QueuedJob } from './port.js';

export interface RedisCacheQueueOptions {
  /** Prefix of every key this store writes (deployments or test runs sharing a server stay apart); default `atlas:`. */
  keyPrefix?: string;
  /** How long a connection attempt may take, ms (default the spec's 2 s for the cache/queue store). */
  connectTimeoutMs?: number;
}

/**
 * The cache/queue store on Redis (ARCHITECTURE.md "at scale"; `REDIS_URL`), over ioredis. Keys:
 * `<prefix>kv:<key>` (get/set/claim: GET, SET PX, SET NX PX), `<prefix>q:<queue>` (a list: RPUSH, and BLMOVE / LMOVE
 * into the consumer's in-flight list `<prefix>q:<queue>:flight:<consumer>`; ack is LREM, recover LMOVE back).
 *
 * Two connections: one for every command, and one for blocking pops (a BLMOVE holds its connection). Neither queues
 * commands while disconnected, nor resends them after a reconnect: a call made while Redis is unreachable fails at
 * once with AtlasError STORE_UNAVAILABLE (retriable), so a command the bot already answered "offline" never runs
 * later. Reconnects run in the background (every ≤ 1 s), so the store comes back by itself. A Redis error reply
 * (WRONGTYPE, a bad argument) is passed through unchanged: Redis answered, it is not an outage.
 */
export class RedisCacheQueue implements CacheQueueStore {
  private readonly prefix: string;
  private readonly client: Redis;
  private readonly blocking: Redis;
  private closed = false;

  constructor(url: string, opts: RedisCacheQueueOptions = {}) {
    this.prefix = opts.keyPrefix ?? 'atlas:';
    const options = {
      connectTimeout: opts.connectTimeoutMs ?? 2_000,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (times: number) => Math.min(50 * 2 ** times, 1_000),
      lazyConnect: false,
    };
    this.client = new Redis(url, options);
    this.blocking = new Redis(url, { ...options, connectionName: 'atlas-cache-queue-blocking' });
    // Connection errors surface on the calls (STORE_UNAVAILABLE); the client's own events would otherwise be printed.
    for (const c of [this.client, this.blocking]) c.on('error', () => undefined);
  }

  /**
   * Resolves when both connections are ready, or throws STORE_UNAVAILABLE after `timeoutMs` (default 2 s). Optional:
   * calls before that fail like calls during an outage. Suites use it so a listed but unreachable server fails them.
   */
  async connect(timeoutMs = 2_000): Promise<void> {
    const ready = (c: Redis) =>
      c.status === 'ready' ? Promise.resolve() : new Promise<void>((r) => c.once('ready', () => r()));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(unavailable(new Error(`no answer from Redis within ${timeoutMs} ms`))),
        timeoutMs,
      );
    });
    try {
      await Promise.race([Promise.all([ready(this.client), ready(this.blocking)]), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  get(key: string): Promise<string | null> {
    return call(() => this.client.get(this.kv(key)));
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    const px = checkTtlMs(ttlMs);
    await call(() => this.client.set(this.kv(key), value, 'PX', px));
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const px = checkTtlMs(ttlMs);
    return (await call(() => this.client.set(this.kv(key), '1', 'PX', px, 'NX'))) === 'OK';
  }

  async push(queue: string, payload: string): Promise<void> {
    await call(() => this.client.rpush(this.q(queue), encodeJob({ id: randomUUID(), payload })));
  }

  async pop(queue: string, consumer: string, waitMs: number): Promise<QueuedJob | null> {
    try {
      // The blocking connection still reconnecting while the other one answers (just after an outage): take a job
      // without blocking, so the store does not look down for it, and wait a little when there is none.
      if (waitMs > 0 && this.blocking.status !== 'ready' && this.client.status === 'ready') {
        const raw = await call(() => this.client.lmove(this.q(queue), this.flight(queue, consumer), 'LEFT', 'RIGHT'));
        if (raw === null) await new Promise((r) => setTimeout(r, Math.min(waitMs, 200)));
        return raw === null ? null : decodeJob(raw);
      }
      const raw =
        waitMs > 0
          ? await call(() =>
              this.blocking.blmove(this.q(queue), this.flight(queue, consumer), 'LEFT', 'RIGHT', waitMs / 1000),
            )
          : await call(() => this.client.lmove(this.q(queue), this.flight(queue, consumer), 'LEFT', 'RIGHT'));
      return raw === null ? null : decodeJob(raw);
    } catch (err) {
      if (this.closed) return null; // close() cut a waiting pop
      throw err;
    }
  }

  async ack(queue: string, consumer: string, job: QueuedJob): Promise<void> {
    await call(() => this.client.lrem(this.flight(queue, consumer), 1, encodeJob(job)));
  }

  async recover(queue: string, consumer: string): Promise<number> {
    let moved = 0;
    // Newest first onto the head of the queue, so the oldest in-flight job ends up first.
    while ((await call(() => this.client.lmove(this.flight(queue, consumer), this.q(queue), 'RIGHT', 'LEFT'))) !== null)
      moved++;
    return moved;
  }

  depth(queue: string): Promise<number> {
    return call(() => this.client.llen(this.q(queue)));
  }

  async ping(): Promise<void> {
    await call(() => this.client.ping());
  }

  /** Deletes every key under this store's prefix (test teardown, a reset); returns how many. */
  async deleteAll(): Promise<number> {
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await call(() => this.client.scan(cursor, 'MATCH', `${this.prefix}*`, 'COUNT', 500));
      cursor = next;
      if (keys.length > 0) deleted += await call(() => this.client.del(...keys));
    } while (cursor !== '0');
    return deleted;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.blocking.disconnect();
    await this.client.quit().catch(() => this.client.disconnect());
  }

  private kv(key: string) {
    return `${this.prefix}kv:${key}`;
  }
  private q(queue: string) {
    return `${this.prefix}q:${queue}`;
  }
  private flight(queue: string, consumer: string) {
    return `${this.prefix}q:${queue}:flight:${consumer}`;
  }
}

const unavailable = (cause: unknown) =>
  new AtlasError(
    'STORE_UNAVAILABLE',
    `cache/queue store unavailable: ${cause instanceof Error ? cause.message : String(cause)}`,
    { retriable: true, cause, details: { dependency: 'cache_queue' } },
  );

/** Runs one Redis call: an error reply passes through, any other failure (connection) is STORE_UNAVAILABLE. */
const call = async <T>(fn: () => Promise<T>): Promise<T> => {
  try {
    return await fn();
  } catch (err) {
    throw err instanceof ReplyError ? err : unavailable(err);
  }
};
