import { AtlasError, type FactsExtracted, type StoredEvent, TOPICS } from '@atlas/core';
import { runProjector } from '@atlas/eventlog';
import { type ExtractionInput, type FactExtractor, OfflineFactExtractor } from '@atlas/pipeline';
import { delivered, openProjectorHarness } from '@atlas/runtime/testing';
import { channelEvent, factOf, factSet, freshChannelId, messageEvent, waitFor } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentsProjector } from './documents.js';
import { factsProjector } from './facts.js';
import { keywordProjector } from './keyword.js';

type Harness = Awaited<ReturnType<typeof openProjectorHarness>>;

describe('projectors', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openProjectorHarness();
  });
  afterAll(async () => h?.close());

  it('documents: given a channel and a message delivered twice, then one row each', async () => {
    const ch = freshChannelId();
    const m = messageEvent(ch, 1_700_000_000, 'We decided to ship the release on Friday');
    const events = [
      delivered('ChannelDiscovered', channelEvent(ch)),
      delivered('MessageIngested', m, TOPICS.messages, 1),
    ];
    await documentsProjector.handle(events, h);
    await documentsProjector.handle(events, h);
    expect(await h.documents.getChannel(ch)).toMatchObject({ message_count: 1, last_sync: '2024-05-01T00:00:00.000Z' });
    const page = await h.documents.listMessages(ch, { limit: 10 });
    expect(page.messages).toEqual([
      {
        id: m.platformMessageId,
        text: m.text,
        author: { id: 'U1', name: 'alice' },
        timestamp: m.timestamp,
        thread_ts: null,
        reactions: [],
        attachments: [],
        has_media: false,
      },
    ]);
  });

  it('documents: a MessageDeleted after the message hides it', async () => {
    const ch = freshChannelId();
    const m = messageEvent(ch, 1_700_000_000, 'oops');
    await documentsProjector.handle(
      [
        delivered('ChannelDiscovered', channelEvent(ch)),
        delivered('MessageIngested', m, TOPICS.messages, 1),
        delivered(
          'MessageDeleted',
          {
            messageId: m.messageId,
            platform: m.platform,
            channelId: ch,
            platformMessageId: m.platformMessageId,
            deletedAt: '2024-01-01T00:00:00Z',
          },
          TOPICS.messages,
          2,
        ),
      ],
      h,
    );
    expect((await h.documents.getChannel(ch))?.message_count).toBe(0);
  });

  it('facts: given a thread root and a reply, then one fact set per message with thread context, same ids on redelivery', async () => {
    const ch = freshChannelId();
    const root = messageEvent(ch, 1_700_000_000, 'Which HTTP client should we use for the new billing service?', {
      threadTs: '1700000000.000100',
    });
    const reply = messageEvent(
      ch,
      1_700_000_100,
      'We decided to use clj-http with connection pooling for the billing service.',
      {
        threadTs: '1700000000.000100',
        author: { id: 'U2', name: 'bob', isBot: false },
      },
    );
    const deps = { extractor: new OfflineFactExtractor(), eventLog: h.log, threads: h.threads, qualityThreshold: 0.5 };
    const collect = () =>
      factsProjector.handle(
        [delivered('MessageIngested', root), delivered('MessageIngested', reply, TOPICS.messages, 1)],
        deps,
      );
    await collect();
    const got: FactsExtracted[] = [];
    const sub = await h.log.subscribe({
      group: `probe-${ch}`,
      topics: [TOPICS.facts],
      handler: async (b) =>
        void got.push(
          ...b.flatMap((e) => (e.type === 'FactsExtracted' ? [e.data] : [])).filter((d) => d.channelId === ch),
        ),
    });
    await waitFor(() => got.length >= 2, 'two fact sets');
    const replySet = got.find((s) => s.sourceMessageId === reply.platformMessageId)!;
    expect(replySet.facts.length).toBeGreaterThan(0);
    expect(replySet.facts.every((f) => f.qualityScore >= 0.5)).toBe(true);
    expect(replySet.facts[0]!.threadContextSummary).toMatch(/alice/);
    await collect(); // redelivery of the same batch
    await waitFor(() => got.length >= 4, 'four fact sets');
    const again = got.filter((s) => s.sourceMessageId === reply.platformMessageId);
    expect(again[1]!.facts.map((f) => f.factId)).toEqual(again[0]!.facts.map((f) => f.factId));
    await sub.stop();
  });

  it('facts: a top-level message answers the question another author asked just before it, across batches', async () => {
    const ch = freshChannelId();
    const bob = { id: 'U2', name: 'bob', isBot: false };
    const asked = messageEvent(ch, 1_700_000_000, 'Which games did you all play at the offsite?');
    const answer = messageEvent(ch, 1_700_000_060, 'Some fun ones like charades and a scavenger hunt.', {
      author: bob,
    });
    const self = messageEvent(ch, 1_700_000_090, 'Was it charades? I forget which.', { author: bob });
    const ownAnswer = messageEvent(ch, 1_700_000_120, 'Charades, mostly.', { author: bob });
    const late = messageEvent(ch, 1_700_000_090 + 16 * 60, 'Mostly charades and a scavenger hunt, as I said.');
    const seen = new Map<string, ExtractionInput['answers']>();
    const offline = new OfflineFactExtractor();
    const extractor: FactExtractor = {
      id: offline.id,
      extract: (input) => {
        seen.set(input.message.platformMessageId, input.answers ?? null);
        return offline.extract(input);
      },
    };
    const deps = { extractor, eventLog: h.log, threads: h.threads, qualityThreshold: 0.5 };
    await factsProjector.handle([delivered('MessageIngested', asked)], deps);
    await factsProjector.handle(
      [answer, self, ownAnswer, late].map((m, i) => delivered('MessageIngested', m, TOPICS.messages, i + 1)),
      deps,
    );
    expect(seen.get(asked.platformMessageId)).toBeNull();
    expect(seen.get(answer.platformMessageId)).toEqual({
      rootText: asked.text,
      rootAuthorName: 'alice',
      rootId: asked.platformMessageId,
    });
    expect(seen.get(ownAnswer.platformMessageId)).toBeNull(); // bob's own question before it
    expect(seen.get(late.platformMessageId)).toBeNull(); // 16 minutes after bob's question
  });

  it('facts: a deleted thread root is forgotten, so its text is no later reply’s context', async () => {
    const ch = freshChannelId();
    const plain = messageEvent(ch, 1_700_000_000, 'Should we move the billing service to Kafka Streams?');
    const root = { ...plain, threadTs: plain.platformMessageId };
    const deps = { extractor: new OfflineFactExtractor(), eventLog: h.log, threads: h.threads, qualityThreshold: 0.5 };
    await factsProjector.handle([delivered('MessageIngested', root)], deps);
    expect((await h.threads.get(ch, [root.platformMessageId])).size).toBe(1);
    const gone = {
      messageId: root.messageId,
      platform: root.platform,
      channelId: ch,
      platformMessageId: root.platformMessageId,
      deletedAt: '2024-05-02T00:00:00.000Z',
    };
    await factsProjector.handle([delivered('MessageDeleted', gone, TOPICS.messages, 1)], deps);
    await factsProjector.handle([delivered('MessageDeleted', gone, TOPICS.messages, 1)], deps); // delivered twice
    expect((await h.threads.get(ch, [root.platformMessageId])).size).toBe(0);
    // Deleted and ingested again in one batch: the root is back.
    await factsProjector.handle(
      [delivered('MessageDeleted', gone, TOPICS.messages, 2), delivered('MessageIngested', root, TOPICS.messages, 3)],
      deps,
    );
    expect((await h.threads.get(ch, [root.platformMessageId])).size).toBe(1);
  });

  it('keyword: given a fact set delivered twice, then the fact is indexed once', async () => {
    const ch = freshChannelId();
    const m = messageEvent(ch, 1_700_000_000, 'x');
    const set = factSet(m, [factOf(m, 'The team chose PostgreSQL for the ledger')]);
    await keywordProjector.handle(
      [delivered('FactsExtracted', set), delivered('FactsExtracted', set, TOPICS.messages, 1)],
      h,
    );
    const r = await h.keyword.search({ query: 'ledger', channelId: ch, limit: 5 });
    expect(r.total).toBe(1);
  });

  it('runner: a poison event is dead-lettered after its attempts and the rest still projects', async () => {
    const ch = freshChannelId();
    const good = messageEvent(ch, 1_700_000_000, 'fine');
    const bad = messageEvent(ch, 1_700_000_001, 'poison');
    let attempts = 0;
    const poisonous = {
      ...documentsProjector,
      name: `poison-${ch}`,
      async handle(events: Parameters<typeof documentsProjector.handle>[0], deps: Harness) {
        if (events.some((e) => e.type === 'MessageIngested' && e.data.text === 'poison')) {
          attempts++;
          throw new AtlasError('INVALID_REQUEST', 'cannot project this');
        }
        return documentsProjector.handle(events, deps);
      },
    };
    const dead: StoredEvent<'DeadLettered'>[] = [];
    const watcher = await h.log.subscribe({
      group: `dlq-${ch}`,
      topics: [TOPICS.deadLetters],
      handler: async (b) => void dead.push(...b.filter((e) => e.type === 'DeadLettered')),
    });
    await h.log.append(TOPICS.messages, [
      { type: 'ChannelDiscovered', key: ch, data: channelEvent(ch) },
      { type: 'MessageIngested', key: ch, data: bad },
      { type: 'MessageIngested', key: ch, data: good },
    ]);
    const sub = await runProjector(h.log, poisonous, h, { maxAttempts: 3 });
    await waitFor(() => dead.some((d) => d.data.key === ch), 'dead letter');
    await waitFor(async () => (await h.documents.getChannel(ch))?.message_count === 1, 'good message projected');
    expect(dead.find((d) => d.data.key === ch)?.data).toMatchObject({
      eventType: 'MessageIngested',
      attempts: 3,
    });
    expect(attempts).toBeGreaterThanOrEqual(4); // the whole batch once, then the event 3 times
    await Promise.all([sub.stop(), watcher.stop()]);
  });
});
