import type { WikiStore } from '@atlas/stores';

/**
 * The memories with `cluster_id` set from the wiki's current assignment (spec "Memory" detail form: cluster_id;
 * docs/conventions.md "cluster_id"): the topic cluster of the fact in its channel's current wiki, or null when the
 * wiki has not clustered it yet (no generation since the fact was extracted, or the fact has no vector). One read of
 * the wiki store for all of them; order and other fields unchanged.
 */
export const withClusterIds = async <T extends { id: string; cluster_id: string | null }>(
  wiki: Pick<WikiStore, 'clusterIdsOf'>,
  memories: readonly T[],
): Promise<T[]> => {
  if (memories.length === 0) return [];
  const clusters = await wiki.clusterIdsOf(memories.map((m) => m.id));
  return memories.map((m) => ({ ...m, cluster_id: clusters.get(m.id) ?? null }));
};
