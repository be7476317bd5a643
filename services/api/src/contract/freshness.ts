import { z } from 'zod';
import { Count, Id, orNull, Timestamp } from './primitives.js';

/*
 * Freshness marks (issue 27 point 3; docs/ask.md "Freshness"): a documented addition to the ask `done` event, the
 * search responses and the wiki page responses. Spec clients ignore it.
 */

/** One channel a response draws on: its newest stored message time and its messages not yet read through. */
export const ChannelFreshnessSchema = z.strictObject({
  channel_id: Id,
  newest_message_at: orNull(Timestamp),
  pending_messages: Count,
});

/**
 * `current_to` the newest `newest_message_at` of the channels (null when none holds a message), `pending_messages`
 * their sum, `behind` exactly when it is above 0, `summary` the wording in UTC ("current to 14:02 UTC, 3 messages
 * still being read").
 */
export const FreshnessSchema = z
  .strictObject({
    current_to: orNull(Timestamp),
    pending_messages: Count,
    behind: z.boolean(),
    channels: z.array(ChannelFreshnessSchema),
    summary: z.string().min(1),
  })
  .refine((f) => f.behind === f.pending_messages > 0, 'behind is true exactly when messages are pending')
  .refine(
    (f) => f.pending_messages === f.channels.reduce((n, c) => n + c.pending_messages, 0),
    'pending_messages is the sum over channels',
  );
