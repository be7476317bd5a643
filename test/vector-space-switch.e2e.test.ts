import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { searchMemories } from '@atlas/query';
import {
  appendPlan,
  openRuntime,
  type RebuildResult,
  type Runtime,
  type SpaceHandle,
  startProjectors,
  waitForProjectors,
} from '@atlas/runtime';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_MODELS_DIR, testModel } from '../packages/providers/src/models/test-models.test-support.js';

const OLAKE = path.resolve(import.meta.dirname, '../../shared/data/slack-olake/export');
const USE = 'use-lite-512@energetic-ai-0.2.0';
const E5 = 'onnx:e5-small-v2-q';
/** Messages of #help held back from the first import and appended while the new space is being built. */
const HELD_BACK = 12;

/**
 * Issue 24, point 3 ("vector spaces are versioned and replaced by replay"), end to end on the real OLake export: a
 * data dir populated with USE-lite vectors is opened with e5-small-v2 configured. Start rebuilds the vector index in
 * a new space by replaying atlas.facts while search keeps answering from the old one, switches once caught up, and
 * drops the old space; new messages arriving meanwhile end in the new space too.
 */
describe('changing the embedding model of a populated data dir (slack-olake)', () => {
  let dir: string;
  let rt: Runtime | undefined;
  const base = () => ({ ATLAS_DATA_DIR: dir, EMBEDDING_PROVIDER: 'local', ATLAS_MODELS_DIR: TEST_MODELS_DIR });

  beforeAll(async () => {
    await testModel('e5-small-v2');
    dir = await mkdtemp(path.join(os.tmpdir(), 'atlas-space-switch-'));
  }, 300_000);
  afterAll(async () => {
    await rt?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('rebuilds beside the serving space: searches answer throughout, never mix spaces, and every vector ends in e5', async () => {
    const plan = await planImport(OLAKE);
    const help = plan.channels.find((c) => c.name === 'help')!.channelId;
    const held = new Set(
      plan.messages
        .filter((m) => m.channelId === help)
        .sort((a, b) => a.timestamp.localeCompare(b.timestamp))
        .slice(-HELD_BACK)
        .map((m) => m.messageId),
    );
    // 1. A data dir with USE-lite vectors.
    rt = await openRuntime(loadConfig({ ...base(), EMBEDDING_LOCAL_MODEL: 'use-lite' }), { pollIntervalMs: 20 });
    await appendPlan(rt, { ...plan, messages: plan.messages.filter((m) => !held.has(m.messageId)) });
    let subs = await startProjectors(rt);
    await waitForProjectors(rt, undefined, 50);
    await Promise.all(subs.map((s) => s.stop()));
    const before = await rt.embeddings!.vectors.count();
    expect(before).toBeGreaterThan(100);
    expect(rt.vectorSpaces!.active().space.model).toBe(USE);
    // The wikis of #help and of a channel that gets no new message, clustered from USE-lite vectors.
    const quiet = (await rt.documents.listChannels()).find((c) => c.fact_count > 10 && c.id !== help)!.id;
    for (const ch of [help, quiet]) {
      await rt.wikiGenerator!.generate(ch, 'full');
      expect((await rt.wiki.currentVersion(ch))!.metadata.embedder).toBe(USE);
    }
    await rt.close();

    // 2. The same data dir with e5-small-v2 configured: the USE space serves until the e5 space has caught up.
    rt = await openRuntime(loadConfig({ ...base(), EMBEDDING_LOCAL_MODEL: 'e5-small-v2' }), { pollIntervalMs: 20 });
    const spaces = rt.vectorSpaces!;
    expect(spaces.active().space.model).toBe(USE);
    expect(spaces.needsRebuild()).toBe(true);
    // Every routing of a query vector to a space is recorded: one space per query, the one whose model made the vector
    // (its length is that model's dimension), whatever model id the query read just before or after a switch.
    const routed: { space: SpaceHandle; model: string; dim: number }[] = [];
    const spaceOf = spaces.spaceOf.bind(spaces);
    spaces.spaceOf = (vector, model) => {
      const h = spaceOf(vector, model);
      routed.push({ space: h, model, dim: vector.length });
      return h;
    };
    // A query embedded by the old space just before the switch and searched just after it (the race CI once met): it
    // is answered from the old space under the old model's floor, not the new model's (e5's 0.77 on a USE-lite vector
    // found nothing).
    const embedder = rt.embeddings!.embedder;
    const early = (await embedder.embed(['how do I configure the postgres source'], { kind: 'query' }))[0]!;
    let straddled: { results: number; active: string; made: string | undefined } | null = null;
    const activate = spaces.activate.bind(spaces);
    spaces.activate = async (id) => {
      const retired = await activate(id);
      const pinned = {
        get id() {
          return embedder.id;
        },
        get dim() {
          return embedder.dim;
        },
        modelOf: (v: readonly number[]) => embedder.modelOf?.(v),
        embed: async () => [early],
      };
      const res = await searchMemories(
        { ...rt!, vectors: { embedder: pinned, store: rt!.embeddings!.vectors } },
        {
          query: 'how do I configure the postgres source',
          channel_id: help,
          limit: 10,
          search_mode: 'vector',
          include_citations: false,
          fuzzy: false,
        },
      );
      straddled = { results: res.results.length, active: embedder.id, made: embedder.modelOf?.(early) };
      return retired;
    };
    subs = await startProjectors(rt);
    const rebuild = subs.find((s) => s.group === 'atlas.projector.embeddings-rebuild') as unknown as {
      done: Promise<RebuildResult | null>;
    };
    expect(rebuild).toBeDefined();
    let finished: RebuildResult | null | undefined;
    void rebuild.done.then((r) => {
      finished = r;
    });
    const queries = [
      'how do I configure the postgres source',
      'sync fails with an error',
      'release of the new version',
    ];
    const served: { model: string; results: number }[] = [];
    let appended = false;
    for (let i = 0; finished === undefined; i++) {
      routed.length = 0;
      const res = await searchMemories(
        { ...rt, vectors: { embedder: rt.embeddings!.embedder, store: rt.embeddings!.vectors } },
        {
          query: queries[i % queries.length]!,
          channel_id: help,
          limit: 10,
          search_mode: i % 2 === 0 ? 'vector' : 'hybrid',
          include_citations: false,
          fuzzy: false,
        },
      );
      expect(res.results.length).toBeGreaterThan(0);
      expect(routed.length).toBeGreaterThan(0);
      const ids = new Set(routed.map((r) => r.space.space.id));
      expect(ids.size).toBe(1); // one space per query
      for (const r of routed) expect(r.dim).toBe(r.space.space.dim);
      served.push({ model: routed[0]!.space.space.model, results: res.results.length });
      if (!appended && served.length >= 3) {
        // New messages while the new space is being built: the embeddings projector writes them into the serving
        // space, the rebuild into the new one.
        await appendPlan(rt, { ...plan, messages: plan.messages.filter((m) => held.has(m.messageId)) });
        appended = true;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    await waitForProjectors(rt, undefined, 50);
    await Promise.all(subs.map((s) => s.stop()));

    expect(finished).toMatchObject({ model: E5, previous: USE });
    expect(straddled).toEqual({ results: 10, active: E5, made: USE });
    const byModel = (m: string) => served.filter((s) => s.model === m).length;
    console.log(
      `[vector-space-switch] ${JSON.stringify(finished)}; ${served.length} searches during the rebuild: ${byModel(USE)} served by USE-lite, ${byModel(E5)} by e5, 0 failed`,
    );
    // Searches were answered by the old space before the switch and the new one after, never otherwise.
    const models = served.map((s) => s.model);
    expect(models[0]).toBe(USE);
    expect(models.at(-1)).toBe(E5);
    expect(models.indexOf(E5)).toBe(models.length - models.filter((m) => m === E5).length);
    // One active space of e5 with a vector for every fact, held back ones included; the USE table is gone.
    const list = spaces.all().map((h) => ({ model: h.space.model, state: h.space.state }));
    expect(list).toEqual([{ model: E5, state: 'active' }]);
    const index = spaces.active().space.index;
    const rows = await sql<{ model: string; n: number }>`select model, count(*)::int as n from ${sql.raw(index)}
      group by model`.execute(rt.database.db);
    const after = await rt.embeddings!.vectors.count();
    expect(rows.rows).toEqual([{ model: E5, n: after }]);
    expect(after).toBeGreaterThan(before);
    expect(after).toBe((await rt.documents.counts()).facts);
    const tables = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables
      where table_name = 'vector_facts_512'`.execute(rt.database.db);
    expect(tables.rows[0]!.n).toBe(0);
    // Every wiki was marked stale by the switch, the quiet channel's too; this process (opened on the USE space)
    // regenerates them in full from e5 vectors with e5's thresholds.
    expect((await rt.wiki.status(quiet)).is_stale).toBe(true);
    const regenerated = await rt.wikiGenerator!.generateStale();
    expect(regenerated.failed).toEqual([]);
    for (const ch of [help, quiet]) {
      expect(regenerated.results.find((r) => r.channelId === ch)).toMatchObject({ mode: 'full' });
      expect((await rt.wiki.currentVersion(ch))!.metadata).toMatchObject({ mode: 'full', embedder: E5 });
    }
    await rt.close();

    // 3. Opened again: nothing left to rebuild.
    rt = await openRuntime(loadConfig({ ...base(), EMBEDDING_LOCAL_MODEL: 'e5-small-v2' }), { pollIntervalMs: 20 });
    expect(rt.vectorSpaces!.active().space.model).toBe(E5);
    expect(rt.vectorSpaces!.needsRebuild()).toBe(false);
  }, 600_000);
});
