import { z } from 'zod';
import { Count, DateOnly, Id, Int, orNull, Timestamp, Url } from './primitives.js';

/*
 * Decisions and action items with their lifecycle (issue 27 point 1; documented addition, docs/decisions.md):
 * GET /api/decisions, GET /api/channels/{channel_id}/decisions, GET /api/decisions/{item_id}.
 */

/** What an item is. */
export const LifecycleKind = z.enum(['decision', 'action_item']);
/** A decision: proposed → decided → superseded | reverted; an action item: open → done | dropped. */
export const LifecycleState = z.enum(['proposed', 'decided', 'superseded', 'reverted', 'open', 'done', 'dropped']);

/** The message that opened or moved an item: ids, link, author and its first 160 characters. */
export const LifecycleEvidenceSchema = z.strictObject({
  message_id: Id,
  platform_message_id: Id,
  permalink: Url,
  author_id: Id,
  author_name: z.string(),
  excerpt: z.string(),
});

/** One state change: from (null for the first state), to, when (message time), the rule, the message. */
export const LifecycleTransitionSchema = z.strictObject({
  from: orNull(LifecycleState),
  to: LifecycleState,
  at: Timestamp,
  rule: z.enum(['opened', 'proposed', 'agreed', 'superseded', 'reverted', 'done', 'dropped']),
  evidence: LifecycleEvidenceSchema,
});

const itemFields = {
  id: Id,
  channel_id: Id,
  kind: LifecycleKind,
  state: LifecycleState,
  title: z.string().min(1),
  owner: orNull(z.string().min(1)),
  due_date: orNull(DateOnly),
  created_at: Timestamp,
  updated_at: Timestamp,
  superseded_by: orNull(Id),
  thread_ts: orNull(z.string().min(1)),
  source: LifecycleEvidenceSchema,
  /** The last transition's message (the opening message while nothing moved the item). */
  moved_by: LifecycleEvidenceSchema,
};

/** List form: the item and the message that last moved it. */
export const LifecycleItemSchema = z.strictObject(itemFields);
/** Detail form: the list form and the full history, oldest first. */
export const LifecycleItemDetailSchema = z.strictObject({
  ...itemFields,
  history: z.array(LifecycleTransitionSchema).min(1),
});

/** A page of items, newest change first: `{items, total, page, pages}`. */
export const LifecyclePageSchema = z.strictObject({
  items: z.array(LifecycleItemSchema),
  total: Count,
  page: Int.min(1),
  pages: Count,
});
