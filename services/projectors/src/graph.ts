import {
  AtlasError,
  type EntitiesExtracted,
  type FactsExtracted,
  isRetriable,
  type NewEvent,
  runsOfType,
  type StoredEvent,
  TOPICS,
  writeIntentId,
} from '@atlas/core';
import type { EventLog, Projector } from '@atlas/eventlog';
import type { EntityExtractor } from '@atlas/pipeline';
import type {
  ChannelDecision,
  ChannelOwner,
  ChannelPerson,
  EntityBacklog,
  EntityBacklogItem,
  EntityStateStore,
  GraphStore,
} from '@atlas/stores';
import { factSetDigest } from '@atlas/stores';
import { emitOutcomes, errorText, intentOutcomeEvent, type StoreOutcome } from './reconciler.js';

export interface EntitiesDeps {
  extractor: EntityExtractor;
  eventLog: EventLog;
  state: EntityStateStore;
  backlog: EntityBacklog;
  /** Where the graph store's write outcomes go (atlas.intents, spec "Write intent"); null or absent: not reported. */
  intentLog?: EventLog | null;
}

export interface GraphDeps {
  graph: GraphStore;
  backlog: EntityBacklog;
  /** Where the graph store's write outcomes go (atlas.intents); null or absent: not reported. */
  intentLog?: EventLog | null;
}

/** A provider (LLM) or store failure that the spec answers with "skip and queue for backfill". */
const isOutage = (err: unknown, prefix: 'PROVIDER' | 'STORE'): boolean =>
  err instanceof AtlasError && isRetriable(err) && err.code.startsWith(prefix);

/**
 * Runs entity extraction over fact sets in order and returns the EntitiesExtracted events to append.
 * Each channel's people and decisions (the extractor's input state) are read once per call and kept
 * current as sets are processed; every state write of the call is one transaction at its end, so a process
 * killed mid-batch leaves the state as before and the redelivered batch is extracted from the same state.
 * A set with no facts yields an empty, retracting event only when its message had a contribution before.
 * A set whose facts were extracted before (same factSetDigest: a redelivered or repeated set) yields the
 * recorded output again without calling the extractor or changing the state, so at-least-once delivery of
 * atlas.facts gives the graph exactly what one delivery would. When the extractor's provider is down
 * (PROVIDER_*, retriable) the set is returned in `queued` instead, and the rest go on.
 */
export const extractEntities = async (
  sets: readonly FactsExtracted[],
  deps: Omit<EntitiesDeps, 'backlog' | 'eventLog'>,
): Promise<{ events: NewEvent<'EntitiesExtracted'>[]; queued: FactsExtracted[] }> => {
  const events: NewEvent<'EntitiesExtracted'>[] = [];
  const queued: FactsExtracted[] = [];
  const ids = sets.map((s) => s.messageId);
  const before = await deps.state.contributed(ids);
  const recorded = await deps.state.extractions(ids);
  /** The state writes of this call, in order, run in one transaction at the end. */
  const writes: ((state: EntityStateStore) => Promise<void>)[] = [];
  const channels = new Map<
    string,
    {
      people: ChannelPerson[];
      decisions: ChannelDecision[];
      owners: ChannelOwner[];
      newPeople: ChannelPerson[];
      /** Message id → whether it has a contribution after this call (the last set of a message wins). */
      contributes: Map<string, boolean>;
    }
  >();
  const channelState = async (channelId: string) => {
    let c = channels.get(channelId);
    if (!c) {
      c = {
        people: await deps.state.people(channelId),
        decisions: await deps.state.decisions(channelId),
        owners: await deps.state.owners(channelId),
        newPeople: [],
        contributes: new Map(),
      };
      channels.set(channelId, c);
    }
    return c;
  };
  const extractedAt = new Date().toISOString();
  for (const s of sets) {
    const c = await channelState(s.channelId);
    const messageTs = s.facts[0]?.messageTs ?? '';
    if (s.facts.length === 0) {
      if (recorded.delete(s.messageId)) writes.push((st) => st.recordExtraction(s.channelId, s.messageId, null));
      if (!before.has(s.messageId)) continue;
      events.push(entitySet(s, messageTs, deps.extractor.id, extractedAt, null));
      writes.push(
        (st) => st.replaceDecisions(s.channelId, s.messageId, []),
        (st) => st.replaceOwners(s.channelId, s.messageId, []),
      );
      c.decisions = c.decisions.filter((d) => d.messageId !== s.messageId);
      c.contributes.set(s.messageId, false);
      before.delete(s.messageId);
      continue;
    }
    const digest = factSetDigest(s, deps.extractor.id);
    const again = recorded.get(s.messageId);
    if (again?.digest === digest) {
      // Extracted before from this very fact set: the same output again, the state already holds it.
      if (again.output) events.push(entitySet(s, messageTs, deps.extractor.id, extractedAt, again.output));
      continue;
    }
    const ownFacts = new Set(s.facts.map((f) => f.factId));
    let out: Awaited<ReturnType<EntityExtractor['extract']>>;
    try {
      out = await deps.extractor.extract({
        facts: s,
        people: c.people,
        decisions: c.decisions.filter((d) => d.messageId !== s.messageId && !ownFacts.has(d.factId)),
        owners: c.owners.filter((o) => !ownFacts.has(o.factId)),
      });
    } catch (err) {
      if (!isOutage(err, 'PROVIDER')) throw err;
      queued.push(s);
      continue;
    }
    const emits = out.entities.length > 0 || before.has(s.messageId);
    const output = emits
      ? { entities: out.entities, relationships: out.relationships, supersessions: out.supersessions }
      : null;
    recorded.set(s.messageId, { digest, output });
    writes.push((st) => st.recordExtraction(s.channelId, s.messageId, { digest, output }));
    if (!output) continue;
    events.push(entitySet(s, messageTs, deps.extractor.id, extractedAt, output));
    if (out.people.length > 0) {
      c.people = mergePeople(c.people, out.people);
      c.newPeople.push(...out.people);
    }
    const replaced = new Set(
      out.supersessions.filter((x) => x.certain && x.oldEntityId).map((x) => x.oldEntityId as string),
    );
    c.decisions = [
      ...c.decisions.filter((d) => d.messageId !== s.messageId && !ownFacts.has(d.factId) && !replaced.has(d.entityId)),
      ...out.decisions.map((d) => ({ ...d, messageId: s.messageId })),
    ];
    const owners = out.owners ?? [];
    const stated = new Set(owners.map((o) => o.subjectKey));
    c.owners = [...c.owners.filter((o) => !stated.has(o.subjectKey) && !ownFacts.has(o.factId)), ...owners];
    writes.push(
      (st) => st.replaceDecisions(s.channelId, s.messageId, out.decisions),
      (st) => st.markSuperseded(s.channelId, [...replaced]),
      (st) => st.replaceOwners(s.channelId, s.messageId, owners),
    );
    c.contributes.set(s.messageId, out.entities.length > 0);
    // a later set of the same message in this batch (an edit) must see this one's contribution
    if (out.entities.length > 0) before.add(s.messageId);
    else before.delete(s.messageId);
  }
  for (const [channelId, c] of channels) {
    const all = [...c.contributes];
    writes.push(
      (st) => st.addPeople(channelId, c.newPeople),
      (st) =>
        st.markContributed(
          channelId,
          all.filter(([, has]) => has).map(([id]) => id),
          all.filter(([, has]) => !has).map(([id]) => id),
        ),
    );
  }
  if (writes.length > 0)
    await deps.state.transaction(async (st) => {
      for (const write of writes) await write(st);
    });
  return { events, queued };
};

const mergePeople = (known: readonly ChannelPerson[], add: readonly ChannelPerson[]): ChannelPerson[] => {
  const byName = new Map(known.map((p) => [p.name.toLowerCase(), { ...p, aliases: [...p.aliases] }]));
  for (const p of add) {
    const k = p.name.toLowerCase();
    const prev = byName.get(k);
    byName.set(k, prev ? { ...prev, aliases: [...new Set([...prev.aliases, ...p.aliases])] } : p);
  }
  return [...byName.values()];
};

const entitySet = (
  s: FactsExtracted,
  messageTs: string,
  extractor: string,
  extractedAt: string,
  out: {
    entities: EntitiesExtracted['entities'];
    relationships: EntitiesExtracted['relationships'];
    supersessions: EntitiesExtracted['supersessions'];
  } | null,
): NewEvent<'EntitiesExtracted'> => ({
  type: 'EntitiesExtracted',
  key: s.channelId,
  data: {
    messageId: s.messageId,
    platform: s.platform,
    channelId: s.channelId,
    sourceMessageId: s.sourceMessageId,
    messageTs: messageTs || s.extractedAt,
    extractor,
    extractedAt,
    entities: out?.entities ?? [],
    relationships: out?.relationships ?? [],
    supersessions: out?.supersessions ?? [],
    // The write intent of the fact set (entitiesOfSets clears it for sets that had no facts, hence no intent).
    intentId: writeIntentId(s),
  },
});

/**
 * FactsExtracted → EntitiesExtracted on `atlas.graph` (spec "Ingestion pipeline": entity extraction;
 * ARCHITECTURE.md graph projector, first stage). The extraction runs once and is recorded in the log, so
 * rebuilding the graph store (a replay of the `graph` projector) calls no model. When the LLM is down the
 * message's fact set is queued for entity backfill and the batch still commits: facts are stored anyway.
 * Channel commands (atlas.facts copies), in order: ChannelSettingsUpdated keeps graph_enabled in this projector's
 * state (off: a channel's fact sets are read as empty, so nothing new is extracted and a message that had a
 * contribution has it retracted); ChannelDataDeleted forgets the channel's state and queue and is forwarded to
 * `atlas.graph`.
 */
export const entitiesProjector: Projector<
  EntitiesDeps,
  'FactsExtracted' | 'ChannelSettingsUpdated' | 'ChannelDataDeleted'
> = {
  name: 'entities',
  topics: [TOPICS.facts],
  handles: ['FactsExtracted', 'ChannelSettingsUpdated', 'ChannelDataDeleted'],
  reset: ({ state }) => state.truncate(),
  async handle(events, deps) {
    const out: NewEvent[] = [];
    const outcomes: NewEvent[] = [];
    for (const run of runsOfType(events)) {
      switch (run.type) {
        case 'FactsExtracted': {
          const r = await entitiesOfSets(run.events, deps);
          out.push(...r.events);
          outcomes.push(...r.outcomes);
          break;
        }
        case 'ChannelSettingsUpdated':
          for (const { data: d } of run.events) await deps.state.setGraphEnabled(d.channelId, d.graphEnabled);
          break;
        case 'ChannelDataDeleted':
          for (const { data: d } of run.events) {
            await deps.state.deleteChannel(d.channelId);
            await deps.backlog.deleteChannel(d.channelId);
            out.push({ type: 'ChannelDataDeleted', key: d.channelId, data: d });
          }
          break;
      }
    }
    await deps.eventLog.append(TOPICS.graph, out);
    await emitOutcomes(deps.intentLog, outcomes); // after the sets the graph projector will report
  },
};

/**
 * Extraction of a run of fact sets (graph_enabled off: read as empty) with the backlog kept in step, and the graph
 * outcomes this stage already knows for the sets' write intents: `skipped` (no entities, nothing to write) and
 * failed (extraction queued, the LLM down). A set that yields an EntitiesExtracted is reported by the graph projector.
 */
const entitiesOfSets = async (
  run: StoredEvent<'FactsExtracted'>[],
  deps: EntitiesDeps,
): Promise<{ events: NewEvent<'EntitiesExtracted'>[]; outcomes: NewEvent[] }> => {
  const given = run.map((e) => e.data);
  const off = await deps.state.graphDisabled([...new Set(given.map((s) => s.channelId))]);
  const sets = given.map((s) => (off.has(s.channelId) && s.facts.length > 0 ? { ...s, facts: [] } : s));
  const { events: out, queued } = await extractEntities(sets, deps);
  // A newer fact set of a queued message replaces the queued one; a processed message leaves the queue.
  await deps.backlog.remove(
    'extract',
    sets.filter((s) => !queued.includes(s)).map((s) => s.messageId),
  );
  await deps.backlog.add(queued.map((s) => backlogItem('extract', s, 'entity extractor unavailable')));
  const intents = new Map(given.filter((s) => s.facts.length > 0).map((s) => [writeIntentId(s), s]));
  for (const e of out) if (!intents.has(e.data.intentId ?? '')) e.data.intentId = null;
  const written = new Set(out.map((e) => e.data.intentId));
  const failed = new Set(queued.map((s) => writeIntentId(s)));
  const outcomes = [...intents]
    .filter(([id]) => !written.has(id))
    .map(([intentId, s]) =>
      intentOutcomeEvent(
        { intentId, messageId: s.messageId, channelId: s.channelId },
        'graph',
        failed.has(intentId)
          ? { error: 'entity extraction queued: the entity extractor is unavailable' }
          : { outcome: 'skipped' },
      ),
    );
  return { events: out, outcomes };
};

const backlogItem = (
  stage: 'extract' | 'write',
  payload: FactsExtracted | EntitiesExtracted,
  reason: string,
): EntityBacklogItem =>
  ({ stage, messageId: payload.messageId, channelId: payload.channelId, payload, reason }) as EntityBacklogItem;

/**
 * EntitiesExtracted → the graph store (second stage). Idempotent: each message's contribution replaces
 * its earlier one. When the graph store is down (STORE_UNAVAILABLE) the sets are queued for entity
 * backfill and the batch commits (spec: entity extraction skipped, facts still stored). ChannelDataDeleted
 * (atlas.graph copy) deletes the channel's entities, relationships and contributions, and its queued writes; a graph
 * store that is down makes the batch wait and retry (a deletion is never skipped).
 */
export const graphProjector: Projector<GraphDeps, 'EntitiesExtracted' | 'ChannelDataDeleted'> = {
  name: 'graph',
  topics: [TOPICS.graph],
  handles: ['EntitiesExtracted', 'ChannelDataDeleted'],
  reset: ({ graph }) => graph.truncate(),
  async handle(events, deps) {
    for (const run of runsOfType(events)) {
      if (run.type === 'EntitiesExtracted') {
        await applyGraphs(
          run.events.map((e) => e.data),
          deps,
        );
        continue;
      }
      for (const { data } of run.events) {
        const { channelId } = data;
        await deps.graph.deleteChannel(channelId);
        await deps.backlog.deleteChannel(channelId);
      }
    }
  },
};

/** Writes message graphs to the graph store, or queues them for backfill while it is down. */
const applyGraphs = async (sets: EntitiesExtracted[], deps: GraphDeps): Promise<void> => {
  let outcome: StoreOutcome = { outcome: 'written' };
  try {
    await deps.graph.applyMessageGraphs(sets);
    await deps.backlog.remove(
      'write',
      sets.map((s) => s.messageId),
    );
  } catch (err) {
    if (!isOutage(err, 'STORE')) throw err;
    await deps.backlog.add(sets.map((s) => backlogItem('write', s, 'graph store unavailable')));
    outcome = { error: `queued for the graph store: ${errorText(err)}` };
  }
  await emitOutcomes(deps.intentLog, graphOutcomes(sets, outcome));
};

/** Pure: the graph outcome of each set that belongs to a write intent. */
const graphOutcomes = (sets: readonly EntitiesExtracted[], outcome: StoreOutcome, attempt = 0): NewEvent[] =>
  sets
    .filter((s) => s.intentId)
    .map((s) =>
      intentOutcomeEvent(
        { intentId: s.intentId!, messageId: s.messageId, channelId: s.channelId },
        'graph',
        outcome,
        attempt,
      ),
    );

/**
 * The reconciler's retry of a write intent's graph write (spec "Write intent": fan-out retried; graph upserts are
 * idempotent through merge semantics): a queued graph write of the message is applied to the graph store; a queued
 * extraction is run again (LLM), its EntitiesExtracted applied and appended to atlas.graph (so a replay of the graph
 * sees it). `superseded` when what is queued belongs to a newer fact set of the message; an error outcome when the
 * extractor or the store fails again; null when nothing is queued for the message.
 */
export const retryGraphWrite = async (
  deps: EntitiesDeps & GraphDeps,
  intent: { intent_id: string; message_id: string },
): Promise<StoreOutcome | null> => {
  const items = await deps.backlog.get([intent.message_id]);
  const write = items.find((i) => i.stage === 'write')?.payload as EntitiesExtracted | undefined;
  const extract = items.find((i) => i.stage === 'extract')?.payload as FactsExtracted | undefined;
  try {
    if (write) {
      if (write.intentId && write.intentId !== intent.intent_id) return { outcome: 'superseded' };
      await deps.graph.applyMessageGraphs([write]);
      await deps.backlog.remove('write', [write.messageId]);
      return { outcome: 'written' };
    }
    if (extract) {
      if (writeIntentId(extract) !== intent.intent_id) return { outcome: 'superseded' };
      const { events, queued } = await extractEntities([extract], deps);
      if (queued.length > 0) return { error: 'entity extraction queued: the entity extractor is still unavailable' };
      await deps.graph.applyMessageGraphs(events.map((e) => e.data));
      await deps.eventLog.append(TOPICS.graph, events);
      await deps.backlog.remove('extract', [extract.messageId]);
      return { outcome: events.length > 0 ? 'written' : 'skipped' };
    }
  } catch (err) {
    return { error: errorText(err) };
  }
  return null;
};

/**
 * Drains the entity backlog (POST /api/admin/backfill/entities) in batches of `batch`, oldest first:
 * fact sets are extracted again and their EntitiesExtracted appended to the log (the graph projector
 * writes them); queued graph writes are applied directly. Stops at the first batch that fails again and
 * throws its error (AtlasError PROVIDER_UNAVAILABLE or STORE_UNAVAILABLE, retriable).
 */
export const backfillEntities = async (
  deps: EntitiesDeps & GraphDeps,
  batch = 100,
): Promise<{ processed: number; remaining: number }> => {
  let processed = 0;
  for (;;) {
    const items = await deps.backlog.take(batch);
    if (items.length === 0) break;
    const extract = items.filter((i) => i.stage === 'extract').map((i) => i.payload as FactsExtracted);
    const write = items.filter((i) => i.stage === 'write').map((i) => i.payload as EntitiesExtracted);
    if (extract.length > 0) {
      const { events, queued } = await extractEntities(extract, deps);
      if (queued.length > 0)
        throw new AtlasError('PROVIDER_UNAVAILABLE', 'entity extractor still unavailable', { retriable: true });
      await deps.eventLog.append(TOPICS.graph, events);
      await deps.backlog.remove(
        'extract',
        extract.map((s) => s.messageId),
      );
      // Sets that yield an EntitiesExtracted are reported by the graph projector; the others had nothing to write.
      const written = new Set(events.map((e) => e.data.intentId));
      await emitOutcomes(
        deps.intentLog,
        extract
          .filter((s) => s.facts.length > 0 && !written.has(writeIntentId(s)))
          .map((s) => intentOutcomeEvent({ ...s, intentId: writeIntentId(s) }, 'graph', { outcome: 'skipped' })),
      );
    }
    if (write.length > 0) {
      await deps.graph.applyMessageGraphs(write);
      await deps.backlog.remove(
        'write',
        write.map((s) => s.messageId),
      );
      await emitOutcomes(deps.intentLog, graphOutcomes(write, { outcome: 'written' }));
    }
    processed += items.length;
  }
  return { processed, remaining: await deps.backlog.count() };
};
