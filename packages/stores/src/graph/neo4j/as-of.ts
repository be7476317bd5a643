// The graph as of an instant on Neo4j (issue 27 point 2): the contributions of messages at or before it, read back as
// the events that wrote them, so that applying them to a scratch namespace folds exactly as the store folds today.
import type { EntitiesExtracted, EntityType, RelationshipType } from '@atlas/core';
import type { ManagedTransaction } from 'neo4j-driver';
import { type Row, run } from './cypher.js';

/**
 * The messages' graph contributions stated at or before `asOf` (ISO 8601 UTC with milliseconds, as message_ts is
 * stored) in namespace `ns`, in one channel or all, rebuilt as EntitiesExtracted (oldest first): each message's
 * mentions (in their order), relationship evidence and supersessions as it wrote them. `platform`, `extractor` and
 * `extractedAt` are not stored by the graph store and not read by its folds: they are filled with placeholders.
 */
export async function contributionsAsOf(
  tx: ManagedTransaction,
  ns: string,
  asOf: string,
  channelId: string | undefined,
): Promise<EntitiesExtracted[]> {
  const [r] = await run(
    tx,
    `CALL () {
       MATCH (m:Message {ns: $ns}) WHERE m.message_ts <= $at AND ($c IS NULL OR m.channel_id = $c)
       OPTIONAL MATCH (m)-[k:MENTIONS]->(e:Entity)
       WITH m, k, e ORDER BY k.ord
       WITH m, collect(CASE WHEN k IS NULL THEN null ELSE {entity_id: e.id, type: e.type, ord: k.ord, name: k.name,
         aliases: k.aliases, confidence: k.confidence, fact_ids: k.fact_ids, props: k.props} END) AS mentions
       RETURN collect({uuid: m.uuid, channel_id: m.channel_id, source_message_id: m.source_message_id,
         message_ts: m.message_ts, mentions: mentions}) AS messages
     }
     CALL () {
       MATCH (v:RelEvidence {ns: $ns}) WHERE v.message_ts <= $at AND ($c IS NULL OR v.channel_id = $c)
       RETURN collect(v {.*}) AS evidence
     }
     CALL () {
       MATCH (s:Supersession {ns: $ns}) WHERE s.message_ts <= $at AND ($c IS NULL OR s.channel_id = $c)
       RETURN collect(s {.*}) AS supersessions
     }
     RETURN messages, evidence, supersessions`,
    { ns, at: asOf, c: channelId ?? null },
  );
  const sets = new Map<string, EntitiesExtracted>();
  for (const m of (r?.messages as Row[]) ?? []) {
    sets.set(m.uuid as string, {
      messageId: m.uuid as string,
      platform: 'platform_a', // not stored by the graph store (see above)
      channelId: m.channel_id as string,
      sourceMessageId: m.source_message_id as string,
      messageTs: m.message_ts as string,
      extractor: 'as-of',
      extractedAt: asOf,
      entities: ((m.mentions as Row[]) ?? []).map((k) => ({
        entityId: k.entity_id as string,
        type: k.type as EntityType,
        name: k.name as string,
        aliases: (k.aliases as string[]) ?? [],
        confidence: Number(k.confidence),
        factIds: (k.fact_ids as string[]) ?? [],
        properties: JSON.parse((k.props as string) ?? '{}') as Record<string, string>,
      })),
      relationships: [],
      supersessions: [],
    });
  }
  const byOrd = (a: Row, b: Row) => Number(a.ord) - Number(b.ord);
  for (const v of ((r?.evidence as Row[]) ?? []).sort(byOrd))
    sets.get(v.message_uuid as string)?.relationships.push({
      type: v.type as RelationshipType,
      sourceId: v.source_id as string,
      targetId: v.target_id as string,
      confidence: Number(v.confidence),
      validFrom: v.valid_from as string,
      validUntil: (v.valid_until as string | null) ?? null,
      context: v.context as string,
      sourceFactId: (v.source_fact_id as string | null) ?? null,
    });
  for (const s of ((r?.supersessions as Row[]) ?? []).sort(byOrd))
    sets.get(s.message_uuid as string)?.supersessions.push({
      factId: s.fact_id as string,
      supersededBy: s.superseded_by as string,
      oldEntityId: s.old_entity_id as string,
      newEntityId: s.new_entity_id as string,
      invalidAt: s.invalid_at as string,
      certain: Boolean(s.certain),
      reason: (s.reason as string) ?? '',
    });
  return [...sets.values()].sort((a, b) => (a.messageTs < b.messageTs ? -1 : a.messageTs > b.messageTs ? 1 : 0));
}

/**
 * In the scratch namespace `ns` of an as-of view: drops the relationships not valid on `day` (YYYY-MM-DD: valid_from
 * after it, or valid_until on or before it) and sets each entity's and relationship's created_at/updated_at to its
 * first and last contribution's message time (the port's as-of times).
 */
export async function settleAsOfView(tx: ManagedTransaction, ns: string, day: string): Promise<void> {
  await run(
    tx,
    `CALL () {
       MATCH (:Entity {ns: $ns})-[x:REL]->(:Entity {ns: $ns})
       WHERE x.valid_from > $day OR (x.valid_until IS NOT NULL AND x.valid_until <= $day)
       DELETE x
     }
     CALL () {
       MATCH (e:Entity {ns: $ns}) SET e.created_at = e.message_ts, e.updated_at = e.last_mentioned_at
     }
     CALL () {
       MATCH (a:Entity {ns: $ns})-[x:REL]->(b:Entity {ns: $ns})
       OPTIONAL MATCH (v:RelEvidence {ns: $ns, rel_id: x.id})
       WITH x, min(v.message_ts) AS first, max(v.message_ts) AS last
       SET x.created_at = coalesce(first, x.created_at), x.updated_at = coalesce(last, x.updated_at)
     }
     RETURN 1 AS done`,
    { ns, day },
  );
}
