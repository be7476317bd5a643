import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from '@atlas/db';
import type {
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  QueryCompiler,
  TransactionSettings,
} from 'kysely';

/**
 * Cooperative time slicing of background work on one process's event loop (docs/cli.md "Projection beside the API").
 *
 * PGlite runs each query synchronously in the main thread and resolves its promise at once, and fact and entity
 * extraction are CPU work: a projector's batch is then one chain of microtasks that never lets timers or I/O run, so
 * twelve projectors working off a backlog held the event loop for minutes (an HTTP request was not even read).
 *
 * Background work runs inside `background(fn)` (the projector runner, the schedulers) and passes a `checkpoint()` at
 * each step: before each query takes the database connection (TimeSlicedDialect) and before each extraction. Within
 * the current slice a checkpoint resolves at once; past `sliceMs` it waits for the next turn of the event loop
 * (setImmediate, after I/O). So the loop serves its sockets and timers at least every `sliceMs` plus the longest
 * single step, and a background task never waits holding the connection: a request arriving meanwhile finds it free.
 * Checkpoints outside `background` (the API's own queries) never wait.
 *
 * All tasks that yielded in one slice resume together in the next (one wake-up, in the order they yielded), so none
 * goes first every time; the slice is measured from that wake-up and shared by all of them.
 */
export class TimeSlicer {
  private readonly context = new AsyncLocalStorage<true>();
  private sliceStart: number;
  private waiting: (() => void)[] = [];
  private wakeScheduled = false;
  /** Turns of the event loop given back so far (diagnostics, tests). */
  yields = 0;

  /**
   * @param sliceMs longest run of background work between two turns of the event loop, ms (> 0)
   * @param now the clock, ms (tests pass a fake one)
   */
  constructor(
    readonly sliceMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(sliceMs > 0)) throw new RangeError(`sliceMs must be > 0, not ${sliceMs}`);
    this.sliceStart = now();
  }

  /** Runs `fn` as background work: its checkpoints, and those of every task it starts (timers too), may yield. */
  background<T>(fn: () => T): T {
    return this.context.run(true, fn);
  }

  /** Whether the caller runs inside `background`. */
  get inBackground(): boolean {
    return this.context.getStore() === true;
  }

  /**
   * Resolves at once outside `background` and within the current slice; past it, at the next turn of the event
   * loop. Never rejects.
   */
  checkpoint(): Promise<void> {
    if (!this.inBackground || this.now() - this.sliceStart < this.sliceMs) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (this.wakeScheduled) return;
      this.wakeScheduled = true;
      setImmediate(this.wake);
    });
  }

  private readonly wake = () => {
    this.wakeScheduled = false;
    this.yields++;
    this.sliceStart = this.now();
    const resume = this.waiting;
    this.waiting = [];
    for (const r of resume) r();
  };
}

/**
 * A Kysely dialect whose queries pass a checkpoint of `slicer` before they take a connection (outside a transaction,
 * where each query takes one; a transaction takes it once and runs through). Everything else is `inner`'s.
 */
export class TimeSlicedDialect implements Dialect {
  constructor(
    private readonly inner: Dialect,
    private readonly slicer: TimeSlicer,
  ) {}

  createAdapter(): DialectAdapter {
    return this.inner.createAdapter();
  }

  createDriver(): Driver {
    return new TimeSlicedDriver(this.inner.createDriver(), this.slicer);
  }

  createIntrospector(db: Db): DatabaseIntrospector {
    return this.inner.createIntrospector(db);
  }

  createQueryCompiler(): QueryCompiler {
    return this.inner.createQueryCompiler();
  }
}

type SavepointCompiler = Parameters<NonNullable<Driver['savepoint']>>[2];

class TimeSlicedDriver implements Driver {
  savepoint?: Driver['savepoint'];
  rollbackToSavepoint?: Driver['rollbackToSavepoint'];
  releaseSavepoint?: Driver['releaseSavepoint'];

  constructor(
    private readonly inner: Driver,
    private readonly slicer: TimeSlicer,
  ) {
    const { savepoint, rollbackToSavepoint, releaseSavepoint } = inner;
    if (savepoint)
      this.savepoint = (c: DatabaseConnection, name: string, compile: SavepointCompiler) =>
        savepoint.call(inner, c, name, compile);
    if (rollbackToSavepoint)
      this.rollbackToSavepoint = (c: DatabaseConnection, name: string, compile: SavepointCompiler) =>
        rollbackToSavepoint.call(inner, c, name, compile);
    if (releaseSavepoint)
      this.releaseSavepoint = (c: DatabaseConnection, name: string, compile: SavepointCompiler) =>
        releaseSavepoint.call(inner, c, name, compile);
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.slicer.checkpoint();
    return this.inner.acquireConnection();
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(connection);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
