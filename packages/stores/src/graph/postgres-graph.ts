import {
  AtlasError,
  type EntitiesExtracted,
  type EntityType,
  normalizeEntityName,
  relationshipUuid,
} from '@atlas/core';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type {
  EntityGroup,
  EntityQuery,
  GraphEntity,
  GraphNode,
  GraphRelationship,
  GraphStore,
  RelationshipQuery,
  Subgraph,
} from './port.js';
import { UUID, validateEntitySet } from './validate.js';

/** Neighbourhood depth bounds (port: 1..3). */
const MAX_NEIGHBORHOOD_DEPTH = 3;

interface EntityRow {
  id: string;
  channel_id: string;
  type: EntityType;
  name: string;
  aliases: string[];
  properties: Record<string, string>;
  source_fact_ids: string[];
  confidence: number;
  mention_count: number;
  source_message_id: string;
  message_ts: Date | string;
  last_mentioned_at: Date | string;
  created_at: Date | string;
  updated_at: Date | string;
}

interface RelationshipRow {
  id: string;
  type: GraphRelationship['type'];
  source: string;
  target: string;
  source_id: string;
  target_id: string;
  channel_id: string;
  confidence: number;
  valid_from: string;
  valid_until: string | null;
  context: string;
  source_message_id: string;
  source_fact_id: string | null;
  created_at: Date | string;
}

const iso = (x: Date | string): string => new Date(x).toISOString();
const uuids = (ids: readonly string[]): string[] => [...new Set(ids.filter((id) => UUID.test(id)))];

const ENTITY_COLUMNS = sql.raw(`e.id, e.channel_id, e.type, e.name, e.aliases, e.properties, e.source_fact_ids,
  e.confidence, e.mention_count, e.source_message_id, e.message_ts, e.last_mentioned_at, e.created_at, e.updated_at`);

const RELATIONSHIP_SELECT = sql`select r.id, r.type, s.name as source, t.name as target, r.source_id, r.target_id,
    r.channel_id, r.confidence, to_char(r.valid_from, 'YYYY-MM-DD') as valid_from,
    to_char(r.valid_until, 'YYYY-MM-DD') as valid_until, r.context, r.source_message_id, r.source_fact_id, r.created_at
  from graph_relationships r join graph_entities s on s.id = r.source_id join graph_entities t on t.id = r.target_id`;

const RELATIONSHIP_ORDER = sql`order by r.confidence desc, r.valid_from, r.id`;

/** Undirected adjacency of `w.id` (lateral): neighbour id, relationship id and confidence. */
const ADJACENT = sql`(select r.target_id as nb, r.id as rid, r.confidence from graph_relationships r where r.source_id = w.id
    union all select r.source_id, r.id, r.confidence from graph_relationships r where r.target_id = w.id)`;

const toRelationship = (r: RelationshipRow): GraphRelationship => ({
  id: r.id,
  type: r.type,
  source: r.source,
  target: r.target,
  source_id: r.source_id,
  target_id: r.target_id,
  channel_id: r.channel_id,
  confidence: Number(r.confidence),
  valid_from: r.valid_from,
  valid_until: r.valid_until ?? null,
  context: r.context,
  source_message_id: r.source_message_id,
  source_fact_id: r.source_fact_id ?? null,
  created_at: iso(r.created_at),
});

const toNode = (e: { id: string; name: string; type: EntityType; channel_id: string }): GraphNode => ({
  id: e.id,
  name: e.name,
  type: e.type,
  channel_id: e.channel_id,
});

/** Connection-level failure (server down, connection lost, pool or embedded database closed). */
const isUnavailable = (e: unknown): boolean => {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    /^(08|57P0[1-3]|53300|E(CONN|HOST|NETUNREACH|NOTFOUND|TIMEDOUT|PIPE|AI_AGAIN))/.test(code)
  )
    return true;
  if (/ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|terminat|closed|destroyed|timeout/i.test(e.message))
    return true;
  const inner = (e as { errors?: unknown }).errors;
  return Array.isArray(inner) && inner.some(isUnavailable);
};

/**
 * GraphStore on Postgres (PGlite or a PostgreSQL server): the per-message contributions in graph_mentions,
 * graph_evidence and graph_supersessions, their folds in graph_entities and graph_relationships (see
 * migrateGraph, which must have run), all folding done in SQL inside the writing transaction; traversals are
 * depth-bounded recursive CTEs over relationships in both directions.
 *
 * `db` is owned by the caller (close() does not close it). `opts.entityThreshold` (default 0.6) decides the
 * status: `active` when confidence ≥ threshold, else `pending`; it is applied on read, so no stored row
 * depends on it.
 *
 * Semantics the port leaves open, as implemented (the contract suite pins them):
 * - A message listing the same entity twice contributes two mentions (both count in the noisy-or and in the
 *   mention order; mention_count counts messages). Mention order is (message_ts, message id, position).
 * - Aliases are the exact-string union of the mentions' `aliases` (other mentions' names are not added), minus
 *   those equal to the name ignoring case, sorted by code point. findEntities matches the normalised name or
 *   any normalised alias; listRelationships' source/target match the normalised entity name only.
 * - Properties: keys merged oldest mention first (a newer mention's value wins). A certain supersession
 *   naming the entity as oldEntityId then sets `status` = `superseded` and `superseded_by` = the current name
 *   of the new entity, choosing, among several, the new entity with the latest message_ts (then the latest
 *   supersession). A supersession whose new entity does not exist (yet, or any more) is ignored until it does;
 *   supersessions without both entity ids are not stored (they concern facts only).
 * - Relationship valid_until: that of the latest evidence by (valid_from, message time) descending, so it is
 *   null when the latest statement gives no end.
 * - neighborhood: depth clamped to 1..3; a node's rank confidence is the highest confidence among the
 *   relationships joining it to a node one hop closer; unknown seeds are left out. Edges are ordered by
 *   confidence desc, valid_from, id.
 * - shortestPath: a source that is also a target is a 0-hop path (one node, no edges); between equally short
 *   paths any one is returned.
 * - commonNeighbors: the queried entities themselves are never common neighbours; score = sum of the
 *   confidences of distinct relationships joining a group member to the neighbour.
 * - entityGroups: with channelId, the groups that have an entity in that channel, each still aggregated over
 *   all channels; entity_ids most mentioned first (ids[0] gives the name), channel_ids sorted; order fact_count
 *   desc, then last_mentioned_at desc, key, type. The group name tie-break is the earliest message_ts.
 * - Dates: valid_from/valid_until must start with YYYY-MM-DD (the rest is ignored), messageTs must parse and
 *   every id must be a UUID, else INVALID_REQUEST before anything is written.
 * Concurrency: a write holds a transaction-level advisory lock per channel it touches (deleteChannel too), so
 * concurrent writers of one channel are serialised and no fold misses another's mentions.
 * Errors: AtlasError INVALID_REQUEST (bad event, nothing written), STORE_UNAVAILABLE (retriable) on
 * connection failures; other database errors pass through.
 */
export class PostgresGraphStore implements GraphStore {
  private readonly threshold: number;

  constructor(
    private readonly db: Kysely<unknown>,
    opts: { entityThreshold?: number } = {},
  ) {
    this.threshold = opts.entityThreshold ?? 0.6;
  }

  /**
   * Replaces each message's mentions, evidence and supersessions (the last set of a message wins when one
   * appears twice), then re-folds the touched entities and relationships, all in one transaction. Throws
   * INVALID_REQUEST, writing nothing, when a relationship's end is not an entity of its event.
   */
  async applyMessageGraphs(sets: readonly EntitiesExtracted[]): Promise<void> {
    if (sets.length === 0) return;
    for (const s of sets) validateEntitySet(s);
    const last = [...new Map(sets.map((s) => [s.messageId, s])).values()];
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
      s.relationships.map((r, ord) => ({
        message_uuid: s.messageId,
        ord,
        relationship_id: relationshipUuid(r.type, r.sourceId, r.targetId),
        channel_id: s.channelId,
        type: r.type,
        source_id: r.sourceId,
        target_id: r.targetId,
        confidence: r.confidence,
        valid_from: r.validFrom.slice(0, 10),
        valid_until: r.validUntil === null ? null : r.validUntil.slice(0, 10),
        context: r.context,
        source_fact_id: r.sourceFactId,
        message_ts: s.messageTs,
        source_message_id: s.sourceMessageId,
      })),
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

    await this.guard(() =>
      this.db.transaction().execute(async (trx) => {
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
      }),
    );
  }

  /** Deletes every row of every graph table. */
  async truncate(): Promise<void> {
    await this.guard(() =>
      sql`truncate table graph_mentions, graph_evidence, graph_supersessions, graph_entities, graph_relationships`.execute(
        this.db,
      ),
    );
  }

  /**
   * Deletes a channel's entities and relationships, and its messages' contributions (so no later fold brings
   * them back). Returns the numbers of entities and relationships deleted.
   */
  async deleteChannel(channelId: string): Promise<{ entities: number; relationships: number }> {
    return this.guard(() =>
      this.db.transaction().execute(async (trx) => {
        await lockChannel(trx, channelId);
        await sql`delete from graph_mentions where channel_id = ${channelId}`.execute(trx);
        await sql`delete from graph_evidence where channel_id = ${channelId}`.execute(trx);
        await sql`delete from graph_supersessions where channel_id = ${channelId}`.execute(trx);
        const rels = await sql`delete from graph_relationships where channel_id = ${channelId}`.execute(trx);
        const ents = await sql`delete from graph_entities where channel_id = ${channelId}`.execute(trx);
        return { entities: Number(ents.numAffectedRows ?? 0), relationships: Number(rels.numAffectedRows ?? 0) };
      }),
    );
  }

  /** A channel's entities by mention_count desc, then name (code point order), then id; at most `limit`. */
  async listEntities(q: EntityQuery): Promise<GraphEntity[]> {
    const r = await this.guard(() =>
      sql<EntityRow>`select ${ENTITY_COLUMNS} from graph_entities e
        where e.channel_id = ${q.channelId} ${q.type ? sql`and e.type = ${q.type}` : sql``} ${this.statusSql(q.status)}
        order by e.mention_count desc, e.name collate "C", e.id limit ${Math.max(0, Math.floor(q.limit))}`.execute(
        this.db,
      ),
    );
    return r.rows.map((x) => this.toEntity(x));
  }

  /** listEntities for several queries in one statement (a lateral query per query), answers in order. */
  async listEntitiesMany(queries: readonly EntityQuery[]): Promise<GraphEntity[][]> {
    if (queries.length === 0) return [];
    const r = await this.guard(() =>
      sql<EntityRow & { q: string | number }>`select q.i as q, ${ENTITY_COLUMNS}
        from unnest(${queries.map((x) => x.channelId)}::text[], ${queries.map((x) => x.type ?? null)}::text[],
          ${queries.map((x) => x.status ?? null)}::text[], ${queries.map((x) => Math.max(0, Math.floor(x.limit)))}::int[])
          with ordinality as q(c, t, s, l, i)
        cross join lateral (select * from graph_entities e where e.channel_id = q.c and (q.t is null or e.type = q.t)
          and (q.s is null or (q.s = 'active') = (e.confidence >= ${this.threshold}::float8))
          order by e.mention_count desc, e.name collate "C", e.id limit q.l) e
        order by q.i, e.mention_count desc, e.name collate "C", e.id`.execute(this.db),
    );
    const out: GraphEntity[][] = queries.map(() => []);
    for (const x of r.rows) out[Number(x.q) - 1]!.push(this.toEntity(x));
    return out;
  }

  /** The entity with this id, or null (also for an id that is not a UUID). */
  async getEntity(id: string): Promise<GraphEntity | null> {
    return (await this.getEntities([id]))[0] ?? null;
  }

  /** The entities with these ids; unknown ids (and non-UUIDs) are left out. Ordered by id. */
  async getEntities(ids: readonly string[]): Promise<GraphEntity[]> {
    const wanted = uuids(ids);
    if (wanted.length === 0) return [];
    const r = await this.guard(() =>
      sql<EntityRow>`select ${ENTITY_COLUMNS} from graph_entities e where e.id = any(${wanted}::uuid[])
        order by e.id`.execute(this.db),
    );
    return r.rows.map((x) => this.toEntity(x));
  }

  /** Entities whose normalised name or a normalised alias is one of the normalised `names`; most mentioned first. */
  async findEntities(q: {
    names: readonly string[];
    channelId?: string | undefined;
    type?: EntityType | undefined;
  }): Promise<GraphEntity[]> {
    const norms = [...new Set(q.names.map(normalizeEntityName).filter((n) => n !== ''))];
    if (norms.length === 0) return [];
    const r = await this.guard(() =>
      sql<EntityRow>`select ${ENTITY_COLUMNS} from graph_entities e
        where (e.norm = any(${norms}::text[]) or e.alias_norms && ${norms}::text[])
          ${q.channelId !== undefined ? sql`and e.channel_id = ${q.channelId}` : sql``}
          ${q.type ? sql`and e.type = ${q.type}` : sql``}
        order by e.mention_count desc, e.name collate "C", e.id`.execute(this.db),
    );
    return r.rows.map((x) => this.toEntity(x));
  }

  /** A channel's relationships by confidence desc, valid_from, id; type/source/target filters, at most `limit`. */
  async listRelationships(q: RelationshipQuery): Promise<GraphRelationship[]> {
    const filters: RawBuilder<unknown>[] = [sql`r.channel_id = ${q.channelId}`];
    if (q.type) filters.push(sql`r.type = ${q.type}`);
    if (q.source !== undefined) filters.push(sql`s.norm = ${normalizeEntityName(q.source)}`);
    if (q.target !== undefined) filters.push(sql`t.norm = ${normalizeEntityName(q.target)}`);
    const r = await this.guard(() =>
      sql<RelationshipRow>`${RELATIONSHIP_SELECT} where ${sql.join(filters, sql` and `)}
        ${RELATIONSHIP_ORDER} limit ${Math.max(0, Math.floor(q.limit))}`.execute(this.db),
    );
    return r.rows.map(toRelationship);
  }

  /**
   * Breadth-first neighbourhood (see the port): a recursive CTE walks relationships both ways, keeping one path
   * per node and hop (DISTINCT ON) and never revisiting a node of its own path, so each level holds at most one
   * row per entity. Depth is clamped to 1..3.
   */
  async neighborhood(seedIds: readonly string[], q: { depth: number; limit: number }): Promise<Subgraph> {
    const depth = Math.max(1, Math.min(MAX_NEIGHBORHOOD_DEPTH, Math.floor(q.depth)));
    const limit = Math.max(0, Math.floor(q.limit));
    return this.guard(async () => {
      const seeds = await this.nodesInOrder(uuids(seedIds));
      if (seeds.length === 0) return { nodes: [], edges: [] };
      const seedIdList = seeds.map((s) => s.id);
      const others = await sql<{ id: string; name: string; type: EntityType; channel_id: string }>`
        with recursive w(id, hops, path) as (
          select s, 0, array[s] from unnest(${seedIdList}::uuid[]) s
          union all
          select distinct on (n.nb) n.nb, w.hops + 1, w.path || n.nb
          from w cross join lateral ${ADJACENT} n
          where w.hops < ${depth} and not n.nb = any(w.path)
        ),
        best as (select id, min(hops) as hops from w group by id),
        ranked as (
          select b.id, b.hops, (select max(r.confidence) from best p join graph_relationships r
              on (r.source_id = b.id and r.target_id = p.id) or (r.target_id = b.id and r.source_id = p.id)
              where p.hops = b.hops - 1) as conf
          from best b where b.hops > 0 and not b.id = any(${seedIdList}::uuid[])
        )
        select e.id, e.name, e.type, e.channel_id from ranked k join graph_entities e on e.id = k.id
        order by k.hops, k.conf desc, e.name collate "C", e.id limit ${limit}`.execute(this.db);
      const nodes = [...seeds, ...others.rows.map(toNode)];
      return { nodes, edges: await this.edgesAmong(nodes.map((n) => n.id)) };
    });
  }

  /**
   * A shortest undirected path of at most maxDepth hops from any source to any target (recursive CTE, one
   * path per node and hop, no node twice on a path); null when none. A source that is a target: 0 hops.
   */
  async shortestPath(
    sourceIds: readonly string[],
    targetIds: readonly string[],
    maxDepth: number,
  ): Promise<Subgraph | null> {
    const sources = uuids(sourceIds);
    const targets = uuids(targetIds);
    if (sources.length === 0 || targets.length === 0) return null;
    const depth = Math.max(0, Math.floor(maxDepth));
    return this.guard(async () => {
      const found = await sql<{ path: string[]; epath: string[] }>`
        with recursive w(id, hops, path, epath) as (
          select e.id, 0, array[e.id], array[]::uuid[] from graph_entities e where e.id = any(${sources}::uuid[])
          union all
          select distinct on (n.nb) n.nb, w.hops + 1, w.path || n.nb, w.epath || n.rid
          from w cross join lateral ${ADJACENT} n
          where w.hops < ${depth} and not w.id = any(${targets}::uuid[]) and not n.nb = any(w.path)
        )
        select path::text[] as path, epath::text[] as epath from w where id = any(${targets}::uuid[])
        order by hops, path::text limit 1`.execute(this.db);
      const best = found.rows[0];
      if (!best) return null;
      const path = toArray(best.path);
      const epath = toArray(best.epath);
      const nodes = await this.nodesInOrder(path);
      const byId = new Map((await this.relationshipsByIds(epath)).map((r) => [r.id, r]));
      return { nodes, edges: epath.map((id) => byId.get(id)!).filter(Boolean) };
    });
  }

  /**
   * Entities adjacent to at least one member of every group (members excluded), by summed relationship
   * confidence desc, then name; edges: the relationships joining group members to them.
   */
  async commonNeighbors(groups: readonly (readonly string[])[]): Promise<Subgraph> {
    if (groups.length === 0) return { nodes: [], edges: [] };
    const gis: number[] = [];
    const ids: string[] = [];
    groups.forEach((g, i) => {
      for (const id of uuids(g)) {
        gis.push(i);
        ids.push(id);
      }
    });
    if (new Set(gis).size < groups.length) return { nodes: [], edges: [] };
    return this.guard(async () => {
      const r = await sql<{ id: string; name: string; type: EntityType; channel_id: string; rids: string[] }>`
        with g(gi, id) as (select * from unnest(${gis}::int[], ${ids}::uuid[])),
        adj as (
          select g.gi, r.target_id as nb, r.id as rid, r.confidence from g join graph_relationships r on r.source_id = g.id
          union all
          select g.gi, r.source_id, r.id, r.confidence from g join graph_relationships r on r.target_id = g.id
        ),
        common as (
          select nb from adj where not nb in (select id from g) group by nb having count(distinct gi) = ${groups.length}
        ),
        scored as (
          select d.nb, sum(d.confidence) as score, array_agg(d.rid::text) as rids
          from (select distinct a.nb, a.rid, a.confidence from adj a join common c on c.nb = a.nb) d group by d.nb
        )
        select e.id, e.name, e.type, e.channel_id, s.rids from scored s join graph_entities e on e.id = s.nb
        order by s.score desc, e.name collate "C", e.id`.execute(this.db);
      const nodes = r.rows.map(toNode);
      const rels = await this.relationshipsByIds(r.rows.flatMap((x) => toArray(x.rids)));
      const position = new Map(nodes.map((n, i) => [n.id, i]));
      const at = (e: GraphRelationship) => position.get(e.source_id) ?? position.get(e.target_id) ?? 0;
      return { nodes, edges: rels.sort((a, b) => at(a) - at(b)) };
    });
  }

  /** Entity cards: entities grouped by (type, normalised name) across channels; see the class docstring. */
  async entityGroups(q: {
    channelId?: string | undefined;
    type?: EntityType | undefined;
    limit: number;
  }): Promise<EntityGroup[]> {
    const filters: RawBuilder<unknown>[] = [sql`true`];
    if (q.channelId !== undefined) filters.push(sql`channel_id = ${q.channelId}`);
    if (q.type) filters.push(sql`type = ${q.type}`);
    const r = await this.guard(() =>
      sql<{
        type: EntityType;
        key: string;
        name: string;
        entity_ids: string[];
        channel_ids: string[];
        fact_count: number;
        last_mentioned_at: Date | string;
      }>`
        with keys as (select distinct type, norm from graph_entities where ${sql.join(filters, sql` and `)})
        select e.type, e.norm as key,
          (array_agg(e.name order by e.mention_count desc, e.message_ts, e.id))[1] as name,
          array_agg(e.id::text order by e.mention_count desc, e.message_ts, e.id) as entity_ids,
          array_agg(distinct e.channel_id) as channel_ids,
          (select count(distinct f)::int from graph_entities x cross join unnest(x.source_fact_ids) f
            where x.type = e.type and x.norm = e.norm) as fact_count,
          max(e.last_mentioned_at) as last_mentioned_at
        from graph_entities e join keys k on k.type = e.type and k.norm = e.norm
        group by e.type, e.norm
        order by fact_count desc, last_mentioned_at desc, e.norm collate "C", e.type
        limit ${Math.max(0, Math.floor(q.limit))}`.execute(this.db),
    );
    return r.rows.map((x) => ({
      type: x.type,
      key: x.key,
      name: x.name,
      entity_ids: toArray(x.entity_ids),
      channel_ids: toArray(x.channel_ids).sort(),
      fact_count: Number(x.fact_count),
      last_mentioned_at: iso(x.last_mentioned_at),
    }));
  }

  /** Numbers of entities (nodes) and relationships stored, over all channels. */
  async counts(channelId?: string): Promise<{ nodes: number; relationships: number }> {
    const where = channelId === undefined ? sql`` : sql`where channel_id = ${channelId}`;
    const r = await this.guard(() =>
      sql<{ nodes: number; relationships: number }>`select (select count(*)::int from graph_entities ${where}) as nodes,
        (select count(*)::int from graph_relationships ${where}) as relationships`.execute(this.db),
    );
    return { nodes: Number(r.rows[0]?.nodes ?? 0), relationships: Number(r.rows[0]?.relationships ?? 0) };
  }

  /** Resolves when the database answers; AtlasError STORE_UNAVAILABLE (retriable) otherwise. */
  async ping(): Promise<void> {
    await this.guard(() => sql`select 1`.execute(this.db));
  }

  /** Nothing to release: the database handle belongs to the caller. */
  async close(): Promise<void> {}

  private statusSql(status: EntityQuery['status']): RawBuilder<unknown> {
    if (status === 'active') return sql`and e.confidence >= ${this.threshold}::float8`;
    if (status === 'pending') return sql`and e.confidence < ${this.threshold}::float8`;
    return sql``;
  }

  private toEntity(r: EntityRow): GraphEntity {
    const confidence = Number(r.confidence);
    return {
      id: r.id,
      name: r.name,
      type: r.type,
      scope: 'channel',
      channel_id: r.channel_id,
      status: confidence >= this.threshold ? 'active' : 'pending',
      properties: r.properties ?? {},
      aliases: toArray(r.aliases),
      source_fact_ids: toArray(r.source_fact_ids),
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
      source_message_id: r.source_message_id,
      message_ts: iso(r.message_ts),
      confidence,
      mention_count: Number(r.mention_count),
      last_mentioned_at: iso(r.last_mentioned_at),
    };
  }

  /** The existing entities among `ids` as nodes, in the order of `ids`. */
  private async nodesInOrder(ids: readonly string[]): Promise<GraphNode[]> {
    if (ids.length === 0) return [];
    const r = await sql<{ id: string; name: string; type: EntityType; channel_id: string }>`
      select id, name, type, channel_id from graph_entities where id = any(${[...ids]}::uuid[])`.execute(this.db);
    const byId = new Map(r.rows.map((x) => [x.id, toNode(x)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  private async edgesAmong(ids: readonly string[]): Promise<GraphRelationship[]> {
    if (ids.length === 0) return [];
    const r = await sql<RelationshipRow>`${RELATIONSHIP_SELECT}
      where r.source_id = any(${[...ids]}::uuid[]) and r.target_id = any(${[...ids]}::uuid[])
      ${RELATIONSHIP_ORDER}`.execute(this.db);
    return r.rows.map(toRelationship);
  }

  private async relationshipsByIds(ids: readonly string[]): Promise<GraphRelationship[]> {
    const wanted = uuids(ids);
    if (wanted.length === 0) return [];
    const r = await sql<RelationshipRow>`${RELATIONSHIP_SELECT} where r.id = any(${wanted}::uuid[])
      ${RELATIONSHIP_ORDER}`.execute(this.db);
    return r.rows.map(toRelationship);
  }

  /** Runs `fn`, turning connection-level failures into AtlasError STORE_UNAVAILABLE (retriable). */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (cause) {
      if (cause instanceof AtlasError || !isUnavailable(cause)) throw cause;
      const msg = cause instanceof Error ? cause.message || String((cause as { code?: unknown }).code) : String(cause);
      throw new AtlasError('STORE_UNAVAILABLE', `graph store unavailable: ${msg}`, { retriable: true, cause });
    }
  }
}

/** A Postgres array as returned by the driver (an array, or its text form when the driver leaves it unparsed). */
const toArray = (x: string[] | string | null | undefined): string[] => {
  if (Array.isArray(x)) return x;
  if (!x || x === '{}') return [];
  return x
    .slice(1, -1)
    .split(',')
    .map((s) => s.replace(/^"|"$/g, ''));
};

/**
 * Serialises the writers of one channel (entities and relationships never cross channels) until the
 * transaction ends, so that two concurrent folds of the same entity cannot each miss the other's mentions
 * (READ COMMITTED). Callers lock channels in sorted order.
 */
const lockChannel = async (trx: Kysely<unknown>, channelId: string): Promise<void> => {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`atlas.graph:${channelId}`}, 0))`.execute(trx);
};

/**
 * Re-folds the touched entities from their mentions (see GraphStore), deletes those left without a mention
 * together with their relationships, then recomputes properties (mentions merged oldest first, then the
 * certain supersession override) for them and for the entities a supersession says they superseded.
 */
const foldEntities = async (trx: Kysely<unknown>, touched: readonly string[]): Promise<void> => {
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
const foldRelationships = async (trx: Kysely<unknown>, touched: readonly string[]): Promise<void> => {
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
