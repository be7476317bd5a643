import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import { migrateWiki, WikiStore } from '@atlas/stores';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorSums as sumsOf } from './author-centring.js';
import {
  type ChannelAuthorSums,
  checkWikiCitations,
  FACT_DEPENDENT_FIXED_PAGES,
  FIXED_PAGES,
  GRAPH_UNAVAILABLE_NOTICE,
  generateChannelWiki,
  type WikiGenerateDeps,
  type WikiPage,
  type WikiStructure,
} from './index.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');
/** Messages of #help held back from the first import, to arrive before the incremental run. */
const HELD_BACK = 12;

describe('generateChannelWiki on real data (slack-olake, local embeddings)', () => {
  let rt: Runtime;
  let wiki: WikiStore<WikiPage, WikiStructure>;
  let deps: WikiGenerateDeps;
  let plan: Awaited<ReturnType<typeof planImport>>;
  let help: string;
  const now = new Date('2026-01-01T00:00:00Z');
  /** The long-lived generator's author vector sums, and the number of ids each vectorsOf call asked for. */
  const authorSums = new Map<string, ChannelAuthorSums>();
  const vectorReads: number[] = [];

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'local' }));
    if (!rt.embeddings) throw new Error(`no embeddings: ${rt.embeddingsUnavailable}`);
    plan = await planImport(OLAKE);
    help = plan.channels.find((c) => c.name === 'help')!.channelId;
    const last = plan.messages
      .filter((m) => m.channelId === help)
      .sort((a, b) => a.timestamp.localeCompare(b.timestamp))
      .slice(-HELD_BACK);
    const held = new Set(last.map((m) => m.messageId));
    await appendPlan(rt, { ...plan, messages: plan.messages.filter((m) => !held.has(m.messageId)) });
    await drainProjectors(rt, 0, false);
    await migrateWiki(rt.database.db);
    wiki = new WikiStore<WikiPage, WikiStructure>(rt.database.db);
    const vectors = rt.embeddings.vectors;
    deps = {
      documents: rt.documents,
      vectors: {
        vectorsOf: (ids) => {
          vectorReads.push(ids.length);
          return vectors.vectorsOf(ids);
        },
      },
      // The vectors' encoder picks the cluster thresholds (clusterParamsOf).
      embedderId: rt.embeddings.embedder.id,
      graph: rt.graph,
      wiki,
      authorSums,
    };
  }, 120_000);
  afterAll(async () => {
    await rt?.close();
  });

  let first: WikiPage[] = [];

  it('full: the 7 fixed pages and one page per cluster, every citation verified, saved as version 1', async () => {
    const r = await generateChannelWiki(deps, help, { mode: 'full', now });
    expect(r.mode).toBe('full');
    expect(r.version).toBe(1);
    expect(r.factsWithVectors).toBeGreaterThan(100);
    expect(r.stats.assignedShare).toBeGreaterThanOrEqual(0.95);
    const structure = (await wiki.structure(help))!;
    expect(structure.pages.map((n) => n.id)).toEqual(FIXED_PAGES.map((p) => p.id));
    first = await wiki.pages(help);
    const topics = first.filter((p) => p.page_type !== 'fixed');
    expect(first.filter((p) => p.page_type === 'fixed')).toHaveLength(7);
    expect(topics).toHaveLength(r.clusters.length);
    expect(topics.length).toBeGreaterThan(3);
    expect(r.pagesRebuilt).toBe(first.length);
    expect(r.citations.total).toBeGreaterThan(50);
    expect(r.citations.verified).toBe(r.citations.total);
    expect(await wiki.status(help)).toMatchObject({ current_version: 1, is_generating: false, is_stale: false });
    expect(await wiki.clusters(help)).toHaveLength(r.clusters.length);
  });

  it('incremental after new messages: rebuilds only touched pages, keeps an untouched topic page byte-identical', async () => {
    await appendPlan(rt, plan);
    await drainProjectors(rt, 0, false);
    await wiki.markStale(help);
    const before = new Map(first.map((p) => [p.id, JSON.stringify(p)]));
    vectorReads.length = 0;
    const r = await generateChannelWiki(deps, help, { mode: 'incremental', now: new Date(now.getTime() + 3_600_000) });
    // The author sums kept from the full run: one vectorsOf call, for the facts not summed yet (far fewer than the
    // channel's), and every author's cached sum is the sum over all of their facts' vectors now.
    expect(vectorReads).toHaveLength(1);
    const listed = await rt.documents.listMemories({ channelId: help, page: 1, limit: 1000 });
    const facts = await rt.documents.getMemories(listed.rows.map((x) => x.id));
    const allVectors = await rt.embeddings!.vectors.vectorsOf([...facts.keys()]);
    expect(vectorReads[0]).toBeLessThan(allVectors.size / 4);
    const truth = sumsOf(allVectors, new Map([...facts.values()].map((f) => [f.id, f.author_name])));
    const cached = authorSums.get(help)!;
    for (const [author, s] of cached.sums) {
      expect(s.n).toBe(truth.get(author)!.n);
      for (const [i, x] of s.sum.entries()) expect(x).toBeCloseTo(truth.get(author)!.sum[i]!, 9);
    }
    expect(r.mode).toBe('incremental');
    expect(r.version).toBe(2);
    expect(r.touchedClusters.length).toBeGreaterThan(0);
    expect(r.touchedClusters.length).toBeLessThan(r.clusters.length);
    const pages = await wiki.pages(help);
    const rebuilt = new Set(r.rebuiltPageIds);
    expect(rebuilt.size).toBeLessThan(pages.length);
    for (const id of FACT_DEPENDENT_FIXED_PAGES) expect(rebuilt.has(id)).toBe(true);
    // Every page not rebuilt is byte-identical to its stored predecessor, but for the section number of a page only
    // renumbered; at least one is a topic page.
    const renumbered = new Set(r.renumberedPageIds);
    const kept = pages.filter((p) => !rebuilt.has(p.id));
    for (const p of kept) {
      const old = JSON.parse(before.get(p.id)!) as typeof p;
      if (renumbered.has(p.id)) {
        expect(p.section_number).not.toBe(old.section_number);
        expect(JSON.stringify({ ...p, section_number: old.section_number })).toBe(before.get(p.id));
      } else expect(JSON.stringify(p)).toBe(before.get(p.id));
    }
    expect(kept.some((p) => p.page_type !== 'fixed')).toBe(true);
    // Rebuilt topic pages: at most one per touched cluster, plus pages renumbered by a grown cluster.
    const rebuiltTopics = pages.filter((p) => rebuilt.has(p.id) && p.page_type !== 'fixed');
    expect(rebuiltTopics.length).toBeLessThan(pages.filter((p) => p.page_type !== 'fixed').length);
    expect(r.citations.verified).toBe(r.citations.total);
    expect((await wiki.versions(help)).map((v) => [v.version_number, v.archived_at === null])).toEqual([
      [2, true],
      [1, false],
    ]);
    expect((await wiki.status(help)).is_stale).toBe(false);
    // Only the changed clusters were written: the stored ones are the run's.
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect((await wiki.clusters(help)).map((c) => [c.id, c.member_ids, c.parent_id])).toEqual(
      [...r.clusters].sort(byId).map((c) => [c.id, c.member_ids, c.parent_id]),
    );
    // The citation check covers every page of the version.
    const all = checkWikiCitations(pages, new Map(), {});
    expect(r.citations.total).toBe(all.total);
  });

  it('a graph store that throws gives the degraded People and Decisions pages', async () => {
    const down = {
      listEntities: async () => {
        throw new Error('graph store unavailable');
      },
    };
    const r = await generateChannelWiki({ ...deps, graph: down }, help, { mode: 'incremental', now });
    expect(r.graphAvailable).toBe(false);
    expect(r.rebuiltPageIds).toEqual(expect.arrayContaining(['people', 'decisions']));
    for (const id of ['people', 'decisions'])
      expect((await wiki.page(help, id))!.content).toContain(GRAPH_UNAVAILABLE_NOTICE);
    expect(r.citations.verified).toBe(r.citations.total);
    // Back up: the next run rebuilds them from the graph.
    const back = await generateChannelWiki(deps, help, { mode: 'incremental', now });
    // No fact came or went: only the two graph pages are rebuilt for that (the person names the graph gives back may
    // rename a topic, which moves its entry on the Topics page).
    expect(back.rebuiltPageIds).toEqual(expect.arrayContaining(['people', 'decisions']));
    expect(back.rebuiltBecause).toMatchObject({ touched: 2, stale: 0 });
    expect((await wiki.page(help, 'people'))!.content).not.toContain(GRAPH_UNAVAILABLE_NOTICE);
  });

  it('incremental with no new or changed facts: skipped, no read of facts, no render, no save, version unchanged', async () => {
    const status = await wiki.status(help);
    const pages = await wiki.pages(help);
    const calls = { savePages: 0, listMemories: 0, getMemories: 0, getMessages: 0 };
    const spied: WikiGenerateDeps = {
      ...deps,
      documents: {
        getMemories: (ids) => {
          calls.getMemories++;
          return deps.documents.getMemories(ids);
        },
        listMemories: (q) => {
          calls.listMemories++;
          return deps.documents.listMemories(q);
        },
        getMessages: (id, ids) => {
          calls.getMessages++;
          return deps.documents.getMessages(id, ids);
        },
      },
      wiki: {
        clusters: (id) => wiki.clusters(id),
        pages: (id) => wiki.pages(id),
        setGenerating: (id, g) => wiki.setGenerating(id, g),
        sourceDigests: (id) => wiki.sourceDigests(id),
        sources: (id) => wiki.sources(id),
        currentVersion: (id) => wiki.currentVersion(id),
        savePages: (id, w, m) => {
          calls.savePages++;
          return wiki.savePages(id, w, m);
        },
      },
    };
    const r = await generateChannelWiki(spied, help, { mode: 'incremental', now: new Date(now.getTime() + 7_200_000) });
    expect(r.skipped).toBe(true);
    expect(r.version).toBe(status.current_version);
    expect(r.pagesRebuilt).toBe(0);
    expect(r.pages).toBe(pages.length);
    expect(r.citations.verified).toBe(r.citations.total);
    expect(calls).toEqual({ savePages: 0, listMemories: 0, getMemories: 0, getMessages: 0 });
    expect(await wiki.status(help)).toEqual(status);
    expect(await wiki.pages(help)).toEqual(pages);
    // The version snapshot is assembled from page revisions: the current version returns the current pages.
    const v = (await wiki.version(help, status.current_version!))!;
    expect(new Map(v.pages.map((p) => [p.id, p]))).toEqual(new Map(pages.map((p) => [p.id, p])));
  });

  it('a cited message edited in place: only the pages citing it are re-rendered, and they still verify', async () => {
    const pages = await wiki.pages(help);
    const topic = pages.find((p) => p.page_type === 'topic' && p.citations.length > 0)!;
    const permalink = topic.citations[0]!.permalink;
    const citing = pages.filter((p) => p.citations.some((c) => c.permalink === permalink)).map((p) => p.id);
    const row = await sql<{ id: string; text: string }>`select id, text from messages
      where channel_id = ${help} and permalink = ${permalink}`.execute(rt.database.db);
    const { id, text } = row.rows[0]!;
    await sql`update messages set text = ${`${text} (edited)`}, content_hash = 'edited', edited_at = now()
      where channel_id = ${help} and id = ${id}`.execute(rt.database.db);
    const r = await generateChannelWiki(deps, help, { mode: 'incremental', now: new Date(now.getTime() + 9_000_000) });
    expect(r.skipped).toBeUndefined();
    expect(r.rebuiltBecause.stale).toBe(citing.length);
    expect(r.rebuiltPageIds.sort()).toEqual([...citing].sort());
    expect(r.citations.verified).toBe(r.citations.total);
    // The stored sources now hold the edited message: the next run has nothing to do.
    const again = await generateChannelWiki(deps, help, {
      mode: 'incremental',
      now: new Date(now.getTime() + 9_100_000),
    });
    expect(again.skipped).toBe(true);
  });

  it('an incremental run over vectors of another model than the current version clustered runs full (a vector space switch)', async () => {
    const before = (await wiki.currentVersion(help))!;
    expect(before.metadata.embedder).toBe(rt.embeddings!.embedder.id);
    // Nothing changed but the model: not skipped, clustered from scratch, the new model recorded.
    const switched = { ...deps, embedderId: 'onnx:another-model', authorSums: new Map() };
    const r = await generateChannelWiki(switched, help, {
      mode: 'incremental',
      now: new Date(now.getTime() + 10_000_000),
    });
    expect(r.skipped).toBeUndefined();
    expect(r.mode).toBe('full');
    expect(r.version).toBe(before.version_number + 1);
    expect((await wiki.currentVersion(help))!.metadata).toMatchObject({ mode: 'full', embedder: 'onnx:another-model' });
    // The next incremental run under that model has nothing to do again.
    const again = await generateChannelWiki(switched, help, {
      mode: 'incremental',
      now: new Date(now.getTime() + 10_100_000),
    });
    expect(again.skipped).toBe(true);
  });
});
