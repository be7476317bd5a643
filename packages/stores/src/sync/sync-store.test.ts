import { randomUUID } from 'node:crypto';
import type { EventDataMap, EventType, StoredEvent, SyncJobUpdated } from '@atlas/core';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KyselyDocumentStore } from '../documents/document-store.js';
import { migrateDocuments } from '../documents/migrations.js';
import { factOf, factSet, freshChannelId, messageEvent } from '../test-fixtures.js';
import { type TestDatabase, testDatabases } from '../testing.js';
import { migrateSync } from './migrations.js';
import { SyncStore } from './sync-store.js';

let offset = 0;
const ev = <T extends EventType>(type: T, data: EventDataMap[T]): StoredEvent => ({
  type,
  key: (data as { channelId: string }).channelId,
  data,
  topic: 't',
  partition: 0,
  offset: offset++,
  timestamp: Date.now(),
});

const requested = (jobId: string, channelId: string) =>
  ev('SyncRequested', {
    jobId,
    channelId,
    connectionId: 'conn-1',
    platform: 'platform_a',
    force: false,
    estimatedMessages: 1000,
    requestedAt: '2026-03-01T10:00:00.000Z',
    requestedBy: 'api',
  });

const updated = (jobId: string, channelId: string, over: Partial<SyncJobUpdated>) =>
  ev('SyncJobUpdated', {
    jobId,
    channelId,
    seq: 1,
    status: 'running',
    stage: 'fetching_messages',
    totalMessages: 1000,
    processedMessages: 0,
    failingMessages: 0,
    percentage: 0,
    startedAt: '2026-03-01T10:00:00.000Z',
    estimatedCompletion: null,
    completedAt: null,
    cursor: null,
    messagesSynced: 0,
    factsExtracted: 0,
    entitiesCreated: 0,
    error: null,
    updatedAt: '2026-03-01T10:00:01.000Z',
    ...over,
  });

for (const { name, open } of testDatabases()) {
  describe(`${name}: SyncStore`, () => {
    let h: TestDatabase;
    let store: SyncStore;
    beforeAll(async () => {
      h = await open();
      await migrateSync(h.db);
      await migrateSync(h.db); // idempotent
      await migrateDocuments(h.db);
      store = new SyncStore(h.db);
    });
    afterAll(async () => {
      await h?.close();
    });

    it('a request makes a queued job that is the channel’s active one', async () => {
      const [jobId, channelId] = [randomUUID(), `C${randomUUID()}`];
      await store.apply([requested(jobId, channelId)]);
      const job = await store.getJob(jobId);
      expect(job).toMatchObject({
        job_id: jobId,
        channel_id: channelId,
        connection_id: 'conn-1',
        status: 'queued',
        seq: 0,
        started_at: '2026-03-01T10:00:00.000Z',
        estimated_messages: 1000,
        total_messages: 1000,
        error: null,
      });
      expect((await store.activeJob(channelId))?.job_id).toBe(jobId);
      expect((await store.openJobs()).map((j) => j.job_id)).toContain(jobId);
      expect(await store.getJob(randomUUID())).toBeNull();
    });

    it('keeps the highest seq whatever the order, and a late request does not undo progress', async () => {
      const [jobId, channelId] = [randomUUID(), `C${randomUUID()}`];
      const two = updated(jobId, channelId, { seq: 2, processedMessages: 50, cursor: '1517789022.000033' });
      const one = updated(jobId, channelId, { seq: 1, processedMessages: 0 });
      await store.apply([two, one, requested(jobId, channelId), two]);
      const job = await store.getJob(jobId);
      expect(job).toMatchObject({ seq: 2, processed_messages: 50, status: 'running', connection_id: 'conn-1' });
      expect(job?.cursor).toBe('1517789022.000033');
      expect((await store.channelState(channelId))?.cursor).toBe('1517789022.000033');
    });

    it('the channel cursor only moves forward; completion sets last_sync; terminal jobs leave the active set', async () => {
      const [a, b, channelId] = [randomUUID(), randomUUID(), `C${randomUUID()}`];
      await store.apply([updated(a, channelId, { seq: 1, cursor: '1517789099.000001' })]);
      await store.apply([updated(b, channelId, { seq: 1, cursor: '1517780000.000001' })]);
      expect((await store.channelState(channelId))?.cursor).toBe('1517789099.000001');
      await store.apply([
        updated(a, channelId, {
          seq: 3,
          status: 'completed',
          stage: 'generating_wiki',
          percentage: 100,
          completedAt: '2026-03-01T10:01:00.000Z',
          cursor: '1517789099.000001',
          messagesSynced: 7,
        }),
        updated(b, channelId, {
          seq: 2,
          status: 'failed',
          error: { code: 'AUTH_ERROR', message: 'token revoked', retryAfter: null, failingMessageId: null },
          completedAt: '2026-03-01T10:00:30.000Z',
        }),
      ]);
      expect(await store.channelState(channelId)).toEqual({
        channel_id: channelId,
        cursor: '1517789099.000001',
        last_sync: '2026-03-01T10:01:00.000Z',
        last_job_id: a,
      });
      expect(await store.activeJob(channelId)).toBeNull();
      expect((await store.getJob(b))?.error).toEqual({
        code: 'AUTH_ERROR',
        message: 'token revoked',
        retryAfter: null,
        failingMessageId: null,
      });
      const history = await store.history(channelId, 10);
      expect(history.map((j) => j.status).sort()).toEqual(['completed', 'failed']);
      expect(await store.history(channelId, 1)).toHaveLength(1);
      // Snowflakes: a longer id is newer.
      const d = `D${randomUUID()}`;
      await store.apply([updated(randomUUID(), d, { cursor: '999999999999999999' })]);
      await store.apply([updated(randomUUID(), d, { cursor: '1000000000000000000' })]);
      expect((await store.channelState(d))?.cursor).toBe('1000000000000000000');
    });

    it('a cancel request is recorded once', async () => {
      const [jobId, channelId] = [randomUUID(), `C${randomUUID()}`];
      await store.apply([requested(jobId, channelId)]);
      const cancel = (at: string) => ev('SyncCancelled', { jobId, channelId, cancelledAt: at });
      await store.apply([cancel('2026-03-01T10:00:05.000Z'), cancel('2026-03-01T10:00:09.000Z')]);
      expect((await store.getJob(jobId))?.cancel_requested_at).toBe('2026-03-01T10:00:05.000Z');
    });

    it('outcomeSince: facts stored since a time, and entities first mentioned by them', async () => {
      const channelId = freshChannelId();
      const docs = new KyselyDocumentStore(h.db);
      const [m1, m2] = [messageEvent(channelId, 1517780000, 'one'), messageEvent(channelId, 1517780001, 'two')];
      const [f1, f2] = [factOf(m1, 'we use Kafka'), factOf(m2, 'we use Kafka and Neo4j')];
      await docs.replaceFacts([factSet(m1, [f1])]);
      await new Promise((r) => setTimeout(r, 20));
      const since = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 20));
      await docs.replaceFacts([factSet(m2, [f2])]);
      const link = (fact: string, entity: string, message: string) =>
        sql`insert into memory_entities (fact_id, entity_id, message_uuid, channel_id)
          values (${fact}, ${entity}, ${message}, ${channelId})`.execute(h.db);
      const [kafka, neo4j] = [randomUUID(), randomUUID()];
      await link(f1.factId, kafka, m1.messageId);
      await link(f2.factId, kafka, m2.messageId);
      await link(f2.factId, neo4j, m2.messageId);
      expect(await store.outcomeSince(channelId, since)).toEqual({ facts: 1, entities: 1 });
      expect(await store.outcomeSince(channelId, '2000-01-01T00:00:00.000Z')).toEqual({ facts: 2, entities: 2 });
    });

    it('threadHeads: Slack threads with stored replies, newest reply each, most recent first', async () => {
      const channelId = `C${randomUUID()}`;
      const docs = new KyselyDocumentStore(h.db);
      const msg = (ts: string, threadTs: string | null) => ({
        messageId: randomUUID(),
        platform: 'platform_a' as const,
        workspaceId: 'T1',
        channelId,
        channelName: 'c',
        platformMessageId: ts,
        text: 'x',
        author: { id: 'U1', name: 'a', isBot: false },
        timestamp: new Date(Number(ts) * 1000).toISOString(),
        threadTs,
        replyToId: null,
        subtype: null,
        reactions: [],
        attachments: [],
        mentions: [],
        editedAt: null,
        permalink: 'p',
        contentHash: ts,
        source: 'sync' as const,
      });
      await docs.upsertMessages([
        msg('1517780000.000001', '1517780000.000001'),
        msg('1517780001.000001', '1517780000.000001'),
        msg('1517780009.000001', '1517780000.000001'),
        msg('1517780002.000001', '1517780002.000001'),
        msg('1517780003.000001', '1517780002.000001'),
        msg('1517780004.000001', null),
      ]);
      expect(await store.threadHeads(channelId, 10)).toEqual([
        { threadTs: '1517780000.000001', latestReplyTs: '1517780009.000001' },
        { threadTs: '1517780002.000001', latestReplyTs: '1517780003.000001' },
      ]);
      expect(await store.threadHeads(channelId, 1)).toHaveLength(1);
    });
  });
}
