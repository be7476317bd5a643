import { partitionForKey } from '@atlas/eventlog';
import { describe, expect, it } from 'vitest';
import { freshnessReader } from './freshness.js';

/** A log whose unread counts per group and topic are given (exact, as the embedded log answers them). */
const exactLog = (unread: Record<string, Record<string, number>>) => {
  let reads = 0;
  return {
    reads: () => reads,
    log: {
      pendingByKey: async (group: string, topic: string) => {
        reads++;
        return new Map(Object.entries(unread[`${group} ${topic}`] ?? {}));
      },
      lag: async () => [],
      partitions: async () => 4,
    },
  };
};
const documents = (times: Record<string, string>) => ({
  newestMessageTimes: async (ids: readonly string[]) =>
    new Map(ids.flatMap((id) => (times[id] ? [[id, times[id]] as const] : []))),
});
const ALL = ['documents', 'facts', 'keyword', 'embeddings', 'entities', 'stats'];

describe('freshnessReader (issue 27 point 3)', () => {
  it('a message is pending until every reader has read it or its fact set: max(documents, facts + fact readers)', async () => {
    const { log } = exactLog({
      'atlas.projector.documents atlas.messages': { a: 2 },
      'atlas.projector.facts atlas.messages': { a: 3, b: 1 },
      'atlas.projector.keyword atlas.facts': { a: 1 },
      'atlas.projector.entities atlas.facts': { a: 4 },
      'atlas.projector.documents atlas.facts': { b: 0 },
    });
    const r = freshnessReader({
      eventLog: log,
      documents: documents({ a: '2026-01-01T10:00:00.000Z' }),
      projectors: () => ALL,
    });
    const f = await r.of({ channels: ['a'] });
    expect(f).toMatchObject({ current_to: '2026-01-01T10:00:00.000Z', pending_messages: 7, behind: true });
    // Without the facts projector its readers' counts are not a stage: only the message readers count.
    const noFacts = freshnessReader({ eventLog: log, documents: documents({}), projectors: () => ['documents'] });
    expect((await noFacts.of({ channels: ['a'] })).pending_messages).toBe(2);
  });

  it('adds the behind channels of the scope, and only those', async () => {
    const { log } = exactLog({ 'atlas.projector.facts atlas.messages': { seen: 2, hidden: 5 } });
    const r = freshnessReader({ eventLog: log, documents: documents({}), projectors: () => ALL });
    const scoped = await r.of({ channels: [], behindIn: ['seen', 'other'] });
    expect(scoped.channels).toEqual([{ channel_id: 'seen', newest_message_at: null, pending_messages: 2 }]);
    expect(scoped.summary).toBe('nothing read yet, 2 messages still being read');
    expect((await r.of({ channels: [], behindIn: 'all' })).pending_messages).toBe(7);
    expect((await r.of({ channels: ['other'] })).channels.map((c) => c.channel_id)).toEqual(['other']);
  });

  it('Kafka (no count by key): a channel reads its partition lag, an upper bound', async () => {
    const p = partitionForKey('a', 4);
    const log = {
      pendingByKey: async () => null,
      lag: async (group: string) =>
        [0, 1, 2, 3].map((partition) => ({
          group,
          topic: 'atlas.messages',
          partition,
          committedOffset: 0,
          endOffset: 0,
          lag: partition === p && group === 'atlas.projector.facts' ? 6 : 0,
        })),
      partitions: async () => 4,
    };
    const r = freshnessReader({ eventLog: log, documents: documents({}), projectors: () => ['documents', 'facts'] });
    expect((await r.of({ channels: ['a'] })).pending_messages).toBe(6);
  });

  it('serves a snapshot for the cache time, then reads the log again', async () => {
    let t = 0;
    const x = exactLog({});
    const r = freshnessReader(
      { eventLog: x.log, documents: documents({}), projectors: () => ALL },
      { cacheMs: 1000, now: () => t },
    );
    await r.of({ channels: ['a'] });
    const first = x.reads();
    await r.of({ channels: ['a'] });
    expect(x.reads()).toBe(first);
    t = 1000;
    await r.of({ channels: ['a'] });
    expect(x.reads()).toBe(2 * first);
  });
});
