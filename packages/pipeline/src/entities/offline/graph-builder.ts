// The message-level graph builder: entity mentions merged by id, relationships kept at their best confidence.
import {
  type EntityType,
  type ExtractedEntity,
  type ExtractedRelationship,
  entityUuid,
  type Fact,
  normalizeEntityName,
  type RelationshipType,
} from '@atlas/core';
import { CONTEXT_MAX } from './confidence.js';
import { clip, isoDate } from './text.js';

export interface Mention {
  id: string;
  type: EntityType;
  name: string;
  index: number;
}

export class GraphBuilder {
  readonly entities = new Map<string, ExtractedEntity>();
  readonly relationships = new Map<string, ExtractedRelationship>();

  constructor(private readonly channelId: string) {}

  /** Adds a mention; merges by entityUuid (union of fact ids and aliases, max confidence, first properties win). */
  entity(
    type: EntityType,
    name: string,
    confidence: number,
    factId: string,
    aliases: readonly string[] = [],
    properties: Record<string, string> = {},
  ): string {
    const entityId = entityUuid(this.channelId, type, name);
    const norm = normalizeEntityName(name);
    const cleanAliases = aliases.map((a) => a.replace(/^@/, '')).filter((a) => a && normalizeEntityName(a) !== norm);
    const prev = this.entities.get(entityId);
    const c = Math.round(Math.min(1, Math.max(0, confidence)) * 100) / 100;
    if (!prev) {
      this.entities.set(entityId, {
        entityId,
        type,
        name,
        aliases: dedupe(cleanAliases),
        confidence: c,
        factIds: [factId],
        properties: { ...properties },
      });
    } else {
      if (!prev.factIds.includes(factId)) prev.factIds.push(factId);
      prev.aliases = dedupe([...prev.aliases, ...cleanAliases]);
      prev.confidence = Math.max(prev.confidence, c);
      prev.properties = { ...properties, ...prev.properties };
    }
    return entityId;
  }

  relate(
    type: RelationshipType,
    sourceId: string,
    targetId: string,
    confidence: number,
    fact: Fact,
    validUntil: string | null,
  ): boolean {
    if (sourceId === targetId || !this.entities.has(sourceId) || !this.entities.has(targetId)) return false;
    const key = `${type}|${sourceId}|${targetId}`;
    const c = Math.round(Math.min(1, Math.max(0, confidence)) * 100) / 100;
    const prev = this.relationships.get(key);
    if (prev && prev.confidence >= c) return false;
    this.relationships.set(key, {
      type,
      sourceId,
      targetId,
      confidence: c,
      validFrom: isoDate(fact.messageTs),
      validUntil,
      context: clip(fact.memoryText, CONTEXT_MAX),
      sourceFactId: fact.factId,
    });
    return true;
  }

  linked(a: string, b: string): boolean {
    for (const r of this.relationships.values())
      if ((r.sourceId === a && r.targetId === b) || (r.sourceId === b && r.targetId === a)) return true;
    return false;
  }
}

export const dedupe = (xs: readonly string[]): string[] => {
  const seen = new Set<string>();
  return xs.filter((x) => {
    const k = normalizeEntityName(x);
    if (!k || seen.has(k)) return false;
    seen.add(k);
    return true;
  });
};
