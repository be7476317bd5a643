import { z } from 'zod';
import { Count, FactType, Id, orNull, Timestamp, Url, Uuid } from './primitives.js';

/*
 * The contradiction desk (issue 27, point 5; docs/contradictions.md): potential contradictions with both sides and
 * their sources, and an admin's resolution. Documented additions.
 */

/** One side of a contradiction: the fact and its source message. */
export const ContradictionSideSchema = z.strictObject({
  memory_id: Uuid,
  memory_text: z.string().min(1),
  fact_type: FactType,
  author_id: Id,
  author_name: z.string(),
  message_ts: Timestamp,
  channel_id: Id,
  source_message_id: Id,
  permalink: Url,
});

/** An admin's resolution: which side stands (`earlier`, `later`, `both`), the note, who and when. */
export const ContradictionResolutionSchema = z.strictObject({
  outcome: z.enum(['earlier', 'later', 'both']),
  note: orNull(z.string()),
  resolved_by: z.string(),
  resolved_at: Timestamp,
});

/** A potential contradiction (GET /api/contradictions items, POST /api/contradictions/{id}/resolve). */
export const ContradictionSchema = z.strictObject({
  id: Uuid,
  channel_id: Id,
  status: z.enum(['open', 'resolved']),
  reason: z.string(),
  detected_at: Timestamp,
  earlier: ContradictionSideSchema,
  later: ContradictionSideSchema,
  resolution: orNull(ContradictionResolutionSchema),
});

/** GET /api/contradictions and GET /api/channels/{channel_id}/contradictions. */
export const ContradictionPageSchema = z.strictObject({
  contradictions: z.array(ContradictionSchema),
  total: Count,
  page: z.number().int().min(1),
  pages: Count,
});
