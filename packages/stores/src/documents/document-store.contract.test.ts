import { DEFAULT_CHANNEL_SETTINGS, type EntitiesExtracted, entityUuid, type MessageIngested } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelEvent, factOf, factSet, freshChannelId, messageEvent } from '../test-fixtures.js';
import { testDatabases } from '../testing.js';
import { KyselyDocumentStore } from './document-store.js';
import { migrateDocuments } from './migrations.js';
import type { DocumentStore } from './port.js';

/** One entity named by the message's fact, and one supersession the message states. */
const graphLinks = (m: MessageIngested, factId: string): EntitiesExtracted => {
  const entityId = entityUuid(m.channelId, 'Technology', 'Kafka');
  return {
    messageId: m.messageId,
    platform: m.platform,
    channelId: m.channelId,
    sourceMessageId: m.platformMessageId,
    messageTs: m.timestamp,
    extractor: 'test',
    extractedAt: m.timestamp,
    entities: [
      { entityId, type: 'Technology', name: 'Kafka', aliases: [], confidence: 0.9, factIds: [factId], properties: {} },
    ],
    relationships: [],
    supersessions: [
      {
        factId: entityUuid(m.channelId, 'Decision', 'older'),
        supersededBy: factId,
        oldEntityId: null,
        newEntityId: null,
        invalidAt: m.timestamp,
        certain: true,
        reason: 'test',
      },
    ],
  };
};

for (const { name, open } of testDatabases()) {
  describe(`${name}: DocumentStore`, () => {
    let handle: DatabaseHandle;
    let store: DocumentStore;
    beforeAll(async () => {
      handle = await open();
      await migrateDocuments(handle.db);
      await migrateDocuments(handle.db); // idempotent
      store = new KyselyDocumentStore(handle.db);
    });
    afterAll(async () => handle?.close());

    it('upserts channels and messages idempotently and counts them', async () => {
      const ch = freshChannelId();
      const msgs = [messageEvent(ch, 1_600_000_000, 'one'), messageEvent(ch, 1_600_000_060, 'two')];
      await store.upsertChannel(channelEvent(ch), new Date('2024-01-01T00:00:00Z'));
      await store.upsertChannel(channelEvent(ch), new Date('2023-01-01T00:00:00Z')); // older sync time never wins
      await store.upsertMessages(msgs);
      await store.upsertMessages(msgs);
      const c = await store.getChannel(ch);
      expect(c).toMatchObject({ id: ch, name: 'general', platform: 'platform_a', message_count: 2, fact_count: 0 });
      expect(c?.last_sync).toBe('2024-01-01T00:00:00.000Z');
      expect((await store.listChannels()).filter((x) => x.id === ch)).toHaveLength(1);
    });

    it('pages messages newest first with before/after cursors and microsecond precision', async () => {
      const ch = freshChannelId();
      await store.upsertChannel(channelEvent(ch), new Date());
      await store.upsertMessages(Array.from({ length: 5 }, (_, i) => messageEvent(ch, 1_600_000_000 + i, `m${i}`)));
      const p1 = await store.listMessages(ch, { limit: 2 });
      expect(p1.messages.map((m) => m.text)).toEqual(['m4', 'm3']);
      expect(p1.has_more).toBe(true);
      expect(p1.next_cursor).toMatch(/\.000100Z$/);
      const p2 = await store.listMessages(ch, { limit: 2, before: p1.next_cursor! });
      expect(p2.messages.map((m) => m.text)).toEqual(['m2', 'm1']);
      const p3 = await store.listMessages(ch, { limit: 2, before: p2.next_cursor! });
      expect(p3).toMatchObject({ has_more: false, next_cursor: null });
      expect(p3.messages.map((m) => m.text)).toEqual(['m0']);
      const after = await store.listMessages(ch, { limit: 10, after: '1600000002.000100' });
      expect(after.messages.map((m) => m.text)).toEqual(['m4', 'm3']);
      const forward = await store.listMessages(ch, { limit: 2, after: '1600000000.000100' });
      expect(forward.messages.map((m) => m.text)).toEqual(['m2', 'm1']);
      expect(forward.has_more).toBe(true);
      const forward2 = await store.listMessages(ch, { limit: 2, after: forward.next_cursor! });
      expect(forward2).toMatchObject({ has_more: false, next_cursor: null });
      expect(forward2.messages.map((m) => m.text)).toEqual(['m4', 'm3']);
      // as_of (inclusive at millisecond precision, as timestamps are shown): m2 (written at ...02.000100) counts as of
      // ...02.000Z, m3 not.
      const asOf = new Date(1_600_000_001_999).toISOString();
      const then = await store.listMessages(ch, { limit: 1, asOf });
      expect(then.messages.map((m) => m.text)).toEqual(['m1']);
      expect(then.has_more).toBe(true);
      const older = await store.listMessages(ch, { limit: 5, asOf, before: then.next_cursor! });
      expect(older).toMatchObject({ has_more: false, next_cursor: null });
      expect(older.messages.map((m) => m.text)).toEqual(['m0']);
      const atM2 = await store.listMessages(ch, { limit: 5, asOf: new Date(1_600_000_002_000).toISOString() });
      expect(atM2.messages.map((m) => m.text)).toEqual(['m2', 'm1', 'm0']);
    });

    it('as of a date, a message edited since shows the text it had then; deleted, none of its texts remain', async () => {
      const ch = freshChannelId();
      const at = (sec: number) => new Date(sec * 1000).toISOString();
      const original = messageEvent(ch, 1_600_000_000, 'we ship on Friday');
      const edit = (text: string, sec: number) => ({ ...original, text, editedAt: at(sec), contentHash: text });
      await store.upsertChannel(channelEvent(ch), new Date());
      await store.upsertMessages([original]);
      await store.upsertMessages([edit('we ship on Monday', 1_600_000_100)]);
      // Two edits in one batch (a sync that met both): each text from its own edit time.
      await store.upsertMessages([
        edit('we ship on Tuesday', 1_600_000_200),
        edit('we ship on Wednesday', 1_600_000_300),
      ]);
      await store.upsertMessages([edit('we ship on Wednesday', 1_600_000_300)]); // replayed: the same versions
      const textAt = async (asOf?: string) => (await store.listMessages(ch, { limit: 5, asOf })).messages[0]?.text;
      expect(await textAt()).toBe('we ship on Wednesday');
      expect(await textAt(at(1_600_000_000))).toBe('we ship on Friday');
      expect(await textAt(at(1_600_000_099))).toBe('we ship on Friday');
      expect(await textAt(at(1_600_000_100))).toBe('we ship on Monday'); // inclusive, as the messages' time
      expect(await textAt(at(1_600_000_250))).toBe('we ship on Tuesday');
      expect(await textAt(at(1_600_000_300))).toBe('we ship on Wednesday');
      // A message first seen edited: its text before the edit was never seen, so as of then it shows the one known.
      const late = { ...messageEvent(ch, 1_600_000_010, 'fixed typo'), editedAt: at(1_600_000_400) };
      await store.upsertMessages([late]);
      expect((await store.listMessages(ch, { limit: 5, asOf: at(1_600_000_020) })).messages.map((m) => m.text)).toEqual(
        ['fixed typo', 'we ship on Friday'],
      );
      await store.markMessageDeleted(ch, original.platformMessageId, at(1_600_000_500));
      expect((await store.listMessages(ch, { limit: 5, asOf: at(1_600_000_050) })).messages.map((m) => m.text)).toEqual(
        ['fixed typo'],
      );
      // Brought back by a later event: only what that event says, none of the texts it had before its deletion.
      await store.upsertMessages([edit('we ship next week', 1_600_000_600)]);
      expect(await store.listMessages(ch, { limit: 5, asOf: at(1_600_000_050) })).toMatchObject({
        messages: [{ text: 'fixed typo' }, { text: 'we ship next week' }],
      });
    });

    it('replaces a message fact set: new facts upserted, missing ones removed, empty set retracts', async () => {
      const ch = freshChannelId();
      const m = messageEvent(ch, 1_600_000_000, 'we decided to use Kafka');
      await store.upsertChannel(channelEvent(ch), new Date());
      await store.upsertMessages([m]);
      const a = factOf(m, 'alice decided to use Kafka');
      const b = factOf(m, 'alice will deploy on Friday', { factType: 'action_item', topicTags: ['deploy', 'friday'] });
      await store.replaceFacts([factSet(m, [a, b])]);
      await store.replaceFacts([factSet(m, [a, b])]);
      expect((await store.listMemories({ channelId: ch, page: 1, limit: 10 })).total).toBe(2);
      await store.replaceFacts([factSet(m, [a])]);
      const list = await store.listMemories({ channelId: ch, page: 1, limit: 10 });
      expect(list.rows.map((r) => r.id)).toEqual([a.factId]);
      expect(list.rows[0]).toMatchObject({
        memory_text: a.memoryText,
        tier: 'atomic',
        permalink: m.permalink,
        source_message_id: m.platformMessageId,
      });
      const detail = await store.getMemory(a.factId);
      expect(detail).toMatchObject({
        author_id: 'U1',
        invalid_at: null,
        superseded_by: null,
        potential_contradiction: false,
      });
      expect(detail).not.toHaveProperty('permalink');
      await store.replaceFacts([factSet(m, [])]);
      expect((await store.listMemories({ channelId: ch, page: 1, limit: 10 })).total).toBe(0);
    });

    it('as_of (issue 27 point 2): facts stated by then, with their validity then', async () => {
      const ch = freshChannelId();
      const m1 = messageEvent(ch, 1_600_000_000, 'we use MySQL');
      const m2 = messageEvent(ch, 1_600_000_600, 'maybe Postgres');
      const m3 = messageEvent(ch, 1_600_001_200, 'we switched to Kafka');
      await store.upsertChannel(channelEvent(ch), new Date());
      await store.upsertMessages([m1, m2, m3]);
      const [a, b, c] = [factOf(m1, 'we use MySQL'), factOf(m2, 'maybe Postgres'), factOf(m3, 'switched to Kafka')];
      await store.replaceFacts([factSet(m1, [a]), factSet(m2, [b]), factSet(m3, [c])]);
      const flag = (m: MessageIngested, by: string, certain: boolean): EntitiesExtracted => ({
        ...graphLinks(m, by),
        entities: [],
        supersessions: [
          {
            factId: a.factId,
            supersededBy: by,
            oldEntityId: null,
            newEntityId: null,
            invalidAt: m.timestamp,
            certain,
            reason: 't',
          },
        ],
      });
      // m2 flags a possible contradiction of `a`; m3 supersedes it for certain.
      await store.replaceGraphLinks([flag(m2, b.factId, false), flag(m3, c.factId, true)]);
      const at = (sec: number) => new Date(sec * 1000).toISOString();
      expect(await store.getMemory(a.factId)).toMatchObject({
        superseded_by: c.factId,
        invalid_at: m3.timestamp,
        potential_contradiction: true,
      });
      expect(await store.getMemory(a.factId, { asOf: at(1_600_000_300) })).toMatchObject({
        superseded_by: null,
        invalid_at: null,
        potential_contradiction: false,
      });
      expect(await store.getMemory(a.factId, { asOf: at(1_600_000_900) })).toMatchObject({
        superseded_by: null,
        potential_contradiction: true,
      });
      expect((await store.getMemory(a.factId, { asOf: m3.timestamp }))?.superseded_by).toBe(c.factId);
      // A fact stated later does not exist yet.
      expect(await store.getMemory(c.factId, { asOf: at(1_600_000_900) })).toBeNull();
      const many = await store.getMemories([a.factId, b.factId, c.factId], { asOf: at(1_600_000_300) });
      expect([...many.keys()]).toEqual([a.factId]);
      expect(many.get(a.factId)?.superseded_by).toBeNull();
      const list = await store.listMemories({ channelId: ch, page: 1, limit: 10, asOf: at(1_600_000_900) });
      expect(list.total).toBe(2);
      expect(list.rows.map((r) => r.id).sort()).toEqual([a.factId, b.factId].sort());
      expect((await store.listMemories({ channelId: ch, page: 1, limit: 10 })).total).toBe(3);
    });

    it('filters memories and aggregates topics and entities', async () => {
      const ch = freshChannelId();
      const m1 = messageEvent(ch, 1_600_000_000, 'x');
      const m2 = messageEvent(ch, 1_700_000_000, 'y');
      await store.replaceFacts([
        factSet(m1, [
          factOf(m1, 'old decision', {
            topicTags: ['db'],
            entityTags: ['Postgres'],
            importance: 'low',
            factType: 'opinion',
          }),
        ]),
        factSet(m2, [factOf(m2, 'new decision', { topicTags: ['db', 'ops'], entityTags: ['Postgres', 'Kafka'] })]),
      ]);
      const q = { channelId: ch, page: 1, limit: 10 };
      expect((await store.listMemories({ ...q, topic: 'ops' })).total).toBe(1);
      expect((await store.listMemories({ ...q, entity: 'Postgres' })).total).toBe(2);
      expect((await store.listMemories({ ...q, importance: 'low' })).rows[0]?.memory_text).toBe('old decision');
      expect((await store.listMemories({ ...q, factType: 'decision' })).total).toBe(1);
      expect(
        (await store.listMemories({ ...q, since: '2022-01-01T00:00:00Z' })).rows.map((r) => r.memory_text),
      ).toEqual(['new decision']);
      expect((await store.listMemories({ ...q, until: '2022-01-01T00:00:00Z' })).total).toBe(1);
      expect((await store.listMemories({ ...q, limit: 1, page: 2 })).rows[0]?.memory_text).toBe('old decision');
      expect(await store.topicCounts(ch)).toEqual([
        { tag: 'db', count: 2 },
        { tag: 'ops', count: 1 },
      ]);
      expect(await store.entityCounts({ channelId: ch, limit: 10 })).toEqual([
        { name: 'Postgres', count: 2 },
        { name: 'Kafka', count: 1 },
      ]);
    });

    it('topicWindow: per tag, its facts in a window, in the window before, and its first fact', async () => {
      const ch = freshChannelId();
      const day = 86_400;
      const t0 = 1_700_000_000; // 2023-11-14T22:13:20Z
      const ms = [t0, t0 + 8 * day, t0 + 9 * day, t0 + 15 * day, t0 + 30 * day].map((t, i) =>
        messageEvent(ch, t, `m${i}`),
      );
      const tags = [['db'], ['db', 'ops'], ['ops'], ['ops', 'k8s'], ['db']];
      await store.replaceFacts(ms.map((m, i) => factSet(m, [factOf(m, `fact ${i}`, { topicTags: tags[i]! })])));
      // The window [t0+14d, t0+21d): m3 only; the window before [t0+7d, t0+14d): m1 and m2.
      const start = new Date((t0 + 14 * day) * 1000).toISOString();
      const end = new Date((t0 + 21 * day) * 1000).toISOString();
      expect(await store.topicWindow(ch, start, end)).toEqual([
        { tag: 'k8s', count: 1, previous: 0, firstSeen: new Date((t0 + 15 * day) * 1000).toISOString() },
        { tag: 'ops', count: 1, previous: 2, firstSeen: new Date((t0 + 8 * day) * 1000).toISOString() },
      ]);
      expect(await store.topicWindow(ch, end, new Date((t0 + 28 * day) * 1000).toISOString())).toEqual([]);
    });

    it('hides deleted messages and reports hashes for re-import checks', async () => {
      const ch = freshChannelId();
      const m = messageEvent(ch, 1_600_000_000, 'gone soon');
      await store.upsertChannel(channelEvent(ch), new Date());
      await store.upsertMessages([m]);
      expect((await store.messageHashes(ch)).get(m.platformMessageId)).toBe(m.contentHash);
      const [byId] = await store.getMessages(ch, [m.platformMessageId, 'unknown']);
      expect(byId).toEqual((await store.listMessages(ch, { limit: 10 })).messages[0]);
      expect(await store.getMessages(ch, [])).toEqual([]);
      // getMessagesIn: (channel, id) pairs, not every id in every channel.
      const other = freshChannelId();
      const o = messageEvent(other, 1_600_000_100, 'later, another channel');
      const p = messageEvent(other, 1_600_000_000, 'same id as m, another channel');
      await store.upsertChannel(channelEvent(other), new Date());
      await store.upsertMessages([o, p]);
      const both = await store.getMessagesIn([
        { channelId: ch, id: m.platformMessageId },
        { channelId: other, id: o.platformMessageId },
        { channelId: ch, id: 'unknown' },
      ]);
      expect(both.map((x) => `${x.channelId === ch ? 'ch' : 'other'}: ${x.message.text}`).sort()).toEqual([
        'ch: gone soon',
        'other: later, another channel',
      ]);
      expect(await store.getMessagesIn([])).toEqual([]);
      await store.markMessageDeleted(ch, m.platformMessageId, '2024-01-01T00:00:00Z');
      expect(await store.getMessages(ch, [m.platformMessageId])).toEqual([]);
      expect((await store.listMessages(ch, { limit: 10 })).messages).toHaveLength(0);
      expect((await store.getChannel(ch))?.message_count).toBe(0);
    });

    it('newestMessageTimes: the newest live message of each channel (issue 27 point 3)', async () => {
      const ch = freshChannelId();
      const empty = freshChannelId();
      await store.upsertChannel(channelEvent(ch), new Date());
      const older = messageEvent(ch, 1_600_000_000, 'older');
      const newer = messageEvent(ch, 1_600_000_500, 'newer');
      await store.upsertMessages([older, newer]);
      const got = await store.newestMessageTimes([ch, empty]);
      expect(Object.fromEntries(got)).toEqual({ [ch]: new Date(1_600_000_500_000).toISOString() });
      await store.markMessageDeleted(ch, newer.platformMessageId, '2024-01-01T00:00:00Z');
      expect((await store.newestMessageTimes([ch])).get(ch)).toBe(new Date(1_600_000_000_000).toISOString());
      expect((await store.newestMessageTimes([])).size).toBe(0);
    });

    it('deleteChannelData removes one part of a channel at a time, keeps the channel and other channels', async () => {
      const ch = freshChannelId();
      const other = freshChannelId();
      for (const c of [ch, other]) {
        await store.upsertChannel(channelEvent(c), new Date());
        const m = messageEvent(c, 1_600_000_000, 'we decided to use Kafka');
        await store.upsertMessages([m, messageEvent(c, 1_600_000_060, 'ok')]);
        const f = factOf(m, 'alice decided to use Kafka');
        await store.replaceFacts([factSet(m, [f])]);
        await store.replaceGraphLinks([graphLinks(m, f.factId)]);
      }
      const [fact] = (await store.listMemories({ channelId: ch, page: 1, limit: 5 })).rows;
      expect((await store.getMemory(fact!.id))?.graph_entity_ids).toHaveLength(1);
      expect(await store.deleteChannelData(ch, 'messages')).toBe(2);
      expect(await store.getChannel(ch)).toMatchObject({ message_count: 0, fact_count: 1 });
      expect(await store.deleteChannelData(ch, 'facts')).toBe(1);
      expect(await store.getChannel(ch)).toMatchObject({ message_count: 0, fact_count: 0 });
      expect(await store.deleteChannelData(ch, 'graph')).toBe(2); // one entity link, one supersession
      expect(await store.getChannel(ch)).toMatchObject({ entity_count: 0 });
      for (const part of ['messages', 'facts', 'graph'] as const)
        expect(await store.deleteChannelData(ch, part)).toBe(0);
      expect(await store.getChannel(other)).toMatchObject({ message_count: 2, fact_count: 1, entity_count: 1 });
      expect(await store.messageHashes(ch)).toEqual(new Map());
    });

    it('keeps channel settings over their defaults and lists messages past a retention cut-off', async () => {
      const ch = freshChannelId();
      expect(await store.channelSettings(ch)).toBeNull();
      expect(await store.applyChannelSettings(ch, { ...DEFAULT_CHANNEL_SETTINGS, wiki_enabled: false })).toBe(false);
      await store.upsertChannel(channelEvent(ch), new Date());
      expect(await store.channelSettings(ch)).toEqual(DEFAULT_CHANNEL_SETTINGS);
      const settings = { ...DEFAULT_CHANNEL_SETTINGS, graph_enabled: false, retention_days: 30 };
      expect(await store.applyChannelSettings(ch, settings)).toBe(true);
      await store.upsertChannel(channelEvent(ch), new Date()); // a later ChannelDiscovered keeps them
      expect(await store.channelSettings(ch)).toEqual(settings);
      const other = freshChannelId();
      await store.upsertChannel(channelEvent(other), new Date());
      expect(await store.channelSettingsMany([ch, other, freshChannelId()])).toEqual(
        new Map([
          [ch, settings],
          [other, DEFAULT_CHANNEL_SETTINGS],
        ]),
      );
      expect(await store.channelSettingsMany([])).toEqual(new Map());
      expect((await store.getChannel(ch))?.settings).toEqual({
        sync_enabled: true,
        wiki_enabled: true,
        graph_enabled: false,
      });
      expect(await store.channelsWithRetention()).toContainEqual({ channelId: ch, retentionDays: 30 });
      const msgs = [0, 60, 120].map((d) => messageEvent(ch, 1_600_000_000 + d, `m${d}`));
      await store.upsertMessages(msgs);
      await store.markMessageDeleted(ch, msgs[0]!.platformMessageId, '2024-01-01T00:00:00Z');
      const cut = new Date((1_600_000_000 + 90) * 1000).toISOString();
      expect(await store.messagesBefore(ch, cut, 10)).toEqual([
        {
          messageId: msgs[1]!.messageId,
          platformMessageId: msgs[1]!.platformMessageId,
          platform: 'platform_a',
          timestamp: '2020-09-13T12:27:40.000Z',
        },
      ]);
      await store.applyChannelSettings(ch, DEFAULT_CHANNEL_SETTINGS);
      expect((await store.channelsWithRetention()).map((c) => c.channelId)).not.toContain(ch);
    });

    it('returns null for unknown ids', async () => {
      expect(await store.getChannel('nope')).toBeNull();
      expect(await store.getMemory('not-a-uuid')).toBeNull();
      expect(await store.getMemory('00000000-0000-5000-8000-000000000000')).toBeNull();
    });
  });
}
