import { type FactsExtracted, runsOfType, TOPICS } from '@atlas/core';
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

/**
 * The parts of a fact set that give its facts their context (FactsExtracted sourceText and contextText; '' when the
 * event carries none).
 */
export type SetContext = Pick<FactsExtracted, 'sourceText' | 'contextText'>;

/**
 * Pure: what a fact is indexed with besides its own text ("contextual retrieval"): its author, the whole
 * message it came from, and the conversation before it (`Author: text`), one per line. A fact is one
 * sentence of a message that often only makes sense with the rest ("She said yes" answers a question
 * one turn up), and questions name people the message says "I" for.
 */
export const searchContext = (f: Pick<Fact, 'authorName'>, s: SetContext): string =>
  [`${f.authorName}:`, s.sourceText, s.contextText].filter((x) => x.length > 0).join('\n');

/**
 * Pure: the text a fact's vector is computed from: `Author: <whole source message>` (the fact's own text
 * when the set carries no source text). One vector per message, shared by its facts: with the local encoder that embeds
 * half the characters of fact + context + previous turn, ingests twice as fast and loses 0.3 points of hybrid recall@10
 * on LoCoMo (bench:retrieval). At most EMBEDDING_CHARS characters.
 */
export const embeddingText = (f: Pick<Fact, 'authorName' | 'memoryText'>, s: SetContext): string =>
  `${f.authorName}: ${s.sourceText || f.memoryText}`.slice(0, EMBEDDING_CHARS);

/** Characters of a message that are embedded: the encoder's cost grows faster than the text (bench:import). */
export const EMBEDDING_CHARS = 400;

/** Pure: the keyword documents of one fact set. */
export const toKeywordDocs = (s: FactsExtracted): KeywordDoc[] =>
  s.facts.map((f) => ({
    ...filterFields(s, f),
    text: f.memoryText,
    context: searchContext(f, s),
    qualityScore: f.qualityScore,
  }));

/**
 * FactsExtracted → keyword index. Idempotent: a message's indexed facts are replaced by its latest set.
 * ChannelDataDeleted (atlas.facts copy) removes the channel's indexed facts, in order with the sets around it.
 */
export const keywordProjector: Projector<{ keyword: KeywordIndex }, 'FactsExtracted' | 'ChannelDataDeleted'> = {
  name: 'keyword',
  topics: [TOPICS.facts],
  handles: ['FactsExtracted', 'ChannelDataDeleted'],
  reset: ({ keyword }) => keyword.truncate(),
  async handle(events, { keyword }) {
    for (const run of runsOfType(events)) {
      if (run.type === 'ChannelDataDeleted') {
        for (const e of run.events) await keyword.deleteChannel(e.data.channelId);
        continue;
      }
      const sets = run.events.map((e) => e.data);
      await keyword.replaceForMessages(sets.map((s) => ({ messageId: s.messageId, docs: toKeywordDocs(s) })));
    }
  },
};
