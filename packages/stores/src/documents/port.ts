import type {
  ChannelDiscovered,
  ChannelSettings,
  ContradictionResolved,
  DigestPosted,
  EntitiesExtracted,
  Fact,
  FactsExtracted,
  MessageIngested,
  Platform,
  Reaction,
} from '@atlas/core';
import type { ContradictionQuery, ContradictionView } from './contradictions.js';

export type * from './contradictions.js';

/**
 * Spec "Channel" (list form) as the document store knows it. Timestamps are ISO 8601 UTC strings. `connected` is not
 * here: it is derived from the connection store at read time (services/api/src/routes/channels.ts).
 */
export interface ChannelView {
  id: string;
  name: string;
  platform: string;
  last_sync: string | null;
  message_count: number;
  fact_count: number;
}

/** Spec "Channel" (detail form) as the document store knows it; wiki_page_count comes from the wiki store. */
export interface ChannelDetailView extends ChannelView {
  created_at: string;
  entity_count: number;
  topic_count: number;
  settings: { sync_enabled: boolean; wiki_enabled: boolean; graph_enabled: boolean };
}

/** Spec "Channel message". */
export interface MessageView {
  id: string;
  text: string;
  author: { id: string; name: string };
  timestamp: string;
  thread_ts: string | null;
  reactions: Reaction[];
  attachments: {
    id: string;
    name: string;
    url: string | null;
    mime_type: string | null;
    size: number | null;
    media_type: string | null;
  }[];
  has_media: boolean;
}

/** Spec "Memory (atomic fact)", list form. */
export interface MemoryListView {
  id: string;
  memory_text: string;
  quality_score: number;
  tier: string;
  channel_id: string;
  author_name: string;
  message_ts: string;
  topic_tags: string[];
  entity_tags: string[];
  importance: string;
  fact_type: string;
  source_message_id: string;
  permalink: string;
}

/** Spec "Memory (atomic fact)", detail form (the list form without permalink, plus the detail fields). */
export interface MemoryDetailView extends Omit<MemoryListView, 'permalink'> {
  /**
   * Always null from this store (the `memories.cluster_id` column is not written: clusters are the wiki's); the API
   * overlays the wiki's current assignment (WikiStore.clusterIdsOf, services/api/src/routes/memory-clusters.ts).
   */
  cluster_id: string | null;
  platform: string;
  author_id: string;
  thread_ts: string | null;
  action_tags: string[];
  graph_entity_ids: string[];
  thread_context_summary: string;
  valid_at: string;
  invalid_at: string | null;
  superseded_by: string | null;
  potential_contradiction: boolean;
  source_lang: string;
}

/** Filters of GET /api/memories (spec "Memories"); since/until are ISO timestamps on message_ts. */
export interface MemoryQuery {
  channelId: string;
  page: number;
  limit: number;
  topic?: string | undefined;
  entity?: string | undefined;
  importance?: string | undefined;
  factType?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  /** As of this ISO 8601 UTC instant (issue 27 point 2): only facts whose message time is at or before it. */
  asOf?: string | undefined;
}

/**
 * Reads as of an instant (issue 27 point 2, "As of a date"): `asOf` an ISO 8601 UTC timestamp. Only facts whose source
 * message time is at or before it exist, and their validity is as it stood then: a certain supersession counts only
 * when its invalid_at (the superseding message's time) is at or before `asOf`, and potential_contradiction only from
 * flags raised by messages at or before it. Without `asOf`: now.
 */
export interface AsOfRead {
  asOf?: string | undefined;
}

/**
 * What one copy of ChannelDataDeleted removes (each topic's copy the rows that topic's events wrote): `messages`
 * (atlas.messages), `facts` (memories, atlas.facts), `graph` (entity links and supersessions, atlas.graph).
 */
export type ChannelDataPart = 'messages' | 'facts' | 'graph';

/** One topic tag of DocumentStore.topicWindow. */
export interface TopicWindowRow {
  tag: string;
  count: number;
  previous: number;
  firstSeen: string;
}

/** A stored message past a channel's retention (DocumentStore.messagesBefore). */
export interface ExpiredMessage {
  messageId: string;
  platformMessageId: string;
  platform: Platform;
  /** ISO 8601 UTC message time. */
  timestamp: string;
}

export interface MessagePage {
  messages: MessageView[];
  has_more: boolean;
  /**
   * Where the next page starts (microsecond ISO timestamp), or null at the end. Pages are newest first;
   * with `before` (or no cursor) pass it as `before`; with only `after` it is the newest message of the
   * page: pass it as `after` to page forward.
   */
  next_cursor: string | null;
}

/**
 * The document store: channels, messages and memories (facts), written only by the documents
 * projector and read by the query service. Writes are idempotent upserts keyed by platform ids
 * and fact UUIDs. Errors: AtlasError STORE_UNAVAILABLE (retriable) when the database is down.
 */
export interface DocumentStore {
  /** Deletes every channel, message and memory (before a replay rebuilds them). */
  truncate(): Promise<void>;
  upsertChannel(channel: ChannelDiscovered, syncedAt: Date): Promise<void>;
  /**
   * Upserts messages (by channel id and platform message id); the stored row always reflects the latest event. The
   * texts an edited message had (an event with `editedAt`) are kept, each from the time it was written, for
   * listMessages as of a date.
   */
  upsertMessages(messages: readonly MessageIngested[]): Promise<void>;
  /**
   * Hides a message (MessageDeleted): listMessages and getMessages leave it out and it no longer counts; its text,
   * reactions and attachments are cleared, and the texts of its edits removed (the row keeps ids, author, time and
   * content hash). A later MessageIngested of the same message brings it back.
   */
  markMessageDeleted(channelId: string, platformMessageId: string, deletedAt: string): Promise<void>;
  /** Replaces the fact set of each message: facts not in the new set are deleted, the rest upserted. */
  replaceFacts(sets: readonly FactsExtracted[]): Promise<void>;
  /**
   * Replaces each message's graph links (EntitiesExtracted): which entities each of its facts names (memory
   * detail graph_entity_ids) and which earlier facts it supersedes (certain: superseded_by and invalid_at of
   * the newest such supersession) or may contradict (potential_contradiction). Order-independent of
   * replaceFacts: links are joined on read. Never deletes a fact (spec "Memory validity").
   */
  replaceGraphLinks(sets: readonly EntitiesExtracted[]): Promise<void>;

  /**
   * Records admins' resolutions of potential contradictions (ContradictionResolved; issue 27, point 5): the first
   * resolution of a contradiction id wins, so a redelivery or a replay writes the same rows. Joined on read like the
   * supersessions: the earlier fact of a `later` resolution reads superseded_by and invalid_at as if superseded with
   * certainty; `earlier` and `both` clear its potential_contradiction. `skipped`: resolutions whose id does not match
   * their fact pair.
   */
  applyContradictionResolutions(
    resolutions: readonly ContradictionResolved[],
  ): Promise<{ written: number; skipped: number }>;
  /** Potential contradictions (see ContradictionView), newest first, with their resolutions; `total` counts all. */
  listContradictions(q: ContradictionQuery): Promise<{ rows: ContradictionView[]; total: number }>;
  /** One potential contradiction by id (contradictionId of its pair); null when unknown. */
  getContradiction(id: string): Promise<ContradictionView | null>;
  /**
   * Deletes one part of a channel's data (ChannelDataDeleted, see ChannelDataPart); the channel row and its settings
   * stay. Returns how many rows went (messages, memories, or links plus supersessions). Idempotent.
   */
  deleteChannelData(channelId: string, part: ChannelDataPart): Promise<number>;
  /** Stores a channel's complete settings (ChannelSettingsUpdated); an unknown channel is left alone (false). */
  applyChannelSettings(channelId: string, settings: ChannelSettings): Promise<boolean>;
  /**
   * A channel's settings (spec "Channel settings"), unset keys at their defaults (flags on, retention_days null);
   * null when the channel is unknown.
   */
  channelSettings(channelId: string): Promise<ChannelSettings | null>;
  /** channelSettings of several channels in one read, by channel id (unknown channels are absent). */
  channelSettingsMany(channelIds: readonly string[]): Promise<Map<string, ChannelSettings>>;
  /** Channels whose retention_days is set, with it (for the retention pass). */
  channelsWithRetention(): Promise<{ channelId: string; retentionDays: number }[]>;
  /**
   * The channels whose settings opt in to the posted digest (digest_enabled; docs/digests.md), with their period in
   * days and the newest digest posted to each (DigestPosted) or null, ordered by channel id.
   */
  channelsWithDigest(): Promise<{ channelId: string; days: number; lastPost: DigestPosted | null }[]>;
  /**
   * Records digests the bot posted (DigestPosted): per channel the one with the latest period end is kept, so a
   * redelivery or a replay in log order ends with the same row. Idempotent.
   */
  recordDigestPosts(posts: readonly DigestPosted[]): Promise<void>;
  /** Up to `limit` live messages of a channel older than `before` (ISO 8601 message time), oldest first. */
  messagesBefore(channelId: string, before: string, limit: number): Promise<ExpiredMessage[]>;

  listChannels(): Promise<ChannelView[]>;
  /** null when unknown. */
  getChannel(channelId: string): Promise<ChannelDetailView | null>;
  /** Every channel id the store has a row for, in no order (a restricted caller's visible set is cut from it). */
  channelIds(): Promise<string[]>;
  /**
   * The newest live (not deleted) message time of each of `channelIds` (ISO 8601 UTC), by channel id; channels with
   * none are absent. One index read per channel (messages_channel_ts). Freshness marks (issue 27 point 3).
   */
  newestMessageTimes(channelIds: readonly string[]): Promise<Map<string, string>>;
  /** Which of `channelIds` the store has a channel row for (imported or synced at least once); one cheap read. */
  knownChannels(channelIds: readonly string[]): Promise<Set<string>>;
  /**
   * What one channel (or, with null, every channel) holds, for GET /api/wiki/metadata: `authors` distinct author ids
   * of live messages (over all channels: distinct across them), `messages` live messages, `media` live messages with
   * at least one attachment or file, `facts` facts, `entities` distinct graph entities linked to its facts.
   * `channels` (a restricted caller's visible channels) counts only those.
   */
  contentCounts(
    channelId: string | null,
    channels?: readonly string[],
  ): Promise<{ authors: number; messages: number; media: number; facts: number; entities: number }>;
  /**
   * Newest first; `before`/`after` are timestamps (ISO 8601, or platform_a style epoch seconds), exclusive; `asOf`
   * (ISO 8601 UTC, inclusive at millisecond precision, as timestamps are shown; issue 27 point 2) keeps only the
   * messages written at or before it, each in the text it had then when it was edited since and that text was seen
   * (its earlier versions, upsertMessages); a message deleted since is left out (its text is gone).
   */
  listMessages(
    channelId: string,
    q: { limit: number; before?: string | undefined; after?: string | undefined; asOf?: string | undefined },
  ): Promise<MessagePage>;
  /**
   * The channel's messages with these platform message ids, as listMessages shows them (deleted and unknown ids are
   * left out; order unspecified).
   */
  getMessages(channelId: string, ids: readonly string[]): Promise<MessageView[]>;
  /**
   * getMessages over several channels in one read: the messages with these (channel, platform message id) keys, each
   * with its channel id (deleted and unknown keys left out; order unspecified).
   */
  getMessagesIn(
    keys: readonly { channelId: string; id: string }[],
  ): Promise<{ channelId: string; message: MessageView }[]>;
  /** Content hashes of stored messages by platform message id (for import de-duplication). */
  messageHashes(channelId: string): Promise<Map<string, string>>;
  listMemories(q: MemoryQuery): Promise<{ rows: MemoryListView[]; total: number }>;
  /** null when unknown, or (with `asOf`) stated after it. Validity as of `asOf` (AsOfRead). */
  getMemory(id: string, at?: AsOfRead): Promise<MemoryDetailView | null>;
  /** The facts with these ids (unknown ones, and with `asOf` those stated after it, left out); validity as of `asOf`. */
  getMemories(ids: readonly string[], at?: AsOfRead): Promise<Map<string, MemoryDetailView & { permalink: string }>>;
  topicCounts(channelId: string): Promise<{ tag: string; count: number }[]>;
  /**
   * The topic tags of `channelId`'s facts in a window of message time (issue 27 point 4, digests): for each tag with
   * a fact in [start, end), its facts there (`count`), in the window of the same length before (`previous`), and the
   * time of its first fact ever (`firstSeen`, ISO 8601 UTC). Times ISO 8601; most facts first, at most 200.
   */
  topicWindow(channelId: string, start: string, end: string): Promise<TopicWindowRow[]>;
  /** Entity tags by how many facts carry them; `channels` bounds the count to those channels (a caller's visible set). */
  entityCounts(q: {
    channelId?: string | undefined;
    channels?: readonly string[] | undefined;
    limit: number;
  }): Promise<{ name: string; count: number }[]>;
  counts(): Promise<{ channels: number; messages: number; facts: number }>;
  /** Fact quality figures (spec "Metrics" quality): mean quality_score, high-importance facts, decisions. */
  qualityStats(): Promise<{ avgQualityScore: number; highImportanceFacts: number; decisionCount: number }>;
}

export type { Fact };
