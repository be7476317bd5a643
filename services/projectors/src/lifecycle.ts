import { runsOfType, TOPICS } from '@atlas/core';
import type { Projector } from '@atlas/eventlog';
import { deriveLifecycle, lifecycleFactsOf, signalOf } from '@atlas/pipeline';
import type { LifecycleStore } from '@atlas/stores';

/** What the lifecycle projector writes. */
export interface LifecycleDeps {
  lifecycle: LifecycleStore;
}

/**
 * The lifecycle projector (issue 27 point 1): decisions and action items with their histories. It keeps the inputs of
 * the derivation in its own store (packages/stores/src/lifecycle), each replaced per message so a redelivered or
 * replayed event writes the same rows:
 * MessageIngested (atlas.messages) → the message's cue signal ("+1", "done", "won't do", "revert"), or none;
 * MessageDeleted → its signal and facts removed; FactsExtracted (atlas.facts) → its decision, action-item and proposal
 * facts; EntitiesExtracted (atlas.graph) → its supersessions; ContradictionResolved (atlas.graph, issue 27 point 5) →
 * the admin's resolution (`later` makes its pair's uncertain supersession move the earlier decision); ChannelDataDeleted → on each topic, what that topic's
 * events wrote. After each batch, every channel it touched is derived again from its stored inputs
 * (deriveLifecycle, pure and deterministic) and its items replaced, so the order in which the three topics arrive
 * does not matter. `reset` empties the store: replaying the three topics rebuilds it.
 */
export const lifecycleProjector: Projector<
  LifecycleDeps,
  | 'MessageIngested'
  | 'MessageDeleted'
  | 'FactsExtracted'
  | 'EntitiesExtracted'
  | 'ContradictionResolved'
  | 'ChannelDataDeleted'
> = {
  name: 'lifecycle',
  topics: [TOPICS.messages, TOPICS.facts, TOPICS.graph],
  handles: [
    'MessageIngested',
    'MessageDeleted',
    'FactsExtracted',
    'EntitiesExtracted',
    'ContradictionResolved',
    'ChannelDataDeleted',
  ],
  reset: ({ lifecycle }) => lifecycle.truncate(),
  async handle(events, { lifecycle }) {
    const touched = new Set<string>();
    for (const run of runsOfType(events)) {
      switch (run.type) {
        case 'MessageIngested': {
          const entries = run.events.map(({ data: m }) => ({
            messageId: m.messageId,
            channelId: m.channelId,
            signal: signalOf(m),
          }));
          // Only a message that carries a cue (or lost one by an edit) can change the channel's items.
          for (const c of await lifecycle.replaceSignals(entries)) touched.add(c);
          break;
        }
        case 'MessageDeleted':
          for (const { data: d } of run.events) {
            await lifecycle.deleteMessage(d.messageId);
            touched.add(d.channelId);
          }
          break;
        case 'FactsExtracted':
          await lifecycle.replaceFacts(
            run.events.map(({ data: s }) => ({
              messageId: s.messageId,
              channelId: s.channelId,
              facts: lifecycleFactsOf(s),
            })),
          );
          for (const e of run.events) touched.add(e.data.channelId);
          break;
        case 'EntitiesExtracted':
          await lifecycle.replaceSupersessions(
            run.events.map(({ data: s }) => ({
              messageId: s.messageId,
              channelId: s.channelId,
              supersessions: s.supersessions.map((x) => ({
                factId: x.factId,
                supersededBy: x.supersededBy,
                invalidAt: x.invalidAt,
                certain: x.certain,
              })),
            })),
          );
          for (const e of run.events) touched.add(e.data.channelId);
          break;
        case 'ContradictionResolved':
          await lifecycle.addResolutions(
            run.events.map(({ data: r }) => ({
              contradictionId: r.contradictionId,
              channelId: r.channelId,
              resolution: { factId: r.factId, supersededBy: r.supersededBy, outcome: r.outcome },
            })),
          );
          for (const e of run.events) touched.add(e.data.channelId);
          break;
        case 'ChannelDataDeleted':
          for (const e of run.events) {
            await lifecycle.deleteChannelPart(e.data.channelId, e.topic);
            touched.add(e.data.channelId);
          }
          break;
      }
    }
    for (const channelId of [...touched].sort()) {
      const inputs = await lifecycle.inputsOf(channelId);
      await lifecycle.replaceItems(channelId, deriveLifecycle(inputs));
    }
  },
};
