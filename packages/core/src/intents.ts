import { z } from 'zod';
import { deterministicId } from './ids.js';

/**
 * Write intents (spec "States and transitions → Write intent (two-phase persist)"; ARCHITECTURE.md): a fact set that
 * fans out to the vector store and the graph store gets an intent on `atlas.intents` (key: intent id); each store's
 * projector reports its write; the reconciler folds them into per-intent, per-store state and retries.
 */

/** The stores an intent tracks. */
export const IntentStoreName = z.enum(['vector', 'graph']);
export type IntentStoreName = z.infer<typeof IntentStoreName>;

/** Status a store starts with in a new intent: `skipped` when the store does not take part (no vector store). */
export const IntentInitialStatus = z.enum(['pending', 'skipped']);
export type IntentInitialStatus = z.infer<typeof IntentInitialStatus>;

/**
 * Intent id of a fact set: UUID v5 of (message id, extractedAt). Every projector that sees the set (or the
 * EntitiesExtracted made from it, which carries the id) derives the same id, so a redelivered set reports to the
 * same intent. Pure.
 */
export const writeIntentId = (set: { messageId: string; extractedAt: string }): string =>
  deterministicId('write-intent', set.messageId, set.extractedAt);

/**
 * Data of `WriteIntentCreated` (phase 1): appended by the facts projector for every fact set with at least one fact,
 * right after the set itself (so a crash in between leaves outcomes without an intent, never an intent without its
 * set). Times ISO 8601 UTC.
 */
export const WriteIntentCreated = z.object({
  intentId: z.string().uuid(),
  messageId: z.string().uuid(),
  channelId: z.string(),
  /** Facts in the set. */
  factCount: z.number().int().min(0),
  /** The set's extractedAt (its version). */
  extractedAt: z.string(),
  /** Where the set's FactsExtracted is on atlas.facts: the reconciler retries a store only once its projector passed it. */
  factsPartition: z.number().int(),
  factsOffset: z.number().int(),
  vector: IntentInitialStatus,
  graph: IntentInitialStatus,
  createdAt: z.string(),
});
export type WriteIntentCreated = z.infer<typeof WriteIntentCreated>;

/**
 * Data of `StoreWriteApplied`: a store's projector wrote the set (`written`), found nothing to write for it
 * (`skipped`: no entities), or a newer set of the message replaced it before a retry (`superseded`). `attempt` is 0
 * for the projector's own write and n for the reconciler's n-th retry (retry_count).
 */
export const StoreWriteApplied = z.object({
  intentId: z.string().uuid(),
  store: IntentStoreName,
  messageId: z.string().uuid(),
  channelId: z.string(),
  outcome: z.enum(['written', 'skipped', 'superseded']),
  attempt: z.number().int().min(0),
  appliedAt: z.string(),
});
export type StoreWriteApplied = z.infer<typeof StoreWriteApplied>;

/** Data of `StoreWriteFailed`: a store's write of the set failed (queued for retry), with the error. */
export const StoreWriteFailed = z.object({
  intentId: z.string().uuid(),
  store: IntentStoreName,
  messageId: z.string().uuid(),
  channelId: z.string(),
  error: z.string(),
  attempt: z.number().int().min(0),
  failedAt: z.string(),
});
export type StoreWriteFailed = z.infer<typeof StoreWriteFailed>;

/**
 * Data of `DeadLetterRedriven` (atlas.dead-letters, key: the dead letter's key): an admin re-drove a dead letter; its
 * original event was appended again to `topic` at `partition`/`offset`.
 */
export const DeadLetterRedriven = z.object({
  deadLetterId: z.string().uuid(),
  topic: z.string(),
  partition: z.number().int(),
  offset: z.number().int(),
  redrivenAt: z.string(),
});
export type DeadLetterRedriven = z.infer<typeof DeadLetterRedriven>;

/**
 * Id of a dead letter: UUID v5 of (consumer group, topic, partition, offset) of the event that failed, so a
 * redelivered DeadLettered folds into the same item. Pure.
 */
export const deadLetterId = (d: { group: string; topic: string; partition: number; offset: number }): string =>
  deterministicId('dead-letter', d.group, d.topic, String(d.partition), String(d.offset));
