import {
  type ChannelFreshness,
  type Freshness,
  type FreshnessPort,
  freshnessOf,
  TOPICS,
  withSummary,
} from '@atlas/core';
import { type EventLog, groupOf, partitionForKey } from '@atlas/eventlog';
import type { DocumentStore } from '@atlas/stores';
import { activeProjectors, type Runtime } from './runtime.js';

/** Message events: each is one message for the projectors (facts makes exactly one fact set of each). */
const MESSAGE_EVENTS = ['MessageIngested', 'MessageDeleted'] as const;
/** The projectors that read atlas.messages for answers: the message rows and the fact extraction. */
const MESSAGE_READERS = ['documents', 'facts'] as const;
/** The projectors that make a message's fact set answerable: memories, keyword index, vectors, graph entities. */
const FACT_READERS = ['documents', 'keyword', 'embeddings', 'entities'] as const;

/** How long a freshness snapshot serves, ms: a burst of answers reads the log once. */
export const FRESHNESS_CACHE_MS = 1_000;

/** A group's unread events on a topic, by channel: exact counts, or (Kafka) the lag of each partition. */
type Unread = { byKey: Map<string, number> } | { byPartition: Map<number, number>; partitions: number };

const unreadOf = (u: Unread, channelId: string): number =>
  'byKey' in u ? (u.byKey.get(channelId) ?? 0) : (u.byPartition.get(partitionForKey(channelId, u.partitions)) ?? 0);

const unread = async (
  log: Pick<EventLog, 'pendingByKey' | 'lag' | 'partitions'>,
  group: string,
  topic: string,
  types: readonly string[],
): Promise<Unread> => {
  const byKey = await log.pendingByKey(group, topic, types);
  if (byKey) return { byKey };
  const rows = await log.lag(group, [topic]);
  return {
    byPartition: new Map(rows.map((r) => [r.partition, r.lag])),
    partitions: (await log.partitions(topic)) ?? 1,
  };
};

/** One read of the log: every stage's unread events, and the channels any of them names (exact counts only). */
interface Snapshot {
  messages: Unread[];
  facts: Unread | null;
  factReaders: Unread[];
  keys: Set<string>;
}

/**
 * The rule (docs/ask.md "Freshness"), per channel: a message is still being read until every projector that makes it
 * answerable has read it or its fact set. Per-channel order on the log makes each projector's unread messages of a
 * channel its newest ones, so the unread sets nest and their union is the longest:
 * `pending = max(unread of each MESSAGE_READER but facts, unread(facts) + max over FACT_READERS of their unread fact sets)`.
 * Pure.
 */
export const pendingOf = (s: Snapshot, channelId: string): number => {
  const fromFacts = s.facts
    ? unreadOf(s.facts, channelId) + Math.max(0, ...s.factReaders.map((u) => unreadOf(u, channelId)))
    : 0;
  return Math.max(fromFacts, ...s.messages.map((u) => unreadOf(u, channelId)));
};

/**
 * The runtime's FreshnessPort: per channel, the newest live message of the document store (newestMessageTimes) and
 * the messages its projectors have not read through (pendingOf over EventLog.pendingByKey; on Kafka each partition's
 * lag, an upper bound shared by the channels of that partition). Snapshots of the log and the newest times serve
 * FRESHNESS_CACHE_MS (`cacheMs`).
 */
export const freshnessReader = (
  deps: {
    eventLog: Pick<EventLog, 'pendingByKey' | 'lag' | 'partitions'>;
    documents: Pick<DocumentStore, 'newestMessageTimes'>;
    projectors: () => readonly string[];
  },
  opts: { cacheMs?: number; now?: () => number } = {},
): FreshnessPort => {
  const ttl = opts.cacheMs ?? FRESHNESS_CACHE_MS;
  const now = opts.now ?? Date.now;
  let snap: { at: number; value: Promise<Snapshot> } | null = null;
  const newest = new Map<string, { at: number; value: string | null }>();

  const read = async (): Promise<Snapshot> => {
    const active = new Set(deps.projectors());
    const on = (topic: string, names: readonly string[], types: readonly string[]) =>
      Promise.all(
        names.filter((n) => active.has(n)).map((n) => unread(deps.eventLog, groupOf({ name: n }), topic, types)),
      );
    const [messages, facts, factReaders] = await Promise.all([
      on(
        TOPICS.messages,
        MESSAGE_READERS.filter((n) => n !== 'facts'),
        MESSAGE_EVENTS,
      ),
      on(TOPICS.messages, ['facts'], MESSAGE_EVENTS),
      active.has('facts') ? on(TOPICS.facts, FACT_READERS, ['FactsExtracted']) : Promise.resolve([]),
    ]);
    const keys = new Set<string>();
    for (const u of [...messages, ...facts, ...factReaders])
      if ('byKey' in u) for (const k of u.byKey.keys()) keys.add(k);
    return { messages, facts: facts[0] ?? null, factReaders, keys };
  };

  const snapshot = (): Promise<Snapshot> => {
    const t = now();
    if (!snap || t - snap.at >= ttl) {
      const value = read();
      snap = { at: t, value };
      value.catch(() => {
        if (snap?.value === value) snap = null; // a failed read is not cached
      });
    }
    return snap.value;
  };

  const newestOf = async (channelIds: readonly string[]): Promise<Map<string, string | null>> => {
    const t = now();
    const missing = channelIds.filter((c) => {
      const hit = newest.get(c);
      return !hit || t - hit.at >= ttl;
    });
    if (missing.length > 0) {
      const got = await deps.documents.newestMessageTimes(missing);
      if (newest.size > 10_000) newest.clear();
      for (const c of missing) newest.set(c, { at: t, value: got.get(c) ?? null });
    }
    return new Map(channelIds.map((c) => [c, newest.get(c)?.value ?? null]));
  };

  return {
    async of({ channels, behindIn }): Promise<Freshness> {
      const s = await snapshot();
      const ids = new Set(channels);
      // Behind channels of the scope join the drawn-on ones (exact counts name them; Kafka's counts cannot).
      if (behindIn) {
        const scope = behindIn === 'all' ? null : new Set(behindIn);
        for (const k of s.keys) if ((!scope || scope.has(k)) && pendingOf(s, k) > 0) ids.add(k);
      }
      const list = [...ids].sort();
      const times = await newestOf(list);
      const marks: ChannelFreshness[] = list.map((c) => ({
        channel_id: c,
        newest_message_at: times.get(c) ?? null,
        pending_messages: pendingOf(s, c),
      }));
      return withSummary(freshnessOf(marks), new Date(now()));
    },
  };
};

/** freshnessReader on a runtime: its log, its document store, its active projectors. */
export const runtimeFreshness = (rt: Runtime): FreshnessPort =>
  freshnessReader({ eventLog: rt.eventLog, documents: rt.documents, projectors: () => activeProjectors(rt) });
