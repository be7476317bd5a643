// The Neo4j graph store's traversals (neighborhood, shortestPath, commonNeighbors) and the entity-card fold: each
// runs inside a read transaction the store opens, on namespace `ns`; arguments come normalised by the store.
import type { EntityType } from '@atlas/core';
import type { ManagedTransaction } from 'neo4j-driver';
import type { EntityGroup, GraphNode, GraphRelationship, Subgraph } from '../port.js';
import { byConfidence, cmp, EDGE, edgeOf, NODE, type Row, run, tsMs } from './cypher.js';

/** Every REL between two of the given entities. */
export async function edgesAmong(tx: ManagedTransaction, ns: string, ids: string[]): Promise<GraphRelationship[]> {
  const rows = await run(
    tx,
    `MATCH (a:Entity {ns: $ns})-[r:REL]->(b:Entity {ns: $ns}) WHERE a.id IN $ids AND b.id IN $ids RETURN ${EDGE}`,
    { ns, ids },
  );
  return rows.map(edgeOf);
}

/**
 * Neighbourhood of `seeds` (distinct ids) up to `depth` hops (1..3), at most `limit` others: seeds first, then by
 * hops, rank confidence (the best relationship to a node one hop closer), name, id; edges among them by confidence.
 */
export async function neighborhoodIn(
  tx: ManagedTransaction,
  ns: string,
  seeds: string[],
  depth: number,
  limit: number,
): Promise<Subgraph> {
  const seedRows = await run(tx, `MATCH (s:Entity {ns: $ns}) WHERE s.id IN $seeds RETURN ${NODE('s')} AS n`, {
    ns,
    seeds,
  });
  const seedNodes = new Map(seedRows.map((r) => [(r.n as GraphNode).id, r.n as GraphNode]));
  const ordered = seeds.filter((id) => seedNodes.has(id)).map((id) => seedNodes.get(id)!);
  if (ordered.length === 0) return { nodes: [], edges: [] };
  const reached = await run(
    tx,
    `MATCH (s:Entity {ns: $ns}) WHERE s.id IN $seeds
     MATCH p = (s)-[:REL*1..${depth}]-(n:Entity)
     WHERE NOT n.id IN $seeds
     RETURN ${NODE('n')} AS n, min(length(p)) AS hops`,
    { ns, seeds },
  );
  const hops = new Map<string, number>(ordered.map((n) => [n.id, 0]));
  const nodes = new Map<string, GraphNode>(ordered.map((n) => [n.id, n]));
  for (const r of reached) {
    hops.set((r.n as GraphNode).id, r.hops as number);
    nodes.set((r.n as GraphNode).id, r.n as GraphNode);
  }
  const edges = await edgesAmong(tx, ns, [...nodes.keys()]);
  const rank = new Map<string, number>();
  for (const e of edges) {
    for (const [near, far] of [
      [e.source_id, e.target_id],
      [e.target_id, e.source_id],
    ] as const) {
      const h = hops.get(far);
      if (h !== undefined && h > 0 && hops.get(near) === h - 1) {
        rank.set(far, Math.max(rank.get(far) ?? 0, e.confidence));
      }
    }
  }
  const others = reached
    .map((r) => r.n as GraphNode)
    .sort(
      (a, b) =>
        hops.get(a.id)! - hops.get(b.id)! ||
        (rank.get(b.id) ?? 0) - (rank.get(a.id) ?? 0) ||
        cmp(a.name, b.name) ||
        cmp(a.id, b.id),
    )
    .slice(0, Math.max(0, Math.trunc(limit)));
  const keep = new Set([...ordered, ...others].map((n) => n.id));
  return {
    nodes: [...ordered, ...others],
    edges: edges.filter((e) => keep.has(e.source_id) && keep.has(e.target_id)).sort(byConfidence),
  };
}

/** A fewest-hops path from `src` to `tgt` (distinct ids) of 1..`depth` hops; an id in both is a one-node path. */
export async function shortestPathIn(
  tx: ManagedTransaction,
  ns: string,
  src: string[],
  tgt: string[],
  depth: number,
): Promise<Subgraph | null> {
  const both = src.filter((id) => tgt.includes(id));
  if (both.length > 0) {
    const rows = await run(tx, `MATCH (s:Entity {ns: $ns}) WHERE s.id IN $ids RETURN ${NODE('s')} AS n`, {
      ns,
      ids: both,
    });
    const node = rows.map((r) => r.n as GraphNode).sort((a, b) => cmp(a.id, b.id))[0];
    if (node) return { nodes: [node], edges: [] };
  }
  if (depth < 1) return null;
  const [row] = await run(
    tx,
    `MATCH (s:Entity {ns: $ns}) WHERE s.id IN $src
     MATCH (t:Entity {ns: $ns}) WHERE t.id IN $tgt AND t <> s
     MATCH p = shortestPath((s)-[:REL*1..${depth}]-(t))
     WITH p, s, t ORDER BY length(p), s.id, t.id LIMIT 1
     RETURN [n IN nodes(p) | ${NODE('n')}] AS nodes,
            [r IN relationships(p) | {r: properties(r), a_id: startNode(r).id, a_name: startNode(r).name,
                                      b_id: endNode(r).id, b_name: endNode(r).name}] AS edges`,
    { ns, src, tgt },
  );
  if (!row) return null;
  const edges = (row.edges as Row[]).map(edgeOf);
  return { nodes: row.nodes as GraphNode[], edges };
}

/** Entities adjacent to a member of every group of `gs` (none of `members`), by summed confidence, then name. */
export async function commonNeighborsIn(
  tx: ManagedTransaction,
  ns: string,
  gs: string[][],
  members: ReadonlySet<string>,
): Promise<Subgraph> {
  const rows = await run(
    tx,
    `UNWIND range(0, size($groups) - 1) AS gi
     UNWIND $groups[gi] AS mid
     MATCH (m:Entity {ns: $ns, id: mid})-[r:REL]-(n:Entity)
     WITH gi, n, r, startNode(r) AS a, endNode(r) AS b
     RETURN gi, ${NODE('n')} AS n, ${EDGE}`,
    { ns, groups: gs },
  );
  const seen = new Map<
    string,
    { node: GraphNode; groups: Set<number>; score: number; edges: Map<string, GraphRelationship> }
  >();
  for (const r of rows) {
    const node = r.n as GraphNode;
    if (members.has(node.id)) continue;
    const edge = edgeOf(r);
    const cur = seen.get(node.id) ?? { node, groups: new Set<number>(), score: 0, edges: new Map() };
    cur.groups.add(r.gi as number);
    if (!cur.edges.has(edge.id)) {
      cur.edges.set(edge.id, edge);
      cur.score += edge.confidence;
    }
    seen.set(node.id, cur);
  }
  const common = [...seen.values()]
    .filter((c) => c.groups.size === gs.length)
    .sort((a, b) => b.score - a.score || cmp(a.node.name, b.node.name) || cmp(a.node.id, b.node.id));
  return {
    nodes: common.map((c) => c.node),
    edges: common.flatMap((c) => [...c.edges.values()].sort(byConfidence)),
  };
}

/**
 * Entity cards from entity rows `{id, type, norm, name, channel_id, mentions, first, facts, last}`: grouped by
 * (type, norm), ordered as GraphStore.entityGroups says, at most `limit`.
 */
export function entityGroupsOf(rows: Row[], limit: number): EntityGroup[] {
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const k = `${r.type as string}\u0000${r.norm as string}`;
    const list = groups.get(k) ?? [];
    list.push(r);
    groups.set(k, list);
  }
  const out: EntityGroup[] = [];
  for (const list of groups.values()) {
    list.sort(
      (a, b) =>
        (b.mentions as number) - (a.mentions as number) ||
        tsMs(a.first as string) - tsMs(b.first as string) ||
        cmp(a.id as string, b.id as string),
    );
    const top = list[0]!;
    out.push({
      type: top.type as EntityType,
      key: top.norm as string,
      name: top.name as string,
      entity_ids: list.map((r) => r.id as string),
      channel_ids: [...new Set(list.map((r) => r.channel_id as string))].sort(cmp),
      fact_count: new Set(list.flatMap((r) => (r.facts as string[] | null) ?? [])).size,
      last_mentioned_at: list.map((r) => r.last as string).reduce((a, b) => (tsMs(b) > tsMs(a) ? b : a)),
    });
  }
  return out
    .sort(
      (a, b) =>
        b.fact_count - a.fact_count ||
        tsMs(b.last_mentioned_at) - tsMs(a.last_mentioned_at) ||
        cmp(a.key, b.key) ||
        cmp(a.type, b.type),
    )
    .slice(0, Math.max(0, Math.trunc(limit)));
}
