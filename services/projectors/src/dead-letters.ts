import { AtlasError, type EventType, type NewEvent, TOPICS } from '@atlas/core';
import type { EventLog, Projector } from '@atlas/eventlog';
import type { DeadLetterRecord, DeadLetterStore } from '@atlas/stores';

/**
 * DeadLettered | DeadLetterRedriven (atlas.dead-letters) → the dead-letter store (spec "Degraded behaviour": fact
 * extraction failures go to the dead-letter queue; items that failed 5 times need manual inspection). Idempotent: a
 * redelivered DeadLettered folds into the same item (id from its group, topic, partition, offset).
 */
export const deadLettersProjector: Projector<{ deadLetters: DeadLetterStore }, 'DeadLettered' | 'DeadLetterRedriven'> =
  {
    name: 'dead-letters',
    topics: [TOPICS.deadLetters],
    handles: ['DeadLettered', 'DeadLetterRedriven'],
    reset: ({ deadLetters }) => deadLetters.truncate(),
    async handle(events, { deadLetters }) {
      await deadLetters.apply(events);
    },
  };

export interface RedriveDeps {
  deadLetters: DeadLetterStore;
  eventLog: EventLog;
  /** Resolves once the dead-letters projector has folded what was appended (so a list right after shows it). */
  settled: () => Promise<void>;
}

/** What a re-drive did: the item and where its original event was appended again. Times ISO 8601 UTC. */
export interface RedriveResult {
  id: string;
  status: 'redriven';
  event_type: string;
  redriven_at: string;
  redriven_to: { topic: string; partition: number; offset: number };
}

const redriveOne = async (
  deps: RedriveDeps,
  item: DeadLetterRecord & { event_data: unknown },
): Promise<RedriveResult> => {
  const event = { type: item.event_type as EventType, key: item.key, data: item.event_data } as NewEvent;
  const [at] = await deps.eventLog.append(item.topic, [event]);
  const redrivenAt = new Date().toISOString();
  await deps.eventLog.append(TOPICS.deadLetters, [
    {
      type: 'DeadLetterRedriven',
      key: item.key,
      data: { deadLetterId: item.id, topic: item.topic, partition: at!.partition, offset: at!.offset, redrivenAt },
    },
  ]);
  return {
    id: item.id,
    status: 'redriven',
    event_type: item.event_type,
    redriven_at: redrivenAt,
    redriven_to: { topic: item.topic, partition: at!.partition, offset: at!.offset },
  };
};

/**
 * Re-drives one dead letter (POST /api/admin/dead-letters/{id}/redrive): appends its original event (type, key,
 * data) again to its topic, where every projector reading that topic processes it (idempotently), and appends
 * DeadLetterRedriven, which marks the item `redriven`. Errors: AtlasError NOT_FOUND (unknown id), CONFLICT (already
 * re-driven, or an item that kept no original event), INVALID_REQUEST (the data no longer fits the event's schema),
 * and what the log throws.
 */
export const redriveDeadLetter = async (deps: RedriveDeps, id: string): Promise<RedriveResult> => {
  const item = await deps.deadLetters.get(id);
  if (!item) throw new AtlasError('NOT_FOUND', `no dead letter ${id}`);
  if (item.status === 'redriven') {
    throw new AtlasError('CONFLICT', `dead letter ${id} was already re-driven`, {
      details: { redriven_at: item.redriven_at, redriven_to: item.redriven_to },
    });
  }
  if (item.event_data === null) {
    throw new AtlasError('CONFLICT', `dead letter ${id} kept no original event (written before DeadLettered v2)`);
  }
  const result = await redriveOne(deps, item);
  await deps.settled();
  return result;
};

/**
 * Re-drives every pending dead letter that kept its original event (POST /api/admin/dead-letters/redrive), oldest
 * first, at most `limit` (default 1000), optionally only those of a consumer group or projector name, topic, event
 * type or error code. Answers `{redriven, results, failed: [{id, error}], remaining}` where `remaining` counts the pending items
 * matching the filter after the pass (beyond `limit`, v1 items without their event, failures). Throws what the log throws for the first item; later failures are listed.
 */
export const redriveAllDeadLetters = async (
  deps: RedriveDeps,
  filter: { group?: string; topic?: string; eventType?: string; errorCode?: string; limit?: number } = {},
): Promise<{
  redriven: number;
  results: RedriveResult[];
  failed: { id: string; error: string }[];
  remaining: number;
}> => {
  const limit = filter.limit ?? 1000;
  const { items } = await deps.deadLetters.list({
    status: 'pending',
    group: filter.group,
    topic: filter.topic,
    eventType: filter.eventType,
    errorCode: filter.errorCode,
    limit,
  });
  const results: RedriveResult[] = [];
  const failed: { id: string; error: string }[] = [];
  for (const summary of items.filter((i) => i.redrivable).reverse()) {
    const item = await deps.deadLetters.get(summary.id);
    if (!item || item.event_data === null) continue;
    try {
      results.push(await redriveOne(deps, item));
    } catch (err) {
      if (results.length === 0 && failed.length === 0 && !(err instanceof AtlasError && err.code === 'INVALID_REQUEST'))
        throw err;
      failed.push({ id: item.id, error: err instanceof Error ? err.message : String(err) });
    }
  }
  await deps.settled();
  const left = await deps.deadLetters.list({
    status: 'pending',
    group: filter.group,
    topic: filter.topic,
    eventType: filter.eventType,
    errorCode: filter.errorCode,
    limit: 1,
  });
  return { redriven: results.length, results, failed, remaining: left.total };
};
