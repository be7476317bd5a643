type Time = Date | string;

/** The columns of an entity that its mention rows and its fold share (`norm`, `alias_norms`: normalizeEntityName). */
type EntityColumns = {
  channel_id: string;
  type: string;
  name: string;
  norm: string;
  aliases: string[];
  alias_norms: string[];
  confidence: number;
  properties: unknown;
  message_ts: Time;
  source_message_id: string;
};

/** The columns of a relationship that its evidence rows and its fold share (dates YYYY-MM-DD on write). */
type RelationshipColumns = {
  channel_id: string;
  type: string;
  source_id: string;
  target_id: string;
  confidence: number;
  valid_from: Time;
  valid_until: Time | null;
  context: string;
  source_message_id: string;
  source_fact_id: string | null;
};

/**
 * The Postgres graph store's tables (postgres-graph.ts, postgres-fold.ts; migrateGraph creates them): the
 * per-message contributions (mentions, evidence, supersessions) and their folds (entities, relationships). Dates
 * (`valid_from`, `valid_until`) and times as the driver returns them. A type, not an interface: `withTables<T>()`
 * takes only types with an implicit index signature.
 */
export type GraphTables = {
  graph_mentions: EntityColumns & {
    message_uuid: string;
    ord: number;
    entity_id: string;
    fact_ids: string[];
  };
  graph_evidence: RelationshipColumns & {
    message_uuid: string;
    ord: number;
    relationship_id: string;
    message_ts: Time;
  };
  graph_supersessions: {
    message_uuid: string;
    ord: number;
    channel_id: string;
    fact_id: string;
    superseded_by: string;
    old_entity_id: string;
    new_entity_id: string;
    certain: boolean;
    message_ts: Time;
  };
  graph_entities: EntityColumns & {
    id: string;
    source_fact_ids: string[];
    mention_count: number;
    last_mentioned_at: Time;
    created_at: Time;
    updated_at: Time;
  };
  graph_relationships: RelationshipColumns & {
    id: string;
    created_at: Time;
    updated_at: Time;
  };
};
