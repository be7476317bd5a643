import { SingleBar } from 'cli-progress';

/**
 * The progress display of `atlas import` (docs/import.md "Progress"): one display for the whole import, a phase at a
 * time in the order below. Every phase after the first counts messages out of one total (the messages of the export,
 * unchanged ones included), fixed once the files are read; the first counts the files read, the only thing known
 * before the messages are.
 */
export const IMPORT_PHASES = [
  { name: 'reading files', unit: 'files' },
  { name: 'opening the store', unit: 'messages' },
  { name: 'checking for changes', unit: 'messages' },
  { name: 'appending', unit: 'messages' },
  { name: 'extracting facts', unit: 'messages' },
  { name: 'indexing', unit: 'messages' },
  { name: 'building the graph', unit: 'messages' },
  { name: 'generating wikis', unit: 'messages' },
] as const;
export type ImportPhase = (typeof IMPORT_PHASES)[number]['name'];
export type PhaseDef = { readonly name: string; readonly unit: 'files' | 'messages' };

/** The phases of an import that appends only (`--no-project`): the projection and wiki phases are someone else's. */
export const APPEND_ONLY_PHASES: readonly PhaseDef[] = IMPORT_PHASES.slice(0, 4);

/** Where a phase stands. `startedAt`/`at` in ms (any clock); `startDone`: `done` when the phase started. */
export interface PhaseState {
  readonly name: string;
  readonly unit: 'files' | 'messages';
  /** 1-based position of the phase among `steps` phases. */
  readonly step: number;
  readonly steps: number;
  readonly total: number;
  readonly done: number;
  readonly startDone: number;
  readonly startedAt: number;
}

const count = (n: number, what: string): number => {
  if (!Number.isFinite(n) || n < 0) throw new Error(`progress: ${what} must be a finite count, got ${n}`);
  return Math.floor(n);
};

/**
 * Starts phase `name` of `phases` (pure). Phases only move forward: a phase at or before `prev`'s, or an unknown
 * one, throws. `total`: a finite count (files or messages, the phase's unit); `done`: where the phase starts
 * (clamped to [0, total]); `now`: ms.
 */
export const startPhase = (
  phases: readonly PhaseDef[],
  prev: PhaseState | null,
  name: string,
  total: number,
  done: number,
  now: number,
): PhaseState => {
  const index = phases.findIndex((p) => p.name === name);
  if (index < 0) throw new Error(`progress: unknown phase '${name}'`);
  if (prev && index < prev.step) throw new Error(`progress: phase '${name}' cannot follow '${prev.name}'`);
  const t = count(total, 'total');
  const d = Math.min(count(done, 'done'), t);
  return {
    name,
    unit: phases[index]!.unit,
    step: index + 1,
    steps: phases.length,
    total: t,
    done: d,
    startDone: d,
    startedAt: now,
  };
};

/** The phase with `done` messages (pure): never backwards, never past the total; a non-finite value is ignored. */
export const advance = (s: PhaseState, done: number): PhaseState =>
  Number.isFinite(done) ? { ...s, done: Math.max(s.done, Math.min(Math.floor(done), s.total)) } : s;

/** Whole percent done, 100 only when done; an empty phase (total 0) is 100. */
export const percentOf = (s: Pick<PhaseState, 'done' | 'total'>): number =>
  s.total === 0 ? 100 : Math.floor((s.done * 100) / s.total);

/**
 * Seconds left in the phase at `now` (ms), from its average rate since it started; null ("estimating") until it
 * has run a second and made progress. 0 when done. Never NaN or infinite.
 */
export const etaSeconds = (s: PhaseState, now: number): number | null => {
  if (s.done >= s.total) return 0;
  const elapsed = (now - s.startedAt) / 1000;
  const gained = s.done - s.startDone;
  if (!(elapsed >= 1) || gained <= 0) return null;
  return Math.ceil(((s.total - s.done) * elapsed) / gained);
};

/** `45 s`, `3 min 05 s`, `2 h 07 min`. */
export const formatDuration = (seconds: number): string => {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
};

/** `estimating` for no estimate yet, else the duration. */
export const formatEta = (eta: number | null): string => (eta === null ? 'estimating' : formatDuration(eta));

/**
 * One plain progress line (stderr not a terminal): `import [4/7] extracting facts: 120/302 messages (39%), 8 s,
 * ETA 12 s`, or with `finished` `... 302/302 messages (100%), done in 14 s`.
 */
export const progressLine = (s: PhaseState, now: number, finished = false): string => {
  const elapsed = (now - s.startedAt) / 1000;
  const head = `import [${s.step}/${s.steps}] ${s.name}: ${s.done}/${s.total} ${s.unit} (${percentOf(s)}%)`;
  return finished
    ? `${head}, done in ${formatDuration(elapsed)}`
    : `${head}, ${formatDuration(elapsed)}, ETA ${formatEta(etaSeconds(s, now))}`;
};

/** Where the display goes: a bar on a terminal, plain periodic lines otherwise. */
export interface ProgressSink {
  show(s: PhaseState, now: number): void;
  /** The phase ended (done = total, or the import failed: `failed`). */
  end(s: PhaseState, now: number, failed: boolean): void;
  close(): void;
}

/**
 * The import's one progress display. `messages(total)` fixes the message total once (a second, different total
 * throws); `phase(name)` starts the next phase (files: `total` files; messages: the fixed total, from `done`);
 * `update(done)` moves it on; `close()` ends the display (the current phase finished or not). `now`: a ms clock.
 */
export class ImportProgress {
  private state: PhaseState | null = null;
  private messageTotal: number | null = null;
  private ended = false;

  constructor(
    readonly phases: readonly PhaseDef[],
    private readonly sink: ProgressSink,
    private readonly now: () => number = Date.now,
  ) {}

  /** Fixes the message total (the export's kept messages). */
  messages(total: number): void {
    if (this.messageTotal !== null && this.messageTotal !== total)
      throw new Error(`progress: the message total is ${this.messageTotal}, not ${total}`);
    this.messageTotal = count(total, 'total');
  }

  /** Starts phase `name`; `total` only for a phase counted in files. The previous phase ends as done. */
  phase(name: ImportPhase, opts: { total?: number; done?: number } = {}): void {
    const def = this.phases.find((p) => p.name === name);
    const total = def?.unit === 'messages' ? this.messageTotal : (opts.total ?? null);
    if (total === null) throw new Error(`progress: phase '${name}' needs its total`);
    this.finishPhase();
    this.state = startPhase(this.phases, this.state, name, total, opts.done ?? 0, this.now());
    this.sink.show(this.state, this.now());
  }

  update(done: number): void {
    if (!this.state || this.ended) return;
    const next = advance(this.state, done);
    if (next.done === this.state.done) return;
    this.state = next;
    this.sink.show(next, this.now());
  }

  /** The current phase, if any. */
  get current(): PhaseState | null {
    return this.state;
  }

  private finishPhase(): void {
    if (!this.state || this.ended) return;
    this.state = advance(this.state, this.state.total);
    this.sink.end(this.state, this.now(), false);
  }

  /** Ends the display: the current phase as done (`ok`) or as where it stopped. */
  close(ok: boolean): void {
    if (ok) this.finishPhase();
    else if (this.state && !this.ended) this.sink.end(this.state, this.now(), true);
    this.ended = true;
    this.sink.close();
  }
}

/**
 * Plain lines on a stream (stderr not a terminal): one when a phase ends, and one every `intervalMs` while it runs
 * (from a timer, so a phase that blocks on one long step still reports).
 */
export const lineSink = (write: (line: string) => void, intervalMs: number, now: () => number = Date.now) => {
  let current: PhaseState | null = null;
  const timer = setInterval(() => {
    if (current) write(progressLine(current, now()));
  }, intervalMs);
  timer.unref();
  const sink: ProgressSink = {
    show: (s) => {
      current = s;
    },
    end: (s, at, failed) => {
      if (!failed) write(progressLine(s, at, true));
      current = null;
    },
    close: () => clearInterval(timer),
  };
  return sink;
};

/** A bar on a terminal (cli-progress): phase, bar, done/total unit, percent, ETA (ours: never NaN). */
export const barSink = (now: () => number = Date.now): ProgressSink => {
  const bar = new SingleBar({
    format: '{step} {phase} {bar} {done}/{count} {unit} {pct}% | ETA {remaining}',
    hideCursor: true,
    etaBuffer: 1,
  });
  let started = false;
  let current: PhaseState | null = null;
  const payload = (s: PhaseState) => ({
    step: `[${s.step}/${s.steps}]`,
    phase: s.name,
    done: s.done,
    count: s.total,
    unit: s.unit,
    pct: percentOf(s),
    remaining: formatEta(etaSeconds(s, now())), // not `eta`: a cli-progress token of its own
  });
  // The ETA ticks between updates (a long step makes none).
  const timer = setInterval(() => {
    if (current && started) bar.update(current.done, payload(current));
  }, 1000);
  timer.unref();
  return {
    show: (s) => {
      current = s;
      if (!started) {
        bar.start(Math.max(s.total, 1), s.done, payload(s));
        started = true;
      } else {
        bar.setTotal(Math.max(s.total, 1));
        bar.update(s.done, payload(s));
      }
    },
    end: (s) => {
      if (started) bar.update(s.done, payload(s));
    },
    close: () => {
      clearInterval(timer);
      if (started) bar.stop();
    },
  };
};

// The projection counted in messages lives in the runtime (the server's import jobs count it the same way).
export {
  endOffsets,
  type ImportedOffsets,
  type ProjectionRows,
  passed,
  projectionCounts,
  readProjection,
  unconsumed,
} from '@atlas/runtime';
