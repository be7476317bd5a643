import { randomUUID } from 'node:crypto';
import { deterministicId } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshChannelId } from '../test-fixtures.js';
import { testDatabases } from '../testing.js';
import { ElasticsearchKeywordIndex } from './elasticsearch-index.js';
import { migrateKeywordIndex } from './migrations.js';
import type { KeywordDoc, KeywordIndex } from './port.js';
import { PostgresKeywordIndex } from './postgres-index.js';

const doc = (channelId: string, n: number, text: string, over: Partial<KeywordDoc> = {}): KeywordDoc => ({
  factId: deterministicId('kw-test', channelId, String(n)),
  messageId: deterministicId('kw-msg', channelId, String(n)),
  channelId,
  text,
  context: '',
  factType: 'observation',
  importance: 'medium',
  topicTags: [],
  entityTags: [],
  authorName: 'alice',
  messageTs: new Date(1_600_000_000_000 + n * 60_000).toISOString(),
  qualityScore: 0.6,
  ...over,
});

const open: Record<string, () => Promise<{ index: KeywordIndex; close: () => Promise<void> }>> = {};
for (const db of testDatabases()) {
  open[`postgres-fts/${db.name}`] = async () => {
    const h: DatabaseHandle = await db.open();
    await migrateKeywordIndex(h.db);
    return { index: new PostgresKeywordIndex(h.db), close: () => h.close() };
  };
}
// Elasticsearch 8 or OpenSearch 2.x when listed (scripts/services up opensearch): a fresh index per run, deleted after.
const esUrl = process.env.ATLAS_TEST_ELASTICSEARCH_URL;
if (esUrl) {
  open[`elasticsearch/${esUrl}`] = async () => {
    const index = new ElasticsearchKeywordIndex({ url: esUrl, index: `atlas-test-facts-${randomUUID()}`, replicas: 0 });
    await index.ensureIndex();
    return { index, close: () => index.drop().finally(() => index.close()) };
  };
}

for (const [name, factory] of Object.entries(open)) {
  describe(`${name}: KeywordIndex`, () => {
    let index: KeywordIndex;
    let close: () => Promise<void>;
    const ch = freshChannelId();
    const other = freshChannelId();
    const docs = [
      doc(ch, 1, 'We decided to migrate the billing database to PostgreSQL next quarter', {
        factType: 'decision',
        importance: 'high',
        topicTags: ['database'],
        entityTags: ['PostgreSQL'],
      }),
      doc(ch, 2, 'Kafka consumers lag behind during the nightly backfill', {
        topicTags: ['kafka'],
        entityTags: ['Kafka'],
        authorName: 'bob',
      }),
      doc(ch, 3, 'The database connection pool is too small for the backfill job', { topicTags: ['database'] }),
      doc(other, 4, 'PostgreSQL upgrade is scheduled for the database cluster'),
    ];
    beforeAll(async () => {
      ({ index, close } = await factory());
      await index.replaceForMessages(docs.map((d) => ({ messageId: d.messageId, docs: [d] })));
      await index.replaceForMessages(docs.map((d) => ({ messageId: d.messageId, docs: [d] }))); // idempotent
    });
    afterAll(async () => close?.());

    it('total: false leaves the matches uncounted (total is the number of hits)', async () => {
      const r = await index.search({ query: 'database', channelId: null, limit: 1, total: false });
      expect(r.hits).toHaveLength(1);
      expect(r.total).toBe(1);
      expect((await index.search({ query: 'database', channelId: null, limit: 1 })).total).toBe(3);
    });

    it('ranks matches, scores in [0, 1] with the best at 1, and marks highlights', async () => {
      const r = await index.search({ query: 'database migration', channelId: ch, limit: 10 });
      expect(r.total).toBe(2);
      expect(r.hits[0]!.factId).toBe(docs[0]!.factId);
      expect(r.hits[0]!.score).toBe(1);
      for (const h of r.hits) {
        expect(h.score).toBeGreaterThan(0);
        expect(h.score).toBeLessThanOrEqual(1);
      }
      expect(r.hits[0]!.highlights.join(' ')).toMatch(/<mark>migrate<\/mark>.*<mark>database<\/mark>/);
    });

    it('searches every channel when channelId is null, and matches all with *', async () => {
      expect((await index.search({ query: 'postgresql', channelId: null, limit: 10 })).total).toBe(2);
      const all = await index.search({ query: '*', channelId: ch, limit: 10 });
      expect(all.total).toBe(3);
      expect(all.hits.every((h) => h.score === 1 && h.highlights.length === 0)).toBe(true);
    });

    it('applies filters: fact types, importance, topics, entities, authors, date range', async () => {
      const q = { query: '*', channelId: ch, limit: 10 };
      const ids = async (filters: Parameters<KeywordIndex['search']>[0]['filters']) =>
        (await index.search({ ...q, filters })).hits.map((h) => h.factId).sort();
      expect(await ids({ factTypes: ['decision'] })).toEqual([docs[0]!.factId]);
      expect(await ids({ importance: ['high'] })).toEqual([docs[0]!.factId]);
      expect(await ids({ topics: ['database'] })).toEqual([docs[0]!.factId, docs[2]!.factId].sort());
      expect(await ids({ entities: ['kafka'] })).toEqual([docs[1]!.factId]);
      expect(await ids({ authors: ['Bob'] })).toEqual([docs[1]!.factId]);
      expect(await ids({ dateRange: { start: docs[2]!.messageTs } })).toEqual([docs[2]!.factId]);
      expect(await ids({ dateRange: { start: docs[0]!.messageTs, end: docs[1]!.messageTs } })).toEqual(
        [docs[0]!.factId, docs[1]!.factId].sort(),
      );
    });

    // docs/access.md "What a caller sees": a restricted caller's search reads its visible channels only.
    it('filters.channels bounds hits, totals, facets and counts to those channels; empty: nothing', async () => {
      const q = { query: 'postgresql', channelId: null, limit: 10, facets: ['fact_type'] as 'fact_type'[] };
      const onlyOther = await index.search({ ...q, filters: { channels: [other] } });
      expect(onlyOther.hits.map((h) => h.factId)).toEqual([docs[3]!.factId]);
      expect(onlyOther.total).toBe(1);
      expect(onlyOther.facets).toEqual({ fact_type: { observation: 1 } });
      const onlyCh = await index.search({ ...q, filters: { channels: [ch], factTypes: ['decision'] } });
      expect(onlyCh.hits.map((h) => h.factId)).toEqual([docs[0]!.factId]);
      expect((await index.search({ ...q, filters: { channels: [] } })).total).toBe(0);
      // A named channel outside the set: nothing.
      expect((await index.search({ ...q, channelId: ch, filters: { channels: [other] } })).total).toBe(0);
      // Included facts of other channels are not counted either.
      const counted = await index.count({
        query: 'postgresql',
        channelId: null,
        include: [docs[1]!.factId],
        filters: { channels: [other] },
      });
      expect(counted.total).toBe(1);
    });

    it('tolerates typos when fuzzy, and not otherwise', async () => {
      expect((await index.search({ query: 'consumrs nighlty', channelId: ch, limit: 10 })).total).toBe(0);
      const r = await index.search({
        query: 'consumrs nighlty',
        channelId: ch,
        limit: 10,
        fuzzy: true,
        fuzziness: 'AUTO',
      });
      expect(r.hits.map((h) => h.factId)).toContain(docs[1]!.factId);
      expect(r.hits[0]!.highlights.join(' ')).toContain('<mark>');
    });

    it('keeps terms within the proximity window', async () => {
      const near = await index.search({ query: 'connection pool', channelId: ch, limit: 10, proximity: 1 });
      expect(near.hits.map((h) => h.factId)).toEqual([docs[2]!.factId]);
      const far = await index.search({ query: 'billing quarter', channelId: ch, limit: 10, proximity: 2 });
      expect(far.total).toBe(0);
      expect((await index.search({ query: 'billing quarter', channelId: ch, limit: 10, proximity: 8 })).total).toBe(1);
    });

    it('counts facets over every match', async () => {
      const r = await index.search({
        query: '*',
        channelId: ch,
        limit: 1,
        facets: ['fact_type', 'importance', 'topics'],
      });
      expect(r.facets).toEqual({
        fact_type: { observation: 2, decision: 1 },
        importance: { medium: 2, high: 1 },
        topics: { database: 2, kafka: 1 },
      });
    });

    // docs/conventions.md "Search `total`": a hybrid search counts the union of keyword matches and vector matches,
    // each once.
    it('count: the query’s matches as search counts them, plus included facts that pass the filters, each once', async () => {
      const q = { query: 'database', channelId: ch, facets: ['fact_type', 'topics'] as ('fact_type' | 'topics')[] };
      const plain = await index.count(q);
      expect(plain.total).toBe((await index.search({ ...q, limit: 1 })).total);
      expect(plain.total).toBe(2); // facts 1 and 3
      // Fact 2 (no 'database') joins; fact 1 is already a match; fact 4 is in another channel; unknown ids count not.
      const union = await index.count({
        ...q,
        include: [docs[1]!.factId, docs[0]!.factId, docs[3]!.factId, deterministicId('kw-test', ch, 'none')],
      });
      expect(union.total).toBe(3);
      expect(union.facets).toEqual({
        fact_type: { observation: 2, decision: 1 },
        topics: { database: 2, kafka: 1 },
      });
      // Filters apply to included facts too.
      expect((await index.count({ ...q, include: [docs[1]!.factId], filters: { authors: ['alice'] } })).total).toBe(2);
      // queryMatches false: only the included facts (a vector search's facets).
      const only = await index.count({ ...q, include: [docs[1]!.factId, docs[3]!.factId], queryMatches: false });
      expect(only.total).toBe(1);
      expect(only.facets).toEqual({ fact_type: { observation: 1 }, topics: { kafka: 1 } });
      expect((await index.count({ query: '*', channelId: ch })).total).toBe(3);
    });

    it('weighs a rare term above a common one (BM25 idf)', async () => {
      // "database" is in three facts, "nightly" in one: the nightly fact wins though each matches one word.
      const r = await index.search({ query: 'nightly database', channelId: ch, limit: 10 });
      expect(r.total).toBe(3);
      expect(r.hits[0]!.factId).toBe(docs[1]!.factId);
    });

    it('matches a fact by its context, below a fact that says it in its own text, highlighting the context', async () => {
      const ctx = freshChannelId();
      const own = doc(ctx, 20, 'The hiring budget for the search team is approved');
      const reply = doc(ctx, 21, 'She said yes this morning', {
        context: 'carol:\ncarol: Did the director approve the hiring budget for the search team?',
      });
      await index.replaceForMessages([own, reply].map((d) => ({ messageId: d.messageId, docs: [d] })));
      const r = await index.search({ query: 'hiring budget approved', channelId: ctx, limit: 10 });
      expect(r.hits.map((h) => h.factId)).toEqual([own.factId, reply.factId]);
      expect(r.hits[1]!.score).toBeLessThan(r.hits[0]!.score);
      expect(r.hits[1]!.highlights.join(' ')).toMatch(/<mark>hiring<\/mark> <mark>budget<\/mark>/);
      await index.replaceForMessages([own, reply].map((d) => ({ messageId: d.messageId, docs: [] })));
    });

    it('replaces and removes a message’s facts', async () => {
      const d = doc(ch, 9, 'Temporary fact about zookeeper');
      await index.replaceForMessages([{ messageId: d.messageId, docs: [d] }]);
      expect((await index.search({ query: 'zookeeper', channelId: ch, limit: 5 })).total).toBe(1);
      await index.replaceForMessages([{ messageId: d.messageId, docs: [] }]);
      expect((await index.search({ query: 'zookeeper', channelId: ch, limit: 5 })).total).toBe(0);
    });

    it('deleteChannel removes a channel’s facts only, and the term statistics follow', async () => {
      const gone = freshChannelId();
      const kept = freshChannelId();
      const a = doc(gone, 30, 'Retention of the quokka telemetry is ninety days');
      const b = doc(gone, 31, 'The quokka dashboard moved');
      const c = doc(kept, 32, 'Quokka alerts page the on-call engineer');
      await index.replaceForMessages([a, b, c].map((d) => ({ messageId: d.messageId, docs: [d] })));
      expect((await index.search({ query: 'quokka', channelId: null, limit: 10 })).total).toBe(3);
      expect(await index.deleteChannel(gone)).toBe(2);
      const r = await index.search({ query: 'quokka', channelId: null, limit: 10 });
      expect(r.hits.map((h) => h.factId)).toEqual([c.factId]);
      expect(r.hits[0]!.score).toBe(1);
      expect((await index.search({ query: '*', channelId: gone, limit: 10 })).total).toBe(0);
      expect(await index.deleteChannel(gone)).toBe(0);
      await index.replaceForMessages([{ messageId: c.messageId, docs: [] }]);
    });
  });
}

// The Postgres adapter selects candidates by the rarest query terms within a budget of facts (SELECT_BUDGET); with
// a budget of 3 facts the common terms select nothing on their own, and the top of the ranking and total stay.
for (const db of testDatabases()) {
  describe(`postgres-fts/${db.name}: rare terms select candidates within the budget`, () => {
    let h: DatabaseHandle;
    const ch = freshChannelId();
    beforeAll(async () => {
      h = await db.open();
      await migrateKeywordIndex(h.db);
      // 200 facts: 'deploy' in 20, 'rollback' in 12, 'canary' in 2, the rest filler: no term is in over 10% of all.
      const texts = Array.from({ length: 200 }, (_, n) =>
        n < 2
          ? `canary deploy with rollback plan ${n}`
          : n < 12
            ? `rollback of the deploy number ${n}`
            : n < 20
              ? `deploy finished for service ${n}`
              : `unrelated chatter about lunch ${n}`,
      );
      await new PostgresKeywordIndex(h.db).replaceForMessages(
        texts.map((t, n) => ({ messageId: doc(ch, n, t).messageId, docs: [doc(ch, n, t)] })),
      );
    });
    afterAll(async () => h?.close());

    it('returns the same best hits and the same total as scoring every match', async () => {
      const q = { query: 'canary deploy rollback', channelId: ch, limit: 5 };
      const full = await new PostgresKeywordIndex(h.db, { selectBudget: 1_000_000 }).search(q);
      const budgeted = await new PostgresKeywordIndex(h.db, { selectBudget: 3 }).search(q);
      expect(full.total).toBe(20);
      expect(budgeted.total).toBe(full.total);
      expect((await new PostgresKeywordIndex(h.db, { selectBudget: 3 }).count(q)).total).toBe(full.total);
      expect(budgeted.hits.slice(0, 2).map((x) => x.factId)).toEqual(full.hits.slice(0, 2).map((x) => x.factId));
      expect(budgeted.hits.slice(0, 2).every((x) => x.highlights.join(' ').includes('<mark>deploy</mark>'))).toBe(true);
      // Only the facts holding the rarest term were scored: 'canary' (2 facts) fits the budget, 'rollback' does not.
      expect(budgeted.hits).toHaveLength(2);
      const uncounted = await new PostgresKeywordIndex(h.db, { selectBudget: 3 }).search({ ...q, total: false });
      expect(uncounted.total).toBe(uncounted.hits.length);
    });

    it('indexes terms by channel (btree_gin), and that index serves a search across channels too', async () => {
      const { rows } = await sql<{ indexname: string }>`select indexname from pg_indexes
        where tablename = 'keyword_facts' and schemaname = current_schema()`.execute(h.db);
      const names = rows.map((r) => r.indexname);
      expect(names).toContain('keyword_facts_channel_tsv');
      expect(names).not.toContain('keyword_facts_tsv');
      // A search across channels has no channel to key on: the same index answers its terms alone (the terms-only
      // index is gone). 200 rows are few enough for a sequential scan: with it off, the plan shows which index answers.
      const plan = await h.db.transaction().execute(async (trx) => {
        await sql`analyze keyword_facts`.execute(trx);
        await sql`set local enable_seqscan = off`.execute(trx);
        const r = await sql<Record<string, string>>`explain select count(*) from keyword_facts
          where tsv @@ 'canari | rollback'::tsquery`.execute(trx);
        return r.rows.map((x) => Object.values(x)[0]).join('\n');
      });
      expect(plan).toMatch(/Bitmap Index Scan on keyword_facts_channel_tsv/);
    });
  });
}
