import type { CircuitBreaker } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';

/** What a recovery backfill reports: items processed and still queued. */
export type BackfillResult = { processed: number; remaining: number };

type Logger = { warn(obj: object, msg: string): void };

/**
 * Backfill on recovery (spec "Degraded behaviour": embedding provider down → "backfill on recovery"; graph store down
 * → entities backfilled later): whenever one of `breakers` closes after an outage (HALF_OPEN → CLOSED: its probe
 * succeeded), `backfill` runs once in the background (one run at a time; a closing during a run runs it again after).
 * A backfill that fails (the dependency down again) is logged at warn and left to the next closing, the admin route
 * or the reconciler. Returns a function that stops listening.
 */
export const backfillOnRecovery = (
  breakers: readonly CircuitBreaker[],
  backfill: () => Promise<BackfillResult>,
  log?: Logger,
): (() => void) => {
  let running: Promise<void> | null = null;
  let again = false;
  const run = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = backfill()
      .then(
        () => undefined,
        (err: unknown) => log?.warn({ err }, 'backfill after recovery failed; left queued'),
      )
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          run();
        }
      });
  };
  const offs = breakers.map((b) =>
    b.onStateChange((t) => {
      if (t.from === 'HALF_OPEN' && t.to === 'CLOSED') run();
    }),
  );
  return () => {
    for (const off of offs) off();
  };
};

/** `sub` whose stop() also calls `off` first (listeners tied to a projector's subscription). */
export const withCleanup = (sub: Subscription, off: () => void): Subscription => ({
  group: sub.group,
  assignment: () => sub.assignment(),
  stop: async () => {
    off();
    await sub.stop();
  },
});
