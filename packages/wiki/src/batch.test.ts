import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import { migrateWiki, WikiStore } from '@atlas/stores';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchedDeps } from './batch.js';
import type { WikiPage, WikiStructure } from './index.js';
import { generateChannelWiki, type WikiGenerateDeps } from './index.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');
/** Messages held back from the first import in every channel: the "next sync". */
const HELD_BACK = 3;

/** `target` with every method call counted by name in `calls`. */
const counted = <T extends object>(target: T, calls: Map<string, number>): T =>
  new Proxy(target, {
    get(obj, prop) {
      const v = Reflect.get(obj, prop, obj);
      if (typeof v !== 'function' || typeof prop !== 'string') return v;
      return (...args: unknown[]) => {
        calls.set(prop, (calls.get(prop) ?? 0) + 1);
        return (v as (...a: unknown[]) => unknown).apply(obj, args);
      };
    },
  });

describe('batchedDeps: concurrent generations share their store calls (slack-olake, local embeddings)', () => {
  let rt: Runtime;
  let wiki: WikiStore<WikiPage, WikiStructure>;
  let plan: Awaited<ReturnType<typeof planImport>>;
  let channels: string[];
  let plain: WikiGenerateDeps;
  const calls = new Map<string, number>();
  let batched: WikiGenerateDeps;
  const now = new Date('2026-01-01T00:00:00Z');

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'local' }));
    if (!rt.embeddings) throw new Error(`no embeddings: ${rt.embeddingsUnavailable}`);
    plan = await planImport(OLAKE);
    const held = new Set<string>();
    for (const c of plan.channels)
      for (const m of plan.messages
        .filter((m) => m.channelId === c.channelId)
        .sort((a, b) => a.timestamp.localeCompare(b.timestamp))
        .slice(-HELD_BACK))
        held.add(m.messageId);
    await appendPlan(rt, { ...plan, messages: plan.messages.filter((m) => !held.has(m.messageId)) });
    await drainProjectors(rt, 0, false);
    await migrateWiki(rt.database.db);
    wiki = new WikiStore<WikiPage, WikiStructure>(rt.database.db);
    channels = (await rt.documents.listChannels()).filter((c) => c.fact_count > 0).map((c) => c.id);
    const embedderId = rt.embeddings.embedder.id;
    plain = { documents: rt.documents, vectors: rt.embeddings.vectors, embedderId, graph: rt.graph, wiki };
    batched = batchedDeps({
      documents: counted(rt.documents, calls),
      vectors: counted(rt.embeddings.vectors, calls),
      embedderId,
      graph: counted(rt.graph, calls),
      wiki: counted(wiki, calls),
    });
  }, 180_000);
  afterAll(async () => {
    await rt?.close();
  });

  it('full runs together write the very pages that runs one by one write, in one call per kind of read and write', async () => {
    expect(channels.length).toBeGreaterThanOrEqual(3);
    for (const c of channels) await generateChannelWiki(plain, c, { mode: 'full', now });
    calls.clear();
    const together = await Promise.all(channels.map((c) => generateChannelWiki(batched, c, { mode: 'full', now })));
    expect(together.map((r) => r.version)).toEqual(channels.map(() => 2));
    for (const c of channels) {
      const [v1, v2] = [await wiki.version(c, 1), await wiki.version(c, 2)];
      expect(v2!.pages.length).toBeGreaterThanOrEqual(7);
      expect(v2!.pages).toEqual(v1!.pages);
      expect(v2!.structure).toEqual(v1!.structure);
    }
    for (const r of together) expect(r.citations.verified).toBe(r.citations.total);
    // One batch call for all the channels where a run makes one call of its own.
    expect(calls.get('beginGenerations')).toBe(1);
    expect(calls.get('sourceDigestsMany')).toBe(1);
    expect(calls.get('listEntitiesMany')).toBe(1);
    expect(calls.get('getMessagesIn')).toBe(1);
    expect(calls.get('vectorsOf')).toBe(1);
    expect(calls.get('savePagesMany')).toBe(1);
    for (const single of ['beginGeneration', 'sourceDigests', 'listEntities', 'getMessages', 'savePages'])
      expect(calls.get(single) ?? 0).toBe(0);
  }, 120_000);

  it('incremental runs together after the next sync: each channel rebuilds what it touched, one save for all', async () => {
    await appendPlan(rt, plan);
    await drainProjectors(rt, 0, false);
    calls.clear();
    const later = new Date('2026-01-02T00:00:00Z');
    const results = await Promise.all(
      channels.map((c) => generateChannelWiki(batched, c, { mode: 'incremental', now: later })),
    );
    const changed = results.filter((r) => !r.skipped);
    expect(changed.length).toBeGreaterThan(0);
    for (const r of changed) {
      expect(r.mode).toBe('incremental');
      expect(r.version).toBe(3);
      expect(r.citations.verified).toBe(r.citations.total);
    }
    expect(results.some((r) => r.pagesKept > 0)).toBe(true);
    expect(calls.get('savePagesMany')).toBe(1);
    expect(calls.get('sourceDigestsMany')).toBe(1);
    expect(calls.get('currentVersions')).toBe(1);
    // What was saved is what the next run reads: nothing changed since, so a run alone does nothing.
    for (const c of channels) {
      const again = await generateChannelWiki(plain, c, { mode: 'incremental', now: later });
      expect(again.skipped).toBe(true);
      expect((await wiki.status(c)).is_generating).toBe(false);
    }
  }, 120_000);

  it('a channel whose data was deleted during the pass fails alone; the others are saved', async () => {
    const [gone, ...rest] = channels;
    const before = await Promise.all(rest.map(async (c) => (await wiki.currentVersion(c))!.version_number));
    const runs = channels.map((c) => generateChannelWiki(batched, c, { mode: 'full', now: new Date() }));
    await wiki.deleteChannel(gone!, new Date(Date.now() + 60_000).toISOString());
    const settled = await Promise.allSettled(runs);
    expect(settled[0]).toMatchObject({ status: 'rejected', reason: { code: 'CONFLICT' } });
    expect(await wiki.pageCount(gone!)).toBe(0);
    expect((await wiki.status(gone!)).is_generating).toBe(false);
    for (const [i, c] of rest.entries()) {
      expect(settled[i + 1]!.status).toBe('fulfilled');
      expect((await wiki.currentVersion(c))!.version_number).toBe(before[i]! + 1);
    }
  }, 120_000);
});
