import { groupOf, type LagRow } from '@atlas/eventlog';
import { embeddingsRebuildProjector, PROJECTORS } from '@atlas/projectors';
import { activeProjectors, projectorOf, type Runtime } from './runtime.js';

/**
 * Producers before their consumers: facts appends to atlas.facts, entities to atlas.graph, and documents
 * reads all three topics. Checked in this order, a pass that sees lag 0 everywhere proves the pipeline
 * idle (each upstream group had committed, so appended, everything before its consumers were checked).
 */
const PIPELINE_ORDER = [
  'facts',
  'entities',
  'keyword',
  'embeddings',
  'graph',
  'reconciler',
  'documents',
  'wiki',
  'lifecycle',
  'sync-jobs',
  'sync-schedules',
  'stats',
  'dead-letters',
  'channel-access',
  'audit',
];

/** Total lag of every projector group on the topics it reads (upstream groups first). */
export const projectorLag = async (rt: Runtime, names: readonly string[] = activeProjectors(rt)): Promise<number> => {
  let total = 0;
  const ordered = [...names].sort((a, b) => PIPELINE_ORDER.indexOf(a) - PIPELINE_ORDER.indexOf(b));
  for (const name of ordered) {
    const p = projectorOf(name);
    for (const row of await rt.eventLog.lag(groupOf(p), p.topics)) total += row.lag;
  }
  return total;
};

/** Lag rows of every projector's consumer group on the topics it reads. */
export const projectorLagRows = async (rt: Runtime): Promise<LagRow[]> => {
  const rows: LagRow[] = [];
  for (const p of PROJECTORS.filter((x) => activeProjectors(rt).includes(x.name)))
    rows.push(...(await rt.eventLog.lag(groupOf(p), p.topics)));
  // A vector space being rebuilt: its consumer group's lag is the rebuild's progress.
  if (rt.vectorSpaces?.building())
    rows.push(...(await rt.eventLog.lag(groupOf(embeddingsRebuildProjector), embeddingsRebuildProjector.topics)));
  return rows;
};

/** Waits until the given projectors have caught up (lag 0), polling every `pollMs`. */
export const waitForProjectors = async (
  rt: Runtime,
  names: readonly string[] = activeProjectors(rt),
  pollMs = 100,
): Promise<void> => {
  while ((await projectorLag(rt, names)) > 0) await new Promise((r) => setTimeout(r, pollMs));
};
