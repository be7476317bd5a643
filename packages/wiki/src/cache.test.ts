import { migrateWiki, openDatabase, WikiStore } from '@atlas/stores';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedWikiSink } from './cache.js';
import type { SourceRow, WikiSink } from './generate-types.js';
import type { WikiPage, WikiStructure } from './index.js';
import type { TopicCluster } from './types.js';

const page = (id: string, content: string): WikiPage => ({
  id,
  slug: id,
  title: id,
  page_type: 'fixed',
  parent_id: null,
  section_number: '1',
  memory_count: 1,
  last_updated: '2026-01-01T00:00:00.000Z',
  children: [],
  content,
  summary: content,
  citations: [],
});
const cluster = (id: string, members: string[]): TopicCluster => ({
  id,
  channel_id: 'C1',
  centroid: [1, 0],
  member_ids: members,
  coherence: 1,
  parent_id: null,
});
const structure = { channel_id: 'C1', pages: [] } as unknown as WikiStructure;
const meta = { generatedAt: '2026-01-01T00:00:00.000Z', model: 'extractive' };
const fact = (id: string, digest: string): SourceRow => ({ kind: 'fact', id, digest, body: { id } });

/** The cached sink over a real WikiStore (PGlite), with the store's reads counted. */
describe('cachedWikiSink', () => {
  let close: () => Promise<void>;
  let store: WikiStore<WikiPage, WikiStructure>;
  const reads = { sources: 0, clusters: 0, pages: 0 };
  let counting: WikiSink;

  beforeAll(async () => {
    const db = await openDatabase({ dataDir: 'memory://' });
    close = db.close;
    await migrateWiki(db.db);
    store = new WikiStore<WikiPage, WikiStructure>(db.db);
    counting = Object.assign(Object.create(store), {
      sources: (c: string) => {
        reads.sources++;
        return store.sources(c);
      },
      clusters: (c: string) => {
        reads.clusters++;
        return store.clusters(c);
      },
      pages: (c: string) => {
        reads.pages++;
        return store.pages(c);
      },
    }) as WikiSink;
  });
  afterAll(async () => close?.());

  it('serves what this process wrote without reading it back, and agrees with the store', async () => {
    const sink = cachedWikiSink(counting);
    await sink.savePages(
      'C1',
      { structure, pages: [page('overview', 'v1')] },
      {
        ...meta,
        sources: { replace: true, upsert: [fact('f1', 'd1'), fact('f2', 'd2')], remove: [] },
        clusters: { replace: true, clusters: [cluster('a', ['f1']), cluster('b', ['f2'])] },
      },
    );
    expect((await sink.currentVersion('C1'))?.version_number).toBe(1);
    // An incremental run: clusters and sources updated.
    await sink.clusters('C1');
    await sink.savePages(
      'C1',
      { structure, pages: [page('overview', 'v2')] },
      {
        ...meta,
        sources: { replace: false, upsert: [fact('f3', 'd3')], remove: [{ kind: 'fact', id: 'f2' }] },
        clusters: { replace: false, changed: [cluster('a', ['f1', 'f3'])], removedIds: ['b'] },
      },
    );
    expect((await sink.currentVersion('C1'))?.version_number).toBe(2);
    const before = { ...reads };
    const [sources, clusters, pages] = [await sink.sources('C1'), await sink.clusters('C1'), await sink.pages('C1')];
    expect(reads).toEqual(before);
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect([...sources].sort(byId)).toEqual([...(await store.sources('C1'))].sort(byId));
    expect(clusters.map((c) => [c.id, c.member_ids])).toEqual([['a', ['f1', 'f3']]]);
    expect(clusters.map((c) => [c.id, c.member_ids])).toEqual(
      (await store.clusters('C1')).map((c) => [c.id, c.member_ids]),
    );
    expect(pages).toEqual(await store.pages('C1'));
  });

  it('drops what it holds when another process saved a newer version', async () => {
    const sink = cachedWikiSink(counting);
    await sink.savePages('C2', { structure, pages: [page('overview', 'mine')] }, meta);
    expect((await sink.currentVersion('C2'))?.version_number).toBe(1);
    expect((await sink.pages('C2'))[0]!.content).toBe('mine');
    // Another process (the store directly) writes version 2.
    await store.savePages('C2', { structure, pages: [page('overview', 'theirs')] }, meta);
    const before = reads.pages;
    expect((await sink.currentVersion('C2'))?.version_number).toBe(2);
    expect((await sink.pages('C2'))[0]!.content).toBe('theirs');
    expect(reads.pages).toBe(before + 1);
  });
});
