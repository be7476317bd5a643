import { type FactsExtracted, TOPICS } from '@atlas/core';
import type { Projector } from '@atlas/eventlog';
import type { FactFilterFields, KeywordDoc, KeywordIndex } from '@atlas/stores';

type Fact = FactsExtracted['facts'][number];

/** Pure: the filter fields of one fact of a set, as every search store keeps them. */
export const filterFields = (s: FactsExtracted, f: Fact): FactFilterFields => ({
  factId: f.factId,
  messageId: s.messageId,
  channelId: s.channelId,
  factType: f.factType,
  importance: f.importance,
  topicTags: f.topicTags,
  entityTags: f.entityTags,
  authorName: f.authorName,
  messageTs: f.messageTs,
});

/** Pure: the keyword documents of one fact set. */
export const toKeywordDocs = (s: FactsExtracted): KeywordDoc[] =>
  s.facts.map((f) => ({ ...filterFields(s, f), text: f.memoryText, qualityScore: f.qualityScore }));

/** FactsExtracted → keyword index. Idempotent: a message's indexed facts are replaced by its latest set. */
export const keywordProjector: Projector<{ keyword: KeywordIndex }> = {
  name: 'keyword',
  topics: [TOPICS.facts],
  handles: ['FactsExtracted'],
  reset: ({ keyword }) => keyword.truncate(),
  async handle(events, { keyword }) {
    const sets = events.map((e) => e.data as FactsExtracted);
    await keyword.replaceForMessages(sets.map((s) => ({ messageId: s.messageId, docs: toKeywordDocs(s) })));
  },
};
