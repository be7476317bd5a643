import type { Generated } from 'kysely';

/** The entities projector's state and the entity backlog (entity-state.ts; migrateEntityState creates them).
 * A type, not an interface:
 * `withTables<T>()` takes only types with an implicit index signature. */
export type EntityStateTables = {
  entity_people: { channel_id: string; norm: string; name: string; aliases: string[] };
  entity_decisions: {
    channel_id: string;
    entity_id: string;
    message_uuid: string;
    name: string;
    fact_id: string;
    message_ts: string;
    decided_by: string;
    topic_keys: string[];
    superseded: Generated<boolean>;
  };
  entity_messages: { message_uuid: string; channel_id: string };
  entity_extractions: { message_uuid: string; channel_id: string; input_digest: string; output: unknown };
  entity_owners: {
    channel_id: string;
    subject_key: string;
    message_uuid: string;
    subject: string;
    owner: string;
    fact_id: string;
    message_ts: string;
  };
  entity_backlog: {
    message_uuid: string;
    stage: string;
    channel_id: string;
    payload: unknown;
    reason: Generated<string>;
    queued_at: Generated<string>;
  };
};
