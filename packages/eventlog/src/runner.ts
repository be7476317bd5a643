import { type AnyStoredEvent, AtlasError, type EventType, isRetriable, TOPICS } from '@atlas/core';
import type { EventLog, Subscription } from './port.js';
import type { TimeSlicer } from './time-slice.js';

/**
 * A projector: events in, idempotent writes out (ARCHITECTURE.md). It knows nothing of the log:
 * the runner consumes, calls `handle` with the events it handles (one partition, in order),
 * commits, retries retriable errors and dead-letters the rest. `D` is what it writes to; `T` the event types it
 * handles, so `handles` and `handle` cannot disagree: `handle` gets only events of a type in `handles`, and
 * `switch (e.type)` narrows their data.
 */
export interface Projector<D, T extends EventType = EventType> {
  /** Also names its consumer group: `atlas.projector.<name>`. */
  readonly name: string;
  readonly topics: readonly string[];
  readonly handles: readonly T[];
  /** Must be idempotent: the same events may arrive again after a crash or a replay. */
  handle(events: AnyStoredEvent<T>[], deps: D): Promise<void>;
  /** Empties the projector's read store before a replay rebuilds it from its topics. */
  reset?(deps: D): Promise<void>;
}

export interface RunnerOptions {
  /** Attempts of one failing event before it is dead-lettered (spec: manual inspection after 5 failures). */
  maxAttempts?: number;
  maxBatch?: number;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /**
   * The process's time slicer: the subscription (its polls, commits and every batch) runs as its background work, so
   * the batches give the event loop a turn at every slice (docs/cli.md). Absent: the batches run as they come.
   */
  slicer?: TimeSlicer;
}

/**
 * True for an error whose event should go to the dead-letter queue at its first failure (AtlasError details
 * `dead_letter: 'at_once'`): an outage of a dependency the event cannot be processed without, which a quick retry would
 * meet again (spec "Ingestion pipeline": fact extraction fails, the message goes to the dead-letter queue).
 */
export const deadLetterAtOnce = (err: unknown): boolean =>
  err instanceof AtlasError && err.details?.dead_letter === 'at_once';

export const groupOf = (projector: { name: string }): string => `atlas.projector.${projector.name}`;

/**
 * Runs a projector as a member of its consumer group. A batch that fails with a retriable error
 * (a store down) is redelivered with backoff; a non-retriable failure is narrowed to the failing
 * event, which is retried `maxAttempts` times and then appended to `atlas.dead-letters` as `DeadLettered` with the
 * error, its code (an AtlasError's) and the original event (type, key and data as JSON), and the partition goes on
 * with the next event. An error that says so (deadLetterAtOnce: the LLM fact extractor when no provider answers) is
 * dead-lettered at its first failure: retrying at once would meet the same outage. With `opts.slicer` the subscription is
 * the slicer's background work (every query of its batches may wait for the next turn of the event loop).
 */
export const runProjector = async <D, T extends EventType>(
  eventLog: EventLog,
  projector: Projector<D, T>,
  deps: D,
  opts: RunnerOptions = {},
): Promise<Subscription> => {
  const maxAttempts = opts.maxAttempts ?? 5;
  const group = groupOf(projector);
  const wanted = new Set<EventType>(projector.handles);

  const deadLetter = async (event: AnyStoredEvent<T>, err: unknown, attempts: number) => {
    opts.log?.error({ projector: projector.name, offset: event.offset, err }, 'event dead-lettered');
    await eventLog.append(TOPICS.deadLetters, [
      {
        type: 'DeadLettered',
        key: event.key,
        data: {
          group,
          topic: event.topic,
          partition: event.partition,
          offset: event.offset,
          eventType: event.type,
          key: event.key,
          error: err instanceof Error ? err.message : String(err),
          // The error's code, so an item can be found by its cause (the LLM recovery re-drive).
          errorCode: err instanceof AtlasError ? err.code : null,
          attempts,
          failedAt: new Date().toISOString(),
          // The original event's data, so an admin can re-drive it (POST /api/admin/dead-letters/{id}/redrive).
          eventData: JSON.stringify(event.data),
        },
      },
    ]);
  };

  const handleOne = async (event: AnyStoredEvent<T>) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await projector.handle([event], deps);
      } catch (err) {
        if (isRetriable(err)) throw err;
        if (attempt >= maxAttempts || deadLetterAtOnce(err)) return deadLetter(event, err, attempt);
      }
    }
  };

  const subscribe = () =>
    eventLog.subscribe({
      group,
      topics: projector.topics,
      maxBatch: opts.maxBatch,
      handler: async (batch) => {
        // The runner hands a projector only events of a type it names in `handles`, which is what `T` says.
        const events = batch.filter((e) => wanted.has(e.type)) as AnyStoredEvent<T>[];
        if (events.length === 0) return;
        try {
          await projector.handle(events, deps);
        } catch (err) {
          if (isRetriable(err)) throw err;
          opts.log?.warn({ projector: projector.name, err }, 'batch failed; retrying event by event');
          for (const event of events) await handleOne(event);
        }
      },
      onError: (err) => opts.log?.warn({ projector: projector.name, err }, 'projector batch will be retried'),
    });
  return opts.slicer ? opts.slicer.background(subscribe) : subscribe();
};
