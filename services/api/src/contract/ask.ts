import { z } from 'zod';
import { FreshnessSchema } from './freshness.js';
import {
  AskMediaType,
  CitationId,
  Count,
  Id,
  Int,
  orNull,
  Role,
  StreamErrorCode,
  Timestamp,
  Url,
} from './primitives.js';

/*
 * Ask (spec "Ask session and messages", "Ask citation"; "Endpoints → Ask"; "Events → Ask stream").
 */

/**
 * Spec "Ask citation": id `[n]`, author, channel, timestamp, text_excerpt (first 100 characters of the source),
 * permalink (URL), source_message_id, media_type (`link`, `pdf`, `image` or null), media_name (or null).
 */
export const AskCitationSchema = z.strictObject({
  id: CitationId,
  author: z.string(),
  channel: z.string().min(1),
  timestamp: Timestamp,
  text_excerpt: z.string().refine((t) => [...t].length <= 100, 'at most 100 characters'),
  permalink: Url,
  source_message_id: Id,
  media_type: orNull(AskMediaType),
  media_name: orNull(z.string().min(1)),
});

/** Spec "Ask session and messages" message: message_id, role, content, citations, timestamp. */
export const AskMessageSchema = z.strictObject({
  message_id: Id,
  role: Role,
  content: z.string(),
  citations: z.array(AskCitationSchema),
  timestamp: Timestamp,
});

/**
 * Spec session summary: session_id, created_at, message_count, last_activity; plus `title`, the first question (at
 * most 120 characters, null when none is stored), a documented addition (docs/ask.md "Sessions").
 */
export const AskSessionSummarySchema = z.strictObject({
  session_id: Id,
  created_at: Timestamp,
  message_count: Count,
  last_activity: Timestamp,
  title: z.string().max(120).nullable(),
});

/** Spec session detail: session_id, created_at, messages. */
export const AskSessionDetailSchema = z.strictObject({
  session_id: Id,
  created_at: Timestamp,
  messages: z.array(AskMessageSchema),
});

/**
 * POST /api/ask/feedback (spec: response not shown; README "Ask": `{status: recorded, session_id, message_id, rating,
 * comment, created_at, updated_at}`).
 */
export const AskFeedbackRecordedSchema = z.strictObject({
  status: z.literal('recorded'),
  session_id: Id,
  message_id: Id,
  rating: z.enum(['up', 'down']),
  comment: orNull(z.string()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

/**
 * GET /api/channels/{channel_id}/ask/history (spec: response not shown; README "Ask": `{channel_id, messages:
 * [{session_id, message_id, role, content, citations, timestamp}], has_more}`).
 */
export const AskHistorySchema = z.strictObject({
  channel_id: Id,
  messages: z.array(z.strictObject({ ...AskMessageSchema.shape, session_id: Id })),
  has_more: z.boolean(),
});

/** Spec "Events → Ask stream" `token`: content, message_id, is_complete (may be omitted). */
export const AskTokenEventSchema = z.strictObject({
  type: z.literal('token'),
  content: z.string(),
  message_id: Id,
  is_complete: z.boolean().optional(),
});

/** Spec "Events → Ask stream" `citation`: the ask citation object. */
export const AskCitationEventSchema = z.strictObject({ type: z.literal('citation'), citation: AskCitationSchema });

/** Spec "Events → Ask stream" `done`: message_id, session_id, tokens_used, citations_count, duration_ms (may be omitted). */
export const AskDoneEventSchema = z.strictObject({
  type: z.literal('done'),
  message_id: Id,
  session_id: Id,
  tokens_used: Count,
  citations_count: Count,
  duration_ms: Count.optional(),
  // Documented addition (docs/ask.md "Freshness", issue 27 point 3): how current the answer is.
  freshness: FreshnessSchema.optional(),
});

/** Spec "Events → Ask stream" `error`: error, code (may be omitted), retry_after (int seconds, on rate-limit errors). */
export const AskErrorEventSchema = z
  .strictObject({
    type: z.literal('error'),
    error: z.string().min(1),
    code: StreamErrorCode.optional(),
    retry_after: Int.min(0).optional(),
    // Documented addition (docs/http.md "Errors"): what the JSON body's details would carry (request_id, channel_id).
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .refine(
    (e) => (e.code === 'RATE_LIMIT_EXCEEDED') === (e.retry_after !== undefined),
    'retry_after is present exactly on rate-limit errors',
  );

/** One event of the ask stream (spec "Events → Ask stream"): token, citation, done or error. */
export const AskStreamEventSchema = z.discriminatedUnion('type', [
  AskTokenEventSchema,
  AskCitationEventSchema,
  AskDoneEventSchema,
  AskErrorEventSchema,
]);
