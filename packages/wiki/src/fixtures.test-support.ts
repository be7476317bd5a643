import type { SourceMessage, TopicCluster, WikiFact } from './types.js';

/**
 * A source message of channel C1 (#dev) for hand-made wiki tests: `day` of January 2026 at 10:00 UTC, permalink
 * `https://x.slack.com/archives/C1/p{id}`, no attachments.
 */
export const sourceMessage = (id: string, day: number, text: string, author = 'Ann'): SourceMessage => ({
  id,
  channel_id: 'C1',
  channel_name: 'dev',
  author,
  timestamp: `2026-01-${String(day).padStart(2, '0')}T10:00:00.000Z`,
  text,
  permalink: `https://x.slack.com/archives/C1/p${id}`,
  attachments: [],
});

/** A medium-importance observation (quality 0.8) drawn from `m`, with topic tags; `over` overrides any field. */
export const wikiFact = (
  id: string,
  m: SourceMessage,
  text: string,
  tags: string[],
  over: Partial<WikiFact> = {},
): WikiFact => ({
  id,
  channel_id: 'C1',
  memory_text: text,
  quality_score: 0.8,
  importance: 'medium',
  fact_type: 'observation',
  topic_tags: tags,
  entity_tags: [],
  author_name: m.author,
  message_ts: m.timestamp,
  source_message_id: m.id,
  permalink: m.permalink,
  superseded_by: null,
  ...over,
});

/** A cluster entry of RenderInput for channel C1 over `members` (centroid [1], coherence 1). */
export const clusterOf = (
  id: string,
  members: WikiFact[],
  parent: string | null = null,
): { cluster: TopicCluster; facts: WikiFact[] } => ({
  cluster: {
    id,
    channel_id: 'C1',
    centroid: [1],
    member_ids: members.map((f) => f.id),
    coherence: 1,
    parent_id: parent,
  },
  facts: members,
});
