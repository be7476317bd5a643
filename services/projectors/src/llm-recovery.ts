import { groupOf } from '@atlas/eventlog';
import type { DeadLetterStore } from '@atlas/stores';
import { type RedriveDeps, redriveAllDeadLetters } from './dead-letters.js';
import { factsProjector } from './facts.js';

/** The error code the LLM fact extractor dead-letters a message with when no provider answered. */
export const LLM_OUTAGE_CODE = 'PROVIDER_UNAVAILABLE';

/** At most this many dead letters are re-driven by one recovery pass (the next pass takes the rest). */
export const LLM_RECOVERY_BATCH = 1000;

export interface LlmRecoveryDeps {
  deadLetters: DeadLetterStore;
  redrive: RedriveDeps;
  /**
   * One small call through the fast LLM chain (its breakers decide: an OPEN breaker refuses at once, a HALF_OPEN one
   * lets this call be its probe). Resolves when a provider answered; throws when none did.
   */
  probe: () => Promise<void>;
}

/** What one recovery pass found and did. */
export interface LlmRecoveryPass {
  /** Pending dead letters of the facts projector for an LLM outage before the pass. */
  waiting: number;
  /** Whether the model was asked (only when something waits). */
  probed: boolean;
  /** Whether it answered. */
  available: boolean;
  /** Items re-driven (their MessageIngested appended again to atlas.messages). */
  redriven: number;
  /** Items still waiting after the pass. */
  remaining: number;
}

/**
 * One pass of the LLM recovery re-drive (spec "Degraded behaviour when a dependency fails": primary LLM down →
 * messages queued in the dead-letter queue, "retry on recovery"): when the facts projector has pending dead letters
 * of error code PROVIDER_UNAVAILABLE (the LLM fact extractor found no provider), asks the model one small question
 * through the fast chain and, when it answers, re-drives them (at most LLM_RECOVERY_BATCH, oldest first) through
 * redriveAllDeadLetters: each original MessageIngested is appended again and the item marked `redriven`. A message
 * that fails again becomes a new item with the same code, for a later pass. Nothing waits: no call at all.
 * Errors: what the dead-letter store and the log throw.
 */
export const runLlmRecoveryPass = async (deps: LlmRecoveryDeps): Promise<LlmRecoveryPass> => {
  const filter = { status: 'pending' as const, group: groupOf(factsProjector), errorCode: LLM_OUTAGE_CODE };
  const waiting = (await deps.deadLetters.list({ ...filter, limit: 1 })).total;
  if (waiting === 0) return { waiting, probed: false, available: false, redriven: 0, remaining: 0 };
  try {
    await deps.probe();
  } catch {
    return { waiting, probed: true, available: false, redriven: 0, remaining: waiting };
  }
  const r = await redriveAllDeadLetters(deps.redrive, {
    group: filter.group,
    errorCode: LLM_OUTAGE_CODE,
    limit: LLM_RECOVERY_BATCH,
  });
  return { waiting, probed: true, available: true, redriven: r.redriven, remaining: r.remaining };
};

/**
 * Runs runLlmRecoveryPass every `intervalMs` (LLM_RECOVERY_INTERVAL_MS, default 30 s, the breakers' reset time) in the
 * process that runs the facts projector, one pass at a time; logs a pass that re-drove something, or found the model
 * still down, at info level, and a failed pass as a warning. `stop()` ends it.
 */
export const startLlmRecovery = (
  deps: LlmRecoveryDeps,
  opts: { intervalMs: number; log: { info(msg: string): void; warn(msg: string): void } },
): { stop(): void; runNow(): Promise<LlmRecoveryPass> } => {
  let running: Promise<LlmRecoveryPass> | null = null;
  const runNow = () => {
    running ??= runLlmRecoveryPass(deps).finally(() => {
      running = null;
    });
    return running;
  };
  const timer = setInterval(() => {
    runNow()
      .then((p) => {
        if (p.redriven > 0)
          opts.log.info(
            `LLM recovery: the model answers again; ${p.redriven} dead-lettered message(s) re-driven, ${p.remaining} waiting`,
          );
        else if (p.probed && !p.available)
          opts.log.info(`LLM recovery: the model is still down; ${p.waiting} dead-lettered message(s) wait`);
      })
      .catch((err: unknown) => opts.log.warn(`LLM recovery pass failed: ${String(err)}`));
  }, opts.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer), runNow };
};
