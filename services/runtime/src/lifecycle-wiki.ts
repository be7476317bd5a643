import type { LifecycleItem } from '@atlas/core';
import type { GraphStore, LifecycleStore } from '@atlas/stores';

type Listed = Awaited<ReturnType<GraphStore['listEntities']>>;

/**
 * A Decision entity's properties with its lifecycle state (issue 27 point 1: the wiki's Decisions page shows it): the
 * item of its newest source fact gives `status` (`proposed`, `decided`, `superseded`, `reverted`); `superseded_by` is
 * kept only for a superseded one (the wiki reads any superseded_by as superseded). Without an item: unchanged. Pure.
 */
export const withLifecycleState = <E extends { source_fact_ids: string[]; properties: Record<string, string> }>(
  e: E,
  items: ReadonlyMap<string, LifecycleItem>,
): E => {
  const own = e.source_fact_ids
    .map((f) => items.get(f))
    .filter((i): i is LifecycleItem => i !== undefined && i.kind === 'decision')
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    .at(-1);
  if (!own) return e;
  const { superseded_by, ...rest } = e.properties;
  return {
    ...e,
    properties: {
      ...rest,
      status: own.state,
      ...(own.state === 'superseded' && superseded_by ? { superseded_by } : {}),
    },
  };
};

/**
 * The graph store as the wiki generator reads it (listEntities, listEntitiesMany), its Decision entities carrying their
 * lifecycle state (withLifecycleState).
 */
export const lifecycleGraphSource = (
  graph: Pick<GraphStore, 'listEntities' | 'listEntitiesMany'>,
  lifecycle: Pick<LifecycleStore, 'byIds'>,
): Pick<GraphStore, 'listEntities' | 'listEntitiesMany'> => {
  const decorate = async (rows: Listed): Promise<Listed> => {
    const decisions = rows.filter((e) => e.type === 'Decision');
    if (decisions.length === 0) return rows;
    const items = await lifecycle.byIds([...new Set(decisions.flatMap((e) => e.source_fact_ids))]);
    return rows.map((e) => (e.type === 'Decision' ? withLifecycleState(e, items) : e));
  };
  return {
    listEntities: async (q) => decorate(await graph.listEntities(q)),
    listEntitiesMany: async (queries) => Promise.all((await graph.listEntitiesMany(queries)).map(decorate)),
  };
};
