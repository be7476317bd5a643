import { type AnyStoredEvent, type ChannelDataDeleted, type ChannelSettingsUpdated, TOPICS } from '@atlas/core';
import { OfflineFactExtractor } from '@atlas/pipeline';
import { channelCommandDeps } from '@atlas/runtime';
import { delivered, openProjectorHarness } from '@atlas/runtime/testing';
import { channelEvent, factOf, factSet, freshChannelId, messageEvent, waitFor } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendChannelCommand } from './channel-commands.js';
import { documentsProjector } from './documents.js';
import { factsProjector } from './facts.js';
import { keywordProjector } from './keyword.js';
import { wikiProjector } from './wiki.js';

type Harness = Awaited<ReturnType<typeof openProjectorHarness>>;

const deletion = (channelId: string, requestedAt = '2024-05-01T00:00:00.000Z'): ChannelDataDeleted => ({
  channelId,
  requestedAt,
});
const settings = (channelId: string, over: Partial<ChannelSettingsUpdated> = {}): ChannelSettingsUpdated => ({
  channelId,
  syncEnabled: true,
  wikiEnabled: true,
  graphEnabled: true,
  factExtractionEnabled: true,
  retentionDays: null,
  updatedAt: '2024-05-01T00:00:00.000Z',
  ...over,
});

/** Channel commands inside projector batches: applied in their place, forwarded in order, idempotent. */
describe('channel commands in projector batches', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openProjectorHarness();
  });
  afterAll(async () => h?.close());

  it('facts: forwards the commands in order between the fact sets; extraction off gives an empty set', async () => {
    const ch = freshChannelId();
    const a = messageEvent(ch, 1_700_000_000, 'We decided to ship the release on Friday with the new billing flow.');
    const rootA = { ...a, threadTs: a.platformMessageId };
    const b = messageEvent(ch, 1_700_000_060, 'We decided to move the nightly backups to object storage next week.');
    const deps = { extractor: new OfflineFactExtractor(), eventLog: h.log, threads: h.threads, qualityThreshold: 0.5 };
    const got: AnyStoredEvent[] = [];
    const probe = await h.log.subscribe({
      group: `probe-${ch}`,
      topics: [TOPICS.facts],
      handler: async (batch) => void got.push(...batch.filter((e) => 'channelId' in e.data && e.data.channelId === ch)),
    });
    await factsProjector.handle(
      [
        delivered('MessageIngested', rootA),
        delivered('ChannelDataDeleted', deletion(ch), TOPICS.messages, 1),
        delivered('ChannelSettingsUpdated', settings(ch, { factExtractionEnabled: false }), TOPICS.messages, 2),
        delivered('MessageIngested', b, TOPICS.messages, 3),
      ],
      deps,
    );
    await waitFor(() => got.length >= 4, 'four events on atlas.facts');
    expect(got.map((e) => e.type)).toEqual([
      'FactsExtracted',
      'ChannelDataDeleted',
      'ChannelSettingsUpdated',
      'FactsExtracted',
    ]);
    const [first, last] = got.flatMap((e) => (e.type === 'FactsExtracted' ? [e.data] : [])); // got[0] and got[3]
    expect(first!.facts.length).toBeGreaterThan(0);
    expect(last!.facts).toEqual([]);
    expect((await h.threads.get(ch, [a.platformMessageId])).size).toBe(0); // the deletion forgot the thread root
    expect(await h.threads.extractionDisabled([ch, 'another'])).toEqual(new Set([ch]));
    await probe.stop();
  });

  it('keyword: sets before a deletion go, sets after it stay; delivered twice, the same', async () => {
    const ch = freshChannelId();
    const m1 = messageEvent(ch, 1_700_000_000, 'x');
    const m2 = messageEvent(ch, 1_700_000_060, 'y');
    const before = factSet(m1, [factOf(m1, 'The ledger moves to PostgreSQL')]);
    const after = factSet(m2, [factOf(m2, 'The ledger keeps its PostgreSQL replicas')]);
    const batch = [
      delivered('FactsExtracted', before, TOPICS.facts),
      delivered('ChannelDataDeleted', deletion(ch), TOPICS.facts, 1),
      delivered('FactsExtracted', after, TOPICS.facts, 2),
    ];
    await keywordProjector.handle(batch, h);
    await keywordProjector.handle(batch, h);
    const r = await h.keyword.search({ query: 'ledger', channelId: ch, limit: 5 });
    expect(r.hits.map((x) => x.factId)).toEqual([after.facts[0]!.factId]);
  });

  it('documents: each topic’s copy deletes that topic’s rows; settings are stored from atlas.messages', async () => {
    const ch = freshChannelId();
    const m = messageEvent(ch, 1_700_000_000, 'We decided to use Kafka');
    const set = factSet(m, [factOf(m, 'alice decided to use Kafka')]);
    await documentsProjector.handle(
      [
        delivered('ChannelDiscovered', channelEvent(ch)),
        delivered('MessageIngested', m, TOPICS.messages, 1),
        delivered(
          'ChannelSettingsUpdated',
          settings(ch, { graphEnabled: false, retentionDays: 7 }),
          TOPICS.messages,
          2,
        ),
      ],
      h,
    );
    await documentsProjector.handle([delivered('FactsExtracted', set, TOPICS.facts)], h);
    expect(await h.documents.channelSettings(ch)).toMatchObject({ graph_enabled: false, retention_days: 7 });
    await documentsProjector.handle([delivered('ChannelDataDeleted', deletion(ch), TOPICS.facts, 1)], h);
    expect(await h.documents.getChannel(ch)).toMatchObject({ message_count: 1, fact_count: 0 });
    const onMessages = [delivered('ChannelDataDeleted', deletion(ch), TOPICS.messages, 3)];
    await documentsProjector.handle(onMessages, h);
    await documentsProjector.handle(onMessages, h);
    expect(await h.documents.getChannel(ch)).toMatchObject({ message_count: 0, fact_count: 0 });
    expect(await h.documents.channelSettings(ch)).toMatchObject({ graph_enabled: false, retention_days: 7 });
  });

  it('wiki: deletes the wiki generated before the deletion was requested, keeps one generated after', async () => {
    const ch = freshChannelId();
    const save = (generatedAt: string) =>
      h.wiki.savePages(
        ch,
        { structure: { channel_id: ch } as never, pages: [{ id: 'overview' } as never] },
        { generatedAt, model: 'extractive' },
      );
    await save('2024-05-01T00:00:00.000Z');
    await wikiProjector.handle(
      [delivered('ChannelDataDeleted', deletion(ch, '2024-06-01T00:00:00.000Z'), TOPICS.facts)],
      h,
    );
    expect(await h.wiki.pageCount(ch)).toBe(0);
    await save('2024-07-01T00:00:00.000Z');
    // A replay reads the same command again: the wiki generated after it stays.
    await wikiProjector.handle(
      [delivered('ChannelDataDeleted', deletion(ch, '2024-06-01T00:00:00.000Z'), TOPICS.graph)],
      h,
    );
    expect(await h.wiki.pageCount(ch)).toBe(1);
  });

  it('appendChannelCommand: projectors that do not apply the command in time give STORE_UNAVAILABLE (retriable)', async () => {
    const ch = freshChannelId(); // no projector runs in this harness: nothing commits
    await expect(
      appendChannelCommand(
        channelCommandDeps(h),
        { type: 'ChannelDataDeleted', key: ch, data: deletion(ch) },
        { timeoutMs: 200 },
      ),
    ).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', retriable: true, details: { topic: TOPICS.messages } });
  });
});
