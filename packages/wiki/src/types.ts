/**
 * Shapes shared by the wiki's parts. The wiki projector fills them from the document store (facts,
 * messages), the vector store (fact vectors) and the graph store (people, decisions).
 */

/** A fact as the wiki reads it (a subset of the spec's memory detail form, plus permalink). */
export interface WikiFact {
  id: string;
  channel_id: string;
  memory_text: string;
  quality_score: number;
  importance: 'low' | 'medium' | 'high';
  fact_type: 'decision' | 'opinion' | 'observation' | 'action_item' | 'question';
  topic_tags: string[];
  entity_tags: string[];
  author_name: string;
  /** ISO 8601 UTC. */
  message_ts: string;
  /** Platform id of the source message. */
  source_message_id: string;
  permalink: string;
  superseded_by: string | null;
}

/** The message a fact came from: what a citation points to and what the verifier checks against. */
export interface SourceMessage {
  /** Platform message id. */
  id: string;
  channel_id: string;
  channel_name: string;
  author: string;
  /** ISO 8601 UTC. */
  timestamp: string;
  /** The message text as stored (platform markup included). */
  text: string;
  permalink: string;
  attachments: { name: string; media_type: string | null }[];
}

/** A topic cluster of one channel: facts whose vectors lie close together. */
export interface TopicCluster {
  id: string;
  channel_id: string;
  /** Unit-length mean of the members' unit vectors. */
  centroid: number[];
  member_ids: string[];
  /** Mean cosine of the members to the centroid, in [0, 1] (spec target: above 0.4). */
  coherence: number;
  /** Id of the cluster this one was split from (a sub-topic), or null. */
  parent_id: string | null;
}
