import { type NewEvent, TOPICS } from '@atlas/core';
import type { planImport } from '@atlas/platforms';
import { projectorLag } from './lag.js';
import { startProjectors } from './run-projectors.js';
import type { Runtime } from './runtime.js';

/** What appendPlan appended: counts, and the offsets of its MessageIngested events by partition (ascending). */
export interface AppendResult {
  appended: number;
  unchanged: number;
  messageOffsets: Map<number, number[]>;
}

/**
 * Appends an import plan's events in ONE atomic append (nothing of a failed import is applied), after the channels'
 * membership (membershipOfPlan, on atlas.access): a ChannelDiscovered per channel, and a MessageIngested per message
 * that is new or whose content hash changed since the last import (so a re-import adds nothing). Returns the appended and unchanged counts and
 * where the messages went. `onChecked(n)`: n messages compared with the stored hashes so far (after each channel).
 */
export const appendPlan = async (
  rt: Runtime,
  plan: Awaited<ReturnType<typeof planImport>>,
  onChecked: (checked: number) => void = () => undefined,
): Promise<AppendResult> => {
  const events: NewEvent[] = plan.channels.map((c) => ({ type: 'ChannelDiscovered', key: c.channelId, data: c }));
  let unchanged = 0;
  const hashes = new Map<string, Map<string, string>>();
  for (const [i, m] of plan.messages.entries()) {
    let known = hashes.get(m.channelId);
    if (!known) {
      onChecked(i);
      known = await rt.documents.messageHashes(m.channelId);
      hashes.set(m.channelId, known);
    }
    if (known.get(m.platformMessageId) === m.contentHash) unchanged++;
    else events.push({ type: 'MessageIngested', key: m.channelId, data: m });
  }
  onChecked(plan.messages.length);
  // Channel access first (docs/access.md "Channel access"), so a private channel's messages are never readable before
  // its members are known: the members the export lists, else public to the workspace.
  await rt.eventLog.append(TOPICS.access, membershipOfPlan(plan));
  const positions = await rt.eventLog.append(TOPICS.messages, events);
  const messageOffsets = new Map<number, number[]>();
  positions.forEach((pos, i) => {
    if (events[i]!.type !== 'MessageIngested') return;
    const list = messageOffsets.get(pos.partition) ?? [];
    list.push(pos.offset);
    messageOffsets.set(pos.partition, list);
  });
  for (const list of messageOffsets.values()) list.sort((a, b) => a - b);
  return { appended: events.length - plan.channels.length, unchanged, messageOffsets };
};

/**
 * One ChannelMembershipObserved (`source: 'import'`, no connection, observed now) per channel of an import plan: private
 * with the members the export lists (ImportPlan.members), else public to the workspace (members null).
 */
export const membershipOfPlan = (
  plan: Pick<Awaited<ReturnType<typeof planImport>>, 'channels' | 'members'>,
  now: Date = new Date(),
): NewEvent<'ChannelMembershipObserved'>[] =>
  plan.channels.map((c) => {
    const members = plan.members[c.channelId] ?? null;
    return {
      type: 'ChannelMembershipObserved',
      key: c.channelId,
      data: {
        connectionId: null,
        platform: c.platform,
        channelId: c.channelId,
        isPrivate: members !== null,
        members,
        source: 'import',
        observedAt: now.toISOString(),
      },
    };
  });

/** How drainProjectors reports while it waits: a callback before each lag poll and once when idle. */
export interface DrainWatch {
  onPoll(): Promise<void>;
  /** How often to read the groups' offsets, ms (default 200). */
  pollMs?: number;
}

/**
 * Runs every projector of the runtime until every group has caught up (total lag 0, upstream groups checked first),
 * polling every 200 ms (or `watch.pollMs`), and until a vector space rebuild it started has switched (docs/models.md
 * "Changing the model"), then stops them and refreshes the planner's statistics (PGlite has no
 * autovacuum). `_appended`: unused (kept for the callers that pass a count). Throws what the projectors' start and
 * the log throw.
 */
export const drainProjectors = async (rt: Runtime, _appended = 0, watch: DrainWatch | false = false): Promise<void> => {
  const subs = await startProjectors(rt);
  try {
    for (;;) {
      if (watch) await watch.onPoll();
      if ((await projectorLag(rt)) === 0) break;
      await new Promise((r) => setTimeout(r, watch ? (watch.pollMs ?? 200) : 200));
    }
    // A vector space being rebuilt (the model changed) is finished too: the store is left on one model.
    const rebuild = subs.find((s) => 'done' in s) as { done?: Promise<unknown> } | undefined;
    await rebuild?.done;
    if (watch) await watch.onPoll(); // idle: the counts are exact now
  } finally {
    await Promise.all(subs.map((s) => s.stop()));
  }
  await rt.database.refreshStatistics(); // the planner sees the imported rows
};
