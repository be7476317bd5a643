import {
  cronJob,
  type FactsExtracted,
  type IntentStoreName,
  type NewEvent,
  type StoreWriteApplied,
  TOPICS,
  writeIntentId,
} from '@atlas/core';
import { type EventLog, groupOf, type Projector } from '@atlas/eventlog';
import { INTENT_MAX_ATTEMPTS, type IntentStore, type WriteIntentRecord } from '@atlas/stores';

/** What a store's write of a fact set came to. */
export type StoreOutcome = { outcome: StoreWriteApplied['outcome'] } | { error: string };

/** Pure: the StoreWriteApplied / StoreWriteFailed event of a store's write of a fact set (atlas.intents, key intent id). */
export const intentOutcomeEvent = (
  set: { intentId: string; messageId: string; channelId: string },
  store: IntentStoreName,
  result: StoreOutcome,
  attempt = 0,
  at: Date = new Date(),
): NewEvent<'StoreWriteApplied'> | NewEvent<'StoreWriteFailed'> => {
  const base = { intentId: set.intentId, store, messageId: set.messageId, channelId: set.channelId, attempt };
  return 'error' in result
    ? {
        type: 'StoreWriteFailed',
        key: set.intentId,
        data: { ...base, error: result.error, failedAt: at.toISOString() },
      }
    : {
        type: 'StoreWriteApplied',
        key: set.intentId,
        data: { ...base, outcome: result.outcome, appliedAt: at.toISOString() },
      };
};

/** Pure: the outcome events of a store's write of some fact sets (only sets with facts have intents). */
export const setOutcomes = (
  sets: readonly FactsExtracted[],
  store: IntentStoreName,
  result: StoreOutcome,
): NewEvent[] =>
  sets
    .filter((s) => s.facts.length > 0)
    .map((s) => intentOutcomeEvent({ ...s, intentId: writeIntentId(s) }, store, result));

/** Appends outcome events to atlas.intents; nothing when write intents are off (`log` null/undefined) or none. */
export const emitOutcomes = async (log: EventLog | null | undefined, events: readonly NewEvent[]): Promise<void> => {
  if (log && events.length > 0) await log.append(TOPICS.intents, events);
};

/** The error text of an outcome. */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * WriteIntentCreated | StoreWriteApplied | StoreWriteFailed (atlas.intents) → the reconciler's intent store (spec
 * "Write intent (two-phase persist)"): per intent, per store status, retry_count and state. Idempotent and
 * order-tolerant (IntentStore.apply is a commutative fold).
 */
export const reconcilerProjector: Projector<
  { intents: IntentStore },
  'WriteIntentCreated' | 'StoreWriteApplied' | 'StoreWriteFailed'
> = {
  name: 'reconciler',
  topics: [TOPICS.intents],
  handles: ['WriteIntentCreated', 'StoreWriteApplied', 'StoreWriteFailed'],
  reset: ({ intents }) => intents.truncate(),
  async handle(events, { intents }) {
    await intents.apply(events);
  },
};

/**
 * Retries one store's write of an intent's fact set (the store projector's own logic over what it queued): the
 * outcome, or null when nothing is queued for the intent's message (the projector never reported the set, e.g.
 * it dead-lettered it).
 */
export type StoreRetry = (intent: WriteIntentRecord) => Promise<StoreOutcome | null>;

export interface ReconcileDeps {
  intents: IntentStore;
  eventLog: EventLog;
  /** Per store, its retry; null when the store is not configured in this deployment (a failure is reported). */
  retry: Record<IntentStoreName, StoreRetry | null>;
  /**
   * Whether the intent's fact set is still the message's current one (its message has facts and no newer intent);
   * asked only once the documents projector passed the set. A set that is not current is `superseded`.
   */
  isCurrent(intent: WriteIntentRecord): Promise<boolean>;
}

/** What one reconcile pass did (POST /api/admin/reconcile). Times ISO 8601 UTC; counts are intents or store writes. */
export interface ReconcileResult {
  started_at: string;
  finished_at: string;
  duration_ms: number;
  /** Intents that met the retry rule (pending, older than 5 min, younger than 24 h, retry_count below 5). */
  candidates: number;
  /** Intents retried (retry_count incremented). */
  retried: number;
  /** Intents left for a later pass: a store's projector had not reached their fact set yet (no attempt counted). */
  deferred: number;
  /** Store writes of this pass by outcome; `permanent` counts the failures that were the 5th attempt. */
  writes: { written: number; skipped: number; superseded: number; failed: number; permanent: number };
  /** Intents as of this pass before its outcomes are folded: pending intents older than 24 h read `abandoned`. */
  abandoned: number;
  /** Up to 100 of the intents retried or deferred, with each store's result of this pass. */
  intents: {
    intent_id: string;
    message_id: string;
    channel_id: string;
    /** retry_count after this pass (unchanged when deferred). */
    attempt: number;
    stores: Partial<Record<IntentStoreName, StoreWriteApplied['outcome'] | 'failed' | 'deferred'>>;
    errors: Partial<Record<IntentStoreName, string>>;
  }[];
}

/** Consumer groups and topics whose progress past a fact set shows that a store's projector has seen it. */
const GATES: Record<IntentStoreName | 'documents', { group: string; topic: string; drained?: boolean }[]> = {
  documents: [{ group: groupOf({ name: 'documents' }), topic: TOPICS.facts }],
  vector: [{ group: groupOf({ name: 'embeddings' }), topic: TOPICS.facts }],
  graph: [
    { group: groupOf({ name: 'entities' }), topic: TOPICS.facts },
    // EntitiesExtracted positions are not known: the graph group must have drained that partition of atlas.graph.
    { group: groupOf({ name: 'graph' }), topic: TOPICS.graph, drained: true },
  ],
};

const running = new WeakMap<IntentStore, Promise<unknown>>();

/**
 * One reconcile pass (spec "Write intent": the background reconciler; Limits "write reconciler"): for each intent
 * created more than 5 minutes and less than 24 hours before `now` with retry_count below 5 and a store still
 * `pending` or `failed` (oldest first, at most `limit`, default 1000), retries those stores once as attempt
 * retry_count + 1 and appends each result to atlas.intents (StoreWriteApplied / StoreWriteFailed with that attempt),
 * where the reconciler projector folds it: retry_count incremented, a 5th failed attempt makes the failure permanent.
 * A store whose projector has not consumed the intent's fact set yet is deferred (no attempt); a fact set replaced by
 * a newer one (an edit, a deletion) is `superseded`. Passes in one process run one at a time; passes in two
 * processes report the same attempt numbers, which fold once. Throws what the log and the stores throw (a store write
 * that fails is an outcome, not an error).
 */
export const runReconcilePass = async (
  deps: ReconcileDeps,
  opts: { now?: Date; limit?: number } = {},
): Promise<ReconcileResult> => {
  const prev = running.get(deps.intents);
  const mine = (async () => {
    await prev?.catch(() => undefined);
    return reconcileOnce(deps, opts);
  })();
  running.set(deps.intents, mine);
  try {
    return await mine;
  } finally {
    if (running.get(deps.intents) === mine) running.delete(deps.intents);
  }
};

const reconcileOnce = async (deps: ReconcileDeps, opts: { now?: Date; limit?: number }): Promise<ReconcileResult> => {
  const t0 = performance.now();
  const now = opts.now ?? new Date();
  const startedAt = new Date().toISOString();
  const candidates = await deps.intents.retryCandidates(now, opts.limit ?? 1000);
  const positions = await gatePositions(deps.eventLog, candidates.length > 0);
  const reached = (gate: IntentStoreName | 'documents', i: WriteIntentRecord): boolean =>
    GATES[gate].every(({ group, topic, drained }) => {
      const row = positions.get(`${group}\u0000${topic}\u0000${i.facts_partition}`);
      if (!row) return false;
      return drained ? row.lag === 0 : row.committed !== null && row.committed > (i.facts_offset ?? Infinity);
    });
  const writes = { written: 0, skipped: 0, superseded: 0, failed: 0, permanent: 0 };
  const listed: ReconcileResult['intents'] = [];
  let retried = 0;
  let deferred = 0;
  for (const intent of candidates) {
    const attempt = intent.retry_count + 1;
    const open = (['vector', 'graph'] as const).filter(
      (s) => intent[s].status === 'pending' || intent[s].status === 'failed',
    );
    const stores: ReconcileResult['intents'][number]['stores'] = {};
    const errors: ReconcileResult['intents'][number]['errors'] = {};
    const out: NewEvent[] = [];
    const current = reached('documents', intent) ? await deps.isCurrent(intent) : null;
    for (const store of open) {
      let result: StoreOutcome | null;
      const retry = deps.retry[store];
      if (!retry) result = { error: `no ${store} store is configured` };
      else if (!reached(store, intent) || current === null) {
        stores[store] = 'deferred';
        continue;
      } else if (!current) result = { outcome: 'superseded' };
      else {
        result = await retry(intent).catch((err: unknown) => ({ error: errorText(err) }));
        result ??= {
          error: `nothing queued to retry: the ${store} store's projector reported no write of this fact set (see GET /api/admin/dead-letters)`,
        };
      }
      const ids = { intentId: intent.intent_id, messageId: intent.message_id, channelId: intent.channel_id };
      out.push(intentOutcomeEvent(ids, store, result, attempt, now));
      if ('error' in result) {
        stores[store] = 'failed';
        errors[store] = result.error;
        writes.failed++;
        if (attempt >= INTENT_MAX_ATTEMPTS) writes.permanent++;
      } else {
        stores[store] = result.outcome;
        writes[result.outcome]++;
      }
    }
    if (out.length > 0) {
      await deps.eventLog.append(TOPICS.intents, out);
      retried++;
    } else deferred++;
    if (listed.length < 100)
      listed.push({
        intent_id: intent.intent_id,
        message_id: intent.message_id,
        channel_id: intent.channel_id,
        attempt: out.length > 0 ? attempt : intent.retry_count,
        stores,
        errors,
      });
  }
  const abandoned = (await deps.intents.countByState(now)).abandoned;
  return {
    started_at: startedAt,
    finished_at: new Date().toISOString(),
    duration_ms: Math.round(performance.now() - t0),
    candidates: candidates.length,
    retried,
    deferred,
    writes,
    abandoned,
    intents: listed,
  };
};

/** Committed offset and lag of every gate group per topic partition (key: group, topic, partition). */
const gatePositions = async (
  log: EventLog,
  needed: boolean,
): Promise<Map<string, { committed: number | null; lag: number }>> => {
  const out = new Map<string, { committed: number | null; lag: number }>();
  if (!needed) return out;
  const pairs = new Map<string, { group: string; topic: string }>();
  for (const g of Object.values(GATES).flat()) pairs.set(`${g.group}\u0000${g.topic}`, g);
  for (const { group, topic } of pairs.values()) {
    for (const row of await log.lag(group, [topic])) {
      out.set(`${group}\u0000${topic}\u0000${row.partition}`, { committed: row.committedOffset, lag: row.lag });
    }
  }
  return out;
};

/** Spec Limits "write reconciler": every 15 minutes. */
export const RECONCILE_CRON = '*/15 * * * *';

/** A running reconcile schedule. */
export interface ReconcileScheduler {
  /** The next pass. */
  nextRun(): Date | null;
  stop(): void;
}

/**
 * Runs runReconcilePass every 15 minutes (croner, UTC; passes never overlap). A pass that throws is logged and the
 * next one tries again; a pass that retried something is logged at info level. Throws AtlasError INVALID_REQUEST on
 * an invalid `cron` (default RECONCILE_CRON).
 */
export const startReconcileScheduler = (
  deps: ReconcileDeps,
  opts: { cron?: string; log?: { info(msg: string): void; warn(msg: string): void } } = {},
): ReconcileScheduler => {
  const job = cronJob(opts.cron ?? RECONCILE_CRON, { name: 'reconcile cron' }, async () => {
    try {
      const r = await runReconcilePass(deps);
      if (r.retried > 0 || r.abandoned > 0)
        opts.log?.info(
          `reconciler: ${r.retried} intent(s) retried (${r.writes.written} written, ${r.writes.failed} failed, ${r.writes.permanent} permanently), ${r.deferred} deferred, ${r.abandoned} abandoned`,
        );
    } catch (err) {
      opts.log?.warn(`reconcile pass failed: ${errorText(err)}`);
    }
  });
  return { nextRun: () => job.nextRun(), stop: () => job.stop() };
};
