import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KyselyDocumentStore } from '../documents/document-store.js';
import { migrateDocuments } from '../documents/migrations.js';
import { channelEvent, factOf, factSet, freshChannelId, messageEvent } from '../test-fixtures.js';
import { type TestDatabase, testDatabases } from '../testing.js';
import { migrateWiki } from './migrations.js';
import type { StoredWikiCluster } from './types.js';
import { WikiStore } from './wiki-store.js';

interface Page {
  id: string;
  title: string;
  content: string;
}
interface Structure {
  channel_id: string;
  pages: { id: string }[];
}

const cluster = (
  channelId: string,
  id: string,
  members: string[],
  parent: string | null = null,
): StoredWikiCluster => ({
  id,
  channel_id: channelId,
  centroid: [0.6, 0.8, 0],
  member_ids: members,
  coherence: 0.55,
  parent_id: parent,
});

for (const { name, open } of testDatabases()) {
  describe(`${name}: WikiStore`, () => {
    let h: TestDatabase;
    let store: WikiStore<Page, Structure>;
    beforeAll(async () => {
      h = await open();
      await migrateWiki(h.db);
      await migrateWiki(h.db); // idempotent
      store = new WikiStore<Page, Structure>(h.db);
    });
    afterAll(async () => h?.close());

    it('sourceDigests: one digest per fact and cited message; a supersession changes only its fact', async () => {
      await migrateDocuments(h.db);
      const docs = new KyselyDocumentStore(h.db);
      const ch = freshChannelId();
      await docs.upsertChannel(channelEvent(ch, 'dev'), new Date());
      const m1 = messageEvent(ch, 1_600_000_000, 'we use Postgres');
      const m2 = messageEvent(ch, 1_600_000_060, 'we moved to Kafka');
      await docs.upsertMessages([m1, m2, messageEvent(ch, 1_600_000_120, 'lunch?')]);
      const a = factOf(m1, 'the team uses Postgres');
      const b = factOf(m2, 'the team moved to Kafka');
      await docs.replaceFacts([factSet(m1, [a]), factSet(m2, [b])]);
      const before = await store.sourceDigests(ch);
      expect(before.channel).toEqual({ id: ch, name: 'dev', platform: 'platform_a' });
      expect([...before.facts.keys()].sort()).toEqual([a.factId, b.factId].sort());
      expect([...before.messages.keys()].sort()).toEqual([m1.platformMessageId, m2.platformMessageId].sort());
      await docs.replaceGraphLinks([
        {
          messageId: m2.messageId,
          platform: m2.platform,
          channelId: ch,
          sourceMessageId: m2.platformMessageId,
          messageTs: m2.timestamp,
          extractor: 'test',
          extractedAt: m2.timestamp,
          entities: [],
          relationships: [],
          supersessions: [
            {
              factId: a.factId,
              supersededBy: b.factId,
              oldEntityId: null,
              newEntityId: null,
              invalidAt: m2.timestamp,
              certain: false,
              reason: 'moved',
            },
          ],
        },
      ]);
      const after = await store.sourceDigests(ch);
      expect(after.facts.get(a.factId)).not.toBe(before.facts.get(a.factId));
      expect(after.facts.get(b.factId)).toBe(before.facts.get(b.factId));
      expect(after.messages).toEqual(before.messages);
      expect(await store.sourceDigests(ch)).toEqual(after);
      const other = freshChannelId();
      const many = await store.sourceDigestsMany([ch, other]);
      expect(many.get(ch)).toEqual(after);
      expect(many.get(other)).toEqual({ channel: null, facts: new Map(), messages: new Map(), authors: new Map() });
    });

    it('replaces and reads a channel’s clusters', async () => {
      const ch = freshChannelId();
      const other = freshChannelId();
      expect(await store.clusters(ch)).toEqual([]);
      await store.replaceClusters(ch, [cluster(ch, 'a', ['f1', 'f2']), cluster(ch, 'b', ['f3'], 'a')]);
      await store.replaceClusters(other, [cluster(other, 'z', ['f9'])]);
      expect(await store.clusters(ch)).toEqual([cluster(ch, 'a', ['f1', 'f2']), cluster(ch, 'b', ['f3'], 'a')]);
      await store.replaceClusters(ch, [cluster(ch, 'c', ['f1'])]);
      expect((await store.clusters(ch)).map((c) => c.id)).toEqual(['c']);
      expect((await store.clusters(other)).map((c) => c.id)).toEqual(['z']);
      await store.replaceClusters(ch, []);
      expect(await store.clusters(ch)).toEqual([]);
    });

    // Issue 21 (memory cluster_id): the cluster holding each fact, in any channel; unclustered facts are absent.
    it('clusterIdsOf: the cluster whose members hold each fact, across channels; unclustered facts absent', async () => {
      const ch = freshChannelId();
      const other = freshChannelId();
      await store.replaceClusters(ch, [cluster(ch, 'ca', [`${ch}-f1`, `${ch}-f2`]), cluster(ch, 'cb', [`${ch}-f3`])]);
      await store.replaceClusters(other, [cluster(other, 'oz', [`${other}-f9`])]);
      const got = await store.clusterIdsOf([`${ch}-f1`, `${ch}-f3`, `${other}-f9`, `${ch}-none`]);
      expect(Object.fromEntries(got)).toEqual({ [`${ch}-f1`]: 'ca', [`${ch}-f3`]: 'cb', [`${other}-f9`]: 'oz' });
      await store.updateClusters(ch, [cluster(ch, 'cb', [`${ch}-f3`, `${ch}-f4`])], ['ca']);
      expect(Object.fromEntries(await store.clusterIdsOf([`${ch}-f1`, `${ch}-f4`]))).toEqual({ [`${ch}-f4`]: 'cb' });
      expect((await store.clusterIdsOf([])).size).toBe(0);
    });

    // Issue 21 (wiki metadata): the last generation of each channel, its pages, duration and LLM cost.
    it('generations: the current version’s pages, duration, model and summaries cost; absent before one', async () => {
      const ch = freshChannelId();
      expect((await store.generations([ch])).size).toBe(0);
      const pages: Page[] = [{ id: 'overview', title: 'Overview', content: 'x' }];
      await store.savePages(
        ch,
        { structure: { channel_id: ch, pages: [{ id: 'overview' }] }, pages },
        { generatedAt: '2026-01-01T00:00:00.000Z', model: 'extractive', durationMs: 80, metadata: { mode: 'full' } },
      );
      expect((await store.generations([ch])).get(ch)).toEqual({
        version_number: 1,
        page_count: 1,
        duration_ms: 80,
        cost_usd: 0,
        model: 'extractive',
      });
      const two: Page[] = [...pages, { id: 'topic-kafka', title: 'Kafka', content: 'y' }];
      await store.savePages(
        ch,
        { structure: { channel_id: ch, pages: two.map((p) => ({ id: p.id })) }, pages: two },
        {
          generatedAt: '2026-01-02T00:00:00.000Z',
          model: 'gpt-4o-mini',
          durationMs: 950,
          metadata: { mode: 'full', summaries: { model: 'gpt-4o-mini', summarized: 1, costUsd: 0.0000375 } },
        },
      );
      expect((await store.generations([ch])).get(ch)).toEqual({
        version_number: 2,
        page_count: 2,
        duration_ms: 950,
        cost_usd: 0.0000375,
        model: 'gpt-4o-mini',
      });
      expect((await store.generations(null)).get(ch)?.version_number).toBe(2);
    });

    it('updateClusters upserts the changed clusters and deletes the removed ones, leaving the others', async () => {
      const ch = freshChannelId();
      await store.replaceClusters(ch, [cluster(ch, 'a', ['f1']), cluster(ch, 'b', ['f2']), cluster(ch, 'c', ['f3'])]);
      await store.updateClusters(ch, [cluster(ch, 'b', ['f2', 'f4'], 'a'), cluster(ch, 'd', ['f5'])], ['c']);
      expect(await store.clusters(ch)).toEqual([
        cluster(ch, 'a', ['f1']),
        cluster(ch, 'b', ['f2', 'f4'], 'a'),
        cluster(ch, 'd', ['f5']),
      ]);
    });

    it('versions keep every page as saved while only changed pages are written', async () => {
      const ch = freshChannelId();
      const s: Structure = { channel_id: ch, pages: [{ id: 'overview' }] };
      const a: Page = { id: 'overview', title: 'Overview', content: 'one' };
      const b: Page = { id: 'topic-x', title: 'X', content: 'x' };
      const meta = (t: string) => ({ generatedAt: t, model: 'extractive' });
      await store.savePages(ch, { structure: s, pages: [a, b] }, meta('2026-01-01T00:00:00.000Z'));
      const a2 = { ...a, content: 'two' };
      await store.savePages(ch, { structure: s, pages: [a2] }, meta('2026-01-02T00:00:00.000Z'));
      await store.savePages(ch, { structure: s, pages: [a2, b] }, meta('2026-01-03T00:00:00.000Z'));
      expect((await store.version(ch, 1))!.pages).toEqual([a, b]);
      expect((await store.version(ch, 2))!.pages).toEqual([a2]);
      expect((await store.version(ch, 3))!.pages).toEqual([a2, b]);
      expect(await store.pages(ch)).toEqual([a2, b]);
    });

    it('saves pages as versions, archiving the previous one; reads pages, structure, versions, status', async () => {
      const ch = freshChannelId();
      expect(await store.status(ch)).toEqual({
        channel_id: ch,
        is_generating: false,
        is_stale: false,
        last_generated_at: null,
        current_version: null,
        last_duration_ms: null,
      });
      expect(await store.structure(ch)).toBeNull();
      const s1: Structure = { channel_id: ch, pages: [{ id: 'overview' }, { id: 'topic-kafka' }] };
      const p1: Page[] = [
        { id: 'overview', title: 'Overview', content: 'Hello [1] “quotes” ✓' },
        { id: 'topic-kafka', title: 'Kafka', content: 'Kafka [1]' },
      ];
      await store.setGenerating(ch, true);
      expect((await store.status(ch)).is_generating).toBe(true);
      const v1 = await store.savePages(
        ch,
        { structure: s1, pages: p1 },
        { generatedAt: '2026-01-01T00:00:00.000Z', model: 'extractive', durationMs: 120, metadata: { mode: 'full' } },
      );
      expect(v1).toMatchObject({ version_number: 1, channel_id: ch, page_count: 2, archived_at: null });
      await store.setGenerating(ch, false);
      await store.markStale(ch);
      expect(await store.status(ch)).toEqual({
        channel_id: ch,
        is_generating: false,
        is_stale: true,
        last_generated_at: '2026-01-01T00:00:00.000Z',
        current_version: 1,
        last_duration_ms: 120,
      });
      expect(await store.page(ch, 'overview')).toEqual(p1[0]);
      expect(await store.page(ch, 'nope')).toBeNull();
      expect(await store.structure(ch)).toEqual(s1);

      const p2: Page[] = [{ id: 'overview', title: 'Overview', content: 'Hello again [1]' }];
      const v2 = await store.savePages(
        ch,
        { structure: { channel_id: ch, pages: [{ id: 'overview' }] }, pages: p2 },
        { generatedAt: '2026-01-02T00:00:00.000Z', model: 'extractive', durationMs: 80 },
      );
      expect(v2.version_number).toBe(2);
      expect(await store.page(ch, 'topic-kafka')).toBeNull();
      expect(await store.pages(ch)).toEqual(p2);
      const status = await store.status(ch);
      expect(status).toMatchObject({ is_stale: false, current_version: 2, last_duration_ms: 80 });
      const versions = await store.versions(ch);
      expect(versions.map((v) => [v.version_number, v.archived_at, v.page_count])).toEqual([
        [2, null, 1],
        [1, '2026-01-02T00:00:00.000Z', 2],
      ]);
      expect(await store.versions(ch, 1)).toHaveLength(1);
      const old = await store.version(ch, 1);
      expect(old).toMatchObject({ version_number: 1, structure: s1, pages: p1, metadata: { mode: 'full' } });
      expect(old?.generated_at).toBe('2026-01-01T00:00:00.000Z');
      expect(await store.version(ch, 3)).toBeNull();
      expect(await store.versions(freshChannelId())).toEqual([]);
    });

    it('a markStale during a generation keeps the wiki stale; one before it is cleared by savePages', async () => {
      const ch = freshChannelId();
      const other = freshChannelId();
      const empty = { structure: { channel_id: ch, pages: [] }, pages: [] };
      expect(await store.staleSeq(ch)).toBe(0);
      await store.markStale(ch, other, ch);
      expect((await store.staleChannels()).filter((c) => c === ch || c === other).sort()).toEqual([ch, other].sort());
      const seq = await store.staleSeq(ch);
      expect(seq).toBe(1);
      // New facts arrive while the run is going: the run's save leaves the wiki stale.
      await store.markStale(ch);
      await store.savePages(ch, empty, { generatedAt: new Date().toISOString(), model: 'm', staleSeq: seq });
      expect((await store.status(ch)).is_stale).toBe(true);
      expect(await store.staleChannels()).toContain(ch);
      // The next run starts after the last mark: its save clears it.
      await store.savePages(ch, empty, {
        generatedAt: new Date().toISOString(),
        model: 'm',
        staleSeq: await store.staleSeq(ch),
      });
      expect((await store.status(ch)).is_stale).toBe(false);
      expect(await store.staleChannels()).not.toContain(ch);
      expect(await store.staleChannels()).toContain(other);
    });

    it('deleteChannel removes a channel’s whole wiki (pages, versions, clusters, state), not the others', async () => {
      const ch = freshChannelId();
      const other = freshChannelId();
      for (const c of [ch, other]) {
        const s: Structure = { channel_id: c, pages: [{ id: 'overview' }, { id: 'topic-x' }] };
        const pages: Page[] = [
          { id: 'overview', title: 'Overview', content: 'o' },
          { id: 'topic-x', title: 'X', content: 'x' },
        ];
        await store.replaceClusters(c, [cluster(c, 'a', ['f1'])]);
        await store.savePages(c, { structure: s, pages }, { generatedAt: '2026-01-01T00:00:00.000Z', model: 'm' });
        await store.savePages(c, { structure: s, pages }, { generatedAt: '2026-01-02T00:00:00.000Z', model: 'm' });
        await store.markStale(c);
      }
      expect(await store.pageCount(ch)).toBe(2);
      expect(await store.deleteChannel(ch)).toBe(2);
      expect(await store.pageCount(ch)).toBe(0);
      expect(await store.pages(ch)).toEqual([]);
      expect(await store.structure(ch)).toBeNull();
      expect(await store.versions(ch)).toEqual([]);
      expect(await store.clusters(ch)).toEqual([]);
      expect(await store.staleChannels()).not.toContain(ch);
      expect((await store.status(ch)).current_version).toBeNull();
      expect(await store.deleteChannel(ch)).toBe(0);
      expect(await store.pageCount(other)).toBe(2);
      expect(await store.versions(other)).toHaveLength(2);
      expect(await store.staleChannels()).toContain(other);
    });

    it('refuses to save a generation that started before the channel’s data was deleted', async () => {
      const ch = freshChannelId();
      const s: Structure = { channel_id: ch, pages: [{ id: 'overview' }] };
      const pages: Page[] = [{ id: 'overview', title: 'Overview', content: 'o' }];
      await store.savePages(ch, { structure: s, pages }, { generatedAt: '2026-01-01T00:00:00.000Z', model: 'm' });
      expect(await store.deleteChannel(ch, '2026-02-01T00:00:00.000Z')).toBe(1);
      await expect(
        store.savePages(ch, { structure: s, pages }, { generatedAt: '2026-01-31T23:59:00.000Z', model: 'm' }),
      ).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(await store.pageCount(ch)).toBe(0);
      await store.deleteChannel(ch, '2026-01-15T00:00:00.000Z'); // an older request (a replay) keeps the later one
      await expect(
        store.savePages(ch, { structure: s, pages }, { generatedAt: '2026-01-31T23:59:00.000Z', model: 'm' }),
      ).rejects.toMatchObject({ code: 'CONFLICT' });
      const v = await store.savePages(
        ch,
        { structure: s, pages },
        { generatedAt: '2026-02-01T00:01:00.000Z', model: 'm' },
      );
      expect(v).toMatchObject({ version_number: 1, page_count: 1 });
    });

    it('saves the clusters with the pages: all of them, then the changes; a refused save changes neither', async () => {
      const ch = freshChannelId();
      const s: Structure = { channel_id: ch, pages: [{ id: 'overview' }] };
      const pages: Page[] = [{ id: 'overview', title: 'Overview', content: 'o' }];
      const at = (d: number) => `2026-03-0${d}T00:00:00.000Z`;
      await store.savePages(
        ch,
        { structure: s, pages },
        {
          generatedAt: at(1),
          model: 'm',
          clusters: { replace: true, clusters: [cluster(ch, 'a', ['f1']), cluster(ch, 'b', ['f2'])] },
        },
      );
      const ids = async () => (await store.clusters(ch)).map((c) => [c.id, c.member_ids]);
      expect(await ids()).toEqual([
        ['a', ['f1']],
        ['b', ['f2']],
      ]);
      await store.savePages(
        ch,
        { structure: s, pages },
        {
          generatedAt: at(2),
          model: 'm',
          clusters: { replace: false, changed: [cluster(ch, 'a', ['f1', 'f3'])], removedIds: ['b'] },
        },
      );
      expect(await ids()).toEqual([['a', ['f1', 'f3']]]);
      await store.deleteChannel(ch, at(4));
      await expect(
        store.savePages(
          ch,
          { structure: s, pages },
          { generatedAt: at(3), model: 'm', clusters: { replace: true, clusters: [cluster(ch, 'z', ['f9'])] } },
        ),
      ).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(await ids()).toEqual([]);
    });

    it('savePagesMany saves several channels in one transaction, each as savePages would; a deleted one is refused alone', async () => {
      const [a, b, gone] = [freshChannelId(), freshChannelId(), freshChannelId()];
      const wikiOf = (c: string, content: string) => ({
        structure: { channel_id: c, pages: [{ id: 'overview' }] },
        pages: [{ id: 'overview', title: 'Overview', content }],
      });
      const at = (d: number) => `2026-04-0${d}T00:00:00.000Z`;
      for (const c of [a, b, gone])
        await store.savePages(c, wikiOf(c, 'v1'), {
          generatedAt: at(1),
          model: 'm',
          clusters: { replace: true, clusters: [cluster(c, 'k', ['f1'])] },
          sources: { replace: true, upsert: [{ kind: 'fact', id: 'f1', digest: 'd1', body: { n: 1 } }], remove: [] },
        });
      await store.markStale(a, b, gone);
      const seqs = await store.beginGenerations([b, a, gone]);
      expect([...seqs.keys()].sort()).toEqual([a, b, gone].sort());
      expect((await store.status(a)).is_generating).toBe(true);
      await store.deleteChannel(gone, at(3));
      const meta = (c: string) => ({
        generatedAt: at(2),
        model: 'm',
        staleSeq: seqs.get(c)!,
        sourceFingerprint: `fp-${c}`,
        clusters: { replace: false as const, changed: [cluster(c, 'k2', ['f2'])], removedIds: ['k'] },
        sources: {
          replace: false,
          upsert: [{ kind: 'fact' as const, id: 'f2', digest: 'd2', body: { n: 2 } }],
          remove: [{ kind: 'fact', id: 'f1' }],
        },
      });
      // b twice: saved one after the other.
      const out = await store.savePagesMany([
        { channelId: a, wiki: wikiOf(a, 'v2'), meta: meta(a) },
        { channelId: gone, wiki: wikiOf(gone, 'v2'), meta: meta(gone) },
        { channelId: b, wiki: wikiOf(b, 'v2'), meta: meta(b) },
        { channelId: b, wiki: wikiOf(b, 'v3'), meta: { ...meta(b), generatedAt: at(3) } },
      ]);
      expect(out[0]).toMatchObject({ version_number: 2, channel_id: a, page_count: 1 });
      expect(out[1]).toMatchObject({ code: 'CONFLICT' });
      expect(out[2]).toMatchObject({ version_number: 2, channel_id: b });
      expect(out[3]).toMatchObject({ version_number: 3, channel_id: b });
      expect((await store.pages(a))[0]!.content).toBe('v2');
      expect((await store.pages(b))[0]!.content).toBe('v3');
      expect(await store.pageCount(gone)).toBe(0);
      expect((await store.versions(b)).map((v) => [v.version_number, v.archived_at])).toEqual([
        [3, null],
        [2, at(3)],
        [1, at(2)],
      ]);
      for (const c of [a, b]) {
        expect((await store.clusters(c)).map((k) => k.id)).toEqual(['k2']);
        expect((await store.sources(c)).map((r) => r.id)).toEqual(['f2']);
        expect(await store.status(c)).toMatchObject({ is_generating: false, is_stale: false });
      }
      const current = await store.currentVersions([a, b, gone]);
      expect(current.get(a)).toMatchObject({ version_number: 2, source_fingerprint: `fp-${a}` });
      expect(current.get(b)).toMatchObject({ version_number: 3 });
      expect(current.has(gone)).toBe(false);
      expect(await store.currentVersion(b)).toEqual(current.get(b));
    });

    it('markAllStale marks every channel with a wiki (a vector space switch), not one that only was marked', async () => {
      const generated = freshChannelId();
      const never = freshChannelId();
      const empty = { structure: { channel_id: generated, pages: [] }, pages: [] };
      await store.savePages(generated, empty, { generatedAt: new Date().toISOString(), model: 'm' });
      expect((await store.status(generated)).is_stale).toBe(false);
      const seq = await store.staleSeq(generated);
      await store.markStale(never);
      await store.clearStale(never, await store.staleSeq(never));
      const marked = await store.markAllStale();
      expect(marked).toBeGreaterThanOrEqual(1);
      expect((await store.status(generated)).is_stale).toBe(true);
      // stale_seq moves on: a generation that began before the switch does not clear it.
      expect(await store.staleSeq(generated)).toBe(seq + 1);
      expect((await store.status(never)).is_stale).toBe(false);
      expect(await store.staleChannels()).toContain(generated);
      expect(await store.staleChannels()).not.toContain(never);
    });

    it('truncates', async () => {
      const ch = freshChannelId();
      await store.replaceClusters(ch, [cluster(ch, 'a', ['f1'])]);
      await store.savePages(
        ch,
        { structure: { channel_id: ch, pages: [] }, pages: [] },
        { generatedAt: new Date().toISOString(), model: 'm' },
      );
      await store.truncate();
      expect(await store.clusters(ch)).toEqual([]);
      expect(await store.versions(ch)).toEqual([]);
      expect((await store.status(ch)).current_version).toBeNull();
    });
  });
}
