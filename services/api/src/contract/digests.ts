import { z } from 'zod';
import { Count, Timestamp } from './primitives.js';

/** One line of a digest about a decision or action item (packages/query digest.ts DigestEntry). */
export const DigestEntrySchema = z.strictObject({
  item_id: z.string().min(1),
  kind: z.enum(['decision', 'action_item']),
  title: z.string(),
  state: z.string().min(1),
  previous_state: z.string().nullable(),
  owner: z.string().nullable(),
  due_date: z.string().nullable(),
  at: Timestamp,
  citation: Count,
});

/** A numbered source of a digest. */
export const DigestCitationSchema = z.strictObject({
  id: Count,
  message_id: z.string().min(1),
  permalink: z.string(),
  author: z.string(),
  timestamp: Timestamp,
  excerpt: z.string(),
});

/**
 * A channel's digest (issue 27 point 4; docs/digests.md): the period, decisions made and changed, action items opened,
 * closed, due and overdue, new and growing topics, the numbered citations and the Markdown text the bot posts.
 */
export const DigestSchema = z.strictObject({
  channel_id: z.string().min(1),
  channel_name: z.string().nullable(),
  period: z.strictObject({ start: Timestamp, end: Timestamp, days: Count }),
  decisions: z.strictObject({ made: z.array(DigestEntrySchema), changed: z.array(DigestEntrySchema) }),
  action_items: z.strictObject({
    opened: z.array(DigestEntrySchema),
    closed: z.array(DigestEntrySchema),
    due: z.array(DigestEntrySchema),
    overdue: z.array(DigestEntrySchema),
  }),
  topics: z.strictObject({
    new: z.array(z.strictObject({ topic: z.string(), fact_count: Count })),
    growing: z.array(z.strictObject({ topic: z.string(), fact_count: Count, previous_count: Count })),
  }),
  citations: z.array(DigestCitationSchema),
  has_activity: z.boolean(),
  text: z.string(),
});

/** GET /api/digests: the digests of the caller's visible channels for one period (quiet channels left out). */
export const DigestListSchema = z.strictObject({
  period: z.strictObject({ start: Timestamp, end: Timestamp, days: Count }),
  digests: z.array(DigestSchema),
  quiet_channels: Count,
});
