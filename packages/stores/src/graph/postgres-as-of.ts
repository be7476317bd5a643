import { type RawBuilder, sql } from 'kysely';

/**
 * The graph as it stood at `asOf` (issue 27 point 2), for the Postgres graph store's reads: two common table
 * expressions named `graph_entities` and `graph_relationships`, which shadow the stored folds inside the one query
 * they head, so every read runs unchanged on the as-of view. They fold the per-message contributions exactly as
 * postgres-fold.ts does, over the contributions of messages at or before `asOf` only:
 * - an entity exists when one of its mentions is that old; name, aliases, confidence, source facts, mention count and
 *   properties from those mentions; a certain supersession counts only when its message is that old too (so a
 *   decision superseded later is not `superseded` as of an earlier instant); created_at is its first mention's time
 *   and updated_at its last one's (system time is not kept per contribution);
 * - a relationship exists when it has evidence that old, and it was valid then: valid_from ≤ the as-of date and
 *   valid_until null or after it (dates in UTC), both folded from that evidence; both ends must exist as of then.
 * `channelId` narrows the fold to one channel (a read scoped to it); relationships never cross channels.
 * Cost: a read folds the contributions it touches at query time (the stored folds serve reads without as_of).
 */
const asOfDefinitions = (asOf: string, channelId?: string): RawBuilder<unknown> => {
  const at = sql`${asOf}::timestamptz`;
  const day = sql`(${asOf}::timestamptz at time zone 'UTC')::date`;
  const inChannel = (col: RawBuilder<unknown>) => (channelId === undefined ? sql`` : sql`and ${col} = ${channelId}`);
  return sql`graph_entities as (
    select t.id, f.channel_id, f.type, f.name, f.norm,
      coalesce((select array_agg(x.a order by x.a collate "C") from (select distinct u.a from graph_mentions m
          cross join unnest(m.aliases) u(a) where m.entity_id = t.id and m.message_ts <= ${at}
          and lower(u.a) <> lower(f.name)) x), '{}') as aliases,
      coalesce((select array_agg(distinct u.n) from graph_mentions m cross join unnest(m.alias_norms) u(n)
          where m.entity_id = t.id and m.message_ts <= ${at}), '{}') as alias_norms,
      coalesce((select jsonb_object_agg(p.k, p.v) from (
          select distinct on (kv.key) kv.key as k, kv.value as v
          from graph_mentions m cross join jsonb_each_text(m.properties) kv
          where m.entity_id = t.id and m.message_ts <= ${at}
          order by kv.key, m.message_ts desc, m.message_uuid desc, m.ord desc) p), '{}'::jsonb)
      || coalesce((select jsonb_build_object('status', 'superseded', 'superseded_by', n.name)
          from graph_supersessions s cross join lateral (select m.name, m.message_ts from graph_mentions m
            where m.entity_id = s.new_entity_id and m.message_ts <= ${at}
            order by m.message_ts, m.message_uuid, m.ord limit 1) n
          where s.old_entity_id = t.id and s.certain and s.message_ts <= ${at}
          order by n.message_ts desc, s.message_ts desc, s.message_uuid desc, s.ord desc limit 1), '{}'::jsonb)
        as properties,
      coalesce((select array_agg(fid order by p) from (select fid, min(p) as p from (
          select u.fid, row_number() over (order by m.message_ts, m.message_uuid, m.ord, u.i) as p
          from graph_mentions m cross join unnest(m.fact_ids) with ordinality u(fid, i)
          where m.entity_id = t.id and m.message_ts <= ${at}) y
        group by fid) z), '{}') as source_fact_ids,
      a.confidence, a.mention_count, f.source_message_id, f.message_ts, a.last_mentioned_at,
      f.message_ts as created_at, a.last_mentioned_at as updated_at
    from (select distinct m.entity_id as id from graph_mentions m where m.message_ts <= ${at}
      ${inChannel(sql`m.channel_id`)}) t
    join lateral (select m.channel_id, m.type, m.name, m.norm, m.source_message_id, m.message_ts from graph_mentions m
      where m.entity_id = t.id and m.message_ts <= ${at} order by m.message_ts, m.message_uuid, m.ord limit 1) f on true
    join lateral (select graph_noisy_or(m.confidence) as confidence, count(distinct m.message_uuid)::int as mention_count,
      max(m.message_ts) as last_mentioned_at from graph_mentions m
      where m.entity_id = t.id and m.message_ts <= ${at}) a on true
  ),
  graph_relationships as (
    select t.id, f.channel_id, f.type, f.source_id, f.target_id, a.confidence, f.valid_from, l.valid_until, f.context,
      f.source_message_id, f.source_fact_id, f.message_ts as created_at, a.updated_at
    from (select distinct v.relationship_id as id from graph_evidence v where v.message_ts <= ${at}
      ${inChannel(sql`v.channel_id`)}) t
    join lateral (select v.* from graph_evidence v where v.relationship_id = t.id and v.message_ts <= ${at}
      order by v.valid_from, v.message_ts, v.message_uuid, v.ord limit 1) f on true
    join lateral (select v.valid_until from graph_evidence v where v.relationship_id = t.id and v.message_ts <= ${at}
      order by v.valid_from desc, v.message_ts desc, v.message_uuid desc, v.ord desc limit 1) l on true
    join lateral (select graph_noisy_or(v.confidence) as confidence, max(v.message_ts) as updated_at
      from graph_evidence v where v.relationship_id = t.id and v.message_ts <= ${at}) a on true
    where f.valid_from <= ${day} and (l.valid_until is null or l.valid_until > ${day})
      and exists (select 1 from graph_mentions m where m.entity_id = f.source_id and m.message_ts <= ${at})
      and exists (select 1 from graph_mentions m where m.entity_id = f.target_id and m.message_ts <= ${at})
  )`;
};

/** The head of a read: `with <as-of view>` as of `asOf`, nothing without it (the stored folds: now). */
export const asOfWith = (asOf: string | undefined, channelId?: string): RawBuilder<unknown> =>
  asOf === undefined ? sql`` : sql`with ${asOfDefinitions(asOf, channelId)}`;

/** The head of a recursive read: `with recursive <as-of view>,` as of `asOf`, else `with recursive`. */
export const asOfWithRecursive = (asOf: string | undefined, channelId?: string): RawBuilder<unknown> =>
  asOf === undefined ? sql`with recursive` : sql`with recursive ${asOfDefinitions(asOf, channelId)},`;

/** The head of a read with CTEs of its own: `with <as-of view>,` as of `asOf`, else `with`. */
export const asOfWithMore = (asOf: string | undefined, channelId?: string): RawBuilder<unknown> =>
  asOf === undefined ? sql`with` : sql`with ${asOfDefinitions(asOf, channelId)},`;
