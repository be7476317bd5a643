import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date | string, Date | string, Date | string>;
type GeneratedTimestamp = ColumnType<Date | string, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | string | null, Date | string | null, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;

/**
 * The document store's tables (document-store.ts; migrateDocuments creates them). A type, not an interface:
 * `withTables<T>()` takes only types with an implicit index signature.
 */
export type DocumentTables = {
  channels: {
    id: string;
    platform: string;
    workspace_id: string;
    workspace_name: string;
    name: string;
    is_private: boolean;
    member_count: number;
    topic: string | null;
    platform_created_at: NullableTimestamp;
    connected: Generated<boolean>;
    last_sync: NullableTimestamp;
    created_at: GeneratedTimestamp;
    updated_at: GeneratedTimestamp;
    settings: Generated<Json<Record<string, unknown>>>;
  };
  messages: {
    channel_id: string;
    id: string;
    message_uuid: string;
    platform: string;
    text: string;
    author_id: string;
    author_name: string;
    author_is_bot: boolean;
    ts: Timestamp;
    thread_ts: string | null;
    reply_to_id: string | null;
    subtype: string | null;
    reactions: Json<unknown[]>;
    attachments: Json<unknown[]>;
    has_media: boolean;
    edited_at: NullableTimestamp;
    permalink: string;
    content_hash: string;
    deleted_at: NullableTimestamp;
    ingested_at: GeneratedTimestamp;
  };
  memories: {
    id: string;
    message_uuid: string;
    channel_id: string;
    source_message_id: string;
    platform: string;
    memory_text: string;
    quality_score: number;
    tier: Generated<string>;
    author_id: string;
    author_name: string;
    message_ts: Timestamp;
    thread_ts: string | null;
    permalink: string;
    topic_tags: string[];
    entity_tags: string[];
    action_tags: string[];
    importance: string;
    fact_type: string;
    thread_context_summary: string;
    valid_at: Timestamp;
    invalid_at: NullableTimestamp;
    superseded_by: string | null;
    potential_contradiction: Generated<boolean>;
    source_lang: string;
    cluster_id: string | null;
    graph_entity_ids: Generated<string[]>;
    extractor: string;
    created_at: GeneratedTimestamp;
    updated_at: GeneratedTimestamp;
  };
  memory_entities: {
    fact_id: string;
    entity_id: string;
    message_uuid: string;
    channel_id: string;
  };
  fact_supersessions: {
    by_message_uuid: string;
    /** The channel of the message that stated it (migration 0003; null on rows written before it and not backfilled). */
    channel_id: string | null;
    fact_id: string;
    superseded_by: string;
    invalid_at: Timestamp;
    certain: boolean;
    reason: string;
  };
  /** ContradictionResolved (migration 0004): one row per resolved potential contradiction, the first resolution of its id. */
  contradiction_resolutions: {
    id: string;
    channel_id: string;
    fact_id: string;
    superseded_by: string;
    outcome: string;
    invalid_at: Timestamp;
    note: string | null;
    resolved_by: string;
    resolved_at: Timestamp;
  };
  /** DigestPosted (migration 0005): the newest digest posted to each channel (the latest period end wins). */
  digest_posts: {
    channel_id: string;
    platform: string;
    connection_id: string;
    period_start: Timestamp;
    period_end: Timestamp;
    days: number;
    platform_message_id: string;
    citations: number;
    posted_at: Timestamp;
  };
  /**
   * Migration 0006: the texts of edited messages, one row per version from its `valid_from` (the message's time for
   * the text before the first edit, else the edit's time). Messages never edited have none; a deleted message's are
   * removed with its text.
   */
  message_versions: {
    channel_id: string;
    id: string;
    valid_from: Timestamp;
    text: string;
  };
};
