import { randomUUID } from 'node:crypto';
import type { CacheQueueStore, QueuedJob } from './port.js';

interface Waiter {
  consumer: string;
  resolve: (job: QueuedJob | null) => void;
  timer: NodeJS.Timeout;
}

/**
 * The embedded default cache/queue store (ARCHITECTURE.md "cache / queue (bot): in process"): maps and arrays in this
 * process, gone when it stops. Expired keys are dropped when read and by a sweep every minute. A pop waiting on an
 * empty queue is woken by the next push. Never unavailable (nothing to reach); a TTL below 1 ms is a RangeError, as
 * on Redis.
 */
export class MemoryCacheQueue implements CacheQueueStore {
  private readonly values = new Map<string, { value: string; expiresAt: number }>();
  private readonly queues = new Map<string, QueuedJob[]>();
  private readonly inFlight = new Map<string, QueuedJob[]>();
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweep = setInterval(() => {
      const t = this.now();
      for (const [k, v] of this.values) if (v.expiresAt <= t) this.values.delete(k);
    }, 60_000);
    this.sweep.unref();
  }

  async get(key: string): Promise<string | null> {
    return this.read(key);
  }

  /** Synchronous read: claim checks and sets without yielding, so concurrent claims cannot both win. */
  private read(key: string): string | null {
    const v = this.values.get(key);
    if (!v) return null;
    if (v.expiresAt <= this.now()) {
      this.values.delete(key);
      return null;
    }
    return v.value;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.values.set(key, { value, expiresAt: this.now() + positive(ttlMs) });
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const expiresAt = this.now() + positive(ttlMs);
    if (this.read(key) !== null) return false;
    this.values.set(key, { value: '1', expiresAt });
    return true;
  }

  async push(queue: string, payload: string): Promise<void> {
    const job = { id: randomUUID(), payload };
    const waiter = this.waiters.get(queue)?.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      this.flight(queue, waiter.consumer).push(job);
      waiter.resolve(job);
      return;
    }
    this.list(this.queues, queue).push(job);
  }

  async pop(queue: string, consumer: string, waitMs: number): Promise<QueuedJob | null> {
    const job = this.queues.get(queue)?.shift();
    if (job) {
      this.flight(queue, consumer).push(job);
      return job;
    }
    if (waitMs <= 0) return null;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        consumer,
        resolve,
        timer: setTimeout(() => {
          const list = this.waiters.get(queue) ?? [];
          list.splice(list.indexOf(waiter), 1);
          resolve(null);
        }, waitMs),
      };
      this.list(this.waiters, queue).push(waiter);
    });
  }

  async ack(queue: string, consumer: string, job: QueuedJob): Promise<void> {
    const list = this.inFlight.get(flightKey(queue, consumer));
    const i = list?.findIndex((j) => j.id === job.id) ?? -1;
    if (list && i >= 0) list.splice(i, 1);
  }

  async recover(queue: string, consumer: string): Promise<number> {
    const list = this.inFlight.get(flightKey(queue, consumer)) ?? [];
    this.inFlight.delete(flightKey(queue, consumer));
    this.list(this.queues, queue).unshift(...list);
    return list.length;
  }

  async depth(queue: string): Promise<number> {
    return this.queues.get(queue)?.length ?? 0;
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweep);
    for (const list of this.waiters.values())
      for (const w of list.splice(0)) {
        clearTimeout(w.timer);
        w.resolve(null);
      }
  }

  private flight(queue: string, consumer: string): QueuedJob[] {
    return this.list(this.inFlight, flightKey(queue, consumer));
  }

  private list<T>(map: Map<string, T[]>, key: string): T[] {
    const list = map.get(key) ?? [];
    map.set(key, list);
    return list;
  }
}

const flightKey = (queue: string, consumer: string) => `${queue}\u0000${consumer}`;

/** A TTL must be a positive number of ms (Redis refuses PX 0); smaller values are a caller's bug. */
const positive = (ttlMs: number): number => {
  if (!Number.isFinite(ttlMs) || ttlMs < 1) throw new RangeError(`ttlMs must be at least 1 ms, got ${ttlMs}`);
  return Math.ceil(ttlMs);
};

export { positive as checkTtlMs };
