import {
  type AnyNewEvent,
  type AnyStoredEvent,
  type FactsExtracted,
  type MessageIngested,
  type NewEvent,
  PLATFORM_A_SYSTEM_SUBTYPES,
  TOPICS,
  writeIntentId,
} from '@atlas/core';
import type { EventLog, Projector } from '@atlas/eventlog';
import { answeredQuestion, type FactExtractor, preprocess, selectFacts, type ThreadContext } from '@atlas/pipeline';
import type { ChannelTail, ThreadRoot, ThreadRootStore } from '@atlas/stores';

/** A top-level message is the context of the channel's next one when it came at most this long before (ms). */
export const CONTEXT_WINDOW_MS = 60 * 60 * 1000;
/** Lengths kept of a fact set's sourceText and contextText (characters). */
const SOURCE_CHARS = 1000;
const CONTEXT_CHARS = 400;

export interface FactsDeps {
  extractor: FactExtractor;
  eventLog: EventLog;
  threads: ThreadRootStore;
  /** Facts under this quality score are not stored (spec: QUALITY_THRESHOLD, default 0.5). */
  qualityThreshold: number;
  /**
   * Write intents (spec "Write intent (two-phase persist)"): when set, every fact set with facts gets a
   * WriteIntentCreated on atlas.intents, with the vector store `pending` (or `skipped` when `vector` is false: no
   * vector store) and the graph store `pending`. Null or absent: no intents.
   */
  intents?: { vector: boolean } | null;
}

/** The platform id of the message this one continues: the Discord message replied to, or the Slack thread root. */
export const contextKey = (m: MessageIngested): string | null =>
  m.replyToId ?? (m.threadTs && m.threadTs !== m.platformMessageId ? m.threadTs : null);

/** Messages whose text later messages may need as thread context. */
const mayBeRoot = (m: MessageIngested): boolean => m.platform === 'platform_b' || m.threadTs === m.platformMessageId;

/** Messages of the channel's main flow (not Slack thread replies, not system messages): each is context for the next. */
const inChannelFlow = (m: MessageIngested): boolean =>
  !(m.threadTs && m.threadTs !== m.platformMessageId) &&
  !(m.subtype && PLATFORM_A_SYSTEM_SUBTYPES.has(m.subtype)) &&
  m.text.trim().length > 0;

/**
 * The conversation a message continues (FactsExtracted.contextText): its thread root or the message it
 * replies to; else the channel's previous top-level message when that came within CONTEXT_WINDOW_MS
 * before it. `Author: text`, at most 400 characters, or '' when there is none. Pure.
 */
export const conversationContext = (
  m: MessageIngested,
  root: ThreadRoot | undefined,
  tail: ChannelTail | undefined,
): string => {
  if (root) return `${root.authorName}: ${root.text}`.slice(0, CONTEXT_CHARS);
  if (contextKey(m) || !tail) return '';
  const gap = Date.parse(m.timestamp) - Date.parse(tail.messageTs);
  return gap >= 0 && gap <= CONTEXT_WINDOW_MS ? `${tail.authorName}: ${tail.text}`.slice(0, CONTEXT_CHARS) : '';
};

/**
 * MessageIngested | MessageDeleted → FactsExtracted on `atlas.facts` (spec "Ingestion pipeline":
 * preprocess, fact extraction). Every message gets exactly one fact set (empty when nothing passes
 * QUALITY_THRESHOLD, when the message was deleted, or when the channel's fact_extraction_enabled is off), so
 * downstream stores can replace by message. Deterministic fact ids make a redelivered batch produce the same facts
 * again. The channel commands are applied in their place in the batch and forwarded to `atlas.facts` in order with
 * the fact sets: ChannelSettingsUpdated (its fact_extraction_enabled kept in this projector's state, for the
 * entities projector's graph_enabled) and ChannelDataDeleted (the channel's thread state forgotten).
 */
export const factsProjector: Projector<
  FactsDeps,
  'MessageIngested' | 'MessageDeleted' | 'ChannelSettingsUpdated' | 'ChannelDataDeleted'
> = {
  name: 'facts',
  topics: [TOPICS.messages],
  handles: ['MessageIngested', 'MessageDeleted', 'ChannelSettingsUpdated', 'ChannelDataDeleted'],
  // Its own state only: replayed fact sets replace earlier ones downstream (same ids).
  reset: ({ threads }) => threads.truncate(),
  async handle(events, deps) {
    const out: AnyNewEvent[] = [];
    let messages: AnyStoredEvent<'MessageIngested' | 'MessageDeleted'>[] = [];
    const flush = async () => {
      if (messages.length > 0) out.push(...(await extractFacts(messages, deps)));
      messages = [];
    };
    for (const e of events) {
      if (e.type === 'MessageIngested' || e.type === 'MessageDeleted') {
        messages.push(e);
        continue;
      }
      await flush();
      if (e.type === 'ChannelSettingsUpdated') {
        const d = e.data;
        await deps.threads.setExtractionEnabled(d.channelId, d.factExtractionEnabled);
        out.push({ type: 'ChannelSettingsUpdated', key: d.channelId, data: d });
      } else if (e.type === 'ChannelDataDeleted') {
        const d = e.data;
        await deps.threads.deleteChannel(d.channelId);
        out.push({ type: 'ChannelDataDeleted', key: d.channelId, data: d });
      }
    }
    await flush();
    const positions = await deps.eventLog.append(TOPICS.facts, out);
    // Phase 1 of each set's write intent, after the sets: a crash in between leaves outcomes without an intent (never
    // folded into a pending one), and the redelivered batch makes new sets with new intents.
    if (deps.intents) await deps.eventLog.append(TOPICS.intents, intentsOf(out, positions, deps.intents.vector));
  },
};

/** Pure: WriteIntentCreated of each appended fact set with facts (`positions[i]` is where `out[i]` went). */
const intentsOf = (
  out: readonly AnyNewEvent[],
  positions: readonly { partition: number; offset: number }[],
  vector: boolean,
): NewEvent<'WriteIntentCreated'>[] => {
  const createdAt = new Date().toISOString();
  const intents: NewEvent<'WriteIntentCreated'>[] = [];
  out.forEach((e, i) => {
    if (e.type !== 'FactsExtracted') return;
    const s = e.data;
    if (s.facts.length === 0) return;
    const intentId = writeIntentId(s);
    intents.push({
      type: 'WriteIntentCreated',
      key: intentId,
      data: {
        intentId,
        messageId: s.messageId,
        channelId: s.channelId,
        factCount: s.facts.length,
        extractedAt: s.extractedAt,
        factsPartition: positions[i]!.partition,
        factsOffset: positions[i]!.offset,
        vector: vector ? 'pending' : 'skipped',
        graph: 'pending',
        createdAt,
      },
    });
  });
  return intents;
};

/**
 * The fact sets of a run of MessageIngested | MessageDeleted events, in order, updating the thread roots and channel
 * flow. Messages of channels whose fact extraction is off get an empty set (their earlier facts are retracted).
 */
const extractFacts = async (
  events: readonly AnyStoredEvent<'MessageIngested' | 'MessageDeleted'>[],
  deps: FactsDeps,
): Promise<NewEvent<'FactsExtracted'>[]> => {
  {
    const messages = events.flatMap((e) => (e.type === 'MessageIngested' ? [e.data] : []));
    const seen = new Map<string, ThreadRoot>();
    const byChannel = new Map<string, string[]>();
    for (const m of messages) {
      const k = contextKey(m);
      if (k) byChannel.set(m.channelId, [...(byChannel.get(m.channelId) ?? []), k]);
    }
    for (const [channelId, ids] of byChannel) {
      for (const [id, root] of await deps.threads.get(channelId, ids)) seen.set(`${channelId}\u0000${id}`, root);
    }
    // Each channel's flow messages from an hour before the batch's first message to its last: what each message of
    // the batch continues, whatever was read before (a redelivered or older message finds the one before it).
    const span = new Map<string, { from: number; to: number }>();
    for (const m of messages) {
      const at = Date.parse(m.timestamp);
      const r = span.get(m.channelId);
      span.set(m.channelId, r ? { from: Math.min(r.from, at), to: Math.max(r.to, at) } : { from: at, to: at });
    }
    const flows = await deps.threads.flow(
      [...span].map(([channelId, r]) => ({
        channelId,
        from: new Date(r.from - CONTEXT_WINDOW_MS).toISOString(),
        to: new Date(r.to).toISOString(),
      })),
    );
    const flowPut = new Map<string, ChannelTail>();
    const flowGone = new Map<string, { channelId: string; messageId: string }>();
    const disabled = await deps.threads.extractionDisabled([...new Set(messages.map((m) => m.channelId))]);
    const out: NewEvent<'FactsExtracted'>[] = [];
    const roots = new Map<string, ThreadRoot>();
    /** Thread roots whose message was deleted: their text is no later reply's context. */
    const forgotten = new Map<string, { channelId: string; rootId: string }>();
    const extractedAt = new Date().toISOString();
    for (const e of events) {
      if (e.type === 'MessageDeleted') {
        const d = e.data;
        const key = `${d.channelId}\u0000${d.platformMessageId}`;
        seen.delete(key);
        roots.delete(key);
        forgotten.set(key, { channelId: d.channelId, rootId: d.platformMessageId });
        const flow = flows.get(d.channelId);
        if (flow) flows.set(d.channelId, withoutFlow(flow, d.platformMessageId));
        flowPut.delete(key);
        flowGone.set(key, { channelId: d.channelId, messageId: d.platformMessageId });
        out.push(
          factSet({
            messageId: d.messageId,
            platform: d.platform,
            channelId: d.channelId,
            sourceMessageId: d.platformMessageId,
            extractor: deps.extractor.id,
            extractedAt,
            facts: [],
            sourceText: '',
            contextText: '',
          }),
        );
        continue;
      }
      const m = e.data;
      const k = contextKey(m);
      const root = k ? seen.get(`${m.channelId}\u0000${k}`) : undefined;
      const thread: ThreadContext | null = root
        ? { rootText: root.text, rootAuthorName: root.authorName, rootId: root.rootId }
        : null;
      const before = flowBefore(flows.get(m.channelId), m);
      const answers = thread ? null : answeredQuestion(m, before);
      const facts = disabled.has(m.channelId)
        ? []
        : selectFacts(await deps.extractor.extract({ message: m, thread, answers }), deps.qualityThreshold);
      const text = preprocess(m).text;
      const context = facts.length > 0 ? conversationContext(m, root, before) : '';
      out.push(
        factSet({
          messageId: m.messageId,
          platform: m.platform,
          channelId: m.channelId,
          sourceMessageId: m.platformMessageId,
          extractor: deps.extractor.id,
          extractedAt,
          facts,
          sourceText: facts.length > 0 ? text.slice(0, SOURCE_CHARS) : '',
          contextText: context,
        }),
      );
      if (inChannelFlow(m)) {
        const entry: ChannelTail = {
          channelId: m.channelId,
          messageId: m.platformMessageId,
          messageTs: m.timestamp,
          text: text.slice(0, CONTEXT_CHARS),
          authorName: m.author.name,
        };
        flows.set(m.channelId, withFlow(flows.get(m.channelId) ?? [], entry));
        const key = `${m.channelId}\u0000${m.platformMessageId}`;
        flowPut.set(key, entry);
        flowGone.delete(key);
      }
      if (mayBeRoot(m)) {
        const r = {
          channelId: m.channelId,
          rootId: m.platformMessageId,
          text: text.slice(0, CONTEXT_CHARS),
          authorName: m.author.name,
        };
        const key = `${m.channelId}\u0000${m.platformMessageId}`;
        roots.set(key, r);
        seen.set(key, r);
        forgotten.delete(key);
      }
    }
    await deps.threads.put([...roots.values()]);
    await deps.threads.forget([...forgotten.values()]);
    await deps.threads.forgetFlow([...flowGone.values()]);
    await deps.threads.putFlow([...flowPut.values()]);
    return out;
  }
};

/**
 * Whether flow message `a` came before a message at `ts` with platform id `id`: by time, and two messages of one
 * millisecond (Slack ts keep microseconds, timestamps milliseconds) by platform id, the shorter first, else the
 * lexically smaller (Slack ts, Discord snowflakes). The one order of a channel's flow: a redelivered message finds the
 * same predecessor as its first delivery did, whatever later message of that millisecond is stored meanwhile.
 */
const comesBefore = (a: Pick<ChannelTail, 'messageTs' | 'messageId'>, ts: string, id: string): boolean => {
  const d = Date.parse(a.messageTs) - Date.parse(ts);
  return (
    d < 0 || (d === 0 && (a.messageId.length < id.length || (a.messageId.length === id.length && a.messageId < id)))
  );
};

/** The flow message a message continues: the latest of `flow` (oldest first) before it (comesBefore). Pure. */
const flowBefore = (flow: readonly ChannelTail[] | undefined, m: MessageIngested): ChannelTail | undefined => {
  for (let i = (flow?.length ?? 0) - 1; i >= 0; i--) {
    const t = flow![i]!;
    if (comesBefore(t, m.timestamp, m.platformMessageId)) return t;
  }
  return undefined;
};

/** `flow` (oldest first) with `entry` in its place (comesBefore), replacing an entry of the same message. Pure. */
const withFlow = (flow: readonly ChannelTail[], entry: ChannelTail): ChannelTail[] => {
  const rest = withoutFlow(flow, entry.messageId);
  let i = rest.length;
  while (i > 0 && !comesBefore(rest[i - 1]!, entry.messageTs, entry.messageId)) i--;
  return [...rest.slice(0, i), entry, ...rest.slice(i)];
};

const withoutFlow = (flow: readonly ChannelTail[], messageId: string): ChannelTail[] =>
  flow.filter((t) => t.messageId !== messageId);

const factSet = (data: FactsExtracted): NewEvent<'FactsExtracted'> => ({
  type: 'FactsExtracted',
  key: data.channelId,
  data,
});
