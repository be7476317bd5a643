import { z } from 'zod';
import { LifecycleItemDetailSchema } from './decisions.js';
import {
  Count,
  DateOnly,
  EntityStatus,
  EntityType,
  FactType,
  Id,
  NonNegative,
  orNull,
  RelationshipType,
  Timestamp,
  Unit,
} from './primitives.js';

/*
 * The knowledge graph (spec "Resources and their fields → Graph entity", "Relationship", "Decision record", "Entity
 * card"; "Endpoints → Graph").
 */

const entityCore = {
  id: Id,
  name: z.string().min(1),
  type: EntityType,
  scope: z.string().min(1), // `channel` is seen; other values not shown
  channel_id: Id,
  status: EntityStatus,
  properties: z.record(z.string(), z.unknown()),
  aliases: z.array(z.string()),
  source_fact_ids: z.array(Id),
  created_at: Timestamp,
  updated_at: Timestamp,
};

/** Spec "Graph entity", list form (GET /api/graph/entities): source_message_id and message_ts are single-entity only. */
export const GraphEntitySchema = z.strictObject(entityCore);

/** Spec "Graph entity", single-entity form (GET /api/graph/entities/{entity_id}). */
export const GraphEntityDetailSchema = z.strictObject({ ...entityCore, source_message_id: Id, message_ts: Timestamp });

const edgeCore = {
  id: Id,
  type: RelationshipType,
  source: z.string().min(1),
  target: z.string().min(1),
  confidence: Unit,
  valid_from: DateOnly,
  context: z.string(),
  source_message_id: Id,
};

/** Spec "Relationship", relationship list form (GET /api/graph/relationships): adds source_fact_id and created_at. */
export const RelationshipSchema = z.strictObject({
  ...edgeCore,
  valid_until: orNull(DateOnly),
  source_fact_id: Id,
  created_at: Timestamp,
});

/** Spec "Neighbor edges carry id, type, source, target, confidence, context, valid_from, source_message_id". */
export const NeighborEdgeSchema = z.strictObject(edgeCore);

/** Spec "GET /api/graph/entities/{entity_id}/neighbors": `{nodes: [{id, name, type}], edges: [neighbor edges]}`. */
export const NeighborsSchema = z.strictObject({
  nodes: z.array(z.strictObject({ id: Id, name: z.string().min(1), type: EntityType })),
  edges: z.array(NeighborEdgeSchema),
});

/**
 * Subgraph and common-neighbors (spec: shapes not shown; README "Knowledge graph": `{nodes: [{id, name, type,
 * channel_id}], edges: [neighbor edges]}`).
 */
export const SubgraphSchema = z.strictObject({
  nodes: z.array(z.strictObject({ id: Id, name: z.string().min(1), type: EntityType, channel_id: Id })),
  edges: z.array(NeighborEdgeSchema),
});

/** Path (README "Knowledge graph"): the subgraph shape in path order plus `length` (hops), null when there is no path. */
export const GraphPathSchema = z
  .strictObject({ ...SubgraphSchema.shape, length: orNull(Count) })
  .refine((p) => (p.length === null ? p.edges.length === 0 : p.edges.length === p.length), 'length counts the edges');

/**
 * Spec "Decision record": name, decided_by, status (`implemented` seen; README "Knowledge graph" documents agreed,
 * implemented, proposed, superseded), superseded_by (string or null), date, context.
 */
export const DecisionRecordSchema = z.strictObject({
  name: z.string().min(1),
  decided_by: z.string(),
  status: z.enum(['agreed', 'implemented', 'proposed', 'superseded']),
  superseded_by: orNull(z.string().min(1)),
  date: DateOnly,
  context: z.string(),
});

/** Spec "Entity card" related_entities entry: name, type, relationship (a relationship type). */
export const RelatedEntitySchema = z.strictObject({
  name: z.string().min(1),
  type: EntityType,
  relationship: RelationshipType,
});

/** Spec "Entity card (cross-channel aggregate)". */
export const EntityCardSchema = z.strictObject({
  id: Id,
  tier: z.literal('entity_card'),
  entity_id: Id,
  entity_name: z.string().min(1),
  entity_type: EntityType,
  channel_ids: z.array(Id).min(1),
  cluster_ids: z.array(Id),
  fact_count: Count,
  fact_type_breakdown: z.partialRecord(FactType, Count),
  key_facts: z.array(z.string().min(1)),
  related_entities: z.array(RelatedEntitySchema),
  last_mentioned_at: Timestamp,
  staleness_score: NonNegative,
  summary: z.string().min(1),
  updated_at: Timestamp,
});

/**
 * GET /api/graph/entities/{entity_name}/card: the spec's card and `lifecycle`, a documented addition (issue 27 point 1,
 * docs/graph.md "Routes"): the lifecycle items opened by the card's source facts, in the detail form of
 * GET /api/decisions/{item_id}, newest opened first; with `as_of`, each as it stood then. (The wiki entity page's
 * `card` is the spec card alone.)
 */
export const EntityCardWithLifecycleSchema = EntityCardSchema.extend({
  lifecycle: z.array(LifecycleItemDetailSchema), // documented addition
});

/** Spec "Card list entry": entity_id, entity_name, entity_type, fact_count, staleness_score. */
export const CardListEntrySchema = z.strictObject({
  entity_id: Id,
  entity_name: z.string().min(1),
  entity_type: EntityType,
  fact_count: Count,
  staleness_score: NonNegative,
});
