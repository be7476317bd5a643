import { z } from 'zod';
import { IMPORT_STAGES } from '../import-jobs.js';
import { ErrorBodySchema } from './errors.js';
import { Count, NonNegative, Timestamp, Uuid } from './primitives.js';

/** What a completed import added (docs/import.md "Importing from the browser"): what `atlas import` prints. */
export const ImportResultSchema = z.strictObject({
  format: z.enum(['platform_a_export', 'platform_b_export']),
  channels: Count,
  messages: Count,
  new_or_changed: Count,
  unchanged: Count,
  skipped: z.record(z.string(), Count),
  facts: Count,
  dead_lettered: Count,
  seconds: NonNegative,
});

/**
 * An import job (POST /api/imports 202, GET /api/imports/{import_id}): its status, the uploaded file, the platform
 * once validated, when it started and ended, its progress (the stage, the unit it counts, done of total), and either
 * its result (completed) or the shared error body's `error` (failed).
 */
export const ImportJobSchema = z.strictObject({
  import_id: Uuid,
  status: z.enum(['validating', 'importing', 'projecting', 'completed', 'failed']),
  file_name: z.string().min(1),
  size_bytes: Count,
  platform: z.enum(['platform_a', 'platform_b']).nullable(),
  started_at: Timestamp,
  completed_at: Timestamp.nullable(),
  progress: z.strictObject({
    stage: z.enum(IMPORT_STAGES),
    unit: z.enum(['files', 'messages']),
    done: Count,
    total: Count,
  }),
  result: ImportResultSchema.nullable(),
  error: ErrorBodySchema.shape.error.omit({ request_id: true }).nullable(),
});

/** GET /api/imports: the recent import jobs of the process, newest first. */
export const ImportJobListSchema = z.strictObject({ imports: z.array(ImportJobSchema) });
