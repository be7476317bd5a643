import { v5 as uuidv5 } from 'uuid';

/** Namespace of every Atlas UUID v5 (fixed forever: changing it changes every id). */
export const ATLAS_NAMESPACE = '6f1d4a4e-3c0b-5b8e-9a57-0d7a0c9e2a11';

/**
 * Deterministic id from source ids: the same parts always give the same UUID v5.
 * Projectors use these so that at-least-once delivery stays idempotent (ARCHITECTURE.md).
 */
export const deterministicId = (...parts: readonly string[]): string => uuidv5(parts.join('\u241f'), ATLAS_NAMESPACE);

/** Internal message id: UUID v5 of (platform, channel id, platform message id). */
export const messageUuid = (platform: string, channelId: string, platformMessageId: string): string =>
  deterministicId('message', platform, channelId, platformMessageId);

/** Fact id: UUID v5 of (message uuid, normalised fact text). Re-extraction of the same text keeps the id. */
export const factUuid = (messageId: string, memoryText: string): string =>
  deterministicId('fact', messageId, memoryText.trim().toLowerCase().replace(/\s+/g, ' '));

/**
 * Normalised entity name, the key of de-duplication (within a channel, and across channels for cards):
 * NFKC, lower case, a leading `@`/`#` dropped, `_`/`-`/whitespace runs as one space, surrounding
 * punctuation dropped. `@Alice_Chen` and `alice chen` give `alice chen`; `Node.js` gives `node.js`.
 */
export const normalizeEntityName = (name: string): string =>
  name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/^[@#]+/, '')
    .replace(/[\s_\-\u2010-\u2015]+/g, ' ')
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}+#]+$/gu, '')
    .trim();

/** Entity id: UUID v5 of (channel id, entity type, normalised name). Entities are channel-scoped (spec "Graph entity"). */
export const entityUuid = (channelId: string, type: string, name: string): string =>
  deterministicId('entity', channelId, type, normalizeEntityName(name));

/** Relationship id: UUID v5 of (type, source entity id, target entity id); one per pair and type. */
export const relationshipUuid = (type: string, sourceId: string, targetId: string): string =>
  deterministicId('relationship', type, sourceId, targetId);
