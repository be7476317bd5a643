import { TOPICS } from '@atlas/core';
import { groupOf, type LagRow } from '@atlas/eventlog';
import { activeProjectors, projectorOf, type Runtime } from './runtime.js';

// Projection of an import counted in messages: `atlas import`'s progress display (services/cli import-progress.ts,
// docs/import.md "Progress") and the server's import jobs (import-wiring.ts, docs/import.md "Importing from the
// browser") read it the same way.

/**
 * What the importer knows of its own messages for counting their projection: the offsets of the MessageIngested
 * events it appended (by partition of atlas.messages, ascending) and the end offsets of atlas.facts and atlas.graph
 * before it appended (by partition): what came later on those topics is this import's projection.
 */
export interface ImportedOffsets {
  messages: ReadonlyMap<number, readonly number[]>;
  baseline: { facts: ReadonlyMap<number, number>; graph: ReadonlyMap<number, number> };
}

/** Lag rows of the projector groups by the topic the rows are on, as read (see readProjection for the order). */
export interface ProjectionRows {
  /** Readers of atlas.messages (facts, documents, stats): their rows on it. */
  messages: readonly (readonly LagRow[])[];
  /** The entities group's rows on atlas.facts. */
  entities: readonly LagRow[];
  /** Readers of atlas.facts but entities (keyword, embeddings, documents, wiki, stats): their rows on it. */
  facts: readonly (readonly LagRow[])[];
  /** Readers of atlas.graph (graph, documents, wiki, stats): their rows on it. */
  graph: readonly (readonly LagRow[])[];
}

/** Messages of `offsets` below each partition's committed offset (binary search per partition). */
export const passed = (offsets: ReadonlyMap<number, readonly number[]>, rows: readonly LagRow[]): number => {
  let n = 0;
  for (const row of rows) {
    const list = offsets.get(row.partition) ?? [];
    const committed = row.committedOffset ?? 0;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]! < committed) lo = mid + 1;
      else hi = mid;
    }
    n += lo;
  }
  return n;
};

/** Events after `baseline` that the group has not consumed yet, summed over partitions. */
export const unconsumed = (rows: readonly LagRow[], baseline: ReadonlyMap<number, number>): number =>
  rows.reduce(
    (n, r) => n + Math.max(0, r.endOffset - Math.max(r.committedOffset ?? 0, baseline.get(r.partition) ?? 0)),
    0,
  );

/**
 * How many of the import's appended messages each projection phase has done (pure), from lag rows read upstream
 * first. A message is through
 * - `extracting facts` when every reader of atlas.messages has committed past its MessageIngested (exact: the
 *   importer knows each offset);
 * - `indexing` when, besides, every other reader of atlas.facts (keyword, embeddings, documents, wiki, stats) has
 *   consumed the fact set the facts projector made of it (one FactsExtracted per message, even an empty one);
 * - `building the graph` when the entities group has consumed its fact set and every reader of atlas.graph the
 *   EntitiesExtracted made of it (at most one per message).
 * Each later phase is the earlier count minus the events its groups have still to consume: a lower bound (an event
 * of a message not counted yet, or of an earlier import, only lowers it), exact once the pipeline is idle. A
 * dead-lettered message has no fact set: it counts as done once the facts group passed it.
 */
export const projectionCounts = (
  imported: ImportedOffsets,
  rows: ProjectionRows,
): { facts: number; indexing: number; graph: number } => {
  const appended = [...imported.messages.values()].reduce((n, l) => n + l.length, 0);
  const facts = Math.min(appended, ...rows.messages.map((r) => passed(imported.messages, r)));
  const behind = (groups: readonly (readonly LagRow[])[], base: ReadonlyMap<number, number>) =>
    Math.max(0, ...groups.map((r) => unconsumed(r, base)));
  const indexing = Math.max(0, facts - behind(rows.facts, imported.baseline.facts));
  const entities = Math.max(0, facts - unconsumed(rows.entities, imported.baseline.facts));
  const graph = Math.max(0, entities - behind(rows.graph, imported.baseline.graph));
  return { facts, indexing, graph };
};

const onTopic = (rows: readonly LagRow[], topic: string) => rows.filter((r) => r.topic === topic);

/**
 * Reads the projector groups' lag rows in the order projectionCounts needs (facts, then entities, then the rest: a
 * producer before its consumers) and sorts them by topic.
 */
export const readProjection = async (rt: Runtime): Promise<ProjectionRows> => {
  const ordered = activeProjectors(rt)
    .map(projectorOf)
    .sort((a, b) => rank(a.name) - rank(b.name));
  const out = {
    messages: [] as LagRow[][],
    entities: [] as LagRow[],
    facts: [] as LagRow[][],
    graph: [] as LagRow[][],
  };
  for (const p of ordered) {
    const topics = p.topics as readonly string[];
    if (![TOPICS.messages, TOPICS.facts, TOPICS.graph].some((t) => topics.includes(t))) continue;
    const rows = await rt.eventLog.lag(groupOf(p), topics);
    if (topics.includes(TOPICS.messages)) out.messages.push(onTopic(rows, TOPICS.messages));
    if (p.name === 'entities') out.entities = onTopic(rows, TOPICS.facts);
    else if (topics.includes(TOPICS.facts)) out.facts.push(onTopic(rows, TOPICS.facts));
    if (topics.includes(TOPICS.graph)) out.graph.push(onTopic(rows, TOPICS.graph));
  }
  return out;
};

const rank = (name: string): number => (name === 'facts' ? 0 : name === 'entities' ? 1 : 2);

/** End offsets of a topic by partition (where the next appended event goes). */
export const endOffsets = async (rt: Runtime, topic: string): Promise<Map<number, number>> =>
  new Map((await rt.eventLog.lag(groupOf({ name: 'documents' }), [topic])).map((r) => [r.partition, r.endOffset]));
