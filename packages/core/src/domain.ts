import { z } from 'zod';

/** Spec "Conventions": the two platforms as field values. */
export const Platform = z.enum(['platform_a', 'platform_b']);
export type Platform = z.infer<typeof Platform>;

/**
 * platform_a message subtypes that are system events, not conversation: membership, channel settings,
 * pins, integrations, deleted placeholders, edit/delete records. The importer skips them and the
 * fact extractor ignores them (docs/ingestion.md "Which messages count").
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
   * each of its facts stands in. Search indexes it beside the fact ("contextual retrieval"). '' when absent.
   */
  sourceText: z.string().default(''),
  /**
   * The conversation this message continues, `Author: text` (at most 400 characters): the thread root or
   * message replied to, else the channel's previous top-level message when it came within
   * CONTEXT_WINDOW_MS (1 hour) before. '' when there is none or the event carries none.
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
  /**
   * The original event's data as JSON text (re-driven by admins); null or absent when the event did not keep it
   * (such an item can be listed but not re-driven).
   */
  eventData: z.string().nullable().optional(),
  /**
   * The error's code when it was an AtlasError (e.g. PROVIDER_UNAVAILABLE: the LLM fact extractor found no provider),
   * else null; absent when the event did not record it. The LLM recovery re-drive finds its items by it.
   */
  errorCode: z.string().nullable().optional(),
});
export type DeadLettered = z.infer<typeof DeadLettered>;

/** Spec "Graph entity": entity types. */
export const EntityType = z.enum(['Person', 'Decision', 'Project', 'Technology', 'Team', 'Meeting']);
export type EntityType = z.infer<typeof EntityType>;

/**
 * Spec "Relationship": types with their direction. DECIDED_BY Person→Decision, PARTICIPATED_IN Person→Meeting,
 * WORKS_ON Person→Project, USES Project→Technology, MEMBER_OF Person→Team, RELATED_TO any→any.
 */
export const RelationshipType = z.enum([
  'DECIDED_BY',
  'PARTICIPATED_IN',
  'WORKS_ON',
  'USES',
  'MEMBER_OF',
  'RELATED_TO',
]);
export type RelationshipType = z.infer<typeof RelationshipType>;

/**
 * One entity as one message mentions it (a mention). The graph store folds a channel's mentions of the same
 * (type, normalised name) into one entity: entityId = entityUuid(channelId, type, name).
 * - confidence in [0, 1]: how sure this mention is an entity of this type. The entity's confidence is the
 *   noisy-or of its mentions, and its status is `pending` while that stays below ENTITY_THRESHOLD.
 * - properties: string values; a Decision carries decided_by, date (YYYY-MM-DD), status and context.
 */
export const ExtractedEntity = z.object({
  entityId: z.string().uuid(),
  type: EntityType,
  name: z.string().min(1),
  aliases: z.array(z.string()),
  confidence: z.number().min(0).max(1),
  factIds: z.array(z.string().uuid()),
  properties: z.record(z.string(), z.string()),
});
export type ExtractedEntity = z.infer<typeof ExtractedEntity>;

/**
 * One relationship as one message states it (evidence). Both ends are entities of the same event.
 * confidence by the spec's bands: 0.8-1.0 explicit statement, 0.5-0.8 strong implication, below 0.5 weak.
 * validFrom: YYYY-MM-DD (the message's date unless the text says otherwise); validUntil: YYYY-MM-DD or null.
 */
export const ExtractedRelationship = z.object({
  type: RelationshipType,
  sourceId: z.string().uuid(),
  targetId: z.string().uuid(),
  confidence: z.number().min(0).max(1),
  validFrom: z.string(),
  validUntil: z.string().nullable(),
  context: z.string(),
  sourceFactId: z.string().nullable(),
});
export type ExtractedRelationship = z.infer<typeof ExtractedRelationship>;

/**
 * A later fact that replaces (certain) or may contradict (not certain) an earlier fact of the same channel:
 * a new decision on the same topic, a changed owner. The earlier fact gets superseded_by and invalid_at
 * (certain) or potential_contradiction (not certain); nothing is deleted (spec "Memory validity").
 * When both facts are decisions, the earlier Decision entity becomes `superseded` by the later one.
 */
export const Supersession = z.object({
  factId: z.string().uuid(),
  supersededBy: z.string().uuid(),
  oldEntityId: z.string().uuid().nullable(),
  newEntityId: z.string().uuid().nullable(),
  invalidAt: z.string(),
  certain: z.boolean(),
  reason: z.string(),
});
export type Supersession = z.infer<typeof Supersession>;

/**
 * Data of `EntitiesExtracted` (topic atlas.graph): the complete graph contribution of one message (its
 * entities, relationships and supersessions). Like FactsExtracted it replaces any earlier contribution of
 * the same message, so re-extraction and edits stay idempotent; an empty set retracts it.
 */
export const EntitiesExtracted = z.object({
  messageId: z.string().uuid(),
  platform: Platform,
  channelId: z.string(),
  sourceMessageId: z.string(),
  /** ISO 8601 UTC world time of the message. */
  messageTs: z.string(),
  extractor: z.string(),
  extractedAt: z.string(),
  entities: z.array(ExtractedEntity),
  relationships: z.array(ExtractedRelationship),
  supersessions: z.array(Supersession),
  /**
   * The write intent of the fact set this came from (writeIntentId); null for a retraction, absent when not recorded.
   */
  intentId: z.string().nullable().optional(),
});
export type EntitiesExtracted = z.infer<typeof EntitiesExtracted>;

/**
 * Spec "Channel settings" (update body of PUT /api/channels/{channel_id}/settings), as Atlas keeps them. Defaults:
 * every flag on, retention_days null (keep forever). retention_days: whole days; messages older than that (by message
 * time) are deleted by the retention pass. Documented additions (issue 27 point 4, docs/digests.md): digest_enabled
 * (default false: the channel opts in to a digest posted by the bot) and digest_days (1 to 31, default 7: its period).
 */
export const ChannelSettings = z.object({
  sync_enabled: z.boolean(),
  wiki_enabled: z.boolean(),
  graph_enabled: z.boolean(),
  fact_extraction_enabled: z.boolean(),
  retention_days: z.number().int().min(1).nullable(),
  digest_enabled: z.boolean(),
  digest_days: z.number().int().min(1).max(31),
});
export type ChannelSettings = z.infer<typeof ChannelSettings>;

/** The settings of a channel nobody has changed. */
export const DEFAULT_CHANNEL_SETTINGS: ChannelSettings = Object.freeze({
  sync_enabled: true,
  wiki_enabled: true,
  graph_enabled: true,
  fact_extraction_enabled: true,
  retention_days: null,
  digest_enabled: false,
  digest_days: 7,
});

/**
 * Data of `ChannelSettingsUpdated` (a command appended by PUT /api/channels/{channel_id}/settings to atlas.messages;
 * the facts projector forwards it to atlas.facts for the entities projector): the channel's complete settings after
 * the update (a later event replaces an earlier one). Projectors honour them for the events that follow, so a replay
 * ends where the live run did: fact_extraction_enabled=false → empty fact sets; graph_enabled=false → no entities.
 */
export const ChannelSettingsUpdated = z.object({
  channelId: z.string(),
  syncEnabled: z.boolean(),
  wikiEnabled: z.boolean(),
  graphEnabled: z.boolean(),
  factExtractionEnabled: z.boolean(),
  /** Whole days, or null: keep forever. */
  retentionDays: z.number().int().min(1).nullable(),
  /** The bot posts the channel's digest (docs/digests.md); absent in events written before: false. */
  digestEnabled: z.boolean().optional(),
  /** The digest's period in days, 1 to 31; absent in events written before: 7. */
  digestDays: z.number().int().min(1).max(31).optional(),
  /** ISO 8601 UTC, system time of the request. */
  updatedAt: z.string(),
});
export type ChannelSettingsUpdated = z.infer<typeof ChannelSettingsUpdated>;

/**
 * Data of `ChannelDataDeleted` (a command appended by DELETE /api/channels/{channel_id}/data to atlas.messages,
 * forwarded in order by the facts projector to atlas.facts and by the entities projector to atlas.graph): every
 * projector deletes the channel's rows of its store that come from the topic it read the event on, so nothing
 * derived from earlier events survives and a replay ends in the same state. The channel row and its settings stay.
 */
export const ChannelDataDeleted = z.object({
  channelId: z.string(),
  /** ISO 8601 UTC, system time of the request. */
  requestedAt: z.string(),
});
export type ChannelDataDeleted = z.infer<typeof ChannelDataDeleted>;

/** ChannelSettingsUpdated data → the settings shape (snake case, as the API answers). Pure. */
export const settingsOfEvent = (e: ChannelSettingsUpdated): ChannelSettings => ({
  sync_enabled: e.syncEnabled,
  wiki_enabled: e.wikiEnabled,
  graph_enabled: e.graphEnabled,
  fact_extraction_enabled: e.factExtractionEnabled,
  retention_days: e.retentionDays,
  digest_enabled: e.digestEnabled ?? DEFAULT_CHANNEL_SETTINGS.digest_enabled,
  digest_days: e.digestDays ?? DEFAULT_CHANNEL_SETTINGS.digest_days,
});

/**
 * Data of `DigestPosted` (atlas.messages, key channel_id; issue 27 point 4, docs/digests.md): the bot posted a
 * channel's digest of [periodStart, periodEnd) to the channel on its platform, as message `platformMessageId`, at
 * `postedAt` (all times ISO 8601 UTC). The documents projector keeps the newest per channel: the next post is due
 * `digest_days` after periodEnd, and a restart does not post the same period twice.
 */
export const DigestPosted = z.object({
  channelId: z.string().min(1),
  platform: z.enum(['platform_a', 'platform_b']),
  connectionId: z.string(),
  periodStart: z.string(),
  periodEnd: z.string(),
  days: z.number().int().min(1).max(31),
  platformMessageId: z.string(),
  citations: z.number().int().min(0),
  postedAt: z.string(),
});
export type DigestPosted = z.infer<typeof DigestPosted>;
