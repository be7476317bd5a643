import { type QueryExecutorProvider, sql } from 'kysely';
import type { WikiSourceDigests } from './types.js';

/**
 * WikiStore.sourceDigestsMany: the digests of what each channel's wiki is generated from (facts, source messages,
 * authors, the channel), read over the document store's tables (same database, read only), by channel id (every
 * channel asked for is in the map). One query.
 */
export const readSourceDigests = async (
  db: QueryExecutorProvider,
  channelIds: readonly string[],
): Promise<Map<string, WikiSourceDigests>> => {
  const ids = [...new Set(channelIds)];
  const out = new Map<string, WikiSourceDigests>(
    ids.map((id) => [id, { channel: null, facts: new Map(), messages: new Map(), authors: new Map() }]),
  );
  if (ids.length === 0) return out;
  // One round trip and one value: [kind, channel, id, value] rows of kind f (fact id, digest), m (message id,
  // digest), a (author id, name), c (the channel), as JSON text (one value parses far faster than a row each on
  // PGlite). A fact's supersessions (with their resolutions, ContradictionResolved) are aggregated once and joined (a subquery per fact cost twice as much).
  // Raw: md5 digests over a union, aggregated with json_agg into one text value.
  const r = await sql<{ j: string }>`select coalesce(json_agg(json_build_array(x.k, x.c, x.id, x.v)), '[]')::text as j
    from (select 'f' as k, m.channel_id as c, m.id::text as id,
      md5(concat_ws('|', m.memory_text,
      m.quality_score::text, m.importance, m.fact_type, array_to_string(m.topic_tags, ','),
      array_to_string(m.entity_tags, ','), m.author_name, m.message_ts::text, m.source_message_id, m.permalink,
      coalesce(m.superseded_by::text, ''), coalesce(sup.v, ''))) as v
    from memories m left join (select s.fact_id, string_agg(s.superseded_by::text || ':' || s.certain::text
        || coalesce(':' || r.outcome, ''), ',' order by s.invalid_at, s.superseded_by) as v
      from fact_supersessions s join memories f on f.id = s.fact_id
      left join contradiction_resolutions r on r.fact_id = s.fact_id and r.superseded_by = s.superseded_by
      where f.channel_id = any(${ids}::text[])
      group by s.fact_id) sup on sup.fact_id = m.id
    where m.channel_id = any(${ids}::text[])
    union all
    select 'm', channel_id, id, md5(concat_ws('|', content_hash, coalesce(edited_at::text, ''), author_name, ts::text,
      attachments::text))
    from messages where channel_id = any(${ids}::text[]) and deleted_at is null
    and (channel_id, id) in (select channel_id, source_message_id from memories
      where channel_id = any(${ids}::text[]))
    union all
    select 'a', channel_id, author_id, author_name from (select distinct on (channel_id, author_id) channel_id,
      author_id, author_name from messages where channel_id = any(${ids}::text[])
      order by channel_id, author_id, ts desc) authors
    union all
    select 'c', id, id, json_build_array(name, platform)::text from channels
    where id = any(${ids}::text[])) x`.execute(db);
  const rows = JSON.parse(r.rows[0]?.j ?? '[]') as [string, string, string, string][];
  for (const [k, c, id, v] of rows) {
    const d = out.get(c);
    if (!d) continue;
    if (k === 'f') d.facts.set(id, v);
    else if (k === 'm') d.messages.set(id, v);
    else if (k === 'a') d.authors.set(id, v);
    else {
      const [name, platform] = JSON.parse(v) as [string, string];
      d.channel = { id, name, platform };
    }
  }
  return out;
};
