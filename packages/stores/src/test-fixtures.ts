import { createHash, randomUUID } from 'node:crypto';
import {
  type ChannelDiscovered,
  type Fact,
  type FactsExtracted,
  factUuid,
  type MessageIngested,
  messageUuid,
} from '@atlas/core';

/** A unique channel id per test, so suites can share one database. */
export const freshChannelId = (): string => `C${randomUUID().replaceAll('-', '').slice(0, 10).toUpperCase()}`;

export const channelEvent = (channelId: string, name = 'general'): ChannelDiscovered => ({
  platform: 'platform_a',
  workspaceId: 'T1',
  workspaceName: 'acme',
  channelId,
  name,
  isPrivate: false,
  memberCount: 3,
  topic: null,
  createdAt: '2020-01-01T00:00:00.000Z',
  source: 'import',
});

/** A platform_a message at epoch second `sec` (ts "<sec>.000100"). */
export const messageEvent = (
  channelId: string,
  sec: number,
  text: string,
  extra: Partial<MessageIngested> = {},
): MessageIngested => {
  const ts = `${sec}.000100`;
  return {
    messageId: messageUuid('platform_a', channelId, ts),
    platform: 'platform_a',
    workspaceId: 'T1',
    channelId,
    channelName: 'general',
    platformMessageId: ts,
    text,
    author: { id: 'U1', name: 'alice', isBot: false },
    timestamp: new Date(sec * 1000).toISOString(),
    threadTs: null,
    replyToId: null,
    subtype: null,
    reactions: [],
    attachments: [],
    mentions: [],
    editedAt: null,
    permalink: `https://acme.slack.com/archives/${channelId}/p${ts.replace('.', '')}`,
    contentHash: createHash('sha256').update(text).digest('hex'),
    source: 'import',
    ...extra,
  };
};

export const factOf = (m: MessageIngested, text: string, over: Partial<Fact> = {}): Fact => ({
  factId: factUuid(m.messageId, text),
  memoryText: text,
  factType: 'decision',
  importance: 'high',
  qualityScore: 0.9,
  topicTags: ['deploy'],
  entityTags: ['Kafka'],
  actionTags: [],
  authorId: m.author.id,
  authorName: m.author.name,
  messageTs: m.timestamp,
  threadTs: m.threadTs,
  permalink: m.permalink,
  threadContextSummary: '',
  validAt: m.timestamp,
  sourceLang: 'en',
  ...over,
});

export const factSet = (m: MessageIngested, facts: Fact[]): FactsExtracted => ({
  messageId: m.messageId,
  platform: m.platform,
  channelId: m.channelId,
  sourceMessageId: m.platformMessageId,
  extractor: 'test@1',
  extractedAt: new Date().toISOString(),
  facts,
  sourceText: facts.length > 0 ? m.text : '',
  contextText: '',
});
