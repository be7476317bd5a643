import type { CircuitBreaker } from '@atlas/core';
import type { CacheQueueStore, QueuedJob } from '@atlas/stores';

export interface WorkerOptions {
  /** The guarded cache/queue store and its breaker. */
  store: CacheQueueStore;
  breaker: CircuitBreaker;
  queue: string;
  /** This process's consumer name (its in-flight list; recovered at start). */
  consumer: string;
  /** Works off one job's payload; a throw is logged, and the job is acked all the same (no poison loop). */
  handle(payload: string): Promise<void>;
  /** Jobs run at once (default 4). */
  concurrency?: number;
  /** How long one blocking pop waits, ms (default 1000). */
  waitMs?: number;
  /** Pause after a failed call while the store is down, ms (default 500). */
  idleMs?: number;
  log?: { warn(obj: object, msg: string): void };
}

/**
 * The bot's queue worker: pops commands from the cache/queue store (one blocking pop at a time) and runs up to
 * `concurrency` at once, acking each when done (at-least-once: a process stopped mid-job gets its in-flight jobs back
 * at its next start through `recover`). While the store's breaker is not CLOSED it sends no pops, only a `ping` every
 * `idleMs` (after the breaker's reset time that ping is the half-open probe, which closes it when the store is back):
 * a blocking pop as a probe would hold the breaker's one trial call for its whole wait and refuse the commands
 * meanwhile.
 */
export class BotWorker {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly active = new Set<Promise<void>>();
  private recovered = false;

  constructor(private readonly opts: WorkerOptions) {}

  /** Starts the loop (idempotent). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops popping and waits for the running jobs (at most `graceMs`). */
  async stop(graceMs = 10_000): Promise<void> {
    this.running = false;
    await this.loop;
    await Promise.race([Promise.all(this.active), new Promise((r) => setTimeout(r, graceMs).unref())]);
  }

  /** Jobs being worked off now. */
  get inFlight(): number {
    return this.active.size;
  }

  private async run(): Promise<void> {
    const { store, breaker, queue, consumer } = this.opts;
    const idle = () => new Promise((r) => setTimeout(r, this.opts.idleMs ?? 500));
    while (this.running) {
      try {
        if (breaker.state !== 'CLOSED') {
          await store.ping();
          continue;
        }
        if (!this.recovered) {
          const n = await store.recover(queue, consumer);
          this.recovered = true;
          if (n > 0) this.opts.log?.warn({ component: 'bot', jobs: n }, 'bot: redelivering commands left in flight');
        }
        if (this.active.size >= (this.opts.concurrency ?? 4)) {
          await Promise.race(this.active);
          continue;
        }
        const job = await store.pop(queue, consumer, this.opts.waitMs ?? 1_000);
        if (job) this.track(job);
      } catch {
        await idle(); // the store is down: the breaker counts it; commands answer "offline" meanwhile
      }
    }
  }

  private track(job: QueuedJob): void {
    const { store, queue, consumer } = this.opts;
    const p: Promise<void> = this.opts
      .handle(job.payload)
      .catch((err: unknown) =>
        this.opts.log?.warn({ component: 'bot', err: String(err), job: job.id }, 'bot: a command failed'),
      )
      .then(() => store.ack(queue, consumer, job))
      .catch((err: unknown) =>
        this.opts.log?.warn({ component: 'bot', err: String(err), job: job.id }, 'bot: ack failed (redelivered later)'),
      )
      .finally(() => this.active.delete(p));
    this.active.add(p);
  }
}
