import { type NewEvent, TOPICS } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import type { LocomoSet } from '@atlas/pipeline/testing';
import { type Runtime, startProjectors, waitForProjectors } from '@atlas/runtime';

/** recall@k (share of the question's evidence in the top k) and reciprocal rank of the first evidence hit. */
export const score = (ranked: string[], evidence: string[]) => {
  const gold = new Set(evidence);
  const at = (k: number) => ranked.slice(0, k).filter((id) => gold.has(id)).length / gold.size;
  const first = ranked.findIndex((id) => gold.has(id));
  return { r5: at(5), r10: at(10), rr: first < 0 ? 0 : 1 / (first + 1) };
};

/**
 * Ingests a LoCoMo set into a runtime as an import does: its channels and messages appended to atlas.messages, every
 * projector run until caught up, then the planner statistics refreshed. Returns the running projectors (the caller
 * stops them).
 */
export const ingestLocomo = async (rt: Runtime, set: LocomoSet): Promise<Subscription[]> => {
  const events: NewEvent[] = [
    ...set.channels.map((c): NewEvent => ({ type: 'ChannelDiscovered', key: c.channelId, data: c })),
    ...set.messages.map((m): NewEvent => ({ type: 'MessageIngested', key: m.channelId, data: m })),
  ];
  await rt.eventLog.append(TOPICS.messages, events);
  const subs = await startProjectors(rt);
  await waitForProjectors(rt);
  await rt.database.refreshStatistics();
  return subs;
};
