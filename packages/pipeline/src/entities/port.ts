import type { ExtractedEntity, ExtractedRelationship, FactsExtracted, Supersession } from '@atlas/core';
import type { KnownOwner } from './ownership.js';

export type { KnownOwner };

/** A person the channel has seen so far (an author or a mentioned user): display name and other names. */
export interface KnownPerson {
  name: string;
  /** Handles and other spellings (`alice`, `@alice`, `Alice`) that refer to `name`. */
  aliases: string[];
}

/** A decision the channel took earlier: what a later decision on the same topic supersedes. */
export interface KnownDecision {
  entityId: string;
  name: string;
  /** The fact the decision came from. */
  factId: string;
  /** ISO 8601 UTC time of its message. */
  messageTs: string;
  decidedBy: string;
  /** Normalised names of the things it is about (technologies, projects, topic tags): same-topic test. */
  topicKeys: string[];
}

/** What an extractor reads: one message's fact set and the channel's state before it. */
export interface EntityExtractionInput {
  facts: FactsExtracted;
  people: readonly KnownPerson[];
  decisions: readonly KnownDecision[];
  /** The channel's latest known owner of each thing (changed-owner supersession); absent means none known. */
  owners?: readonly KnownOwner[];
}

/**
 * What an extractor returns for one message: entity mentions, relationship evidence and supersessions
 * (the body of EntitiesExtracted), plus the people and decisions this message adds to the channel's state.
 */
export interface EntityExtraction {
  entities: ExtractedEntity[];
  relationships: ExtractedRelationship[];
  supersessions: Supersession[];
  people: KnownPerson[];
  decisions: KnownDecision[];
  /** Ownerships this message states (the channel's new latest owner of each subject). */
  owners?: KnownOwner[];
}

/**
 * Entity extraction (spec "Ingestion pipeline", entity extraction; ARCHITECTURE.md graph projector).
 * Entity ids are entityUuid(channelId, type, name); every relationship's ends are among `entities`.
 * Errors: AtlasError PROVIDER_UNAVAILABLE (retriable) when a model endpoint is down, so the caller can
 * queue the message for entity backfill.
 */
export interface EntityExtractor {
  /** Recorded in EntitiesExtracted.extractor, e.g. `offline-entities@1`. */
  readonly id: string;
  extract(input: EntityExtractionInput): Promise<EntityExtraction>;
}
