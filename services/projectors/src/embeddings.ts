import { type FactsExtracted, isRetriable, runsOfType, TOPICS, writeIntentId } from '@atlas/core';
import type { EventLog, Projector } from '@atlas/eventlog';
import { type Embedder, modelOfVector } from '@atlas/providers';
import type { EmbeddingBacklog, FactVector, VectorStore } from '@atlas/stores';
import { embeddingText, filterFields } from './keyword.js';
import { emitOutcomes, errorText, type StoreOutcome, setOutcomes } from './reconciler.js';

export interface EmbeddingsDeps {
  embedder: Embedder;
  vectors: VectorStore;
  backlog: EmbeddingBacklog;
  /** Where the vector store's write outcomes go (atlas.intents, spec "Write intent"); null or absent: not reported. */
  intentLog?: EventLog | null;
}

/** Embeds the facts of some fact sets and replaces each message's vectors. Throws what the embedder throws. */
export const embedSets = async (
  sets: readonly FactsExtracted[],
  { embedder, vectors }: Omit<EmbeddingsDeps, 'backlog'>,
): Promise<void> => {
  const facts = sets.flatMap((s) => s.facts.map((f) => ({ s, f })));
  // Facts of one message often share their embedding text: embed each distinct text once.
  const texts = facts.map(({ s, f }) => embeddingText(f, s));
  const distinct = [...new Set(texts)];
  const vectorsOf = new Map<string, number[]>();
  if (distinct.length > 0) {
    const vectors = await embedder.embed(distinct);
    for (const [i, text] of distinct.entries()) vectorsOf.set(text, vectors[i]!);
  }
  const embedded = texts.map((t) => vectorsOf.get(t)!);
  const byMessage = new Map<string, FactVector[]>(sets.map((s) => [s.messageId, []]));
  facts.forEach(({ s, f }, i) => {
    // The model that made the vector, not the one active now (a vector space switch may have come since the embed).
    const vector = embedded[i]!;
    byMessage.get(s.messageId)!.push({ ...filterFields(s, f), model: modelOfVector(embedder, vector), vector });
  });
  await vectors.replaceForMessages([...byMessage].map(([messageId, points]) => ({ messageId, points })));
};

/**
 * FactsExtracted → fact vectors (spec "Ingestion pipeline": embedding, not required). When the embedding
 * provider is down the sets go to the embedding backlog and the batch still commits: facts stay
 * keyword-searchable, and POST /api/admin/backfill/embeddings (or the reconciler) embeds them later. Idempotent on
 * factId. Each set with facts reports its write intent's vector outcome to atlas.intents: StoreWriteApplied once
 * written, StoreWriteFailed when queued.
 * ChannelDataDeleted (atlas.facts copy) removes the channel's vectors and its queued sets, in order.
 */
export const embeddingsProjector: Projector<EmbeddingsDeps, 'FactsExtracted' | 'ChannelDataDeleted'> = {
  name: 'embeddings',
  topics: [TOPICS.facts],
  handles: ['FactsExtracted', 'ChannelDataDeleted'],
  reset: async ({ vectors, backlog }) => {
    await vectors.truncate();
    await backlog.truncate();
  },
  async handle(events, deps) {
    for (const run of runsOfType(events)) {
      if (run.type === 'FactsExtracted') {
        await embedOrQueue(
          run.events.map((e) => e.data),
          deps,
        );
        continue;
      }
      for (const { data } of run.events) {
        const { channelId } = data;
        await deps.vectors.deleteChannel(channelId);
        await deps.backlog.deleteChannel(channelId);
      }
    }
  },
};

/** Embeds the sets, or queues them for backfill when the embedding provider is down (PROVIDER_*, retriable). */
const embedOrQueue = async (sets: FactsExtracted[], deps: EmbeddingsDeps): Promise<void> => {
  let outcome: StoreOutcome = { outcome: 'written' };
  try {
    await embedSets(sets, deps);
    await deps.backlog.remove(sets.map((s) => s.messageId)); // an older queued set must not overwrite these later
  } catch (err) {
    if (!isRetriable(err) || !String((err as { code?: string }).code).startsWith('PROVIDER')) throw err;
    await deps.backlog.add(sets);
    outcome = { error: `queued for embedding: ${errorText(err)}` };
  }
  await emitOutcomes(deps.intentLog, setOutcomes(sets, 'vector', outcome));
};

/**
 * The reconciler's retry of a write intent's vector write (spec "Write intent": fan-out retried): embeds the
 * message's queued fact set and replaces its vectors (embedSets, idempotent on factId), then takes it off the
 * backlog. `superseded` when a newer set of the message is queued instead; an error outcome when the provider
 * fails again; null when nothing is queued for the message.
 */
export const retryVectorWrite = async (
  deps: EmbeddingsDeps,
  intent: { intent_id: string; message_id: string },
): Promise<StoreOutcome | null> => {
  const set = (await deps.backlog.get([intent.message_id])).get(intent.message_id);
  if (!set) return null;
  if (writeIntentId(set) !== intent.intent_id) return { outcome: 'superseded' };
  try {
    await embedSets([set], deps);
  } catch (err) {
    return { error: errorText(err) };
  }
  await deps.backlog.remove([set.messageId]);
  return { outcome: 'written' };
};

/** Drains the embedding backlog in batches (spec Limits: embedding backfill batch 100) until empty or the provider fails. */
export const backfillEmbeddings = async (
  deps: EmbeddingsDeps,
  batch = 100,
): Promise<{ processed: number; remaining: number }> => {
  let processed = 0;
  for (;;) {
    const sets = await deps.backlog.take(batch);
    if (sets.length === 0) break;
    await embedSets(sets, deps);
    await deps.backlog.remove(sets.map((s) => s.messageId));
    await emitOutcomes(deps.intentLog, setOutcomes(sets, 'vector', { outcome: 'written' }));
    processed += sets.length;
  }
  return { processed, remaining: await deps.backlog.count() };
};

/**
 * The rebuild of a vector space (docs/models.md "Changing the model"): the embeddings projector's work into the space
 * being built, under its own consumer group (`atlas.projector.embeddings-rebuild`) replayed from the beginning of
 * atlas.facts while the embeddings projector keeps the active space current. No backlog and no write intents: a
 * provider failure fails the batch, which the runner retries (the rebuild waits for the provider instead of leaving
 * holes in the new space). `vectors` is the building space's store, `embedder` the configured model's.
 * Not in PROJECTORS: rebuildVectorSpace starts it.
 */
export const embeddingsRebuildProjector: Projector<
  Pick<EmbeddingsDeps, 'embedder' | 'vectors'>,
  'FactsExtracted' | 'ChannelDataDeleted'
> = {
  name: 'embeddings-rebuild',
  topics: [TOPICS.facts],
  handles: ['FactsExtracted', 'ChannelDataDeleted'],
  reset: ({ vectors }) => vectors.truncate(),
  async handle(events, deps) {
    for (const run of runsOfType(events)) {
      if (run.type === 'FactsExtracted')
        await embedSets(
          run.events.map((e) => e.data),
          deps,
        );
      else for (const { data } of run.events) await deps.vectors.deleteChannel(data.channelId);
    }
  },
};
