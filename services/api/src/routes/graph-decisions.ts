import type { LifecycleItem } from '@atlas/core';
import type { GraphEntity, LifecycleStore } from '@atlas/stores';

/** Spec "Decision record" (GET /api/graph/decisions). */
export interface DecisionRecord {
  name: string;
  decided_by: string | null;
  status: string;
  superseded_by: string | null;
  date: string;
  context: string | null;
}

/** The spec's decision status of a lifecycle state: proposed, agreed (decided), superseded (superseded or reverted). */
const STATUS: Record<string, string> = {
  proposed: 'proposed',
  decided: 'agreed',
  superseded: 'superseded',
  reverted: 'superseded',
};

/**
 * An item as it stood at `asOf` (issue 27 point 2, "decisions in the state they had"): its transitions up to then, its
 * state the last of them, superseded_by only when that state is superseded or reverted; null when it opened later.
 */
export const itemAsOf = (item: LifecycleItem, asOf: string): LifecycleItem | null => {
  const at = Date.parse(asOf);
  const transitions = item.transitions.filter((t) => Date.parse(t.at) <= at);
  const last = transitions.at(-1);
  if (!last) return null;
  const moved = last.to === 'superseded' || last.to === 'reverted';
  return {
    ...item,
    transitions,
    state: last.to,
    updatedAt: last.at,
    supersededBy: moved ? item.supersededBy : null,
  };
};

/**
 * The decision records of a channel's Decision entities (issue 27 point 1: GET /api/graph/decisions fills `status` and
 * `superseded_by` from the lifecycle). A Decision entity's lifecycle item is the item of its newest source fact (an
 * item's id is its fact's id). With an item: status from its state (an `implemented` entity stays implemented while
 * the item is decided), superseded_by the name of the Decision entity holding the superseding fact (else that item's
 * title). Without one (the lifecycle projector has not seen it, or no store): the graph's own properties, as before.
 * With `asOf` (ISO 8601) every item is taken as it stood then (itemAsOf), beside the graph folded as of then.
 */
export const decisionRecords = async (
  rows: readonly GraphEntity[],
  lifecycle: Pick<LifecycleStore, 'byIds'> | null | undefined,
  asOf?: string,
): Promise<DecisionRecord[]> => {
  const stored = lifecycle
    ? await lifecycle.byIds([...new Set(rows.flatMap((e) => e.source_fact_ids))])
    : new Map<string, LifecycleItem>();
  const items = new Map<string, LifecycleItem>();
  for (const [id, item] of stored) {
    const then = asOf === undefined ? item : itemAsOf(item, asOf);
    if (then) items.set(id, then);
  }
  const entityOfFact = new Map<string, GraphEntity>();
  for (const e of rows) for (const f of e.source_fact_ids) entityOfFact.set(f, e);
  const newer = lifecycle
    ? await lifecycle.byIds([
        ...new Set([...items.values()].map((i) => i.supersededBy).filter((x): x is string => !!x)),
      ])
    : new Map<string, LifecycleItem>();
  return rows.map((e) => {
    const own = e.source_fact_ids
      .map((f) => items.get(f))
      .filter((i): i is LifecycleItem => i !== undefined && i.kind === 'decision')
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .at(-1);
    const graphStatus = e.properties.status ?? 'agreed';
    const status = own
      ? own.state === 'decided' && graphStatus === 'implemented'
        ? 'implemented'
        : (STATUS[own.state] ?? graphStatus)
      : graphStatus;
    const by = own?.supersededBy ?? null;
    const supersededBy = own
      ? by
        ? (entityOfFact.get(by)?.name ?? newer.get(by)?.title ?? by)
        : null
      : (e.properties.superseded_by ?? null);
    return {
      name: e.name,
      decided_by: e.properties.decided_by || null, // not stated: null (docs/conventions.md)
      status,
      superseded_by: supersededBy,
      date: e.properties.date ?? e.message_ts.slice(0, 10),
      context: e.properties.context || null,
    };
  });
};
