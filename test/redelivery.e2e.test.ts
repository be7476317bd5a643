import path from 'node:path';
import { type FactsExtracted, loadConfig, TOPICS } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { appendPlan, openRuntime, type Runtime, startProjectors, waitForProjectors } from '@atlas/runtime';
import { waitFor } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const OLAKE = path.resolve(import.meta.dirname, '../../shared/data/slack-olake/export');

/** The graph of every channel: entity id → its source facts, and the relationship ids. */
const graphOf = async (rt: Runtime, channels: readonly string[]) => {
  const entities = new Map<string, string[]>();
  const relationships = new Set<string>();
  for (const c of channels) {
    for (const e of await rt.graph.listEntities({ channelId: c, limit: 100_000 }))
      entities.set(e.id, [...e.source_fact_ids].sort());
    for (const r of await rt.graph.listRelationships({ channelId: c, limit: 100_000 })) relationships.add(r.id);
  }
  return { entities, relationships };
};

const drain = async (rt: Runtime) => {
  const subs = await startProjectors(rt);
  try {
    await waitForProjectors(rt);
  } finally {
    await Promise.all(subs.map((s) => s.stop()));
  }
};

/**
 * At-least-once delivery of atlas.facts: a facts projector killed after appending its fact sets and before
 * its group committed runs the batch again, so the entities projector meets the same fact sets a second time, after
 * later messages of the channel grew its state (people, decisions, owners). The graph must come out as one delivery
 * makes it. The real slack-olake export on the embedded profile; every fact set of the export delivered again.
 */
describe('redelivered fact sets leave the graph as one delivery made it (slack-olake)', () => {
  let rt: Runtime;
  let channels: string[];
  let sets: FactsExtracted[];
  let plan: Awaited<ReturnType<typeof planImport>>;
  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none' }), {
      pollIntervalMs: 20,
    });
    plan = await planImport(OLAKE);
    channels = plan.channels.map((c) => c.channelId);
    await appendPlan(rt, plan);
    await drain(rt);
    sets = [];
    const sub = await rt.eventLog.subscribe({
      group: 'test-redelivery-probe',
      topics: [TOPICS.facts],
      handler: async (b) => void sets.push(...b.flatMap((e) => (e.type === 'FactsExtracted' ? [e.data] : []))),
    });
    await waitFor(() => sets.length >= plan.messages.length, 'every fact set read back');
    await sub.stop();
  }, 300_000);
  afterAll(async () => rt?.close());

  it('the same entities, source facts and relationships; the extractor not run again', async () => {
    const once = await graphOf(rt, channels);
    expect(once.entities.size).toBeGreaterThan(10);
    expect(sets.filter((s) => s.facts.length > 0).length).toBeGreaterThan(100);
    const inner = rt.entityExtractor;
    let calls = 0;
    rt.entityExtractor = {
      id: inner.id,
      extract: (input) => {
        calls++;
        return inner.extract(input);
      },
    };
    // Redelivered as the restarted facts projector appends them: again, in order, with a new extractedAt.
    await rt.eventLog.append(
      TOPICS.facts,
      sets.map((s) => ({
        type: 'FactsExtracted' as const,
        key: s.channelId,
        data: { ...s, extractedAt: new Date().toISOString() },
      })),
    );
    await drain(rt);
    const twice = await graphOf(rt, channels);
    const changed = [...once.entities].filter(([id, facts]) => twice.entities.get(id)?.join() !== facts.join());
    expect(changed.map(([id]) => id)).toEqual([]);
    expect([...twice.entities.keys()].filter((id) => !once.entities.has(id))).toEqual([]);
    expect([...twice.relationships].sort()).toEqual([...once.relationships].sort());
    expect(calls).toBe(0);
  }, 300_000);

  it('messages redelivered to the facts projector give the same fact sets, their conversation context included', async () => {
    // The first half of every channel again, as a facts projector killed before its group committed reads them.
    const again = plan.channels.flatMap((c) => {
      const ms = plan.messages.filter((m) => m.channelId === c.channelId);
      return ms.slice(0, Math.ceil(ms.length / 2));
    });
    const before = new Map(sets.map((s) => [s.messageId, s]));
    const got: FactsExtracted[] = [];
    const sub = await rt.eventLog.subscribe({
      group: 'test-redelivery-probe-2',
      topics: [TOPICS.facts],
      start: 'latest',
      handler: async (b) => void got.push(...b.flatMap((e) => (e.type === 'FactsExtracted' ? [e.data] : []))),
    });
    const once = await graphOf(rt, channels);
    await rt.eventLog.append(
      TOPICS.messages,
      again.map((m) => ({ type: 'MessageIngested' as const, key: m.channelId, data: m })),
    );
    await drain(rt);
    await waitFor(() => got.length >= again.length, 'the redelivered fact sets');
    await sub.stop();
    const shape = (s: FactsExtracted) => ({ facts: s.facts, sourceText: s.sourceText, contextText: s.contextText });
    const differ = got.filter((s) => JSON.stringify(shape(s)) !== JSON.stringify(shape(before.get(s.messageId)!)));
    expect(differ.map((s) => s.sourceMessageId)).toEqual([]);
    expect(got.filter((s) => s.contextText !== '').length).toBeGreaterThan(10);
    const twice = await graphOf(rt, channels);
    const sorted = (g: typeof once) => [...g.entities].sort(([a], [b]) => a.localeCompare(b));
    expect(sorted(twice)).toEqual(sorted(once));
  }, 300_000);
});
