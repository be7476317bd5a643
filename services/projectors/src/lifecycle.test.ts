import { type EntitiesExtracted, type EventDataMap, type EventType, type StoredEvent, TOPICS } from '@atlas/core';
import { LifecycleStore, migrateLifecycle } from '@atlas/stores';
import { factOf, factSet, freshChannelId, messageEvent, testDatabases } from '@atlas/stores/testing';
import { describe, expect, it } from 'vitest';
import { lifecycleProjector } from './lifecycle.js';

let offset = 0;
const ev = <T extends EventType>(type: T, data: EventDataMap[T], topic: string): StoredEvent<T> => ({
  type,
  key: 'channelId' in data ? data.channelId : 'k',
  data,
  topic,
  partition: 0,
  offset: offset++,
  timestamp: Date.now(),
});

const T0 = Date.parse('2026-03-02T09:00:00Z') / 1000;

/** A synthetic channel with one of each transition: its events on the three topics the projector reads. */
const channelEvents = (channelId: string) => {
  const root = messageEvent(channelId, T0, 'bob will migrate the cluster to Kafka by friday');
  const thread = { threadTs: root.platformMessageId };
  const done = messageEvent(channelId, T0 + 600, 'done, merged it', {
    ...thread,
    author: { id: 'U2', name: 'bob', isBot: false },
  });
  const proposal = messageEvent(channelId, T0 + 1000, 'should we switch the queue to Kafka?');
  const agree = messageEvent(channelId, T0 + 1100, '+1 agreed', {
    threadTs: proposal.platformMessageId,
    author: { id: 'U3', name: 'carol', isBot: false },
  });
  const later = messageEvent(channelId, T0 + 90_000, 'We decided to use Pulsar instead of Kafka for the queue');
  const rootFact = factOf(root, 'bob will migrate the cluster to Kafka by friday', {
    factType: 'action_item',
    actionTags: ['migrate', 'bob', 'by friday'],
  });
  const proposalFact = factOf(proposal, 'alice asked: should we switch the queue to Kafka?', { factType: 'question' });
  const laterFact = factOf(later, 'We decided to use Pulsar instead of Kafka for the queue');
  const graph: EntitiesExtracted = {
    messageId: later.messageId,
    platform: later.platform,
    channelId,
    sourceMessageId: later.platformMessageId,
    messageTs: later.timestamp,
    extractor: 'test@1',
    extractedAt: later.timestamp,
    entities: [],
    relationships: [],
    supersessions: [
      {
        factId: proposalFact.factId,
        supersededBy: laterFact.factId,
        oldEntityId: null,
        newEntityId: null,
        invalidAt: later.timestamp,
        certain: true,
        reason: 'same topic',
      },
    ],
  };
  return {
    ids: { rootFact, proposalFact, laterFact, done, agree, later },
    messages: [root, done, proposal, agree, later].map((m) => ev('MessageIngested', m, TOPICS.messages)),
    facts: [
      ev('FactsExtracted', factSet(root, [rootFact]), TOPICS.facts),
      ev('FactsExtracted', factSet(proposal, [proposalFact]), TOPICS.facts),
      ev('FactsExtracted', factSet(later, [laterFact]), TOPICS.facts),
    ],
    graph: [ev('EntitiesExtracted', graph, TOPICS.graph)],
  };
};

describe.each(testDatabases())('lifecycle projector and LifecycleStore ($name)', ({ open }) => {
  it('derives each transition with its evidence, idempotently, in any topic order, and rebuilds by replay', async () => {
    const db = await open();
    try {
      await migrateLifecycle(db.db);
      const lifecycle = new LifecycleStore(db.db);
      const channelId = freshChannelId();
      const { ids, messages, facts, graph } = channelEvents(channelId);
      // graph and facts before the messages (another topic's consumer may run ahead)
      await lifecycleProjector.handle([...graph, ...facts], { lifecycle });
      await lifecycleProjector.handle(messages, { lifecycle });
      const { items, total } = await lifecycle.list({ channelIds: [channelId], limit: 50 });
      expect(total).toBe(3);
      const task = await lifecycle.get(ids.rootFact.factId);
      expect(task).toMatchObject({ kind: 'action_item', state: 'done', owner: 'bob', dueDate: '2026-03-06' });
      expect(task!.transitions.at(-1)).toMatchObject({ from: 'open', to: 'done', rule: 'done' });
      expect(task!.transitions.at(-1)!.evidence).toMatchObject({
        platformMessageId: ids.done.platformMessageId,
        authorName: 'bob',
        permalink: ids.done.permalink,
        excerpt: 'done, merged it',
      });
      const proposal = await lifecycle.get(ids.proposalFact.factId);
      expect(proposal!.transitions.map((t) => `${t.from}→${t.to}@${t.evidence.platformMessageId}`)).toEqual([
        `null→proposed@${proposal!.source.platformMessageId}`,
        `proposed→decided@${ids.agree.platformMessageId}`,
        `decided→superseded@${ids.later.platformMessageId}`,
      ]);
      expect(proposal!.supersededBy).toBe(ids.laterFact.factId);

      // filters: kind, state, owner (any case), time range, visible channels
      expect((await lifecycle.list({ channelIds: [channelId], kind: 'decision', limit: 50 })).total).toBe(2);
      expect((await lifecycle.list({ channelIds: [channelId], state: 'superseded', limit: 50 })).items[0]!.itemId).toBe(
        ids.proposalFact.factId,
      );
      expect((await lifecycle.list({ channelIds: [channelId], owner: 'BOB', limit: 50 })).total).toBe(1);
      expect(
        (
          await lifecycle.list({
            channelIds: [channelId],
            since: new Date((T0 + 80_000) * 1000).toISOString(),
            limit: 50,
          })
        ).total,
      ).toBe(2); // the later decision, and the proposal it superseded then
      expect((await lifecycle.list({ channelIds: [], limit: 50 })).total).toBe(0);

      // a redelivered batch changes nothing
      await lifecycleProjector.handle([...messages, ...facts, ...graph], { lifecycle });
      expect((await lifecycle.list({ channelIds: [channelId], limit: 50 })).items).toEqual(items);

      // replay: reset, then the topics again, in their own order
      await lifecycleProjector.reset!({ lifecycle });
      expect((await lifecycle.list({ channelIds: [channelId], limit: 50 })).total).toBe(0);
      await lifecycleProjector.handle([...messages, ...facts, ...graph], { lifecycle });
      expect((await lifecycle.list({ channelIds: [channelId], limit: 50 })).items).toEqual(items);

      // an edit that takes the cue away reopens the item; deleting the message likewise
      const edited = { ...ids.done, text: 'working on it', contentHash: 'x' };
      await lifecycleProjector.handle([ev('MessageIngested', edited, TOPICS.messages)], { lifecycle });
      expect((await lifecycle.get(ids.rootFact.factId))!.state).toBe('open');

      // ChannelDataDeleted on each topic empties the channel
      const deleted = { channelId, requestedAt: new Date().toISOString() };
      await lifecycleProjector.handle(
        [TOPICS.messages, TOPICS.facts, TOPICS.graph].map((t) => ev('ChannelDataDeleted', deleted, t)),
        { lifecycle },
      );
      expect((await lifecycle.list({ channelIds: [channelId], limit: 50 })).total).toBe(0);
    } finally {
      await db.close();
    }
  });
  it('an uncertain supersession moves nothing until an admin resolves its pair as `later` (ContradictionResolved)', async () => {
    const db = await open();
    try {
      await migrateLifecycle(db.db);
      const lifecycle = new LifecycleStore(db.db);
      const channelId = freshChannelId();
      const { ids, messages, facts, graph } = channelEvents(channelId);
      const uncertain = graph.map((g) => ({
        ...g,
        data: { ...g.data, supersessions: g.data.supersessions.map((x) => ({ ...x, certain: false })) },
      }));
      await lifecycleProjector.handle([...messages, ...facts, ...uncertain], { lifecycle });
      expect((await lifecycle.get(ids.proposalFact.factId))!.state).toBe('decided');
      const resolved = (contradictionId: string, outcome: 'earlier' | 'later' | 'both') =>
        ev(
          'ContradictionResolved',
          {
            contradictionId,
            channelId,
            factId: ids.proposalFact.factId,
            supersededBy: ids.laterFact.factId,
            outcome,
            invalidAt: ids.later.timestamp,
            note: null,
            resolvedBy: 'admin',
            resolvedAt: new Date().toISOString(),
          },
          TOPICS.graph,
        );
      // `both` stands: nothing moves.
      await lifecycleProjector.handle([resolved('c-both', 'both')], { lifecycle });
      expect((await lifecycle.get(ids.proposalFact.factId))!.state).toBe('decided');
      // `later` stands: superseded at the later message, citing it.
      await lifecycleProjector.handle([resolved('c-later', 'later')], { lifecycle });
      const item = (await lifecycle.get(ids.proposalFact.factId))!;
      expect(item).toMatchObject({ state: 'superseded', supersededBy: ids.laterFact.factId });
      expect(item.transitions.at(-1)).toMatchObject({ from: 'decided', to: 'superseded', at: ids.later.timestamp });
      expect(item.transitions.at(-1)!.evidence.platformMessageId).toBe(ids.later.platformMessageId);
      // A second resolution of the same id does not replace the first (first wins), and a replay ends the same.
      await lifecycleProjector.handle([resolved('c-later', 'earlier')], { lifecycle });
      expect((await lifecycle.get(ids.proposalFact.factId))!.state).toBe('superseded');
      await lifecycleProjector.reset!({ lifecycle });
      await lifecycleProjector.handle(
        [...uncertain, resolved('c-both', 'both'), resolved('c-later', 'later'), ...facts, ...messages],
        { lifecycle },
      );
      expect(await lifecycle.get(ids.proposalFact.factId)).toEqual(item);
      // The channel's deletion on atlas.graph takes its resolutions too: re-added supersessions stay uncertain.
      await lifecycleProjector.handle(
        [ev('ChannelDataDeleted', { channelId, requestedAt: new Date().toISOString() }, TOPICS.graph), ...uncertain],
        { lifecycle },
      );
      expect((await lifecycle.get(ids.proposalFact.factId))!.state).toBe('decided');
    } finally {
      await db.close();
    }
  });
});
