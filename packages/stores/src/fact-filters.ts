import { type RawBuilder, sql } from 'kysely';
import type { KeywordFilters } from './keyword/port.js';

/**
 * The columns factFilterSql reads, shared by the keyword and vector fact tables; message_ts as the driver returns it.
 * A type, not an interface, so that table types built on it keep an implicit index signature (`withTables<T>()`).
 */
export type FactFilterColumns = {
  channel_id: string;
  fact_type: string;
  importance: string;
  topic_tags: string[];
  entity_tags: string[];
  author_name: string;
  message_ts: Date | string;
};

/**
 * The WHERE clause of the spec's search filters over a fact table with the columns channel_id, fact_type,
 * importance, topic_tags, entity_tags, author_name and message_ts (keyword and vector stores share it).
 * `f.channels` bounds the channels read (a caller's visible channels). Topics match lower-cased; entities and authors match case-insensitively; date_range end is optional.
 */
export const factFilterSql = (channelId: string | null, f: KeywordFilters = {}): RawBuilder<unknown> => {
  const parts: RawBuilder<unknown>[] = [sql`true`];
  if (channelId !== null) parts.push(sql`channel_id = ${channelId}`);
  if (f.channels) parts.push(sql`channel_id = any(${[...f.channels]}::text[])`);
  if (f.factTypes?.length) parts.push(sql`fact_type = any(${f.factTypes}::text[])`);
  if (f.importance?.length) parts.push(sql`importance = any(${f.importance}::text[])`);
  if (f.topics?.length) parts.push(sql`topic_tags && ${f.topics.map((t) => t.toLowerCase())}::text[]`);
  if (f.entities?.length)
    parts.push(sql`lower(entity_tags::text)::text[] && ${f.entities.map((e) => e.toLowerCase())}::text[]`);
  if (f.authors?.length) parts.push(sql`lower(author_name) = any(${f.authors.map((a) => a.toLowerCase())}::text[])`);
  if (f.dateRange?.start) parts.push(sql`message_ts >= ${f.dateRange.start}::timestamptz`);
  if (f.dateRange?.end) parts.push(sql`message_ts <= ${f.dateRange.end}::timestamptz`);
  return sql.join(parts, sql` and `);
};
