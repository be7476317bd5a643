import { AtlasError, type NewEvent, TOPICS } from '@atlas/core';
import { groupOf } from '@atlas/eventlog';
import type { ChannelCommandDeps } from './channel-commands.js';
import { PROJECTORS } from './registry.js';
import { waitForGroups } from './sync/stage-wait.js';

/**
 * The contradiction desk's command (issue 27, point 5; POST /api/contradictions/{id}/resolve): appends
 * ContradictionResolved to atlas.graph (keyed by its channel, so it is ordered after the EntitiesExtracted that flagged
 * the contradiction) and resolves once every active projector that handles it (documents: the resolution row; wiki:
 * the stale mark) has committed past it. Throws AtlasError STORE_UNAVAILABLE (retriable) after `timeoutMs` (default
 * 60 s; the event stays in the log and is applied when they catch up), and what the event log throws.
 */
export const appendContradictionResolution = async (
  deps: ChannelCommandDeps,
  event: NewEvent<'ContradictionResolved'>,
  opts: { timeoutMs?: number; pollMs?: number } = {},
): Promise<void> => {
  const [pos] = await deps.eventLog.append(TOPICS.graph, [event]);
  const active = deps.activeProjectors();
  const groups = PROJECTORS.filter(
    (p) => active.includes(p.name) && (p.handles as readonly string[]).includes('ContradictionResolved'),
  ).map(groupOf);
  const caughtUp = await waitForGroups(
    deps.eventLog,
    groups,
    TOPICS.graph,
    pos!.partition,
    pos!.offset + 1,
    new AbortController().signal,
    { pollMs: opts.pollMs ?? 50, timeoutMs: opts.timeoutMs ?? 60_000 },
  );
  if (!caughtUp)
    throw new AtlasError(
      'STORE_UNAVAILABLE',
      'the projectors have not applied the resolution yet; it stays in the log and is applied when they catch up',
      { retriable: true, details: { groups, topic: TOPICS.graph } },
    );
};
