import type { EntitiesExtracted, EntityType, RelationshipType } from '@atlas/core';

/**
 * Spec "Graph entity", single-entity form, plus the aggregates the store keeps (confidence, mention_count,
 * last_mentioned_at; the API drops them). Timestamps are ISO 8601 UTC strings.
 */
export interface GraphEntity {
  id: string;
  name: string;
  type: EntityType;
  scope: 'channel';
  channel_id: string;
  /** `active` when confidence ≥ the store's entityThreshold (ENTITY_THRESHOLD), else `pending`. */
  status: 'active' | 'pending';
  /** Decision: decided_by, date, status, context, and superseded_by when a later decision replaced it. */
  properties: Record<string, string>;
  aliases: string[];
  source_fact_ids: string[];
  created_at: string;
  updated_at: string;
  /** Platform id of the message of the earliest mention, and its time. */
  source_message_id: string;
  message_ts: string;
  /** Noisy-or of the mentions' confidences: 1 − Π(1 − cᵢ), in [0, 1]. */
  confidence: number;
  /** Messages that mention it. */
  mention_count: number;
  last_mentioned_at: string;
}

/** Spec "Relationship" (list form). valid_from/valid_until are dates (YYYY-MM-DD). */
export interface GraphRelationship {
  id: string;
  type: RelationshipType;
  /** Source and target entity names (spec); their ids beside them. */
  source: string;
  target: string;
  source_id: string;
  target_id: string;
  channel_id: string;
  /** Noisy-or of the evidence confidences. */
  confidence: number;
  valid_from: string;
  valid_until: string | null;
  context: string;
  source_message_id: string;
  source_fact_id: string | null;
  created_at: string;
}

/** A node of a graph query result. */
export interface GraphNode {
  id: string;
  name: string;
  type: EntityType;
  channel_id: string;
}

/** Result of neighbors, subgraph, path and common-neighbors: nodes, and the relationships among them. */
export interface Subgraph {
  nodes: GraphNode[];
  edges: GraphRelationship[];
}

/**
 * A read as of an instant (issue 27 point 2, "As of a date"): `asOf` an ISO 8601 UTC timestamp. The graph is then the
 * fold of the contributions of messages at or before it: entities first mentioned by then (their names, aliases,
 * confidence, source facts, mention counts and properties from those mentions; a certain supersession only when its
 * message is that old, so a decision superseded later is not `superseded` then), and relationships with evidence by
 * then that were valid then (valid_from ≤ the as-of date, valid_until null or after it; UTC dates), folded from that
 * evidence. created_at/updated_at of an as-of entity or relationship are its first and last contribution's message
 * times. Without `asOf`: now (the stored folds).
 */
export interface GraphAsOf {
  asOf?: string | undefined;
}

/** Filters of GET /api/graph/entities. */
export interface EntityQuery extends GraphAsOf {
  channelId: string;
  type?: EntityType | undefined;
  status?: 'active' | 'pending' | undefined;
  limit: number;
}

/** Filters of GET /api/graph/relationships; source/target match entity names after normalizeEntityName. */
export interface RelationshipQuery extends GraphAsOf {
  channelId: string;
  type?: RelationshipType | undefined;
  source?: string | undefined;
  target?: string | undefined;
  limit: number;
}

/** Entities sharing one (type, normalised name) across channels: the unit of an entity card. */
export interface EntityGroup {
  type: EntityType;
  /** normalizeEntityName of the name. */
  key: string;
  /** The name of the group's most mentioned entity. */
  name: string;
  entity_ids: string[];
  channel_ids: string[];
  /** Distinct source facts over the group. */
  fact_count: number;
  last_mentioned_at: string;
}

/**
 * The graph store: entities (channel-scoped), relationships between them, and decision supersessions,
 * written only by the graph projector (and the entity backfill) and read by the query service.
 *
 * Write model. Each message contributes mentions (its EntitiesExtracted.entities), relationship evidence
 * and supersessions. `applyMessageGraphs` replaces a message's earlier contribution with the new one
 * (an empty set retracts it), then re-folds every entity and relationship it touched:
 * - entity: name and source_message_id/message_ts of the earliest mention (ties: smaller message id);
 *   aliases = union of the mentions' aliases minus the name (case-insensitive), sorted; source_fact_ids =
 *   union, in mention order; confidence = noisy-or; properties = mentions' properties merged oldest first,
 *   then, when a supersession names it as oldEntityId with certain=true, status `superseded` and
 *   superseded_by = the name of the newest such newEntityId; created_at kept from the first fold;
 *   an entity left with no mention is deleted, with its relationships.
 * - relationship (id = relationshipUuid(type, sourceId, targetId)): confidence = noisy-or of its evidence;
 *   valid_from, context, source_message_id, source_fact_id of the earliest evidence (by valid_from, then
 *   message time); valid_until of the latest evidence; deleted when no evidence is left.
 * Every relationship's ends must be entities of the same event (AtlasError INVALID_REQUEST otherwise).
 * Idempotent: applying the same sets again changes nothing but updated_at.
 *
 * Reads never return an entity of another channel unless asked across channels (findEntities, groups). Every read
 * takes an optional `asOf` (GraphAsOf): the graph as it stood then.
 * Traversals treat relationships as undirected. Errors: AtlasError STORE_UNAVAILABLE (retriable) when
 * the backing server is down.
 */
/**
 * What GraphStore.entityGroups reads: one channel's groups (each still aggregated over every channel) or all,
 * `channels` the caller's visible ones, an entity type, at most `limit` groups, as of a date (GraphAsOf).
 */
export type EntityGroupQuery = {
  channelId?: string | undefined;
  channels?: readonly string[] | undefined;
  type?: EntityType | undefined;
  limit: number;
} & GraphAsOf;

export interface GraphStore {
  /** Replaces the contribution of each message (in order), see above. */
  applyMessageGraphs(sets: readonly EntitiesExtracted[]): Promise<void>;
  /** Deletes everything (before a replay rebuilds it). */
  truncate(): Promise<void>;
  /** Deletes a channel's entities and relationships; returns how many of each. */
  deleteChannel(channelId: string): Promise<{ entities: number; relationships: number }>;

  /** A channel's entities, most mentioned first (then name); status and type filters as given. */
  listEntities(q: EntityQuery): Promise<GraphEntity[]>;
  /**
   * listEntities for several queries (each its own channel, filters and limit), answered in order: what a batched
   * pass reads for many channels at once (the wiki's people and decisions of every stale channel).
   */
  listEntitiesMany(queries: readonly EntityQuery[]): Promise<GraphEntity[][]>;
  /** null when unknown (or, with `asOf`, not mentioned by then). */
  getEntity(id: string, at?: GraphAsOf): Promise<GraphEntity | null>;
  /** Entities by ids (unknown ids, and with `asOf` those not mentioned by then, are left out), in no particular order. */
  getEntities(ids: readonly string[], at?: GraphAsOf): Promise<GraphEntity[]>;
  /**
   * Entities whose normalised name or one of whose normalised aliases equals one of `names` (normalised
   * here), in one channel or in all; most mentioned first.
   */
  findEntities(
    q: {
      names: readonly string[];
      channelId?: string | undefined;
      type?: EntityType | undefined;
    } & GraphAsOf,
  ): Promise<GraphEntity[]>;
  /** A channel's relationships, highest confidence first (then valid_from, id). */
  listRelationships(q: RelationshipQuery): Promise<GraphRelationship[]>;

  /**
   * Breadth-first neighbourhood of the seeds, up to `depth` hops (1..3) over relationships in either
   * direction. nodes: the seeds first, then up to `limit` other entities by (hops, relationship confidence
   * desc, name); edges: every relationship between two returned nodes.
   */
  neighborhood(seedIds: readonly string[], q: { depth: number; limit: number } & GraphAsOf): Promise<Subgraph>;
  /**
   * The relationships that touch the given entities: one end among `entityIds`, the other end not (relationships
   * between two other entities, and among the given ones, are left out), each with its other end as a node, highest
   * confidence first (then valid_from, id), at most `limit`. What an entity card's related_entities lists (spec
   * "Entity card"). Unknown ids touch nothing.
   */
  incidentRelationships(
    entityIds: readonly string[],
    q: { limit: number } & GraphAsOf,
  ): Promise<{ relationship: GraphRelationship; other: GraphNode }[]>;
  /**
   * A shortest path (fewest hops, at most maxDepth) from any of sourceIds to any of targetIds, undirected.
   * nodes in path order, edges in path order (edge i joins nodes i and i+1); null when there is none.
   */
  shortestPath(
    sourceIds: readonly string[],
    targetIds: readonly string[],
    maxDepth: number,
    at?: GraphAsOf,
  ): Promise<Subgraph | null>;
  /**
   * Entities adjacent to every group (a group is the entities one queried name resolved to): nodes are
   * the common neighbours (by summed relationship confidence desc, then name), edges join each group
   * member to each common neighbour.
   */
  commonNeighbors(groups: readonly (readonly string[])[], at?: GraphAsOf): Promise<Subgraph>;

  /**
   * Entity groups (cards) across channels, most facts first; optional channel and type filters. `channels` (a
   * restricted caller's visible channels) leaves every entity and fact of other channels out of the groups, their
   * entity_ids, channel_ids and fact_count.
   */
  entityGroups(q: EntityGroupQuery): Promise<EntityGroup[]>;
  /**
   * Nodes and relationships stored (spec "Metrics" storage.graph_store_nodes/relationships), or those of one channel
   * (what deleteChannel would delete; DELETE /api/channels/{channel_id}/data deleted_entities).
   */
  counts(channelId?: string): Promise<{ nodes: number; relationships: number }>;
  /** Resolves when the backing server answers; AtlasError STORE_UNAVAILABLE otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
