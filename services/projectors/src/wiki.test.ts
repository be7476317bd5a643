import path from 'node:path';
import { AtlasError, loadConfig, type StoredEvent } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import {
  appendPlan,
  openRuntime,
  projectorLag,
  type Runtime,
  startProjectors,
  waitForProjectors,
} from '@atlas/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextCronRun, startWikiScheduler, type WikiScheduler, wikiProjector } from './wiki.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');
/** Messages of #help held back from the first import: the "next sync". */
const HELD_BACK = 10;

/**
 * The wiki's generation triggers on the real olake export: the wiki projector marks the channels whose facts
 * changed stale, and the scheduler regenerates exactly those once the projectors are idle.
 */
describe('wiki triggers (wiki projector + scheduler) on real data', () => {
  let rt: Runtime;
  let plan: Awaited<ReturnType<typeof planImport>>;
  let help: string;
  let scheduler: WikiScheduler;
  let idle = true;
  const project = async () => {
    const subs = await startProjectors(rt);
    await waitForProjectors(rt, undefined, 50);
    await Promise.all(subs.map((s) => s.stop()));
  };

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'local' }), {
      pollIntervalMs: 20,
    });
    if (!rt.wikiGenerator) throw new Error(`no wiki generator: ${rt.embeddingsUnavailable}`);
    plan = await planImport(OLAKE);
    help = plan.channels.find((c) => c.name === 'help')!.channelId;
    const held = new Set(
      plan.messages
        .filter((m) => m.channelId === help)
        .sort((a, b) => a.timestamp.localeCompare(b.timestamp))
        .slice(-HELD_BACK)
        .map((m) => m.messageId),
    );
    await appendPlan(rt, { ...plan, messages: plan.messages.filter((m) => !held.has(m.messageId)) });
    await project();
    scheduler = startWikiScheduler(rt.wikiGenerator, {
      rebuildCron: '0 2 * * *',
      intervalMs: 3_600_000, // the test drives tick() itself
      idle: async () => idle && (await projectorLag(rt)) === 0,
      channels: async () => (await rt.documents.listChannels()).filter((c) => c.fact_count > 0).map((c) => c.id),
    });
  }, 180_000);
  afterAll(async () => {
    scheduler?.stop();
    await rt?.close();
  });

  it('the wiki projector marks every channel that got facts stale', async () => {
    const withFacts = (await rt.documents.listChannels()).filter((c) => c.fact_count > 0).map((c) => c.id);
    expect(withFacts).toContain(help);
    expect((await rt.wiki.staleChannels()).sort()).toEqual([...withFacts].sort());
    expect((await rt.wiki.status(help)).is_stale).toBe(true);
  });

  it('a tick while the projectors are busy does nothing; once idle it generates every stale wiki', async () => {
    idle = false;
    await scheduler.tick();
    expect(await rt.wiki.versions(help)).toEqual([]);
    idle = true;
    await scheduler.tick();
    expect(await rt.wiki.staleChannels()).toEqual([]);
    const status = await rt.wiki.status(help);
    expect(status).toMatchObject({ is_stale: false, is_generating: false, current_version: 1 });
    expect((await rt.wiki.pages(help)).length).toBeGreaterThan(7);
  }, 120_000);

  it('the next sync marks only its channel stale, and the next tick regenerates it incrementally', async () => {
    const before = await rt.wiki.versions(help);
    const others = (await rt.documents.listChannels()).filter((c) => c.id !== help && c.fact_count > 0);
    const otherVersions = await Promise.all(others.map((c) => rt.wiki.status(c.id)));
    await appendPlan(rt, plan);
    await project();
    expect(await rt.wiki.staleChannels()).toEqual([help]);
    await scheduler.tick();
    expect(await rt.wiki.staleChannels()).toEqual([]);
    const after = await rt.wiki.versions(help);
    expect(after[0]!.version_number).toBe(before[0]!.version_number + 1);
    const v = await rt.wiki.version(help, after[0]!.version_number);
    expect(v?.metadata.mode).toBe('incremental');
    expect(v?.metadata.pages_kept).toBeGreaterThan(0);
    // The other channels were not regenerated.
    for (const [i, c] of others.entries())
      expect((await rt.wiki.status(c.id)).current_version).toBe(otherVersions[i]!.current_version);
  }, 120_000);

  it('a channel marked stale whose facts did not change is cleared without a new version', async () => {
    const [v] = await rt.wiki.versions(help, 1);
    await rt.wiki.markStale(help);
    await scheduler.tick();
    expect((await rt.wiki.status(help)).is_stale).toBe(false);
    expect((await rt.wiki.versions(help, 1))[0]!.version_number).toBe(v!.version_number);
  }, 60_000);

  it('the projector marks a channel for facts, and for an emptied message only when the wiki was built from it', async () => {
    const cited = (await rt.wiki.sources(help)).find((r) => r.kind === 'message')!.id;
    const other = (await rt.documents.listChannels()).find((c) => c.id !== help)!.id;
    const event = (channelId: string, sourceMessageId: string, facts: unknown[]) =>
      ({
        type: 'FactsExtracted',
        key: channelId,
        topic: 'atlas.facts',
        partition: 0,
        offset: 0,
        timestamp: 0,
        data: { channelId, sourceMessageId, messageId: crypto.randomUUID(), facts },
      }) as unknown as StoredEvent<'FactsExtracted'>; // a partial fact set: only what the projector reads
    const marked = async (events: StoredEvent<'FactsExtracted'>[]) => {
      const before = new Map(
        await Promise.all([help, other].map(async (c) => [c, await rt.wiki.staleSeq(c)] as const)),
      );
      await wikiProjector.handle(events, { wiki: rt.wiki });
      const out: string[] = [];
      for (const c of [help, other]) if ((await rt.wiki.staleSeq(c)) !== before.get(c)) out.push(c);
      return out;
    };
    // An emptied message no wiki was generated from (never had facts): nothing to do.
    expect(await marked([event(help, 'never-cited', []), event(other, 'never-cited', [])])).toEqual([]);
    // An emptied message the current wiki cites (edited or deleted): that channel only.
    expect(await marked([event(help, cited, [])])).toEqual([help]);
    // New facts: their channel.
    expect(await marked([event(other, 'x', [{ factId: crypto.randomUUID() }])])).toEqual([other]);
    await rt.wiki.clearStale(help, await rt.wiki.staleSeq(help));
    await rt.wiki.clearStale(other, await rt.wiki.staleSeq(other));
  });

  it('a lifecycle cue alone (a reply that reverts a decision, no facts) marks the wiki stale; the next tick shows it', async () => {
    await scheduler.tick();
    expect(await rt.wiki.staleChannels()).toEqual([]);
    // A decided decision of #help shown on the Decisions page (its entity's newest source fact opened the item).
    const decided = (await rt.lifecycle.list({ channelIds: [help], kind: 'decision', state: 'decided', limit: 100 }))
      .items;
    const entities = await rt.graph.listEntities({ channelId: help, type: 'Decision', limit: 1000 });
    const shown = decided.find((i) => entities.some((e) => e.source_fact_ids.at(-1) === i.itemId));
    expect(shown).toBeDefined();
    const entity = entities.find((e) => e.source_fact_ids.at(-1) === shown!.itemId)!;
    const decisionsPage = async () => (await rt.wiki.pages(help)).find((p) => p.title === 'Decisions')!.content;
    expect(await decisionsPage()).toContain(entity.name);
    const before = (await rt.wiki.versions(help, 1))[0]!.version_number;
    const factCount = async () => (await rt.documents.listChannels()).find((c) => c.id === help)!.fact_count;
    const factsBefore = await factCount();
    // A reply in its thread 30 s later: "let's revert that" (a revert cue; the extractor finds no fact in it).
    const src = plan.messages.find((m) => m.messageId === shown!.source.messageId)!;
    const other = plan.messages.find((m) => m.channelId === help && m.author.id !== src.author.id)!;
    const sec = (Number(src.platformMessageId) + 30).toFixed(6);
    const cue = {
      ...src,
      messageId: crypto.randomUUID(),
      platformMessageId: sec,
      threadTs: src.threadTs ?? src.platformMessageId,
      replyToId: null,
      text: "let's revert that",
      author: other.author,
      timestamp: new Date(Number(sec) * 1000).toISOString(),
      reactions: [],
      attachments: [],
      mentions: [],
      contentHash: crypto.randomUUID(),
    };
    await rt.eventLog.append('atlas.messages', [{ type: 'MessageIngested', key: help, data: cue }]);
    await project();
    expect(await factCount()).toBe(factsBefore); // the cue message brought no fact
    expect((await rt.lifecycle.get(shown!.itemId))!.state).toBe('reverted');
    expect(await rt.wiki.staleChannels()).toEqual([help]);
    await scheduler.tick();
    expect((await rt.wiki.versions(help, 1))[0]!.version_number).toBe(before + 1);
    const line = (await decisionsPage()).split('\n').find((l) => l.includes(entity.name));
    expect(line).toContain('(reverted, ');
  }, 120_000);

  it('the daily rebuild is due at the next 02:00 UTC; `off` disables it; a bad expression is refused', () => {
    expect(nextCronRun('0 2 * * *', new Date('2026-11-22T10:37:00Z'))?.toISOString()).toBe('2026-11-23T02:00:00.000Z');
    expect(nextCronRun('0 2 * * *', new Date('2026-11-22T01:59:00Z'))?.toISOString()).toBe('2026-11-22T02:00:00.000Z');
    expect(nextCronRun('off')).toBeNull();
    const next = scheduler.nextRebuild();
    expect(next?.getUTCHours()).toBe(2);
    expect(next!.getTime()).toBeGreaterThan(Date.now());
    expect(() => nextCronRun('0 2 * *')).toThrow(AtlasError);
    expect(() => nextCronRun('61 2 * * *')).toThrow(AtlasError);
  });
});
