import { providerUnavailable } from '@atlas/providers';
import { openProjectorHarness } from '@atlas/runtime/testing';
import { factOf, factSet, freshChannelId, messageEvent } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillEmbeddings, embeddingsProjector } from './embeddings.js';

type Harness = Awaited<ReturnType<typeof openProjectorHarness>>;
type Deps = NonNullable<Harness['embeddings']>;

/** The same dependencies with an embedder whose provider is down. */
const providerDown = (deps: Deps): Deps => ({
  ...deps,
  embedder: {
    id: deps.embedder.id,
    dim: deps.embedder.dim,
    embed: () => Promise.reject(providerUnavailable('test', new Error('down'))),
  },
});
const delivered = (data: unknown, offset = 0) =>
  ({ topic: 'atlas.facts', partition: 0, offset, key: 'k', type: 'FactsExtracted', data, timestamp: 0 }) as never;

describe('embeddings projector', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openProjectorHarness();
  });
  afterAll(async () => h?.close());

  it('given the provider is down, queues the facts for backfill; the backfill embeds them once it is back', async () => {
    const deps = h.embeddings!;
    const ch = freshChannelId();
    const m = messageEvent(ch, 1_700_000_000, 'x');
    const set = factSet(m, [
      factOf(m, 'The team moved the ledger to PostgreSQL'),
      factOf(m, 'Kafka consumers lag at night'),
    ]);
    const before = await deps.vectors.count();
    const down = providerDown(deps);
    await embeddingsProjector.handle([delivered(set)], down);
    await embeddingsProjector.handle([delivered(set, 1)], down); // delivered twice: queued once
    expect(await deps.backlog.count()).toBe(1);
    expect(await deps.vectors.count()).toBe(before);
    expect(await backfillEmbeddings(deps)).toEqual({ processed: 1, remaining: 0 });
    expect(await deps.vectors.count()).toBe(before + 2);
    const [q] = await deps.embedder.embed(['where is the ledger stored']);
    // One vector per message (`Author: <source message>`): both facts of the message are found, with the same score.
    const hits = await deps.vectors.search({ channelId: ch, vector: q!, model: deps.embedder.id, limit: 2 });
    expect(hits.map((x) => x.factId).sort()).toEqual(set.facts.map((f) => f.factId).sort());
    expect(hits[0]!.score).toBeCloseTo(hits[1]!.score, 5);
  });

  it('a newer fact set of a queued message replaces it, and embedding it clears the queue', async () => {
    const deps = h.embeddings!;
    const ch = freshChannelId();
    const m = messageEvent(ch, 1_700_000_000, 'x');
    const old = factSet(m, [factOf(m, 'old text of the fact')]);
    const down = providerDown(deps);
    await embeddingsProjector.handle([delivered(old)], down);
    expect(await deps.backlog.count()).toBe(1);
    await embeddingsProjector.handle([delivered(factSet(m, [factOf(m, 'new text of the fact')]), 1)], deps);
    expect(await deps.backlog.count()).toBe(0);
  });
});
