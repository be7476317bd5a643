import { ERROR_STATUS } from '@atlas/core';
import { z } from 'zod';
import { Count, Id } from './primitives.js';

/**
 * The shared error body of every failure (ARCHITECTURE.md "Errors"; spec "Errors": the body for unknown ids and
 * invalid parameters is not shown): `{error: {code, message, details?}}`, code one of the registry (ERROR_STATUS,
 * whose test keeps it in step with the README error table). `request_id` is optional: the request id travels in the
 * `x-request-id` header and, on a 5xx, in `details.request_id` (docs/http.md "Request ids").
 */
export const ErrorBodySchema = z.strictObject({
  error: z.strictObject({
    code: z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS, ...(keyof typeof ERROR_STATUS)[]]),
    message: z.string().min(1),
    details: z.record(z.string(), z.unknown()).optional(),
    request_id: z.string().min(1).optional(),
  }),
});

/** The HTTP status an error code answers with (ERROR_STATUS), or undefined for a code outside the registry. */
export const statusOfCode = (code: string): number | undefined =>
  (ERROR_STATUS as Record<string, number | undefined>)[code];

/**
 * POST /api/admin/backfill/{type} (spec: response not shown; README "Routes that exist today": `{type, processed,
 * remaining}`).
 */
export const BackfillResultSchema = z.strictObject({
  type: z.enum(['entities', 'embeddings']),
  processed: Count,
  remaining: Count,
});

/**
 * POST /api/admin/reconcile (spec: response not shown; README "Write intents and the reconciler"): what the pass did,
 * with `states` as read when it ended. Only the documented envelope is checked.
 */
export const ReconcileResultSchema = z.looseObject({
  started_at: z.string(),
  finished_at: z.string(),
  duration_ms: Count,
  states: z.strictObject({ pending: Count, done: Count, failed: Count, abandoned: Count }),
});

const IntentStates = z.strictObject({ pending: Count, done: Count, failed: Count, abandoned: Count });
const IntentStoreOutcome = z.strictObject({
  status: z.enum(['pending', 'done', 'failed', 'skipped']).nullable(),
  error: z.string().nullable(),
});

/** A write intent (docs/write-intents.md): a message's fact set and how far each store has applied it. */
export const WriteIntentSchema = z.strictObject({
  intent_id: Id,
  message_id: Id,
  channel_id: Id,
  fact_count: Count,
  extracted_at: z.string().min(1).nullable(),
  facts_partition: Count.nullable(),
  facts_offset: Count.nullable(),
  created_at: z.string().min(1).nullable(),
  vector: IntentStoreOutcome,
  graph: IntentStoreOutcome,
  retry_count: Count,
  state: z.enum(['pending', 'done', 'failed', 'abandoned']),
  last_attempt_at: z.string().min(1).nullable(),
  updated_at: z.string().min(1),
});

/** GET /api/admin/write-intents: a page of intents, the total matching, and the count per state. */
export const WriteIntentPageSchema = z.strictObject({
  intents: z.array(WriteIntentSchema),
  total: Count,
  limit: Count,
  offset: Count,
  states: IntentStates,
});

/** A dead letter (docs/dead-letters.md): an event a projector gave up on, where it is, why, and its re-drive. */
export const DeadLetterSchema = z.strictObject({
  id: Id,
  group: z.string().min(1),
  topic: z.string().min(1),
  partition: Count,
  offset: Count,
  event_type: z.string().min(1),
  key: z.string(),
  error: z.string(),
  error_code: z.string().min(1).nullable(),
  attempts: Count,
  failed_at: z.string().min(1),
  needs_inspection: z.boolean(),
  redrivable: z.boolean(),
  status: z.enum(['pending', 'redriven']),
  redriven_at: z.string().min(1).nullable(),
  redriven_to: z.strictObject({ topic: z.string().min(1), partition: Count, offset: Count }).nullable(),
});

/** GET /api/admin/dead-letters: a page, the total matching, and the counts by status. */
export const DeadLetterPageSchema = z.strictObject({
  dead_letters: z.array(DeadLetterSchema),
  total: Count,
  limit: Count,
  offset: Count,
  counts: z.strictObject({ pending: Count, redriven: Count, needs_inspection: Count }),
});

/** GET /api/admin/dead-letters/{id}: the dead letter with its original event's data (null when not kept). */
export const DeadLetterDetailSchema = DeadLetterSchema.extend({ event_data: z.unknown() });

/**
 * POST /api/admin/dead-letters/{id}/redrive: the item re-driven, with where its original event was appended again
 * (docs/dead-letters.md).
 */
export const DeadLetterRedriveSchema = z.strictObject({
  id: Id,
  status: z.literal('redriven'),
  event_type: z.string().min(1),
  redriven_at: z.string().min(1),
  redriven_to: z.strictObject({ topic: z.string().min(1), partition: Count, offset: Count }),
});

/**
 * POST /api/admin/dead-letters/redrive: how many pending items were re-driven (each as the one-item route answers),
 * those that failed with why, and how many matching items are still pending after the pass.
 */
export const DeadLetterRedriveAllSchema = z.strictObject({
  redriven: Count,
  results: z.array(DeadLetterRedriveSchema),
  failed: z.array(z.strictObject({ id: Id, error: z.string().min(1) })),
  remaining: Count,
});
