import { type MessageDeleted, type NewEvent, TOPICS } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { type Embedder, providerUnavailable } from '@atlas/providers';
import { activeProjectors, reconcileDeps, startProjector, waitForProjectors } from '@atlas/runtime';
import { openProjectorHarness, twoMessageConversation } from '@atlas/runtime/testing';
import { Neo4jGraphStore } from '@atlas/stores';
import { freshChannelId } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillEmbeddings } from './embeddings.js';
import { runReconcilePass } from './reconciler.js';

type Harness = Awaited<ReturnType<typeof openProjectorHarness>>;

/** The local embedder behind a switch: while `down`, it fails as an unreachable provider does. */
const switchable = (inner: Embedder) => {
  const e = {
    id: inner.id,
    dim: inner.dim,
    down: false,
    embed: (texts: string[]) =>
      e.down
        ? Promise.reject(providerUnavailable('test', new Error('embedding endpoint unreachable')))
        : inner.embed(texts),
  };
  return e;
};

const MIN = 60_000;

describe('write intents and the reconciler (spec "Write intent (two-phase persist)")', () => {
  let h: Harness;
  let embedder: ReturnType<typeof switchable>;
  let subs: Subscription[] = [];
  /** Appends, then waits until every running projector (the reconciler too) has caught up. */
  const ingest = async (events: NewEvent[], names = activeProjectors(h)) => {
    await h.eventLog.append(TOPICS.messages, events);
    await waitForProjectors(h, names, 20);
  };
  const intentsOf = async (ch: string) => (await h.intents.list({ channelId: ch, limit: 100 })).intents;
  const pass = async (now: Date) => {
    const r = await runReconcilePass(reconcileDeps(h), { now });
    await waitForProjectors(h, activeProjectors(h), 20); // the reconciler folds the pass's outcomes
    return r;
  };

  beforeAll(async () => {
    h = await openProjectorHarness();
    embedder = switchable(h.embeddings!.embedder);
    h.embeddings = { ...h.embeddings!, embedder };
    subs = await Promise.all(activeProjectors(h).map((n) => startProjector(h, n)));
  });
  afterAll(async () => {
    await Promise.all(subs.map((s) => s.stop()));
    await h?.close();
  });

  it('every fact set with facts gets an intent; with every store up each one ends done', async () => {
    const ch = freshChannelId();
    await ingest(twoMessageConversation(ch));
    const intents = await intentsOf(ch);
    const facts = (await h.documents.listMemories({ channelId: ch, page: 1, limit: 100 })).total;
    expect(intents.length).toBe(2);
    expect(intents.reduce((n, i) => n + i.fact_count, 0)).toBe(facts);
    for (const i of intents) {
      expect(i).toMatchObject({ state: 'done', retry_count: 0, vector: { status: 'done' } });
      expect(['done', 'skipped']).toContain(i.graph.status);
    }
  });

  it('embedding provider down: the vector write fails and waits; a pass after 5 minutes retries it once and it is done', async () => {
    const ch = freshChannelId();
    embedder.down = true;
    await ingest(twoMessageConversation(ch));
    embedder.down = false;
    const intents = await intentsOf(ch);
    expect(intents.map((i) => [i.state, i.vector.status, i.vector.error?.slice(0, 20)])).toEqual([
      ['pending', 'failed', 'queued for embedding'],
      ['pending', 'failed', 'queued for embedding'],
    ]);
    const created = Date.parse(intents[0]!.created_at!);
    const early = await pass(new Date(created + 2 * MIN));
    expect(early.intents.map((i) => i.intent_id)).not.toContain(intents[0]!.intent_id); // not older than 5 min yet
    const r = await pass(new Date(created + 6 * MIN));
    const mine = r.intents.filter((i) => i.channel_id === ch);
    expect(mine.map((i) => [i.attempt, i.stores])).toEqual([
      [1, { vector: 'written' }],
      [1, { vector: 'written' }],
    ]);
    for (const i of await intentsOf(ch)) {
      expect(i).toMatchObject({ state: 'done', retry_count: 1, vector: { status: 'done', error: null } });
    }
    // The vectors are in the store: the facts of the channel are found by vector search.
    const [q] = await embedder.embed(['Kafka event log']);
    const hits = await h.embeddings!.vectors.search({ channelId: ch, vector: q!, model: embedder.id, limit: 10 });
    expect(hits.length).toBe((await intentsOf(ch)).reduce((n, i) => n + i.fact_count, 0));
    expect(await h.embeddings!.backlog.count()).toBe(0);
  });

  it('a store that keeps failing: the 5th failed attempt is permanent, later passes leave it; a pending intent is abandoned after 24 h', async () => {
    const ch = freshChannelId();
    embedder.down = true;
    try {
      await ingest(twoMessageConversation(ch));
      const created = Date.parse((await intentsOf(ch))[0]!.created_at!);
      for (let n = 1; n <= 5; n++) {
        const r = await pass(new Date(created + (6 + 15 * (n - 1)) * MIN));
        const mine = r.intents.filter((i) => i.channel_id === ch);
        expect(mine.map((i) => i.attempt)).toEqual([n, n]);
        expect(mine.map((i) => i.stores.vector)).toEqual(['failed', 'failed']);
        if (n === 5) expect(r.writes.permanent).toBeGreaterThanOrEqual(2);
      }
      for (const i of await intentsOf(ch)) {
        expect(i).toMatchObject({ state: 'failed', retry_count: 5, vector: { status: 'failed' } });
        expect(i.vector.error).toContain('embedding endpoint unreachable');
      }
      const sixth = await pass(new Date(created + 95 * MIN));
      expect(sixth.intents.filter((i) => i.channel_id === ch)).toEqual([]);
      expect((await h.intents.list({ channelId: ch, state: 'failed', limit: 10 })).total).toBe(2);

      // Another channel's intents while the provider is down and no pass runs: abandoned 24 hours later.
      const other = freshChannelId();
      await ingest(twoMessageConversation(other));
      const later = new Date(Date.parse((await intentsOf(other))[0]!.created_at!) + 24 * 60 * MIN + MIN);
      expect((await h.intents.list({ channelId: other, state: 'abandoned', limit: 10 }, later)).total).toBe(2);
      const r = await pass(later);
      expect(r.intents.filter((i) => i.channel_id === other)).toEqual([]); // abandoned intents are not retried
      expect(r.abandoned).toBeGreaterThanOrEqual(2);
      expect((await h.intents.countByState(later)).abandoned).toBe(r.abandoned);
    } finally {
      embedder.down = false;
    }
  });

  it('a fact set replaced before the retry (its message deleted) is superseded, not written', async () => {
    const ch = freshChannelId();
    embedder.down = true;
    const events = twoMessageConversation(ch);
    try {
      await ingest(events);
      const m = events[1].data;
      const deleted: MessageDeleted = {
        messageId: m.messageId,
        platform: m.platform,
        channelId: ch,
        platformMessageId: m.platformMessageId,
        deletedAt: new Date().toISOString(),
      };
      await ingest([{ type: 'MessageDeleted', key: ch, data: deleted }]);
    } finally {
      embedder.down = false;
    }
    const intents = await intentsOf(ch);
    const r = await pass(new Date(Date.parse(intents[0]!.created_at!) + 6 * MIN));
    const byMessage = new Map(r.intents.filter((i) => i.channel_id === ch).map((i) => [i.message_id, i.stores.vector]));
    expect(byMessage.get(events[1].data.messageId)).toBe('superseded');
    expect(byMessage.get(events[2].data.messageId)).toBe('written');
    expect((await intentsOf(ch)).map((i) => i.state)).toEqual(['done', 'done']);
  });

  it('a store whose projector has not reached the fact set is deferred: no attempt is counted', async () => {
    const ch = freshChannelId();
    const embeddings = subs[activeProjectors(h).indexOf('embeddings')]!;
    await embeddings.stop();
    const others = activeProjectors(h).filter((n) => n !== 'embeddings');
    try {
      await ingest(twoMessageConversation(ch), others);
      const intents = await intentsOf(ch);
      expect(intents.map((i) => i.vector.status)).toEqual(['pending', 'pending']);
      const r = await runReconcilePass(reconcileDeps(h), {
        now: new Date(Date.parse(intents[0]!.created_at!) + 6 * MIN),
      });
      expect(r.intents.filter((i) => i.channel_id === ch).map((i) => [i.attempt, i.stores.vector])).toEqual([
        [0, 'deferred'],
        [0, 'deferred'],
      ]);
      expect(r.deferred).toBeGreaterThanOrEqual(2);
    } finally {
      subs[activeProjectors(h).indexOf('embeddings')] = await startProjector(h, 'embeddings');
    }
    await waitForProjectors(h, activeProjectors(h), 20);
    expect((await intentsOf(ch)).map((i) => [i.state, i.retry_count])).toEqual([
      ['done', 0],
      ['done', 0],
    ]);
  });

  it('graph store down: the graph write fails and is queued; a pass after 5 minutes applies it (merge upserts)', async () => {
    const ch = freshChannelId();
    const at = activeProjectors(h).indexOf('graph');
    const real = h.graph;
    await subs[at]!.stop();
    // A real Neo4j client pointed at a port where nothing listens: the store is down, as in production.
    h.graph = new Neo4jGraphStore({ url: 'bolt://127.0.0.1:1' });
    try {
      subs[at] = await startProjector(h, 'graph');
      await ingest(twoMessageConversation(ch));
      await subs[at]!.stop();
    } finally {
      await h.graph.close();
      h.graph = real;
      subs[at] = await startProjector(h, 'graph');
    }
    const intents = await intentsOf(ch);
    expect(intents.map((i) => [i.state, i.vector.status, i.graph.status])).toEqual([
      ['pending', 'done', 'failed'],
      ['pending', 'done', 'failed'],
    ]);
    expect(await h.graph.listEntities({ channelId: ch, limit: 50 })).toEqual([]);
    const r = await pass(new Date(Date.parse(intents[0]!.created_at!) + 6 * MIN));
    expect(r.intents.filter((i) => i.channel_id === ch).map((i) => [i.attempt, i.stores])).toEqual([
      [1, { graph: 'written' }],
      [1, { graph: 'written' }],
    ]);
    expect((await intentsOf(ch)).map((i) => [i.state, i.graph.status, i.retry_count])).toEqual([
      ['done', 'done', 1],
      ['done', 'done', 1],
    ]);
    expect((await h.graph.listEntities({ channelId: ch, limit: 50 })).map((e) => e.name)).toContain('Kafka');
  });

  it('nothing queued but the vector store holds every fact of the message (written without a report): counted as written', async () => {
    const ch = freshChannelId();
    embedder.down = true;
    await ingest(twoMessageConversation(ch));
    embedder.down = false;
    // A backfill that does not report (as before write intents existed): the vectors are written, the intents not told.
    await backfillEmbeddings({ ...h.embeddings!, intentLog: null });
    const intents = await intentsOf(ch);
    expect(intents.map((i) => i.vector.status)).toEqual(['failed', 'failed']);
    const r = await pass(new Date(Date.parse(intents[0]!.created_at!) + 6 * MIN));
    expect(r.intents.filter((i) => i.channel_id === ch).map((i) => i.stores.vector)).toEqual(['written', 'written']);
    expect((await intentsOf(ch)).map((i) => i.state)).toEqual(['done', 'done']);
  });
});
