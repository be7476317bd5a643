import { AtlasError, type EntitiesExtracted, type EntityType, normalizeEntityName } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type {
  EntityGroup,
  EntityGroupQuery,
  EntityQuery,
  GraphAsOf,
  GraphEntity,
  GraphNode,
  GraphRelationship,
  GraphStore,
  RelationshipQuery,
  Subgraph,
} from './port.js';
import { asOfWith, asOfWithMore, asOfWithRecursive } from './postgres-as-of.js';
import { lockChannel, writeMessageGraphs } from './postgres-fold.js';
import {
  ADJACENT,
  ENTITY_COLUMNS,
  type EntityRow,
  iso,
  isUnavailable,
  RELATIONSHIP_ORDER,
  RELATIONSHIP_SELECT,
  type RelationshipRow,
  toArray,
  toNode,
  toRelationship,
  uuids,
} from './postgres-rows.js';
import type { GraphTables } from './tables.js';
import { validateEntitySet } from './validate.js';

/** Neighbourhood depth bounds (port: 1..3). */
const MAX_NEIGHBORHOOD_DEPTH = 3;

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
 * - asOf (GraphAsOf): every read headed by the as-of view of postgres-as-of.ts, which shadows graph_entities and
 *   graph_relationships with the fold of the contributions of messages at or before it.
 * - Dates: valid_from/valid_until must start with YYYY-MM-DD (the rest is ignored), messageTs must parse and
 *   every id must be a UUID, else INVALID_REQUEST before anything is written.
 * Concurrency: a write holds a transaction-level advisory lock per channel it touches (deleteChannel too), so
 * concurrent writers of one channel are serialised and no fold misses another's mentions.
 * Errors: AtlasError INVALID_REQUEST (bad event, nothing written), STORE_UNAVAILABLE (retriable) on
 * connection failures; other database errors pass through.
 */
export class PostgresGraphStore implements GraphStore {
  private readonly threshold: number;

  /**
   * The reads stay raw SQL where they traverse (recursive CTEs over both directions, lateral per-query lists over
   * unnest, to_char dates); plain deletes and lookups use the builder.
   */
  private readonly db: Kysely<GraphTables>;

  constructor(db: DatabaseHandle['db'], opts: { entityThreshold?: number } = {}) {
    this.db = db.withTables<GraphTables>();
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
    await this.guard(() => this.db.transaction().execute((trx) => writeMessageGraphs(trx, last)));
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
        for (const table of ['graph_mentions', 'graph_evidence', 'graph_supersessions'] as const)
          await trx.deleteFrom(table).where('channel_id', '=', channelId).execute();
        const rels = await trx.deleteFrom('graph_relationships').where('channel_id', '=', channelId).executeTakeFirst();
        const ents = await trx.deleteFrom('graph_entities').where('channel_id', '=', channelId).executeTakeFirst();
        return { entities: Number(ents.numDeletedRows), relationships: Number(rels.numDeletedRows) };
      }),
    );
  }

  /** A channel's entities by mention_count desc, then name (code point order), then id; at most `limit`. */
  async listEntities(q: EntityQuery): Promise<GraphEntity[]> {
    const r = await this.guard(() =>
      sql<EntityRow>`${asOfWith(q.asOf, q.channelId)} select ${ENTITY_COLUMNS} from graph_entities e
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
    // As of an instant, each query folds its own channel's view (postgres-as-of.ts).
    if (queries.some((x) => x.asOf !== undefined)) return Promise.all(queries.map((x) => this.listEntities(x)));
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
  async getEntity(id: string, at: GraphAsOf = {}): Promise<GraphEntity | null> {
    return (await this.getEntities([id], at))[0] ?? null;
  }

  /** The entities with these ids; unknown ids (and non-UUIDs) are left out. Ordered by id. */
  async getEntities(ids: readonly string[], at: GraphAsOf = {}): Promise<GraphEntity[]> {
    const wanted = uuids(ids);
    if (wanted.length === 0) return [];
    const r = await this.guard(() =>
      sql<EntityRow>`${asOfWith(at.asOf)} select ${ENTITY_COLUMNS} from graph_entities e where e.id = any(${wanted}::uuid[])
        order by e.id`.execute(this.db),
    );
    return r.rows.map((x) => this.toEntity(x));
  }

  /** Entities whose normalised name or a normalised alias is one of the normalised `names`; most mentioned first. */
  async findEntities(
    q: {
      names: readonly string[];
      channelId?: string | undefined;
      type?: EntityType | undefined;
    } & GraphAsOf,
  ): Promise<GraphEntity[]> {
    const norms = [...new Set(q.names.map(normalizeEntityName).filter((n) => n !== ''))];
    if (norms.length === 0) return [];
    const r = await this.guard(() =>
      sql<EntityRow>`${asOfWith(q.asOf, q.channelId)} select ${ENTITY_COLUMNS} from graph_entities e
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
      sql<RelationshipRow>`${asOfWith(q.asOf, q.channelId)} ${RELATIONSHIP_SELECT} where ${sql.join(filters, sql` and `)}
        ${RELATIONSHIP_ORDER} limit ${Math.max(0, Math.floor(q.limit))}`.execute(this.db),
    );
    return r.rows.map(toRelationship);
  }

  /**
   * Breadth-first neighbourhood (see the port): a recursive CTE walks relationships both ways, keeping one path
   * per node and hop (DISTINCT ON) and never revisiting a node of its own path, so each level holds at most one
   * row per entity. Depth is clamped to 1..3.
   */
  async neighborhood(seedIds: readonly string[], q: { depth: number; limit: number } & GraphAsOf): Promise<Subgraph> {
    const depth = Math.max(1, Math.min(MAX_NEIGHBORHOOD_DEPTH, Math.floor(q.depth)));
    const limit = Math.max(0, Math.floor(q.limit));
    return this.guard(async () => {
      const seeds = await this.nodesInOrder(uuids(seedIds), q.asOf);
      if (seeds.length === 0) return { nodes: [], edges: [] };
      const seedIdList = seeds.map((s) => s.id);
      const others = await sql<{ id: string; name: string; type: EntityType; channel_id: string }>`
        ${asOfWithRecursive(q.asOf)} w(id, hops, path) as (
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
      return {
        nodes,
        edges: await this.edgesAmong(
          nodes.map((n) => n.id),
          q.asOf,
        ),
      };
    });
  }

  /** Relationships with exactly one end among `entityIds`, with that other end (see the port), by confidence. */
  async incidentRelationships(
    entityIds: readonly string[],
    q: { limit: number } & GraphAsOf,
  ): Promise<{ relationship: GraphRelationship; other: GraphNode }[]> {
    const ids = uuids(entityIds);
    const limit = Math.max(0, Math.floor(q.limit));
    if (ids.length === 0 || limit === 0) return [];
    return this.guard(async () => {
      const r = await sql<RelationshipRow>`${asOfWith(q.asOf)} ${RELATIONSHIP_SELECT}
        where (r.source_id = any(${ids}::uuid[])) <> (r.target_id = any(${ids}::uuid[]))
        ${RELATIONSHIP_ORDER} limit ${limit}`.execute(this.db);
      const rels = r.rows.map(toRelationship);
      const mine = new Set(ids);
      const otherId = (x: GraphRelationship) => (mine.has(x.source_id) ? x.target_id : x.source_id);
      const nodes = new Map((await this.nodesInOrder([...new Set(rels.map(otherId))], q.asOf)).map((n) => [n.id, n]));
      return rels.flatMap((relationship) => {
        const other = nodes.get(otherId(relationship));
        return other ? [{ relationship, other }] : [];
      });
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
    at: GraphAsOf = {},
  ): Promise<Subgraph | null> {
    const sources = uuids(sourceIds);
    const targets = uuids(targetIds);
    if (sources.length === 0 || targets.length === 0) return null;
    const depth = Math.max(0, Math.floor(maxDepth));
    return this.guard(async () => {
      const found = await sql<{ path: string[]; epath: string[] }>`
        ${asOfWithRecursive(at.asOf)} w(id, hops, path, epath) as (
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
      const nodes = await this.nodesInOrder(path, at.asOf);
      const byId = new Map((await this.relationshipsByIds(epath, at.asOf)).map((r) => [r.id, r]));
      return { nodes, edges: epath.map((id) => byId.get(id)!).filter(Boolean) };
    });
  }

  /**
   * Entities adjacent to at least one member of every group (members excluded), by summed relationship
   * confidence desc, then name; edges: the relationships joining group members to them.
   */
  async commonNeighbors(groups: readonly (readonly string[])[], when: GraphAsOf = {}): Promise<Subgraph> {
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
        ${asOfWithMore(when.asOf)} g(gi, id) as (select * from unnest(${gis}::int[], ${ids}::uuid[])),
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
      const rels = await this.relationshipsByIds(
        r.rows.flatMap((x) => toArray(x.rids)),
        when.asOf,
      );
      const position = new Map(nodes.map((n, i) => [n.id, i]));
      const at = (e: GraphRelationship) => position.get(e.source_id) ?? position.get(e.target_id) ?? 0;
      return { nodes, edges: rels.sort((a, b) => at(a) - at(b)) };
    });
  }

  /** Entity cards: entities grouped by (type, normalised name) across channels; see the class docstring. */
  async entityGroups(q: EntityGroupQuery): Promise<EntityGroup[]> {
    const filters: RawBuilder<unknown>[] = [sql`true`];
    if (q.channelId !== undefined) filters.push(sql`channel_id = ${q.channelId}`);
    // The channels a restricted caller sees: groups, their entities and their facts only from these.
    const visible = (col: RawBuilder<unknown>) =>
      q.channels ? sql`${col} = any(${[...q.channels]}::text[])` : sql`true`;
    filters.push(visible(sql.ref('channel_id')));
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
        ${asOfWithMore(q.asOf)} keys as (select distinct type, norm from graph_entities where ${sql.join(filters, sql` and `)})
        select e.type, e.norm as key,
          (array_agg(e.name order by e.mention_count desc, e.message_ts, e.id))[1] as name,
          array_agg(e.id::text order by e.mention_count desc, e.message_ts, e.id) as entity_ids,
          array_agg(distinct e.channel_id) as channel_ids,
          (select count(distinct f)::int from graph_entities x cross join unnest(x.source_fact_ids) f
            where x.type = e.type and x.norm = e.norm and ${visible(sql.ref('x.channel_id'))}) as fact_count,
          max(e.last_mentioned_at) as last_mentioned_at
        from graph_entities e join keys k on k.type = e.type and k.norm = e.norm
        where ${visible(sql.ref('e.channel_id'))}
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

  /** The existing entities among `ids` (as of `asOf`) as nodes, in the order of `ids`. */
  private async nodesInOrder(ids: readonly string[], asOf?: string): Promise<GraphNode[]> {
    if (ids.length === 0) return [];
    const rows =
      asOf === undefined
        ? await this.db
            .selectFrom('graph_entities')
            .select(['id', 'name', 'type', 'channel_id'])
            .where('id', 'in', [...ids])
            .execute()
        : (
            await sql<{ id: string; name: string; type: string; channel_id: string }>`${asOfWith(asOf)}
              select e.id, e.name, e.type, e.channel_id from graph_entities e where e.id = any(${uuids(ids)}::uuid[])`.execute(
              this.db,
            )
          ).rows;
    const byId = new Map(rows.map((x) => [x.id, toNode({ ...x, type: x.type as EntityType })]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  private async edgesAmong(ids: readonly string[], asOf?: string): Promise<GraphRelationship[]> {
    if (ids.length === 0) return [];
    const r = await sql<RelationshipRow>`${asOfWith(asOf)} ${RELATIONSHIP_SELECT}
      where r.source_id = any(${[...ids]}::uuid[]) and r.target_id = any(${[...ids]}::uuid[])
      ${RELATIONSHIP_ORDER}`.execute(this.db);
    return r.rows.map(toRelationship);
  }

  private async relationshipsByIds(ids: readonly string[], asOf?: string): Promise<GraphRelationship[]> {
    const wanted = uuids(ids);
    if (wanted.length === 0) return [];
    const r = await sql<RelationshipRow>`${asOfWith(asOf)} ${RELATIONSHIP_SELECT} where r.id = any(${wanted}::uuid[])
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
