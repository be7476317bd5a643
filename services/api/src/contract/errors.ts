import { ERROR_STATUS } from '@atlas/core';
import { z } from 'zod';
import { Count } from './primitives.js';

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
