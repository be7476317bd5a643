import path from 'node:path';
import { loadConfig, type MessageIngested, type NewEvent, TOPICS } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { planImport } from '@atlas/platforms';
import { appendPlan, openRuntime, type Runtime, startProjectors, waitForProjectors } from '@atlas/runtime';
import { storeProfiles } from '@atlas/runtime/testing';
import { ElasticsearchKeywordIndex } from '@atlas/stores';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const OLAKE = path.resolve(import.meta.dirname, '../../shared/data/slack-olake/export');
const EDITED_TEXT =
  'We decided to move the Kafka connector checkpoints to Apache Flink next sprint, and Priya will own the migration.';

/** The embedded stores; with the servers listed, the graph on Neo4j and the keyword index on Elasticsearch too. */
const profiles = storeProfiles('edits');

/**
 * Edits and deletes (docs/ingestion.md "Edits, deletes, retention"): over the real olake export, an edited message
 * (MessageIngested with new content) replaces the facts derived from it, and a MessageDeleted retracts them, in every
 * store: documents (memories, message), keyword index, vectors, graph (entities citing the facts), and the wiki is
 * marked stale.
 */
for (const profile of profiles) {
  describe(`edits and deletes reach every store (${profile.name})`, () => {
    let rt: Runtime;
    let subs: Subscription[] = [];
    let help: string;
    let plan: Awaited<ReturnType<typeof planImport>>;
    const append = async (events: NewEvent[]) => {
      await rt.eventLog.append(TOPICS.messages, events);
      await waitForProjectors(rt);
    };
    const factsOf = async (platformMessageId: string) =>
      (await rt.documents.listMemories({ channelId: help, page: 1, limit: 10_000 })).rows
        .filter((r) => r.source_message_id === platformMessageId)
        .map((r) => r.id);
    /** Which of the given facts each store still has. */
    const where = async (ids: readonly string[]) => {
      const kw = await rt.keyword.search({ query: '*', channelId: help, limit: 10_000 });
      const inKeyword = new Set(kw.hits.map((h) => h.factId));
      const entities = await rt.graph.listEntities({ channelId: help, limit: 10_000 });
      return {
        documents: (await rt.documents.getMemories(ids)).size,
        keyword: ids.filter((id) => inKeyword.has(id)).length,
        vectors: (await rt.embeddings!.vectors.vectorsOf(ids)).size,
        graph: entities.filter((e) => e.source_fact_ids.some((f) => ids.includes(f))).length,
      };
    };
    /** A message of the channel whose facts name graph entities, other than `not`. */
    const messageWithEntities = async (not: string[] = []): Promise<MessageIngested> => {
      const entities = await rt.graph.listEntities({ channelId: help, limit: 10_000 });
      const cited = new Set(entities.flatMap((e) => e.source_fact_ids));
      for (const m of plan.messages.filter((x) => x.channelId === help && !not.includes(x.platformMessageId))) {
        const ids = await factsOf(m.platformMessageId);
        if (ids.some((id) => cited.has(id))) return m;
      }
      throw new Error('no message with entities');
    };

    beforeAll(async () => {
      rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', ...profile.env }), { pollIntervalMs: 20 });
      plan = await planImport(OLAKE);
      await appendPlan(rt, plan);
      subs = await startProjectors(rt);
      await waitForProjectors(rt);
      help = (await rt.documents.listChannels()).find((c) => c.name === 'help')!.id;
      await rt.wikiGenerator!.generate(help, 'full');
    }, 240_000);
    afterAll(async () => {
      await Promise.all(subs.map((s) => s.stop()));
      await rt?.graph.truncate().catch(() => undefined); // a Neo4j namespace of this run only
      if (rt?.keyword instanceof ElasticsearchKeywordIndex) await rt.keyword.drop().catch(() => undefined);
      await rt?.close();
    });

    it('an edited message replaces its facts in the documents, keyword, vector and graph stores; the wiki goes stale', async () => {
      const m = await messageWithEntities();
      const old = await factsOf(m.platformMessageId);
      expect(await where(old)).toMatchObject({ documents: old.length, keyword: old.length, vectors: old.length });
      expect((await where(old)).graph).toBeGreaterThan(0);
      expect((await rt.wiki.status(help)).is_stale).toBe(false);

      const edited: MessageIngested = {
        ...m,
        text: EDITED_TEXT,
        editedAt: '2026-01-02T00:00:00.000Z',
        contentHash: 'edited'.padEnd(64, '0'),
        source: 'sync',
      };
      await append([{ type: 'MessageIngested', key: help, data: edited }]);

      expect(await where(old)).toEqual({ documents: 0, keyword: 0, vectors: 0, graph: 0 });
      const now = await factsOf(m.platformMessageId);
      expect(now.length).toBeGreaterThan(0);
      expect(now.filter((id) => old.includes(id))).toEqual([]);
      const mine = await where(now);
      expect(mine).toMatchObject({ documents: now.length, keyword: now.length, vectors: now.length });
      expect(mine.graph).toBeGreaterThan(0);
      const texts = [...(await rt.documents.getMemories(now)).values()].map((f) => f.memory_text).join(' ');
      expect(texts).toMatch(/Flink/);
      expect((await rt.documents.getMessages(help, [m.platformMessageId]))[0]?.text).toBe(EDITED_TEXT);
      const hits = await rt.keyword.search({ query: 'Flink checkpoints', channelId: help, limit: 10 });
      expect(hits.hits.map((h) => h.factId)).toEqual(expect.arrayContaining([now[0]!]));
      expect((await rt.wiki.status(help)).is_stale).toBe(true);
    });

    it('a deleted message retracts its facts from every store; the wiki that cited it goes stale', async () => {
      await rt.wikiGenerator!.generate(help, 'incremental');
      expect((await rt.wiki.status(help)).is_stale).toBe(false);
      const sources = await rt.wiki.sources(help);
      const citedMessages = sources.filter((s) => s.kind === 'message').map((s) => s.id);
      const candidates = plan.messages.filter(
        (x) => x.channelId === help && citedMessages.includes(x.platformMessageId),
      );
      expect(candidates.length).toBeGreaterThan(0);
      const m = candidates[0]!;
      const old = await factsOf(m.platformMessageId);
      expect(old.length).toBeGreaterThan(0);
      const before = (await rt.documents.getChannel(help))!;

      await append([
        {
          type: 'MessageDeleted',
          key: help,
          data: {
            messageId: m.messageId,
            platform: m.platform,
            channelId: help,
            platformMessageId: m.platformMessageId,
            deletedAt: '2026-01-03T00:00:00.000Z',
          },
        },
      ]);

      expect(await where(old)).toEqual({ documents: 0, keyword: 0, vectors: 0, graph: 0 });
      expect(await factsOf(m.platformMessageId)).toEqual([]);
      expect(await rt.documents.getMessages(help, [m.platformMessageId])).toEqual([]);
      expect((await rt.documents.getChannel(help))!).toMatchObject({
        message_count: before.message_count - 1,
        fact_count: before.fact_count - old.length,
      });
      expect((await rt.wiki.status(help)).is_stale).toBe(true);
    });
  });
}
