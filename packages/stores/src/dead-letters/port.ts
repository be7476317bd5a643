// The dead-letter read store's shapes (DeadLetterStore).

/** `pending`: waiting for an admin; `redriven`: its original event was appended again to its topic. */
export type DeadLetterStatus = 'pending' | 'redriven';

/** One dead letter as the store keeps it. Times ISO 8601 UTC. */
export interface DeadLetterRecord {
  /** UUID v5 of (group, topic, partition, offset) of the event that failed (deadLetterId). */
  id: string;
  /** The consumer group that gave up, e.g. `atlas.projector.facts`. */
  group: string;
  /** Where the original event is: topic, partition, offset. */
  topic: string;
  partition: number;
  offset: number;
  event_type: string;
  /** The original event's partition key (a channel id for the channel-keyed topics). */
  key: string;
  /** The last error message. */
  error: string;
  /** The error's code (an AtlasError's, e.g. PROVIDER_UNAVAILABLE), or null (none, or not recorded). */
  error_code: string | null;
  /** Times the projector tried the event before giving up. */
  attempts: number;
  failed_at: string;
  /** Failed `attempts` ≥ 5 times and not re-driven yet: an admin should look at it. */
  needs_inspection: boolean;
  /** Whether the original event is kept (DeadLettered `eventData`), so the item can be re-driven. */
  redrivable: boolean;
  status: DeadLetterStatus;
  redriven_at: string | null;
  /** Where the re-drive appended the original event again, or null. */
  redriven_to: { topic: string; partition: number; offset: number } | null;
}

/** A dead letter with its original event's data (parsed JSON; null when the DeadLettered event did not keep it). */
export interface DeadLetterDetail extends DeadLetterRecord {
  event_data: unknown;
}

/** Filters of `list` (all optional); `limit` 1-200, `offset` from 0. */
export interface DeadLetterQuery {
  status?: DeadLetterStatus;
  /** A consumer group (`atlas.projector.facts`) or a projector name (`facts`). */
  group?: string;
  topic?: string;
  eventType?: string;
  key?: string;
  /** The error's code (error_code). */
  errorCode?: string;
  needsInspection?: boolean;
  limit: number;
  offset?: number;
}
