import { type ExtractedRelationship, relationshipUuid } from '@atlas/core';

/**
 * One relationship of a validated EntitiesExtracted as the evidence both graph stores keep: its id (relationshipUuid
 * of type, source and target), type, end ids, confidence, valid_from/valid_until as dates (YYYY-MM-DD; valid_until
 * null while the relationship holds), context and source fact id. Pure.
 */
export const evidenceOf = (r: ExtractedRelationship) => ({
  id: relationshipUuid(r.type, r.sourceId, r.targetId),
  type: r.type,
  source_id: r.sourceId,
  target_id: r.targetId,
  confidence: r.confidence,
  valid_from: r.validFrom.slice(0, 10),
  valid_until: r.validUntil === null ? null : r.validUntil.slice(0, 10),
  context: r.context,
  source_fact_id: r.sourceFactId,
});
