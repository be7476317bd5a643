import { type FactsExtracted, type MessageDeleted, type MessageIngested, type NewEvent, TOPICS } from '@atlas/core';
import type { EventLog, Projector } from '@atlas/eventlog';
import { type FactExtractor, preprocess, selectFacts, type ThreadContext } from '@atlas/pipeline';
import type { ThreadRoot, ThreadRootStore } from '@atlas/stores';

export interface FactsDeps {
  extractor: FactExtractor;
  eventLog: EventLog;
  threads: ThreadRootStore;
  /** Facts under this quality score are not stored (spec: QUALITY_THRESHOLD, default 0.5). */
  qualityThreshold: number;
}

/** The platform id of the message this one continues: the Discord message replied to, or the Slack thread root. */
export const contextKey = (m: MessageIngested): string | null =>
  m.replyToId ?? (m.threadTs && m.threadTs !== m.platformMessageId ? m.threadTs : null);

/** Messages whose text later messages may need as thread context. */
const mayBeRoot = (m: MessageIngested): boolean => m.platform === 'platform_b' || m.threadTs === m.platformMessageId;

/**
 * MessageIngested | MessageDeleted → FactsExtracted on `atlas.facts` (spec "Ingestion pipeline":
 * preprocess, fact extraction). Every message gets exactly one fact set (empty when nothing passes
 * QUALITY_THRESHOLD, or when the message was deleted), so downstream stores can replace by message.
 * Deterministic fact ids make a redelivered batch produce the same facts again.
 */
export const factsProjector: Projector<FactsDeps> = {
  name: 'facts',
  topics: [TOPICS.messages],
  handles: ['MessageIngested', 'MessageDeleted'],
  // Its own state only: replayed fact sets replace earlier ones downstream (same ids).
  reset: ({ threads }) => threads.truncate(),
  async handle(events, deps) {
    const messages = events.filter((e) => e.type === 'MessageIngested').map((e) => e.data as MessageIngested);
    const seen = new Map<string, ThreadRoot>();
    const byChannel = new Map<string, string[]>();
    for (const m of messages) {
      const k = contextKey(m);
      if (k) byChannel.set(m.channelId, [...(byChannel.get(m.channelId) ?? []), k]);
    }
    for (const [channelId, ids] of byChannel) {
      for (const [id, root] of await deps.threads.get(channelId, ids)) seen.set(`${channelId}\u0000${id}`, root);
    }
    const out: NewEvent<'FactsExtracted'>[] = [];
    const roots: ThreadRoot[] = [];
    const extractedAt = new Date().toISOString();
    for (const e of events) {
      if (e.type === 'MessageDeleted') {
        const d = e.data as MessageDeleted;
        out.push(
          factSet(d.messageId, d.platform, d.channelId, d.platformMessageId, deps.extractor.id, extractedAt, []),
        );
        continue;
      }
      const m = e.data as MessageIngested;
      const k = contextKey(m);
      const root = k ? seen.get(`${m.channelId}\u0000${k}`) : undefined;
      const thread: ThreadContext | null = root
        ? { rootText: root.text, rootAuthorName: root.authorName, rootId: root.rootId }
        : null;
      const facts = selectFacts(await deps.extractor.extract({ message: m, thread }), deps.qualityThreshold);
      out.push(
        factSet(m.messageId, m.platform, m.channelId, m.platformMessageId, deps.extractor.id, extractedAt, facts),
      );
      if (mayBeRoot(m)) {
        const r = {
          channelId: m.channelId,
          rootId: m.platformMessageId,
          text: preprocess(m).text.slice(0, 400),
          authorName: m.author.name,
        };
        roots.push(r);
        seen.set(`${m.channelId}\u0000${m.platformMessageId}`, r);
      }
    }
    await deps.threads.put(roots);
    await deps.eventLog.append(TOPICS.facts, out);
  },
};

const factSet = (
  messageId: string,
  platform: FactsExtracted['platform'],
  channelId: string,
  sourceMessageId: string,
  extractor: string,
  extractedAt: string,
  facts: FactsExtracted['facts'],
): NewEvent<'FactsExtracted'> => ({
  type: 'FactsExtracted',
  key: channelId,
  data: { messageId, platform, channelId, sourceMessageId, extractor, extractedAt, facts },
});
