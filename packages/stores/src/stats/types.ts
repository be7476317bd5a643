/** Spec "System stats", without wiki_pages (the wiki store's; the route adds it). */
export interface SystemStatsRow {
  total_facts: number;
  total_entities: number;
  total_channels: number;
  total_decisions: number;
  total_messages: number;
  total_authors: number;
}

/** The figures of one channel both channel-stats shapes are made of (spec "Channel stats"). Times ISO 8601 UTC. */
export interface ChannelStatsRow {
  channel_id: string;
  channel_name: string;
  platform: string;
  message_count: number;
  fact_count: number;
  entity_count: number;
  decision_count: number;
  author_count: number;
  date_range: { earliest: string | null; latest: string | null };
  activity: {
    messages_last_7d: number;
    messages_last_30d: number;
    facts_added_last_7d: number;
    facts_added_last_30d: number;
  };
}

/** Spec "Top author"; `channels` are channel names. */
export interface TopAuthorRow {
  author_id: string;
  author_name: string;
  message_count: number;
  fact_count: number;
  decision_count: number;
  channels: string[];
}

/** Spec "Top topic", with the two windows the trend was computed from (`recent_count`, `previous_count`). */
export interface TopTopicRow {
  topic: string;
  fact_count: number;
  channels: string[];
  trend: 'rising' | 'falling' | 'stable';
  recent_count: number;
  previous_count: number;
}

/** An activity entry the stats store knows of (spec "Activity entry"): fact_extracted, entity_created, sync_completed. */
export interface ActivityRow {
  type: 'fact_extracted' | 'entity_created' | 'sync_completed';
  /** ISO 8601 UTC. */
  timestamp: string;
  channel_id: string;
  /** Messages concerned: messages whose facts were extracted, that named the entities, or that the sync fetched. */
  message_count: number;
  fact_count?: number;
  entity_count?: number;
  job_id?: string;
}

/** One channel's row of GET /api/stats/export (since: counts of messages and facts at or after it). */
export interface ExportChannelRow {
  channel_id: string;
  channel_name: string;
  platform: string;
  message_count: number;
  author_count: number;
  fact_count: number;
  decision_count: number;
  high_importance_facts: number;
  avg_fact_quality_score: number;
  entity_count: number;
  earliest_message: string | null;
  latest_message: string | null;
}

/** One LLM call, as a usage recorder passes it (tokens may be estimated; cost in USD, estimated from a price table). */
export interface LlmUsageRecord {
  tier: string;
  provider: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** The server reported no usage; tokens are characters / 4. */
  estimated?: boolean;
  /** The call failed (no tokens). */
  failed?: boolean;
  costUsd: number;
  /** When the call ended (default now). */
  at?: Date;
}

/** LLM usage totals (spec "Metrics" usage), and per tier, provider and model. */
export interface LlmUsageTotals {
  total_llm_calls: number;
  failed_llm_calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_llm_tokens: number;
  estimated_cost_usd: number;
  by_model: {
    tier: string;
    provider: string;
    model: string;
    calls: number;
    failed_calls: number;
    prompt_tokens: number;
    completion_tokens: number;
    cost_usd: number;
  }[];
}
