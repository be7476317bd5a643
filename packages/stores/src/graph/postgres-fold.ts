import { type EntitiesExtracted, normalizeEntityName } from '@atlas/core';
import { type Kysely, sql } from 'kysely';
import { evidenceOf } from './evidence.js';
import type { GraphTables } from './tables.js';

/**
 * Replaces the messages' mentions, evidence and supersessions (`last`: one set per message, validated) and re-folds
 * the touched entities and relationships, inside the caller's transaction; locks the channels first (sorted).
 * Raw SQL throughout: the contributions are inserted from jsonb_to_recordset, and the folds use lateral joins,
 * unnest with ordinality, jsonb aggregates and the graph_noisy_or aggregate, none of which the builder has.
 */
export const writeMessageGraphs = async (
  trx: Kysely<GraphTables>,
  last: readonly EntitiesExtracted[],
): Promise<void> => {
  const messageIds = last.map((s) => s.messageId);
  const mentions = last.flatMap((s) =>
    s.entities.map((e, ord) => ({
      message_uuid: s.messageId,
      ord,
      entity_id: e.entityId,
      channel_id: s.channelId,
      type: e.type,
      name: e.name,
      norm: normalizeEntityName(e.name),
      aliases: [...new Set(e.aliases.filter((a) => a.trim() !== ''))],
      alias_norms: [...new Set(e.aliases.map(normalizeEntityName).filter((a) => a !== ''))],
      confidence: e.confidence,
      fact_ids: [...new Set(e.factIds)],
      properties: e.properties,
      message_ts: s.messageTs,
      source_message_id: s.sourceMessageId,
    })),
  );
  const evidence = last.flatMap((s) =>
    s.relationships.map((r, ord) => {
      const { id, ...columns } = evidenceOf(r);
      return {
        message_uuid: s.messageId,
        ord,
        relationship_id: id,
        channel_id: s.channelId,
        ...columns,
        message_ts: s.messageTs,
        source_message_id: s.sourceMessageId,
      };
    }),
  );
  const supersessions = last.flatMap((s) =>
    s.supersessions
      .map((x, ord) => ({ x, ord }))
      .filter(({ x }) => x.oldEntityId !== null && x.newEntityId !== null)
      .map(({ x, ord }) => ({
        message_uuid: s.messageId,
        ord,
        channel_id: s.channelId,
        fact_id: x.factId,
        superseded_by: x.supersededBy,
        old_entity_id: x.oldEntityId,
        new_entity_id: x.newEntityId,
        certain: x.certain,
        message_ts: s.messageTs,
      })),
  );

  for (const channelId of [...new Set(last.map((s) => s.channelId))].sort()) await lockChannel(trx, channelId);
  const oldMentions = await sql<{ entity_id: string }>`delete from graph_mentions
      where message_uuid = any(${messageIds}::uuid[]) returning entity_id`.execute(trx);
  const oldEvidence = await sql<{ relationship_id: string }>`delete from graph_evidence
      where message_uuid = any(${messageIds}::uuid[]) returning relationship_id`.execute(trx);
  const oldSupersessions = await sql<{ old_entity_id: string; new_entity_id: string }>`
      delete from graph_supersessions where message_uuid = any(${messageIds}::uuid[])
      returning old_entity_id, new_entity_id`.execute(trx);

  if (mentions.length > 0) {
    await sql`insert into graph_mentions (message_uuid, ord, entity_id, channel_id, type, name, norm, aliases,
          alias_norms, confidence, fact_ids, properties, message_ts, source_message_id)
        select message_uuid, ord, entity_id, channel_id, type, name, norm, aliases, alias_norms, confidence,
          fact_ids, properties, message_ts, source_message_id
        from jsonb_to_recordset(${JSON.stringify(mentions)}::jsonb) as m(message_uuid uuid, ord int,
          entity_id uuid, channel_id text, type text, name text, norm text, aliases text[], alias_norms text[],
          confidence float8, fact_ids text[], properties jsonb, message_ts timestamptz, source_message_id text)`.execute(
      trx,
    );
  }
  if (evidence.length > 0) {
    await sql`insert into graph_evidence (message_uuid, ord, relationship_id, channel_id, type, source_id,
          target_id, confidence, valid_from, valid_until, context, source_fact_id, message_ts, source_message_id)
        select message_uuid, ord, relationship_id, channel_id, type, source_id, target_id, confidence,
          valid_from, valid_until, context, source_fact_id, message_ts, source_message_id
        from jsonb_to_recordset(${JSON.stringify(evidence)}::jsonb) as v(message_uuid uuid, ord int,
          relationship_id uuid, channel_id text, type text, source_id uuid, target_id uuid, confidence float8,
          valid_from date, valid_until date, context text, source_fact_id text, message_ts timestamptz,
          source_message_id text)`.execute(trx);
  }
  if (supersessions.length > 0) {
    await sql`insert into graph_supersessions (message_uuid, ord, channel_id, fact_id, superseded_by,
          old_entity_id, new_entity_id, certain, message_ts)
        select message_uuid, ord, channel_id, fact_id, superseded_by, old_entity_id, new_entity_id, certain,
          message_ts
        from jsonb_to_recordset(${JSON.stringify(supersessions)}::jsonb) as s(message_uuid uuid, ord int,
          channel_id text, fact_id uuid, superseded_by uuid, old_entity_id uuid, new_entity_id uuid,
          certain boolean, message_ts timestamptz)`.execute(trx);
  }

  const touched = [
    ...new Set([
      ...oldMentions.rows.map((r) => r.entity_id),
      ...mentions.map((m) => m.entity_id),
      ...oldSupersessions.rows.flatMap((r) => [r.old_entity_id, r.new_entity_id]),
      ...supersessions.flatMap((s) => [s.old_entity_id as string, s.new_entity_id as string]),
    ]),
  ];
  const touchedRelationships = [
    ...new Set([...oldEvidence.rows.map((r) => r.relationship_id), ...evidence.map((e) => e.relationship_id)]),
  ];
  await foldEntities(trx, touched);
  await foldRelationships(trx, touchedRelationships);
};

/**
 * Serialises the writers of one channel (entities and relationships never cross channels) until the
 * transaction ends, so that two concurrent folds of the same entity cannot each miss the other's mentions
 * (READ COMMITTED). Callers lock channels in sorted order.
 */
export const lockChannel = async (trx: Kysely<GraphTables>, channelId: string): Promise<void> => {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`atlas.graph:${channelId}`}, 0))`.execute(trx);
};

/**
 * Re-folds the touched entities from their mentions (see GraphStore), deletes those left without a mention
 * together with their relationships, then recomputes properties (mentions merged oldest first, then the
 * certain supersession override) for them and for the entities a supersession says they superseded.
 */
const foldEntities = async (trx: Kysely<GraphTables>, touched: readonly string[]): Promise<void> => {
  if (touched.length === 0) return;
  const ids = [...touched];
  await sql`
    insert into graph_entities (id, channel_id, type, name, norm, aliases, alias_norms, properties, source_fact_ids,
      confidence, mention_count, source_message_id, message_ts, last_mentioned_at, created_at, updated_at)
    select t.id, f.channel_id, f.type, f.name, f.norm,
      coalesce((select array_agg(a order by a collate "C") from (select distinct u.a from graph_mentions m
          cross join unnest(m.aliases) u(a) where m.entity_id = t.id and lower(u.a) <> lower(f.name)) x), '{}'),
      coalesce((select array_agg(distinct u.n) from graph_mentions m cross join unnest(m.alias_norms) u(n)
          where m.entity_id = t.id), '{}'),
      '{}'::jsonb,
      coalesce((select array_agg(fid order by p) from (select fid, min(p) as p from (
          select u.fid, row_number() over (order by m.message_ts, m.message_uuid, m.ord, u.i) as p
          from graph_mentions m cross join unnest(m.fact_ids) with ordinality u(fid, i) where m.entity_id = t.id) y
        group by fid) z), '{}'),
      a.confidence, a.mention_count, f.source_message_id, f.message_ts, a.last_mentioned_at, now(), now()
    from (select distinct x as id from unnest(${ids}::uuid[]) x) t
    join lateral (select m.channel_id, m.type, m.name, m.norm, m.source_message_id, m.message_ts from graph_mentions m
      where m.entity_id = t.id order by m.message_ts, m.message_uuid, m.ord limit 1) f on true
    join lateral (select graph_noisy_or(m.confidence) as confidence, count(distinct m.message_uuid)::int as mention_count,
      max(m.message_ts) as last_mentioned_at from graph_mentions m where m.entity_id = t.id) a on true
    on conflict (id) do update set channel_id = excluded.channel_id, type = excluded.type, name = excluded.name,
      norm = excluded.norm, aliases = excluded.aliases, alias_norms = excluded.alias_norms,
      source_fact_ids = excluded.source_fact_ids, confidence = excluded.confidence,
      mention_count = excluded.mention_count, source_message_id = excluded.source_message_id,
      message_ts = excluded.message_ts, last_mentioned_at = excluded.last_mentioned_at,
      updated_at = excluded.updated_at`.execute(trx);
  await sql`
    with gone as (
      delete from graph_entities e where e.id = any(${ids}::uuid[])
        and not exists (select 1 from graph_mentions m where m.entity_id = e.id)
      returning e.id
    )
    delete from graph_relationships r where r.source_id in (select id from gone) or r.target_id in (select id from gone)`.execute(
    trx,
  );
  await sql`
    update graph_entities e set properties =
      coalesce((select jsonb_object_agg(p.k, p.v) from (
          select distinct on (kv.key) kv.key as k, kv.value as v
          from graph_mentions m cross join jsonb_each_text(m.properties) kv
          where m.entity_id = e.id order by kv.key, m.message_ts desc, m.message_uuid desc, m.ord desc) p), '{}'::jsonb)
      || coalesce((select jsonb_build_object('status', 'superseded', 'superseded_by', n.name)
          from graph_supersessions s join graph_entities n on n.id = s.new_entity_id
          where s.old_entity_id = e.id and s.certain
          order by n.message_ts desc, s.message_ts desc, s.message_uuid desc, s.ord desc limit 1), '{}'::jsonb)
    where e.id = any(${ids}::uuid[])
      or e.id in (select s.old_entity_id from graph_supersessions s where s.new_entity_id = any(${ids}::uuid[]))`.execute(
    trx,
  );
};

/**
 * Re-folds the touched relationships from their evidence: noisy-or confidence; valid_from, context,
 * source_message_id and source_fact_id of the earliest evidence (valid_from, message time, message id,
 * position); valid_until of the latest; created_at kept. Deletes those left without evidence.
 */
const foldRelationships = async (trx: Kysely<GraphTables>, touched: readonly string[]): Promise<void> => {
  if (touched.length === 0) return;
  const ids = [...touched];
  await sql`
    insert into graph_relationships (id, channel_id, type, source_id, target_id, confidence, valid_from, valid_until,
      context, source_message_id, source_fact_id, created_at, updated_at)
    select t.id, f.channel_id, f.type, f.source_id, f.target_id, a.confidence, f.valid_from, l.valid_until,
      f.context, f.source_message_id, f.source_fact_id, now(), now()
    from (select distinct x as id from unnest(${ids}::uuid[]) x) t
    join lateral (select v.* from graph_evidence v where v.relationship_id = t.id
      order by v.valid_from, v.message_ts, v.message_uuid, v.ord limit 1) f on true
    join lateral (select v.valid_until from graph_evidence v where v.relationship_id = t.id
      order by v.valid_from desc, v.message_ts desc, v.message_uuid desc, v.ord desc limit 1) l on true
    join lateral (select graph_noisy_or(v.confidence) as confidence from graph_evidence v
      where v.relationship_id = t.id) a on true
    on conflict (id) do update set channel_id = excluded.channel_id, type = excluded.type,
      source_id = excluded.source_id, target_id = excluded.target_id, confidence = excluded.confidence,
      valid_from = excluded.valid_from, valid_until = excluded.valid_until, context = excluded.context,
      source_message_id = excluded.source_message_id, source_fact_id = excluded.source_fact_id,
      updated_at = excluded.updated_at`.execute(trx);
  await sql`delete from graph_relationships r where r.id = any(${ids}::uuid[])
    and not exists (select 1 from graph_evidence v where v.relationship_id = r.id)`.execute(trx);
};
