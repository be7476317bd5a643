import type { LagRow } from '@atlas/eventlog';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  advance,
  etaSeconds,
  formatDuration,
  formatEta,
  IMPORT_PHASES,
  ImportProgress,
  lineSink,
  type PhaseState,
  passed,
  percentOf,
  progressLine,
  projectionCounts,
  startPhase,
  unconsumed,
} from './import-progress.js';

// Issue 21, point 3 ("the import progress bar counted events, jumped from 0 to 67%, changed its total and printed
// 'NaN left'"): one display for the whole import, in messages, its phase named, a stable total, an honest ETA.

/** A sink that records what it is shown. */
const recorder = () => {
  const shown: PhaseState[] = [];
  const ended: { s: PhaseState; failed: boolean }[] = [];
  return {
    shown,
    ended,
    sink: {
      show: (s: PhaseState) => shown.push(s),
      end: (s: PhaseState, _at: number, failed: boolean) => ended.push({ s, failed }),
      close: () => undefined,
    },
  };
};

describe('phase state (pure)', () => {
  it('is monotonic and bounded: backwards, past the total and non-finite values change nothing', () => {
    let s = startPhase(IMPORT_PHASES, null, 'reading files', 10, 0, 0);
    s = advance(s, 4);
    expect(advance(s, 3).done).toBe(4);
    expect(advance(s, Number.NaN)).toBe(s);
    expect(advance(s, Number.POSITIVE_INFINITY)).toBe(s);
    expect(advance(s, 99).done).toBe(10);
    expect(s.total).toBe(10);
  });

  it('phases only move forward; an unknown phase or a bad total throws', () => {
    const s = startPhase(IMPORT_PHASES, null, 'appending', 5, 0, 0);
    expect(() => startPhase(IMPORT_PHASES, s, 'reading files', 5, 0, 0)).toThrow(/cannot follow 'appending'/);
    expect(() => startPhase(IMPORT_PHASES, s, 'unknown' as never, 5, 0, 0)).toThrow(/unknown phase/);
    expect(() => startPhase(IMPORT_PHASES, s, 'indexing', Number.NaN, 0, 0)).toThrow(/finite count/);
    expect(startPhase(IMPORT_PHASES, s, 'indexing', 5, 7, 0)).toMatchObject({ step: 6, steps: 8, done: 5 });
  });

  it('the ETA is "estimating" until a second has passed with progress, then from the phase rate; never NaN', () => {
    const s = startPhase(IMPORT_PHASES, null, 'extracting facts', 300, 100, 0);
    expect(etaSeconds(s, 500)).toBeNull();
    expect(etaSeconds(s, 10_000)).toBeNull(); // no progress yet: no rate
    expect(formatEta(etaSeconds(s, 10_000))).toBe('estimating');
    expect(etaSeconds(advance(s, 150), 10_000)).toBe(30); // 50 messages in 10 s, 150 left
    expect(etaSeconds(advance(s, 300), 10_000)).toBe(0);
    const empty = startPhase(IMPORT_PHASES, null, 'extracting facts', 0, 0, 0);
    expect([etaSeconds(empty, 0), percentOf(empty)]).toEqual([0, 100]);
    expect(progressLine(empty, 0)).toBe('import [5/8] extracting facts: 0/0 messages (100%), 0 s, ETA 0 s');
  });

  it('percent is 100 only when done', () => {
    expect(percentOf({ done: 999, total: 1000 })).toBe(99);
    expect(percentOf({ done: 1000, total: 1000 })).toBe(100);
  });

  it('formats durations and lines', () => {
    expect([formatDuration(0.4), formatDuration(59), formatDuration(185), formatDuration(7620)]).toEqual([
      '0 s',
      '59 s',
      '3 min 05 s',
      '2 h 07 min',
    ]);
    const s = advance(startPhase(IMPORT_PHASES, null, 'extracting facts', 302, 0, 0), 120);
    expect(progressLine(s, 8000)).toBe('import [5/8] extracting facts: 120/302 messages (39%), 8 s, ETA 13 s');
    expect(progressLine(advance(s, 302), 14_200, true)).toBe(
      'import [5/8] extracting facts: 302/302 messages (100%), done in 14 s',
    );
  });
});

describe('ImportProgress', () => {
  it('a whole import: phases in order, one stable message total, monotonic counts, every phase ended once', () => {
    let now = 0;
    const r = recorder();
    const p = new ImportProgress(IMPORT_PHASES, r.sink, () => now);
    p.phase('reading files', { total: 80, done: 2 });
    for (let f = 3; f <= 80; f++) p.update(f);
    p.messages(302);
    expect(() => p.messages(301)).toThrow(/302, not 301/);
    for (const name of ['opening the store', 'checking for changes', 'appending'] as const) {
      now += 1000;
      p.phase(name);
      p.update(302);
    }
    p.phase('extracting facts', { done: 2 });
    for (const done of [2, 0, 100, 50, 302]) {
      now += 1000;
      p.update(done);
    }
    p.phase('indexing', { done: 250 });
    p.phase('building the graph', { done: 302 });
    p.phase('generating wikis', { done: 0 });
    p.update(302);
    p.close(true);

    expect(r.ended.map((e) => e.s.name)).toEqual(IMPORT_PHASES.map((x) => x.name));
    expect(r.ended.every((e) => !e.failed && e.s.done === e.s.total)).toBe(true);
    const steps = r.shown.map((s) => s.step);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    for (const s of r.shown.filter((x) => x.unit === 'messages')) expect(s.total).toBe(302);
    for (let i = 1; i < r.shown.length; i++)
      if (r.shown[i]!.step === r.shown[i - 1]!.step) expect(r.shown[i]!.done).toBeGreaterThan(r.shown[i - 1]!.done);
    expect(r.shown.map((s) => [s.name, s.done]).filter(([n]) => n === 'extracting facts')).toEqual([
      ['extracting facts', 2],
      ['extracting facts', 100],
      ['extracting facts', 302],
    ]);
  });

  it('a failed import ends its phase as failed, where it stopped', () => {
    const r = recorder();
    const p = new ImportProgress(IMPORT_PHASES, r.sink, () => 0);
    p.phase('reading files', { total: 10, done: 3 });
    p.close(false);
    expect(r.ended).toEqual([{ s: expect.objectContaining({ name: 'reading files', done: 3 }), failed: true }]);
  });

  it('a message phase before the total is known throws', () => {
    const p = new ImportProgress(IMPORT_PHASES, recorder().sink, () => 0);
    expect(() => p.phase('appending')).toThrow(/needs its total/);
  });
});

describe('lineSink', () => {
  afterEach(() => vi.useRealTimers());

  it('writes a line every interval while a phase runs and one when it ends', () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    let now = 0;
    const p = new ImportProgress(
      IMPORT_PHASES,
      lineSink(
        (l) => lines.push(l),
        5000,
        () => now,
      ),
      () => now,
    );
    p.messages(10);
    p.phase('opening the store');
    now = 5000;
    vi.advanceTimersByTime(5000);
    p.phase('checking for changes');
    p.update(4);
    now = 12_000;
    vi.advanceTimersByTime(5000);
    p.close(false);
    vi.advanceTimersByTime(60_000);
    expect(lines).toEqual([
      'import [2/8] opening the store: 0/10 messages (0%), 5 s, ETA estimating',
      'import [2/8] opening the store: 10/10 messages (100%), done in 5 s',
      'import [3/8] checking for changes: 4/10 messages (40%), 7 s, ETA 11 s',
    ]);
  });
});

const row = (partition: number, committedOffset: number | null, endOffset: number, topic = 't'): LagRow => ({
  group: 'g',
  topic,
  partition,
  committedOffset,
  endOffset,
  lag: endOffset - (committedOffset ?? 0),
});

describe('projection counted in messages (pure)', () => {
  // The import appended 6 messages: offsets 10, 11, 12 on partition 0 and 3, 7, 9 on partition 1.
  const messages = new Map([
    [0, [10, 11, 12]],
    [1, [3, 7, 9]],
  ]);
  const baseline = {
    facts: new Map([
      [0, 100],
      [1, 50],
    ]),
    graph: new Map([
      [0, 20],
      [1, 20],
    ]),
  };

  it('passed: the messages below each committed offset (never committed: none)', () => {
    expect(passed(messages, [row(0, 12, 13), row(1, 8, 10)])).toBe(2 + 2);
    expect(passed(messages, [row(0, null, 13), row(1, 100, 100)])).toBe(3);
  });

  it('unconsumed: only events after the baseline', () => {
    expect(unconsumed([row(0, 90, 104), row(1, 55, 56)], baseline.facts)).toBe(4 + 1);
  });

  it('idle pipeline: every phase counts every appended message', () => {
    const idle = {
      messages: [[row(0, 13, 13), row(1, 10, 10)]],
      entities: [row(0, 103, 103), row(1, 53, 53)],
      facts: [[row(0, 103, 103), row(1, 53, 53)]],
      graph: [[row(0, 22, 22), row(1, 20, 20)]],
    };
    expect(projectionCounts({ messages, baseline }, idle)).toEqual({ facts: 6, indexing: 6, graph: 6 });
  });

  it('mid-way: later phases are the earlier count minus what their slowest group has still to consume', () => {
    const rows = {
      // facts passed 10, 11 and 3, 7; documents passed all but 12: extracting facts counts the slower, 4
      messages: [
        [row(0, 12, 13), row(1, 8, 10)],
        [row(0, 12, 13), row(1, 10, 10)],
      ],
      entities: [row(0, 101, 102), row(1, 52, 52)], // 1 fact set left
      facts: [
        [row(0, 102, 102), row(1, 52, 52)],
        [row(0, 100, 102), row(1, 51, 52)], // 3 fact sets left
      ],
      graph: [[row(0, 20, 21), row(1, 20, 20)]], // 1 entity set left
    };
    expect(projectionCounts({ messages, baseline }, rows)).toEqual({ facts: 4, indexing: 1, graph: 2 });
  });

  it('a dead-lettered message (no fact set) counts as projected once the facts group passed it', () => {
    const rows = {
      messages: [[row(0, 13, 13), row(1, 10, 10)]],
      entities: [row(0, 102, 102), row(1, 53, 53)], // 5 fact sets for 6 messages, all consumed
      facts: [[row(0, 102, 102), row(1, 53, 53)]],
      graph: [[row(0, 20, 20), row(1, 20, 20)]],
    };
    expect(projectionCounts({ messages, baseline }, rows)).toEqual({ facts: 6, indexing: 6, graph: 6 });
  });
});
