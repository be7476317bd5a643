import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date | string, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | string | null, Date | string | null, Date | string | null>;
type GeneratedTimestamp = ColumnType<Date | string, Date | string | undefined, Date | string>;
/** bigint columns: pg returns them as strings. */
type BigInt = ColumnType<string | number, number | bigint, number | bigint>;
type Json<T> = ColumnType<T, string, string>;

/** The stats store's tables (migrations.ts describes each), as Kysely reads and writes them. */
export interface StatsTables {
  stats_channels: { channel_id: string; name: string; platform: string; updated_at: GeneratedTimestamp };
  stats_messages: {
    channel_id: string;
    message_id: string;
    author_id: string;
    author_name: string;
    is_bot: Generated<boolean>;
    ts: Timestamp;
    deleted: Generated<boolean>;
  };
  stats_facts: {
    message_id: string;
    fact_id: string;
    channel_id: string;
    author_id: string;
    author_name: string;
    fact_type: string;
    importance: string;
    quality: number;
    topic_tags: Json<string[]>;
    message_ts: Timestamp;
    extracted_at: Timestamp;
  };
  stats_entities: { message_id: string; entity_id: string; channel_id: string; type: string; name: string };
  stats_entity_first: { entity_id: string; channel_id: string; type: string; name: string; first_seen_at: Timestamp };
  stats_sync_jobs: {
    job_id: string;
    channel_id: string;
    seq: number;
    status: string;
    started_at: NullableTimestamp;
    completed_at: NullableTimestamp;
    messages_synced: Generated<number>;
    facts_extracted: Generated<number>;
    entities_created: Generated<number>;
  };
  stats_dead_letters: {
    dl_group: string;
    topic: string;
    dl_partition: number;
    dl_offset: BigInt;
    event_type: string;
    event_key: string;
    error: string;
    attempts: number;
    failed_at: Timestamp;
    dl_id: string | null;
    redriven_at: NullableTimestamp;
  };
  stats_llm_usage: {
    day: ColumnType<Date | string, string, string>;
    tier: string;
    provider: string;
    model: string;
    calls: Generated<BigInt>;
    failed_calls: Generated<BigInt>;
    prompt_tokens: Generated<BigInt>;
    completion_tokens: Generated<BigInt>;
    estimated_token_calls: Generated<BigInt>;
    cost_usd: Generated<number>;
  };
}
