import { z } from 'zod';
import { Count, Id, orNull, Platform, Timestamp } from './primitives.js';

/*
 * Channels (spec "Resources and their fields → Channel", "Channel message"; "Endpoints → Channels").
 */

const channelCore = {
  id: Id,
  name: z.string().min(1),
  platform: Platform,
  connected: z.boolean(),
  last_sync: orNull(Timestamp),
  message_count: Count,
  fact_count: Count,
};

/** Spec "Channel", list form (GET /api/channels): the seven list fields; the detail-only fields are absent. */
export const ChannelSchema = z.strictObject(channelCore);

/** Spec "Channel", detail form (GET /api/channels/{channel_id}): adds created_at, entity, topic and wiki page counts, settings. */
export const ChannelDetailSchema = z.strictObject({
  ...channelCore,
  created_at: Timestamp,
  entity_count: Count,
  topic_count: Count,
  wiki_page_count: Count,
  settings: z.strictObject({ sync_enabled: z.boolean(), wiki_enabled: z.boolean(), graph_enabled: z.boolean() }),
});

/** Spec "Channel message" reactions: emoji, count (int), users (string[]). */
export const ReactionSchema = z.strictObject({
  emoji: z.string().min(1),
  count: Count.min(1),
  users: z.array(z.string()),
});

/** Spec "Channel message" (attachments: element shape not shown, so any object). */
export const ChannelMessageSchema = z.strictObject({
  id: Id,
  text: z.string(),
  author: z.strictObject({ id: Id, name: z.string() }),
  timestamp: Timestamp,
  thread_ts: orNull(z.string().min(1)),
  reactions: z.array(ReactionSchema),
  attachments: z.array(z.looseObject({})),
  has_media: z.boolean(),
});

/** Spec "GET /api/channels/{channel_id}/messages": `{messages, has_more, next_cursor}`; next_cursor null at the end. */
export const ChannelMessagesSchema = z.strictObject({
  messages: z.array(ChannelMessageSchema),
  has_more: z.boolean(),
  next_cursor: orNull(z.string().min(1)),
});

/**
 * Spec "Channel settings" (GET and PUT /api/channels/{channel_id}/settings, responses not shown; README "Edits,
 * deletes, retention": the full settings). retention_days null keeps messages forever.
 */
export const ChannelSettingsSchema = z.strictObject({
  sync_enabled: z.boolean(),
  wiki_enabled: z.boolean(),
  graph_enabled: z.boolean(),
  fact_extraction_enabled: z.boolean(),
  retention_days: orNull(Count.min(1)),
  digest_enabled: z.boolean(), // documented addition (docs/digests.md)
  digest_days: Count.min(1).max(31), // documented addition
});

/** Spec "DELETE /api/channels/{channel_id}/data": deleted_facts, deleted_entities, deleted_wiki_pages (deleted_messages: documented addition). */
export const ChannelDataDeletedSchema = z.strictObject({
  deleted_facts: Count,
  deleted_entities: Count,
  deleted_wiki_pages: Count,
  deleted_messages: Count, // documented addition
});
