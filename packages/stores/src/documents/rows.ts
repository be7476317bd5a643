import type { ChannelView, MemoryDetailView, MemoryListView, MessageView } from './port.js';
import type { DocumentTables } from './tables.js';

/** A timestamp as read (Date or string) as ISO 8601 UTC; null stays null. */
export const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/**
 * A platform_a `ts` ("1517789022.000033") as an ISO timestamp with microseconds, so ordering and
 * cursors keep Slack's precision; anything else passes through unchanged.
 */
export const preciseTimestamp = (platformTs: string, fallback: string): string => {
  const m = /^(\d{9,11})\.(\d{1,6})$/.exec(platformTs);
  if (!m) return fallback;
  const whole = new Date(Number(m[1]) * 1000).toISOString().slice(0, 19);
  return `${whole}.${m[2]!.padEnd(6, '0')}Z`;
};

/** A cursor value (ISO 8601 or epoch seconds, as platform_a writes them) as an ISO string. */
export const cursorToIso = (v: string): string =>
  /^\d{9,11}(\.\d{1,6})?$/.test(v) ? preciseTimestamp(v.includes('.') ? v : `${v}.0`, v) : v;

export type ChannelRow = {
  id: string;
  name: string;
  platform: string;
  last_sync: Date | string | null;
  message_count: number | null;
  fact_count: number | null;
};

export const toChannelView = (r: ChannelRow): ChannelView => ({
  id: r.id,
  name: r.name,
  platform: r.platform,
  last_sync: iso(r.last_sync),
  message_count: Number(r.message_count ?? 0),
  fact_count: Number(r.fact_count ?? 0),
});

export type MessageRow = DocumentTables['messages'] extends infer T ? { [K in keyof T]: unknown } : never;

export const toMessageView = (r: MessageRow): MessageView => {
  const attachments = (r.attachments ?? []) as {
    id: string;
    name: string;
    url: string | null;
    mimeType: string | null;
    size: number | null;
    mediaType: string | null;
  }[];
  return {
    id: r.id as string,
    text: r.text as string,
    author: { id: r.author_id as string, name: r.author_name as string },
    timestamp: iso(r.ts as Date)!,
    thread_ts: (r.thread_ts as string | null) ?? null,
    reactions: (r.reactions ?? []) as MessageView['reactions'],
    attachments: attachments.map((a) => ({
      id: a.id,
      name: a.name,
      url: a.url,
      mime_type: a.mimeType,
      size: a.size,
      media_type: a.mediaType,
    })),
    has_media: Boolean(r.has_media),
  };
};

export type MemoryRow = {
  [K in keyof DocumentTables['memories']]: unknown;
};

export const toMemoryDetail = (r: MemoryRow): MemoryDetailView & { permalink: string } => ({
  id: r.id as string,
  memory_text: r.memory_text as string,
  quality_score: Number(r.quality_score),
  tier: r.tier as string,
  channel_id: r.channel_id as string,
  author_name: r.author_name as string,
  message_ts: iso(r.message_ts as Date)!,
  topic_tags: r.topic_tags as string[],
  entity_tags: r.entity_tags as string[],
  importance: r.importance as string,
  fact_type: r.fact_type as string,
  source_message_id: r.source_message_id as string,
  permalink: r.permalink as string,
  cluster_id: (r.cluster_id as string | null) ?? null,
  platform: r.platform as string,
  author_id: r.author_id as string,
  thread_ts: (r.thread_ts as string | null) ?? null,
  action_tags: r.action_tags as string[],
  graph_entity_ids: (r.graph_entity_ids as string[]) ?? [],
  thread_context_summary: r.thread_context_summary as string,
  valid_at: iso(r.valid_at as Date)!,
  invalid_at: iso((r.invalid_at as Date | null) ?? null),
  superseded_by: (r.superseded_by as string | null) ?? null,
  potential_contradiction: Boolean(r.potential_contradiction),
  source_lang: r.source_lang as string,
});

export const toMemoryList = (r: MemoryRow): MemoryListView => {
  const d = toMemoryDetail(r);
  return {
    id: d.id,
    memory_text: d.memory_text,
    quality_score: d.quality_score,
    tier: d.tier,
    channel_id: d.channel_id,
    author_name: d.author_name,
    message_ts: d.message_ts,
    topic_tags: d.topic_tags,
    entity_tags: d.entity_tags,
    importance: d.importance,
    fact_type: d.fact_type,
    source_message_id: d.source_message_id,
    permalink: d.permalink,
  };
};
