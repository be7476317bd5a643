import { TOPICS } from '@atlas/core';
import { openDatabase } from '@atlas/db';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { EventCodec } from './codec.js';
import { migrateEventLog } from './embedded/migrations.js';
import { EmbeddedEventLog } from './embedded/postgres-log.js';
import { KyselySchemaRegistry } from './registry.js';
import { SAMPLE_EVENTS } from './samples.js';
import { TimeSlicedDialect, TimeSlicer } from './time-slice.js';

/** A clock that moves `step` ms each time it is read: every checkpoint sees time pass, no real waiting. */
const ticking = (step: number) => {
  let t = 0;
  return () => (t += step);
};

/**
 * How many of `steps` awaited steps had run when a setImmediate scheduled before them fired: `steps` means the
 * event loop got no turn until the work was done (timers and sockets starved meanwhile).
 */
const stepsBeforeATurn = async (steps: number, step: (i: number) => Promise<unknown>): Promise<number> => {
  let done = 0;
  let seen = -1;
  setImmediate(() => {
    seen = done;
  });
  for (let i = 0; i < steps; i++) {
    await step(i);
    done++;
  }
  await new Promise((r) => setImmediate(r));
  return seen;
};

describe('TimeSlicer', () => {
  it('background work past its slice gives the event loop a turn; foreground work never waits', async () => {
    const slicer = new TimeSlicer(25, ticking(10));
    // Microtask-only work (what PGlite's queries are): without checkpoints the loop gets no turn until the end.
    expect(await stepsBeforeATurn(100, () => Promise.resolve())).toBe(100);
    expect(await stepsBeforeATurn(100, () => slicer.checkpoint())).toBe(100); // not background: never waits
    const yieldsBefore = slicer.yields;
    const seen = await slicer.background(() => stepsBeforeATurn(100, () => slicer.checkpoint()));
    expect(seen).toBeLessThan(5); // the slice is 25 ms and each step takes 10: a turn within the first few steps
    expect(slicer.yields - yieldsBefore).toBeGreaterThan(10); // and again every few steps after it
  });

  it('tasks that yielded in one slice resume together, so one busy task does not starve the others', async () => {
    const slicer = new TimeSlicer(25, ticking(10));
    const order: string[] = [];
    const task = (name: string) =>
      slicer.background(async () => {
        for (let i = 0; i < 20; i++) {
          await slicer.checkpoint();
          order.push(name);
        }
      });
    await Promise.all([task('a'), task('b')]);
    expect(order.slice(0, 20)).toContain('b'); // b ran before a finished
    expect(order.slice(0, 20)).toContain('a');
  });

  it('refuses a slice that is not positive', () => {
    expect(() => new TimeSlicer(0)).toThrow(RangeError);
  });
});

describe('TimeSlicedDialect', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
  });

  it('PGlite queries of background work give the loop turns; the same queries outside it starve the loop', async () => {
    const slicer = new TimeSlicer(25, ticking(10));
    const sliced = await openDatabase({ dataDir: 'memory://', wrapDialect: (d) => new TimeSlicedDialect(d, slicer) });
    closers.push(sliced.close);
    // The old behaviour (no background work: checkpoints never wait): 50 queries on PGlite run as one chain of
    // microtasks, the loop never turns in between.
    expect(await stepsBeforeATurn(50, () => sql`select 1`.execute(sliced.db))).toBe(50);
    const seen = await slicer.background(() => stepsBeforeATurn(50, () => sql`select 1`.execute(sliced.db)));
    expect(seen).toBeLessThan(5);
    // A transaction takes the connection once and runs through; its results are unchanged.
    const rows = await slicer.background(() =>
      sliced.db.transaction().execute(async (trx) => (await sql<{ n: number }>`select 41 + 1 as n`.execute(trx)).rows),
    );
    expect(rows).toEqual([{ n: 42 }]);
  }, 180_000); // opening PGlite: seconds alone, a minute beside the other suites on a busy machine
});

describe('embedded consumer', () => {
  it('gives the event loop a turn after each batch (a backlog used to be worked off in one chain of microtasks)', async () => {
    const handle = await openDatabase({ dataDir: 'memory://' });
    await migrateEventLog(handle.db);
    const codec = new EventCodec(new KyselySchemaRegistry(handle.db));
    await codec.init();
    const log = new EmbeddedEventLog(handle.db, codec, { defaultPartitions: 1 });
    try {
      await log.ensureTopics([{ name: TOPICS.messages, partitions: 1 }]);
      const events = Array.from({ length: 50 }, (_, i) => ({
        type: 'MessageIngested' as const,
        key: 'c1',
        data: { ...SAMPLE_EVENTS.MessageIngested, platformMessageId: `m${i}` },
      }));
      await log.append(TOPICS.messages, events);
      let batches = 0;
      let batchesAtFirstTurn = -1;
      let handled = 0;
      const done = new Promise<void>((resolve) => {
        void log.subscribe({
          group: 'g-turns',
          topics: [TOPICS.messages],
          maxBatch: 5,
          handler: async (batch) => {
            if (batches === 0) setImmediate(() => (batchesAtFirstTurn = batches));
            batches++;
            handled += batch.length;
            if (handled === events.length) resolve();
          },
        });
      });
      await done;
      expect(batches).toBe(10);
      expect(batchesAtFirstTurn).toBeGreaterThan(0);
      expect(batchesAtFirstTurn).toBeLessThan(3); // a turn right after the first batch, not after all ten
    } finally {
      await log.close();
      await handle.close();
    }
  }, 180_000);
});
