import { randomUUID } from 'node:crypto';
import {
  deadLetterId,
  type EntitiesExtracted,
  type EventDataMap,
  type EventType,
  entityUuid,
  type StoredEvent,
  TOPICS,
} from '@atlas/core';
import { estimateLlmCostUsd, migrateStats, migrateWiki, StatsStore, topicTrend, WikiStore } from '@atlas/stores';
import {
  channelEvent,
  factOf,
  factSet,
  freshChannelId,
  messageEvent,
  type TestDatabase,
  testDatabases,
} from '@atlas/stores/testing';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statsProjector } from './stats.js';

let offset = 0;
const ev = <T extends EventType>(type: T, data: EventDataMap[T], topic: string = TOPICS.messages): StoredEvent<T> => ({
  type,
  key: 'channelId' in data ? data.channelId : 'k',
  data,
  topic,
  partition: 0,
  offset: offset++,
  timestamp: Date.now(),
});

const DAY = 86_400;
const T0 = Date.parse('2026-03-01T12:00:00Z') / 1000;

const entities = (m: ReturnType<typeof messageEvent>, names: string[], extractedAt: string): EntitiesExtracted => ({
  messageId: m.messageId,
  platform: m.platform,
  channelId: m.channelId,
  sourceMessageId: m.platformMessageId,
  messageTs: m.timestamp,
  extractor: 'test@1',
  extractedAt,
  entities: names.map((name) => ({
    entityId: entityUuid(m.channelId, 'Technology', name),
    type: 'Technology' as const,
    name,
    aliases: [],
    confidence: 0.9,
    factIds: [],
    properties: {},
  })),
  relationships: [],
  supersessions: [],
});

describe.each(testDatabases())('stats projector and StatsStore ($name)', ({ open }) => {
  let h: TestDatabase;
  let store: StatsStore;
  beforeAll(async () => {
    h = await open();
    await migrateStats(h.db);
    await migrateStats(h.db); // idempotent
    store = new StatsStore(h.db);
  });
  const apply = (events: Parameters<typeof statsProjector.handle>[0]) =>
    statsProjector.handle(events, { stats: store });
  afterAll(async () => {
    await h?.close();
  });

  /** A channel with 3 authors and 6 messages over 20 days, facts on 4 of them, entities on 2. */
  const seed = async () => {
    const ch = freshChannelId();
    const who = [
      { id: 'U1', name: 'alice', isBot: false },
      { id: 'U2', name: 'bob', isBot: false },
      { id: 'U3', name: 'carol', isBot: false },
    ];
    const msgs = [0, 1, 2, 15, 18, 19].map((d, i) =>
      messageEvent(ch, T0 + d * DAY, `message ${i}`, { author: who[i % 3]!, channelName: 'general' }),
    );
    const sets = [
      factSet(msgs[0]!, [factOf(msgs[0]!, 'we use kafka', { topicTags: ['kafka'] })]),
      factSet(msgs[3]!, [
        factOf(msgs[3]!, 'decided to deploy', { topicTags: ['deploy', 'kafka'] }),
        factOf(msgs[3]!, 'an observation', { factType: 'observation', importance: 'low', topicTags: ['deploy'] }),
      ]),
      factSet(msgs[4]!, [factOf(msgs[4]!, 'deploy on friday', { topicTags: ['deploy'] })]),
      factSet(msgs[5]!, [factOf(msgs[5]!, 'deploy again', { factType: 'question', topicTags: ['deploy'] })]),
    ];
    const at = '2026-03-20T10:15:00.000Z';
    const events = [
      ev('ChannelDiscovered', { ...channelEvent(ch, 'general') }),
      ...msgs.map((m) => ev('MessageIngested', m)),
      ...sets.map((s) => ev('FactsExtracted', { ...s, extractedAt: at }, TOPICS.facts)),
      ev('EntitiesExtracted', entities(msgs[0]!, ['Kafka', 'Postgres'], at), TOPICS.graph),
      ev('EntitiesExtracted', entities(msgs[3]!, ['Kafka'], '2026-03-20T11:05:00.000Z'), TOPICS.graph),
    ];
    return { ch, msgs, events };
  };

  it('folds a channel idempotently: counts, date range, windows, authors, topics, export', async () => {
    const { ch, msgs, events } = await seed();
    const before = await store.system();
    await apply(events);
    await apply(events); // redelivery changes nothing
    const now = new Date((T0 + 22 * DAY) * 1000);
    const c = (await store.channel(ch, now))!;
    expect(c).toMatchObject({
      channel_id: ch,
      channel_name: 'general',
      message_count: 6,
      fact_count: 5,
      decision_count: 3,
      author_count: 3,
      entity_count: 2,
      date_range: { earliest: msgs[0]!.timestamp, latest: msgs[5]!.timestamp },
      // messages at day 15, 18, 19 are within 7 days of day 22; all within 30; facts were extracted on 03-20
      activity: { messages_last_7d: 3, messages_last_30d: 6, facts_added_last_7d: 5, facts_added_last_30d: 5 },
    });
    const after = await store.system();
    expect(after.total_messages - before.total_messages).toBe(6);
    expect(after.total_facts - before.total_facts).toBe(5);
    expect(after.total_decisions - before.total_decisions).toBe(3);
    expect(after.total_entities - before.total_entities).toBe(2);

    const authors = await store.topAuthors({ channelId: ch, limit: 10 });
    expect(authors.map((a) => [a.author_name, a.message_count, a.fact_count, a.decision_count])).toEqual([
      ['alice', 2, 3, 2], // messages 0 and 3: 1 + 2 facts, decisions 'we use kafka' and 'decided to deploy'
      ['bob', 2, 1, 1],
      ['carol', 2, 1, 0],
    ]);
    expect(authors[0]!.channels).toEqual(['general']);

    const topics = await store.topTopics({ channelId: ch, limit: 10 });
    // anchor = day 19; recent window (day 12, 19]: deploy ×4 (days 15, 15, 18, 19), kafka ×1; previous (5, 12]: none
    expect(topics.map((t) => [t.topic, t.fact_count, t.trend])).toEqual([
      ['deploy', 4, 'rising'],
      ['kafka', 2, 'stable'],
    ]);

    const rows = await store.exportRows({ channelId: ch, since: new Date((T0 + 10 * DAY) * 1000).toISOString() });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ message_count: 3, fact_count: 4, decision_count: 2, entity_count: 2 });

    // Activity: one fact_extracted entry for the hour of 10:15, entity_created for 10:xx (2) and 11:xx (0 new: Kafka
    // was first seen at 10:15 already).
    const activity = (await store.activity(50)).filter((a) => a.channel_id === ch);
    expect(activity).toContainEqual({
      type: 'fact_extracted',
      timestamp: '2026-03-20T10:15:00.000Z',
      channel_id: ch,
      message_count: 4,
      fact_count: 5,
    });
    expect(activity).toContainEqual({
      type: 'entity_created',
      timestamp: '2026-03-20T10:15:00.000Z',
      channel_id: ch,
      message_count: 2,
      entity_count: 2,
    });
    expect(activity.filter((a) => a.type === 'entity_created')).toHaveLength(1);
  });

  it('replaces fact sets, hides deleted messages and deletes each topic part of a channel', async () => {
    const { ch, msgs, events } = await seed();
    await apply(events);
    // msg 3's new fact set has one fact; msg 5 is deleted
    await apply([
      ev('FactsExtracted', factSet(msgs[3]!, [factOf(msgs[3]!, 'only this', { factType: 'opinion' })]), TOPICS.facts),
      ev('MessageDeleted', {
        messageId: msgs[5]!.messageId,
        platform: 'platform_a',
        channelId: ch,
        platformMessageId: msgs[5]!.platformMessageId,
        deletedAt: new Date().toISOString(),
      }),
    ]);
    let c = (await store.channel(ch))!;
    expect([c.message_count, c.fact_count, c.decision_count]).toEqual([5, 4, 2]);
    expect(c.date_range.latest).toBe(msgs[4]!.timestamp);
    const del = { channelId: ch, requestedAt: new Date().toISOString() };
    await apply([ev('ChannelDataDeleted', del, TOPICS.messages)]);
    c = (await store.channel(ch))!;
    expect([c.message_count, c.fact_count, c.entity_count]).toEqual([0, 4, 2]); // facts go with atlas.facts' copy
    await apply([ev('ChannelDataDeleted', del, TOPICS.facts), ev('ChannelDataDeleted', del, TOPICS.graph)]);
    c = (await store.channel(ch))!;
    expect([c.message_count, c.fact_count, c.entity_count, c.date_range.earliest]).toEqual([0, 0, 0, null]);
    expect(await store.channel(freshChannelId())).toBeNull();
  });

  it('keeps the newest state of a sync job, its duration and activity; counts dead letters once', async () => {
    const ch = freshChannelId();
    const jobId = randomUUID();
    const job = {
      jobId,
      channelId: ch,
      status: 'completed' as const,
      stage: null,
      totalMessages: 40,
      processedMessages: 40,
      failingMessages: 0,
      percentage: 100,
      startedAt: '2026-03-02T10:00:00.000Z',
      estimatedCompletion: null,
      completedAt: '2026-03-02T10:01:30.000Z',
      cursor: null,
      messagesSynced: 40,
      factsExtracted: 12,
      entitiesCreated: 3,
      error: null,
      updatedAt: '2026-03-02T10:01:30.000Z',
    };
    await apply([
      ev('SyncJobUpdated', { ...job, seq: 3 }, TOPICS.syncJobs),
      ev('SyncJobUpdated', { ...job, seq: 2, status: 'running', completedAt: null }, TOPICS.syncJobs), // older: ignored
    ]);
    expect(await store.avgSyncDurationSeconds()).toBeGreaterThan(0);
    const sync = (await store.activity(100)).find((a) => a.type === 'sync_completed' && a.channel_id === ch);
    expect(sync).toEqual({
      type: 'sync_completed',
      timestamp: '2026-03-02T10:01:30.000Z',
      channel_id: ch,
      message_count: 40,
      job_id: jobId,
      fact_count: 12,
      entity_count: 3,
    });
    const group = `atlas.projector.g-${randomUUID()}`;
    const dead = {
      group,
      topic: TOPICS.messages,
      partition: 1,
      offset: 7,
      eventType: 'MessageIngested',
      key: ch,
      error: 'boom',
      attempts: 5,
      failedAt: new Date().toISOString(),
    };
    await apply([ev('DeadLettered', dead, TOPICS.deadLetters), ev('DeadLettered', dead, TOPICS.deadLetters)]);
    await apply([ev('DeadLettered', { ...dead, offset: 8 }, TOPICS.deadLetters)]);
    expect((await store.deadLetters()).filter((d) => d.group === group)).toEqual([
      { group, topic: TOPICS.messages, count: 2 },
    ]);
    await apply([
      ev(
        'DeadLetterRedriven',
        {
          deadLetterId: deadLetterId(dead),
          topic: TOPICS.messages,
          partition: 1,
          offset: 99,
          redrivenAt: new Date().toISOString(),
        },
        TOPICS.deadLetters,
      ),
    ]);
    expect((await store.deadLetters()).filter((d) => d.group === group)).toEqual([
      { group, topic: TOPICS.messages, count: 1 },
    ]);
  });

  it('reads wiki pages, versions and generation times across channels from the wiki store', async () => {
    if (!(await store.wikiPageCounts()).size) expect(await store.wikiVersions(5)).toEqual([]); // no wiki tables yet
    await migrateWiki(h.db);
    const wiki = new WikiStore(h.db);
    const ch = freshChannelId();
    await sql`insert into wiki_pages (channel_id, page_id, page) values (${ch}, 'overview', '{}'::jsonb),
      (${ch}, 'people', '{}'::jsonb)`.execute(h.db);
    await sql`insert into wiki_versions (channel_id, version_number, generated_at, page_count, model, snapshot)
      values (${ch}, 1, '2099-01-01T00:00:00Z', 2, 'extractive', '{}'::jsonb)`.execute(h.db);
    await sql`insert into wiki_state (channel_id, is_generating, is_stale, last_duration_ms)
      values (${ch}, false, false, 1500)`.execute(h.db);
    expect((await store.wikiPageCounts()).get(ch)).toBe(await wiki.pageCount(ch));
    expect((await store.wikiVersions(1))[0]).toEqual({
      channel_id: ch,
      version_number: 1,
      generated_at: '2099-01-01T00:00:00.000Z',
      page_count: 2,
    });
    expect(await store.avgWikiGenerationSeconds()).toBeGreaterThan(0);
  });

  it('adds LLM calls to the usage ledger with estimated cost', async () => {
    const before = await store.llmUsage();
    const model = `gpt-4o-mini-${randomUUID().slice(0, 6)}`;
    await store.recordLlmUsage({
      tier: 'fast',
      provider: 'p',
      model,
      promptTokens: 1000,
      completionTokens: 500,
      costUsd: estimateLlmCostUsd(model, 1000, 500),
    });
    await store.recordLlmUsage({
      tier: 'fast',
      provider: 'p',
      model,
      promptTokens: 0,
      completionTokens: 0,
      failed: true,
      costUsd: 0,
    });
    const after = await store.llmUsage();
    expect(after.total_llm_calls - before.total_llm_calls).toBe(2);
    expect(after.failed_llm_calls - before.failed_llm_calls).toBe(1);
    expect(after.total_llm_tokens - before.total_llm_tokens).toBe(1500);
    expect(after.estimated_cost_usd - before.estimated_cost_usd).toBeCloseTo((1000 * 0.15 + 500 * 0.6) / 1e6, 9);
  });
});

describe('topicTrend and estimateLlmCostUsd', () => {
  it('rising, falling and stable by the documented rule', () => {
    expect(topicTrend(3, 0)).toBe('rising');
    expect(topicTrend(1, 0)).toBe('stable'); // one fact is no trend
    expect(topicTrend(6, 4)).toBe('rising');
    expect(topicTrend(5, 4)).toBe('stable');
    expect(topicTrend(0, 2)).toBe('falling');
    expect(topicTrend(4, 6)).toBe('falling');
    expect(topicTrend(0, 0)).toBe('stable');
  });
  it('prices known models by their longest prefix; unknown models cost 0', () => {
    expect(estimateLlmCostUsd('gpt-4o-mini-2024-07-18', 1_000_000, 0)).toBeCloseTo(0.15);
    expect(estimateLlmCostUsd('gpt-4o', 0, 1_000_000)).toBeCloseTo(10);
    expect(estimateLlmCostUsd('openai/gpt-4o', 1_000_000, 0)).toBeCloseTo(2.5);
    expect(estimateLlmCostUsd('llama3.1:8b', 1_000_000, 1_000_000)).toBe(0);
  });
});
