import { AtlasError, type EntitiesExtracted } from '@atlas/core';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}/;

/**
 * Checks one EntitiesExtracted before a graph store writes anything (both adapters): ids are UUIDs, messageTs
 * parses, relationship dates start with YYYY-MM-DD, and both ends of every relationship are entities of the
 * event (GraphStore port). Throws AtlasError INVALID_REQUEST naming the message and the fault.
 */
export const validateEntitySet = (s: EntitiesExtracted): void => {
  const bad = (message: string, details: Record<string, unknown> = {}): never => {
    throw new AtlasError('INVALID_REQUEST', `EntitiesExtracted ${s.messageId}: ${message}`, {
      details: { messageId: s.messageId, ...details },
    });
  };
  if (!UUID.test(s.messageId)) bad('messageId is not a UUID');
  if (Number.isNaN(Date.parse(s.messageTs))) bad(`messageTs ${JSON.stringify(s.messageTs)} is not a time`);
  const ids = new Set<string>();
  for (const e of s.entities) {
    if (!UUID.test(e.entityId)) bad(`entity id ${JSON.stringify(e.entityId)} is not a UUID`);
    if (e.factIds.some((f) => !UUID.test(f))) bad(`entity ${e.entityId} has a fact id that is not a UUID`);
    ids.add(e.entityId);
  }
  for (const r of s.relationships) {
    for (const end of [r.sourceId, r.targetId]) {
      if (!ids.has(end)) {
        bad(`relationship ${r.type} ${r.sourceId} → ${r.targetId}: ${end} is not an entity of the event`, {
          type: r.type,
          sourceId: r.sourceId,
          targetId: r.targetId,
        });
      }
    }
    if (!DATE.test(r.validFrom)) bad(`relationship validFrom ${JSON.stringify(r.validFrom)} is not YYYY-MM-DD`);
    if (r.validUntil !== null && !DATE.test(r.validUntil)) {
      bad(`relationship validUntil ${JSON.stringify(r.validUntil)} is not YYYY-MM-DD`);
    }
  }
  for (const x of s.supersessions) {
    for (const id of [x.factId, x.supersededBy, x.oldEntityId, x.newEntityId]) {
      if (id !== null && !UUID.test(id)) bad(`supersession id ${JSON.stringify(id)} is not a UUID`);
    }
  }
};
