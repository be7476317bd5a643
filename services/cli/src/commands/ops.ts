import type { Config } from '@atlas/core';
import type { LagRow, ResetTarget } from '@atlas/eventlog';
import { openRuntime, projectorLagRows, type ReplayResult, type Runtime, replayProjector } from '@atlas/runtime';
import { acquireLock } from '../lock.js';

/** Opens the runtime for a short command, holding the data dir lock on the embedded database. */
export const withRuntime = async <T>(cfg: Config, command: string, fn: (rt: Runtime) => Promise<T>): Promise<T> => {
  const release = cfg.DATABASE_URL ? () => undefined : acquireLock(cfg.ATLAS_DATA_DIR, { command });
  try {
    const rt = await openRuntime(cfg);
    try {
      return await fn(rt);
    } finally {
      await rt.close();
    }
  } finally {
    release();
  }
};

/** `--from earliest | <ISO timestamp>` as a reset target. */
export const parseFrom = (from: string): ResetTarget => {
  if (from === 'earliest' || from === 'latest') return from;
  const ms = Date.parse(from);
  if (Number.isNaN(ms)) throw new Error(`--from takes 'earliest' or an ISO 8601 timestamp, not '${from}'`);
  return { timestamp: ms };
};

/** `atlas replay <projector> [--from …]`: see replayProjector. */
export const replayCommand = (cfg: Config, projector: string, from: string): Promise<ReplayResult> =>
  withRuntime(cfg, `replay ${projector}`, (rt) => replayProjector(rt, projector, parseFrom(from)));

/** `atlas lag`: the lag of every projector's consumer group, per topic and partition. */
export const lagCommand = (cfg: Config): Promise<LagRow[]> => withRuntime(cfg, 'lag', projectorLagRows);

/** Renders rows as an aligned text table. */
export const table = (head: string[], rows: (string | number | null)[][]): string => {
  const cells = rows.map((r) => r.map((c) => (c === null ? '-' : String(c))));
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
};
