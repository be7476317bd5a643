import DataLoader from 'dataloader';
import { bindAll } from './cache.js';
import type {
  MemoryRecord,
  WikiDocumentSource,
  WikiGenerateDeps,
  WikiGraphSource,
  WikiSink,
} from './generate-types.js';

/** Keys per batched call at most (ids in one `in (...)` list, queries in one statement). */
const MAX_BATCH = 5000;

type Digests = Awaited<ReturnType<WikiSink['sourceDigests']>>;
type Current = Awaited<ReturnType<WikiSink['currentVersion']>>;
type SaveArgs = Parameters<WikiSink['savePages']>;
type Saved = Awaited<ReturnType<WikiSink['savePages']>>;
type EntityQuery = Parameters<WikiGraphSource['listEntities']>[0];
type Entity = Awaited<ReturnType<WikiGraphSource['listEntities']>>[number];
type Message = Awaited<ReturnType<WikiDocumentSource['getMessages']>>[number];

/** A DataLoader without a cache (every load reads the store): it only coalesces the calls of one tick. */
const loader = <K, V>(batch: (keys: readonly K[]) => Promise<(V | Error)[]>, maxBatchSize = MAX_BATCH) =>
  new DataLoader<K, V, K>(batch, { cache: false, maxBatchSize });

/** One call per key, in order; a rejected call is that key's error (the others still answer). */
const each = async <K, V>(keys: readonly K[], call: (k: K) => Promise<V>): Promise<(V | Error)[]> =>
  (await Promise.allSettled(keys.map(call))).map((r) =>
    r.status === 'fulfilled' ? r.value : r.reason instanceof Error ? r.reason : new Error(String(r.reason)),
  );

/**
 * The generator's dependencies with their store calls coalesced (DataLoader, no cache): the calls that concurrent
 * generateChannelWiki runs make in the same tick become one call for all of them, through the stores' batch
 * methods where they have them (WikiSink.beginGenerations, sourceDigestsMany, currentVersions, savePagesMany;
 * WikiGraphSource.listEntitiesMany; WikiDocumentSource.getMessagesIn; getMemories and vectorsOf over all the ids),
 * and otherwise one call per key as before. So WikiGenerator.generateStale, which runs the stale channels together,
 * reads and writes every channel's wiki in about twenty statements instead of twenty per channel (each statement
 * costs about 1 ms through the driver whatever it reads; most stale channels change by a few facts). A run alone
 * gets batches of one: the same calls as without this layer.
 *
 * Failures: a batch call that throws fails every run in it (as each call would have: a store down); savePagesMany
 * answers a per-item CONFLICT (a channel deleted meanwhile) to that run only. The sink's other methods pass through.
 */
export function batchedDeps<D extends WikiGenerateDeps>(deps: D): D {
  const { wiki, graph, documents, vectors } = deps;

  const begin = loader<string, number>(async (ids) =>
    wiki.beginGenerations
      ? ((m) => ids.map((id) => m.get(id) ?? 0))(await wiki.beginGenerations(ids))
      : each(ids, (id) => wiki.beginGeneration!(id)),
  );
  const digests = loader<string, Digests>(async (ids) =>
    wiki.sourceDigestsMany
      ? ((m) => ids.map((id) => m.get(id) ?? new Error(`no source digests for channel ${id}`)))(
          await wiki.sourceDigestsMany(ids),
        )
      : each(ids, (id) => wiki.sourceDigests(id)),
  );
  const current = loader<string, Current>(async (ids) =>
    wiki.currentVersions
      ? ((m) => ids.map((id) => m.get(id) ?? null))(await wiki.currentVersions(ids))
      : each(ids, (id) => wiki.currentVersion(id)),
  );
  // Saves are large: a few dozen channels per transaction.
  const save = loader<SaveArgs, Saved>(
    async (items) =>
      wiki.savePagesMany
        ? wiki.savePagesMany(items.map(([channelId, w, meta]) => ({ channelId, wiki: w, meta })))
        : each(items, (args) => wiki.savePages(...args)),
    64,
  );
  const entities = loader<EntityQuery, Entity[]>(async (queries) =>
    graph.listEntitiesMany ? graph.listEntitiesMany(queries) : each(queries, (q) => graph.listEntities(q)),
  );
  const memories = loader<string, MemoryRecord | null>(async (ids) => {
    const m = await documents.getMemories(ids);
    return ids.map((id) => m.get(id) ?? null);
  });
  const messages = loader<{ channelId: string; id: string }, Message | null>(async (keys) => {
    const key = (channelId: string, id: string) => `${channelId}\u0000${id}`;
    const found = new Map<string, Message>();
    if (documents.getMessagesIn)
      for (const x of await documents.getMessagesIn(keys)) found.set(key(x.channelId, x.message.id), x.message);
    else {
      const byChannel = new Map<string, string[]>();
      for (const k of keys) byChannel.set(k.channelId, [...(byChannel.get(k.channelId) ?? []), k.id]);
      for (const [channelId, ids] of byChannel)
        for (const m of await documents.getMessages(channelId, ids)) found.set(key(channelId, m.id), m);
    }
    return keys.map((k) => found.get(key(k.channelId, k.id)) ?? null);
  });
  const vectorOf = loader<string, number[] | null>(async (ids) => {
    const m = await vectors.vectorsOf(ids);
    return ids.map((id) => m.get(id) ?? null);
  });

  const sink: WikiSink = {
    ...bindAll(wiki),
    sourceDigests: (channelId) => digests.load(channelId),
    currentVersion: (channelId) => current.load(channelId),
    savePages: (...args) => save.load(args),
  };
  if (wiki.beginGeneration) sink.beginGeneration = (channelId) => begin.load(channelId);
  return {
    ...deps,
    wiki: sink,
    graph: { ...bindAll(graph), listEntities: (q: EntityQuery) => entities.load(q) },
    documents: {
      ...bindAll(documents),
      async getMemories(ids: readonly string[]) {
        const rows = await Promise.all(ids.map((id) => memories.load(id)));
        return new Map(rows.flatMap((r) => (r ? [[r.id, r] as const] : [])));
      },
      async getMessages(channelId: string, ids: readonly string[]) {
        const rows = await Promise.all(ids.map((id) => messages.load({ channelId, id })));
        return rows.filter((r): r is Message => r !== null);
      },
    },
    vectors: {
      ...bindAll(vectors),
      async vectorsOf(ids: readonly string[]) {
        const rows = await Promise.all(ids.map((id) => vectorOf.load(id)));
        const out = new Map<string, number[]>();
        ids.forEach((id, i) => {
          const v = rows[i];
          if (v) out.set(id, v);
        });
        return out;
      },
    },
  };
}
