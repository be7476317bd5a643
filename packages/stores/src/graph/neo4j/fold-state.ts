// What the folds of applyMessageGraphs read: the touched entities' mentions, their supersessions, the evidence.
import type { ManagedTransaction } from 'neo4j-driver';
import { type Row, run } from './cypher.js';

/** One (:Message)-[:MENTIONS]->(:Entity) mention as the entity fold reads it (`ts`: the message's ISO time). */
export interface MentionRow {
  uuid: string;
  ts: string;
  smid: string;
  ord: number;
  name: string;
  aliases: string[];
  confidence: number;
  fact_ids: string[];
  props: string;
}

/** A (:RelEvidence) node: one relationship as one message stated it (dates YYYY-MM-DD, message_ts ISO). */
export interface EvidenceRow {
  message_uuid: string;
  channel_id: string;
  rel_id: string;
  type: string;
  source_id: string;
  target_id: string;
  confidence: number;
  valid_from: string;
  valid_until: string | null;
  context: string;
  source_fact_id: string | null;
  source_message_id: string;
  message_ts: string;
  ord: number;
}

/** What the folds need: per entity its mentions, the certain supersessions around them, the relationships' evidence. */
export interface FoldState {
  entities: { id: string; mentions: MentionRow[] }[];
  supersessions: Row[];
  evidence: EvidenceRow[];
}

/** A folded relationship's identity and ends. */
export interface RelRef {
  id: string;
  source_id: string;
  target_id: string;
}

/**
 * One read for the folds (one round trip in `tx`, namespace `ns`): the mentions of the `touched` entities and of the
 * entities a certain supersession says a touched one replaced (their superseded_by shows its name), those
 * supersessions with their new entity's current name and message_ts, and the evidence of the relationships `relIds`.
 */
export async function readFoldState(
  tx: ManagedTransaction,
  ns: string,
  touched: string[],
  relIds: string[],
): Promise<FoldState> {
  const [r] = await run(
    tx,
    `CALL () {
       MATCH (s:Supersession {ns: $ns}) WHERE s.new_entity_id IN $ids AND s.certain
       RETURN $ids + [x IN collect(DISTINCT s.old_entity_id) WHERE NOT x IN $ids] AS ids
     }
     CALL (ids) {
       UNWIND ids AS id
       MATCH (e:Entity {ns: $ns, id: id})
       OPTIONAL MATCH (m:Message)-[k:MENTIONS]->(e)
       WITH e, collect(CASE WHEN m IS NULL THEN null ELSE {uuid: m.uuid, ts: m.message_ts, smid: m.source_message_id,
         ord: k.ord, name: k.name, aliases: k.aliases, confidence: k.confidence, fact_ids: k.fact_ids, props: k.props}
         END) AS mentions
       RETURN collect({id: e.id, mentions: mentions}) AS entities
     }
     CALL (ids) {
       MATCH (s:Supersession {ns: $ns}) WHERE s.old_entity_id IN ids AND s.certain
       OPTIONAL MATCH (n:Entity {ns: $ns, id: s.new_entity_id})
       RETURN collect({old_id: s.old_entity_id, new_id: s.new_entity_id, ts: s.message_ts, uuid: s.message_uuid,
                       ord: s.ord, new_name: n.name, new_ts: n.message_ts}) AS supersessions
     }
     CALL () {
       MATCH (v:RelEvidence {ns: $ns}) WHERE v.rel_id IN $relIds
       RETURN collect(v {.*}) AS evidence
     }
     RETURN entities, supersessions, evidence`,
    { ns, ids: touched, relIds },
  );
  return {
    entities: (r?.entities as FoldState['entities']) ?? [],
    supersessions: (r?.supersessions as Row[]) ?? [],
    evidence: (r?.evidence as EvidenceRow[]) ?? [],
  };
}
