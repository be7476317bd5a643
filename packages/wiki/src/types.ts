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

/** Spec "Wiki" citation shape. */
export interface WikiCitation {
  /** `[n]`, n counted from 1 per page. */
  id: string;
  author: string;
  /** Channel name. */
  channel: string;
  /** ISO 8601 UTC, the source message's timestamp. */
  timestamp: string;
  /** A span of the source message text (markup rendered), at most ~EXCERPT_MAX_CHARS; `…` marks a cut. */
  text_excerpt: string;
  permalink: string;
  media_type: string | null;
  media_name: string | null;
}

/** Spec "Wiki" node. */
export interface WikiNode {
  id: string;
  title: string;
  slug: string;
  /** Dotted for children: `7`, `7.1`, `7.1.2`. */
  section_number: string;
  page_type: 'fixed' | 'topic' | 'sub-topic';
  memory_count: number;
  children: WikiNode[];
}

/** Spec "Wiki" structure. */
export interface WikiStructure {
  channel_id: string;
  channel_name: string;
  platform: string;
  /** ISO 8601 UTC. */
  generated_at: string;
  is_stale: boolean;
  pages: WikiNode[];
}

/** Spec "Wiki" page. `children` are the child pages' nodes. */
export interface WikiPage {
  id: string;
  slug: string;
  title: string;
  page_type: 'fixed' | 'topic' | 'sub-topic';
  parent_id: string | null;
  section_number: string;
  /** Markdown. Every `[n]` marker is one entry of `citations`. */
  content: string;
  summary: string;
  memory_count: number;
  /** ISO 8601 UTC. */
  last_updated: string;
  citations: WikiCitation[];
  children: WikiNode[];
}

/** A person as the graph store reports one (spec "Graph entity" Person, with its fact count). */
export interface WikiPerson {
  name: string;
  fact_count: number;
}

/** Spec "Decision record" (plus the id of the fact it came from, when known). */
export interface WikiDecision {
  name: string;
  decided_by: string;
  status: string;
  /** YYYY-MM-DD. */
  date: string;
  context: string;
  fact_id?: string;
}

/** Input of renderChannelWiki. */
export interface RenderInput {
  channel: { id: string; name: string; platform: string };
  /** Topic clusters of the channel with their member facts (a child names its parent in parent_id). */
  clusters: { cluster: TopicCluster; facts: WikiFact[] }[];
  /** All facts of the channel. */
  facts: WikiFact[];
  /** Source messages by platform message id. */
  messages: ReadonlyMap<string, SourceMessage>;
  /** null when the graph store is unavailable (spec "Degraded behaviour"). */
  people: WikiPerson[] | null;
  /** null when the graph store is unavailable (spec "Degraded behaviour"). */
  decisions: WikiDecision[] | null;
  now: Date;
  /** Platform user ids to names, to render mentions in excerpts (`<@U1>` → `@Ann`). */
  user_names?: ReadonlyMap<string, string>;
  /** Fact id → times cited elsewhere (ask answers, earlier versions): the ranking's citation factor. */
  citation_counts?: ReadonlyMap<string, number>;
  /**
   * Fact id → bestExcerpt of the fact in its source message, known from an earlier run in which neither changed
   * (generate.ts keeps them with its sources): used instead of computing the excerpt again. Every citation built
   * from one is still verified against the message.
   */
  excerpts?: ReadonlyMap<string, string | null>;
}
