import { z } from 'zod';

/** Spec "Conventions": the two platforms as field values. */
export const Platform = z.enum(['platform_a', 'platform_b']);
export type Platform = z.infer<typeof Platform>;

/**
 * platform_a message subtypes that are system events, not conversation: membership, channel settings,
 * pins, integrations, deleted placeholders, edit/delete records. The importer skips them and the
 * fact extractor ignores them (README "Which messages count").
 */
export const PLATFORM_A_SYSTEM_SUBTYPES: ReadonlySet<string> = new Set([
  'channel_join',
  'channel_leave',
  'channel_topic',
  'channel_purpose',
  'channel_name',
  'channel_archive',
  'channel_unarchive',
  'channel_convert_to_private',
  'group_join',
  'group_leave',
  'group_topic',
  'group_purpose',
  'group_name',
  'group_archive',
  'group_unarchive',
  'pinned_item',
  'unpinned_item',
  'bot_add',
  'bot_remove',
  'tombstone',
  'message_changed',
  'message_deleted',
  'message_replied',
  'reminder_add',
]);

/** Spec "Memory": fact types, importance levels. */
export const FactType = z.enum(['decision', 'opinion', 'observation', 'action_item', 'question']);
export type FactType = z.infer<typeof FactType>;
export const Importance = z.enum(['low', 'medium', 'high']);
export type Importance = z.infer<typeof Importance>;

/** Spec "Channel message": one reaction on a message. */
export const Reaction = z.object({ emoji: z.string(), count: z.number().int().min(0), users: z.array(z.string()) });
export type Reaction = z.infer<typeof Reaction>;

/**
 * A file or link attached to a message (the spec leaves the element shape open).
 * media_type follows the ask citation's values: `link`, `pdf`, `image`, else null.
 */
export const Attachment = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string().nullable(),
  mimeType: z.string().nullable(),
  size: z.number().int().nullable(),
  mediaType: z.enum(['link', 'pdf', 'image']).nullable(),
});
export type Attachment = z.infer<typeof Attachment>;

export const Person = z.object({ id: z.string(), name: z.string() });
export type Person = z.infer<typeof Person>;

/** Data of `ChannelDiscovered`: a channel seen in an export or on a platform (upsert semantics). */
export const ChannelDiscovered = z.object({
  platform: Platform,
  workspaceId: z.string(),
  workspaceName: z.string(),
  channelId: z.string(),
  name: z.string(),
  isPrivate: z.boolean(),
  memberCount: z.number().int().min(0),
  topic: z.string().nullable(),
  createdAt: z.string().nullable(),
  source: z.enum(['import', 'sync', 'event']),
});
export type ChannelDiscovered = z.infer<typeof ChannelDiscovered>;

/**
 * Data of `MessageIngested`: one platform message mapped to the spec's Channel message.
 * - messageId: UUID v5 of (platform, channelId, platformMessageId) (see ids.ts).
 * - platformMessageId: Slack `ts` or Discord snowflake; it is the spec's message `id`.
 * - timestamp: ISO 8601 UTC (world time of the message).
 * - threadTs: Slack thread_ts of the thread root; for platform_b replies, the id of the reply chain's root.
 * - replyToId: platform_b `reference.messageId` (the message directly replied to), else null.
 * - mentions: users mentioned in `text`, resolved to names, so preprocessing can render them.
 * - contentHash: sha256 of the fields a reader sees (text, edits, reactions, attachments); re-imports compare it.
 */
export const MessageIngested = z.object({
  messageId: z.string().uuid(),
  platform: Platform,
  workspaceId: z.string(),
  channelId: z.string(),
  channelName: z.string(),
  platformMessageId: z.string(),
  text: z.string(),
  author: z.object({ id: z.string(), name: z.string(), isBot: z.boolean() }),
  timestamp: z.string(),
  threadTs: z.string().nullable(),
  replyToId: z.string().nullable(),
  subtype: z.string().nullable(),
  reactions: z.array(Reaction),
  attachments: z.array(Attachment),
  mentions: z.array(Person),
  editedAt: z.string().nullable(),
  permalink: z.string(),
  contentHash: z.string(),
  source: z.enum(['import', 'sync', 'event']),
});
export type MessageIngested = z.infer<typeof MessageIngested>;

/** Data of `MessageDeleted`. */
export const MessageDeleted = z.object({
  messageId: z.string().uuid(),
  platform: Platform,
  channelId: z.string(),
  platformMessageId: z.string(),
  deletedAt: z.string(),
});
export type MessageDeleted = z.infer<typeof MessageDeleted>;

/**
 * One atomic fact (spec "Memory (atomic fact)"), as carried by `FactsExtracted`.
 * qualityScore in [0, 1] by the spec's bands: 0.8-1.0 high, 0.5-0.8 medium, below 0.5 low.
 */
export const Fact = z.object({
  factId: z.string().uuid(),
  memoryText: z.string(),
  factType: FactType,
  importance: Importance,
  qualityScore: z.number().min(0).max(1),
  topicTags: z.array(z.string()),
  entityTags: z.array(z.string()),
  actionTags: z.array(z.string()),
  authorId: z.string(),
  authorName: z.string(),
  messageTs: z.string(),
  threadTs: z.string().nullable(),
  permalink: z.string(),
  threadContextSummary: z.string(),
  validAt: z.string(),
  sourceLang: z.string(),
});
export type Fact = z.infer<typeof Fact>;

/**
 * Data of `FactsExtracted`: the complete fact set of one message. It replaces any earlier set of
 * the same message (an empty `facts` retracts them), so edits and re-extraction stay idempotent.
 */
export const FactsExtracted = z.object({
  messageId: z.string().uuid(),
  platform: Platform,
  channelId: z.string(),
  sourceMessageId: z.string(),
  extractor: z.string(),
  extractedAt: z.string(),
  facts: z.array(Fact),
  /**
   * The whole source message as the pipeline read it (preprocessed, at most 1,000 characters): the text
   * each of its facts stands in. Search indexes it beside the fact ("contextual retrieval"). Empty on v1 events.
   */
  sourceText: z.string().default(''),
  /**
   * The conversation this message continues, `Author: text` (at most 400 characters): the thread root or
   * message replied to, else the channel's previous top-level message when it came within
   * CONTEXT_WINDOW_MS (1 hour) before. Empty when there is none, and on v1 events.
   */
  contextText: z.string().default(''),
});
export type FactsExtracted = z.infer<typeof FactsExtracted>;

/** Data of `DeadLettered`: an event a projector gave up on (spec: dead-letter queue, manual inspection). */
export const DeadLettered = z.object({
  group: z.string(),
  topic: z.string(),
  partition: z.number().int(),
  offset: z.number().int(),
  eventType: z.string(),
  key: z.string(),
  error: z.string(),
  attempts: z.number().int(),
  failedAt: z.string(),
});
export type DeadLettered = z.infer<typeof DeadLettered>;
