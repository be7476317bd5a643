// The steps of applyMessageGraphs around the folds: each message's contribution as rows, its replacement in the
// graph (with what it touched), and the write of the folded entities and relationships.
import type { EntitiesExtracted } from '@atlas/core';
import type { ManagedTransaction } from 'neo4j-driver';
import { evidenceOf } from '../evidence.js';
import { isoTs, type Row, run } from './cypher.js';
import type { RelRef } from './fold-state.js';

/** A batch's contribution to the graph, as the rows the replacement step writes (see neo4j-graph.ts). */
export interface Contribution {
  /** Message ids (UUID) of the batch, the last set of each message only. */
  uuids: string[];
  /** Channels of the batch, sorted (the lock order). */
  channels: string[];
  /** (:Message) rows: messages that mention at least one entity. */
  messages: Row[];
  /** [:MENTIONS] rows, one per entity of each set (`ord`: its index there). */
  mentions: Row[];
  /** (:RelEvidence) rows, one per relationship of each set. */
  evidence: Row[];
  /** (:Supersession) rows, those naming both entities. */
  supersessions: Row[];
}

/**
 * The rows of a batch's contribution under namespace `ns`. The last set of a message is its contribution: earlier
 * sets of the same message in the batch are replaced. Timestamps become ISO 8601 UTC with milliseconds, relationship
 * dates YYYY-MM-DD. Pure; the sets are validated before (validateEntitySet).
 */
export function contributionOf(sets: readonly EntitiesExtracted[], ns: string): Contribution {
  const last = new Map<string, EntitiesExtracted>();
  for (const s of sets) {
    last.delete(s.messageId);
    last.set(s.messageId, s);
  }
  const finals = [...last.values()];
  const uuids = finals.map((s) => s.messageId);

  const messages: Row[] = [];
  const mentions: Row[] = [];
  const evidence: Row[] = [];
  const supersessions: Row[] = [];
  for (const s of finals) {
    const ts = isoTs(s.messageTs);
    if (s.entities.length > 0) {
      messages.push({
        uuid: s.messageId,
        channel_id: s.channelId,
        source_message_id: s.sourceMessageId,
        message_ts: ts,
      });
    }
    s.entities.forEach((e, ord) => {
      mentions.push({
        uuid: s.messageId,
        entity_id: e.entityId,
        channel_id: s.channelId,
        type: e.type,
        ord,
        name: e.name,
        aliases: [...new Set(e.aliases.filter((a) => a.trim() !== ''))],
        confidence: e.confidence,
        fact_ids: [...new Set(e.factIds)],
        props: JSON.stringify(e.properties),
      });
    });
    s.relationships.forEach((r, ord) => {
      const { id, ...columns } = evidenceOf(r);
      evidence.push({
        ns: ns,
        message_uuid: s.messageId,
        channel_id: s.channelId,
        rel_id: id,
        ...columns,
        source_message_id: s.sourceMessageId,
        message_ts: ts,
        ord,
      });
    });
    s.supersessions.forEach((x, ord) => {
      // Without both entity ids a supersession concerns facts only: nothing of the graph depends on it.
      if (x.oldEntityId === null || x.newEntityId === null) return;
      supersessions.push({
        ns: ns,
        message_uuid: s.messageId,
        channel_id: s.channelId,
        message_ts: ts,
        ord,
        fact_id: x.factId,
        superseded_by: x.supersededBy,
        old_entity_id: x.oldEntityId,
        new_entity_id: x.newEntityId,
        certain: x.certain,
        invalid_at: x.invalidAt,
        reason: x.reason,
      });
    });
  }
  const channels = [...new Set(finals.map((s) => s.channelId))].sort();
  return { uuids, channels, messages, mentions, evidence, supersessions };
}

/**
 * Step 1 (one round trip in `tx`): locks the channels, collects what the messages contributed before and replaces
 * it with `c`. Returns the entities whose fold may change (mentioned or superseded before or now) and the
 * relationships whose evidence changed.
 */
export async function replaceContributions(
  tx: ManagedTransaction,
  ns: string,
  now: string,
  c: Contribution,
): Promise<{ touched: string[]; rels: RelRef[] }> {
  const { channels, uuids, messages, mentions, evidence, supersessions } = c;
  const [old] = await run(
    tx,
    `CALL () {
       UNWIND $channels AS c
       MERGE (l:ChannelLock {ns: $ns, channel_id: c})
       SET l.locked_at = $now
     }
     CALL () {
       MATCH (m:Message {ns: $ns})-[:MENTIONS]->(e:Entity) WHERE m.uuid IN $uuids
       RETURN collect(DISTINCT e.id) AS entities
     }
     CALL () {
       MATCH (v:RelEvidence {ns: $ns}) WHERE v.message_uuid IN $uuids
       RETURN collect(DISTINCT {id: v.rel_id, source_id: v.source_id, target_id: v.target_id}) AS rels
     }
     CALL () {
       MATCH (s:Supersession {ns: $ns}) WHERE s.message_uuid IN $uuids
       RETURN collect(DISTINCT s.old_entity_id) AS superseded
     }
     CALL () { MATCH (m:Message {ns: $ns}) WHERE m.uuid IN $uuids DETACH DELETE m }
     CALL () { MATCH (v:RelEvidence {ns: $ns}) WHERE v.message_uuid IN $uuids DELETE v }
     CALL () { MATCH (s:Supersession {ns: $ns}) WHERE s.message_uuid IN $uuids DELETE s }
     CALL () {
       UNWIND $messages AS r
       CREATE (:Message {ns: $ns, uuid: r.uuid, channel_id: r.channel_id, source_message_id: r.source_message_id,
                         message_ts: r.message_ts})
     }
     CALL () {
       UNWIND $mentions AS r
       MATCH (m:Message {ns: $ns, uuid: r.uuid})
       MERGE (e:Entity {ns: $ns, id: r.entity_id})
         ON CREATE SET e.channel_id = r.channel_id, e.type = r.type, e.name = r.name, e.mention_count = 0
       CREATE (m)-[:MENTIONS {ord: r.ord, name: r.name, aliases: r.aliases, confidence: r.confidence,
                              fact_ids: r.fact_ids, props: r.props}]->(e)
     }
     CALL () { UNWIND $evidence AS r CREATE (v:RelEvidence) SET v = r }
     CALL () { UNWIND $supersessions AS r CREATE (s:Supersession) SET s = r }
     RETURN entities, rels, superseded`,
    { ns, now, channels, uuids, messages, mentions, evidence, supersessions },
  );
  const touched = new Set<string>([
    ...((old?.entities as string[]) ?? []),
    ...((old?.superseded as string[]) ?? []),
    ...mentions.map((m) => m.entity_id as string),
    ...supersessions.map((x) => x.old_entity_id as string),
  ]);
  const rels = new Map<string, RelRef>();
  for (const r of (old?.rels as RelRef[]) ?? []) rels.set(r.id, r);
  for (const v of evidence) {
    const id = v.rel_id as string;
    rels.set(id, { id, source_id: v.source_id as string, target_id: v.target_id as string });
  }
  return { touched: [...touched], rels: [...rels.values()] };
}

/**
 * Step 3 (one round trip in `tx`): sets the folded entities, deletes those left without a mention and the
 * relationships left without evidence, and merges the folded relationships.
 */
export async function writeFolds(
  tx: ManagedTransaction,
  ns: string,
  now: string,
  entities: { rows: Row[]; gone: string[] },
  relationships: { rows: Row[]; gone: RelRef[] },
): Promise<void> {
  await run(
    tx,
    `CALL () {
       UNWIND $entityRows AS r
       MATCH (e:Entity {ns: $ns, id: r.id})
       SET e += r.fields, e.created_at = coalesce(e.created_at, $now)
     }
     CALL () { MATCH (e:Entity {ns: $ns}) WHERE e.id IN $goneEntities DETACH DELETE e }
     CALL () {
       UNWIND $goneRels AS r
       MATCH (:Entity {ns: $ns, id: r.source_id})-[x:REL {id: r.id}]->(:Entity {ns: $ns, id: r.target_id})
       DELETE x
     }
     CALL () {
       UNWIND $relRows AS r
       MATCH (a:Entity {ns: $ns, id: r.source_id}), (b:Entity {ns: $ns, id: r.target_id})
       MERGE (a)-[x:REL {id: r.id}]->(b)
         ON CREATE SET x.created_at = $now
       SET x += r.fields
     }
     RETURN count(*) AS done`,
    {
      ns,
      now,
      entityRows: entities.rows,
      goneEntities: entities.gone,
      goneRels: relationships.gone,
      relRows: relationships.rows,
    },
  );
}
