import { AtlasError, type NewEvent, TOPICS } from '@atlas/core';
import { type EntityExtractionInput, type EntityExtractor, OfflineEntityExtractor } from '@atlas/pipeline';
import { entityDeps, startProjectors, waitForProjectors } from '@atlas/runtime';
import { openProjectorHarness, twoMessageConversation } from '@atlas/runtime/testing';
import { Neo4jGraphStore } from '@atlas/stores';
import { channelEvent, freshChannelId, messageEvent } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillEntities } from './graph.js';

type Harness = Awaited<ReturnType<typeof openProjectorHarness>>;

/** The offline extractor behind a switch: while `down`, it fails as an unreachable LLM endpoint does. */
class SwitchableExtractor implements EntityExtractor {
  readonly id = 'switchable@1';
  down = false;
  calls = 0;
  private readonly inner = new OfflineEntityExtractor();
  async extract(input: EntityExtractionInput) {
    this.calls++;
    if (this.down) throw new AtlasError('PROVIDER_UNAVAILABLE', 'LLM endpoint unreachable', { retriable: true });
    return this.inner.extract(input);
  }
}

const run = async (h: Harness, events: NewEvent[]) => {
  await h.eventLog.append(TOPICS.messages, events);
  const subs = await startProjectors(h);
  try {
    await waitForProjectors(h);
  } finally {
    await Promise.all(subs.map((s) => s.stop()));
  }
};

describe('entities and graph projectors', () => {
  let h: Harness;
  let extractor: SwitchableExtractor;
  beforeAll(async () => {
    h = await openProjectorHarness();
    extractor = new SwitchableExtractor();
    h.entityExtractor = extractor;
  });
  afterAll(async () => h?.close());

  it('facts become entities and relationships; memory detail names them (graph_entity_ids)', async () => {
    const ch = freshChannelId();
    await run(h, twoMessageConversation(ch));
    const entities = await h.graph.listEntities({ channelId: ch, limit: 50 });
    const by = (type: string) => entities.filter((e) => e.type === type).map((e) => e.name);
    expect(by('Person')).toEqual(expect.arrayContaining(['alice', 'bob']));
    expect(by('Technology')).toEqual(expect.arrayContaining(['Kafka', 'PostgreSQL']));
    expect(by('Decision').length).toBe(1);
    const rels = await h.graph.listRelationships({ channelId: ch, limit: 50 });
    expect(rels.some((r) => r.type === 'DECIDED_BY' && r.source === 'alice')).toBe(true);
    const kafka = entities.find((e) => e.name === 'Kafka')!;
    const fact = await h.documents.getMemory(kafka.source_fact_ids[0]!);
    expect(fact?.graph_entity_ids).toContain(kafka.id);
    expect((await h.documents.getChannel(ch))?.entity_count).toBe(
      new Set((await h.graph.listEntities({ channelId: ch, limit: 200 })).map((e) => e.id)).size,
    );
  });

  it('a later decision on the same topic supersedes the earlier fact, which stays (history kept)', async () => {
    const ch = freshChannelId();
    await run(h, [
      ...twoMessageConversation(ch),
      {
        type: 'MessageIngested',
        key: ch,
        data: messageEvent(ch, 1_700_086_400, 'We decided to switch from Kafka to Redpanda instead for the event log.'),
      },
    ]);
    const decisions = (await h.graph.listEntities({ channelId: ch, type: 'Decision', limit: 10 })).sort((a, b) =>
      a.message_ts.localeCompare(b.message_ts),
    );
    expect(decisions.length).toBe(2);
    const [old, later] = decisions;
    expect(old!.properties).toMatchObject({ status: 'superseded', superseded_by: later!.name });
    const oldFact = await h.documents.getMemory(old!.source_fact_ids[0]!);
    expect(oldFact).toMatchObject({ superseded_by: later!.source_fact_ids[0], invalid_at: later!.message_ts });
  });

  it('a changed owner supersedes the earlier ownership fact; the new owner WORKS_ON the project', async () => {
    const ch = freshChannelId();
    const bob = { author: { id: 'U2', name: 'bob', isBot: false } };
    await run(h, [
      { type: 'ChannelDiscovered', key: ch, data: channelEvent(ch, 'platform') },
      {
        type: 'MessageIngested',
        key: ch,
        data: messageEvent(ch, 1_700_000_000, 'I own the billing service, ping me about invoices.'),
      },
      { type: 'MessageIngested', key: ch, data: messageEvent(ch, 1_700_000_300, 'Thanks alice, noted.', bob) },
      {
        type: 'MessageIngested',
        key: ch,
        data: messageEvent(
          ch,
          1_700_090_000,
          'Heads up: from now on I own the billing service, alice moved to search.',
          bob,
        ),
      },
    ]);
    const project = (await h.graph.findEntities({ names: ['billing service'], channelId: ch }))[0]!;
    expect(project.type).toBe('Project');
    const owners = await h.graph.listRelationships({
      channelId: ch,
      type: 'WORKS_ON',
      target: 'billing service',
      limit: 10,
    });
    expect(owners.map((r) => r.source).sort()).toEqual(['alice', 'bob']);
    const facts = await h.documents.getMemories(project.source_fact_ids);
    const [first, second] = [...facts.values()].sort((a, b) => a.message_ts.localeCompare(b.message_ts));
    expect(first).toMatchObject({ superseded_by: second!.id, invalid_at: second!.message_ts });
    expect(second!.superseded_by).toBeNull();
  });

  it('a message deleted in the same batch as it arrived leaves no entity behind (retraction)', async () => {
    const ch = freshChannelId();
    const first = twoMessageConversation(ch)[1].data;
    await run(h, [
      ...twoMessageConversation(ch),
      {
        type: 'MessageDeleted',
        key: ch,
        data: {
          messageId: first.messageId,
          platform: 'platform_a',
          channelId: ch,
          platformMessageId: first.platformMessageId,
          deletedAt: '2023-11-15T00:00:00.000Z',
        },
      },
    ]);
    const names = (await h.graph.listEntities({ channelId: ch, limit: 50 })).map((e) => e.name);
    expect(names).not.toContain('Kafka'); // only the deleted message named it
    expect(names).toContain('PostgreSQL'); // bob's message stays
  });

  it('LLM down: extraction is skipped and queued, facts are still stored; the backfill drains it', async () => {
    const ch = freshChannelId();
    extractor.down = true;
    await run(h, twoMessageConversation(ch));
    expect((await h.documents.getChannel(ch))?.fact_count).toBeGreaterThan(0);
    expect(await h.graph.listEntities({ channelId: ch, limit: 50 })).toEqual([]);
    expect(await h.entityBacklog.count()).toBe(2);
    await expect(backfillEntities(entityDeps(h))).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
    expect(await h.entityBacklog.count()).toBe(2);
    extractor.down = false;
    expect(await backfillEntities(entityDeps(h))).toEqual({ processed: 2, remaining: 0 });
    await run(h, []); // the graph projector writes what the backfill appended
    expect((await h.graph.listEntities({ channelId: ch, limit: 50 })).map((e) => e.name)).toContain('Kafka');
  });

  it('graph store down: the write is queued and the batch commits; the backfill applies it', async () => {
    const ch = freshChannelId();
    const real = h.graph;
    // A real Neo4j client pointed at a port where nothing listens: the store is down, as in production.
    h.graph = new Neo4jGraphStore({ url: 'bolt://127.0.0.1:1' });
    try {
      await run(h, twoMessageConversation(ch));
    } finally {
      await h.graph.close();
      h.graph = real;
    }
    expect(await h.graph.listEntities({ channelId: ch, limit: 50 })).toEqual([]);
    expect(await h.entityBacklog.count()).toBe(2);
    expect(await backfillEntities(entityDeps(h))).toEqual({ processed: 2, remaining: 0 });
    expect((await h.graph.listEntities({ channelId: ch, limit: 50 })).map((e) => e.name)).toContain('Kafka');
  });
});
