import {
  AsOf,
  AtlasError,
  deterministicId,
  EntityType,
  type LifecycleItem,
  normalizeEntityName,
  notFound,
  RelationshipType,
} from '@atlas/core';
import type {
  DocumentStore,
  GraphEntity,
  GraphRelationship,
  GraphStore,
  LifecycleStore,
  Subgraph,
  WikiStore,
} from '@atlas/stores';
import type { WikiPage, WikiStructure } from '@atlas/wiki';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { lifecycleDetailView } from './decisions.js';
import { decisionRecords, itemAsOf } from './graph-decisions.js';
import { channelCheck } from './known-channel.js';

/** Days after which a card's staleness_score reaches 0.5 (it is 1 − 0.5^(days since last mention / 90)). */
export const STALENESS_HALF_LIFE_DAYS = 90;
/** Key facts on a card. */
const KEY_FACTS = 5;
/**
 * Related entities on a card (the most confident relationships first), and how many relationships are read for them.
 */
const RELATED_ON_CARD = 20;
const RELATED_SCAN = 200;

/** `?as_of=` alone (issue 27 point 2): the entity detail and card routes. */
const AsOfQuery = z.object({ as_of: AsOf.optional() });
const Limit = (def: number, max: number) => z.coerce.number().int().min(1).max(max).default(def);
const Names = z
  .string()
  .min(1)
  .transform((v) =>
    v
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );

/** Confidences to 3 decimals (noisy-or folds leave float noise such as 0.5774999999999999). */
const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** Spec "Graph entity", list form (the single-entity form adds source_message_id and message_ts). */
export const entityView = (e: GraphEntity, single = false) => ({
  id: e.id,
  name: e.name,
  type: e.type,
  scope: e.scope,
  channel_id: e.channel_id,
  status: e.status,
  properties: e.properties,
  aliases: e.aliases,
  source_fact_ids: e.source_fact_ids,
  created_at: e.created_at,
  updated_at: e.updated_at,
  ...(single ? { source_message_id: e.source_message_id, message_ts: e.message_ts } : {}),
});

/** Spec "Relationship", list form. */
const relationshipView = (r: GraphRelationship) => ({
  id: r.id,
  type: r.type,
  source: r.source,
  target: r.target,
  confidence: round3(r.confidence),
  valid_from: r.valid_from,
  valid_until: r.valid_until,
  context: r.context,
  source_message_id: r.source_message_id,
  source_fact_id: r.source_fact_id,
  created_at: r.created_at,
});

/** Spec: "Neighbor edges carry id, type, source, target, confidence, context, valid_from, source_message_id". */
const edgeView = (r: GraphRelationship) => ({
  id: r.id,
  type: r.type,
  source: r.source,
  target: r.target,
  confidence: round3(r.confidence),
  context: r.context,
  valid_from: r.valid_from,
  source_message_id: r.source_message_id,
});

/** The {nodes, edges} shape of subgraph, path and common-neighbors (docs/graph.md "Routes"). */
const graphView = (g: Subgraph) => ({
  nodes: g.nodes.map((n) => ({ id: n.id, name: n.name, type: n.type, channel_id: n.channel_id })),
  edges: g.edges.map(edgeView),
});

/** `g` without nodes of channels outside `visible` and the edges that touch them; `g` itself when unrestricted. */
const visibleGraph = (g: Subgraph, visible: ReadonlySet<string> | null): Subgraph => {
  if (!visible) return g;
  const nodes = g.nodes.filter((n) => visible.has(n.channel_id));
  const ids = new Set(nodes.map((n) => n.id));
  return { nodes, edges: g.edges.filter((e) => ids.has(e.source_id) && ids.has(e.target_id)) };
};

/** The visible channels of a request as a set (visibility.ts), null for an unrestricted caller. */
const visibleOf = (r: { visibleChannels: readonly string[] | null }): ReadonlySet<string> | null =>
  r.visibleChannels ? new Set(r.visibleChannels) : null;

/** staleness_score in [0, 1): 0 when mentioned now, 0.5 after STALENESS_HALF_LIFE_DAYS, towards 1 after. */
export const stalenessScore = (lastMentionedAt: string, now = Date.now()): number => {
  const days = Math.max(0, (now - Date.parse(lastMentionedAt)) / 86_400_000);
  return Math.round((1 - 0.5 ** (days / STALENESS_HALF_LIFE_DAYS)) * 1000) / 1000;
};

/**
 * The entities a list of names resolves to (one group of ids per name); 404 naming the first unknown one. `visible`
 * (a restricted caller's channels): entities of other channels are unknown. Relationships join entities of one
 * channel, so traversals from these seeds stay in visible channels (visibleGraph checks it again).
 */
const resolveNames = async (
  graph: GraphStore,
  names: readonly string[],
  channelId: string | undefined,
  visible: ReadonlySet<string> | null = null,
  asOf?: string,
): Promise<string[][]> => {
  const groups: string[][] = [];
  for (const name of names) {
    const found = (await graph.findEntities({ names: [name], channelId, asOf })).filter(
      (e) => !visible || visible.has(e.channel_id),
    );
    if (found.length === 0) throw notFound('entity', name);
    groups.push(found.map((e) => e.id));
  }
  return groups;
};

/**
 * An entity card (spec "Entity card"): the entities of one (type, normalised name) across channels,
 * with their facts from the document store. The name's most mentioned type wins when several share it.
 * cluster_ids: the wiki clusters (current assignment, WikiStore.clusterIdsOf) of its facts, sorted; facts not yet
 * clustered add none. related_entities: {name, type, relationship} of the OTHER end of each relationship touching
 * one of its entities (GraphStore.incidentRelationships), one entry per (name, type, relationship), most confident
 * first, at most 20. `visible` (a restricted caller's channels): the card is made of the entities of those channels
 * only (their facts, relationships, channels and counts); none there → null, as for an unknown name. `asOf` (issue 27
 * point 2): the card as of that instant (GraphAsOf; the facts stated by then, with their validity then).
 * The card alone; the card route adds `lifecycle` (entityCardOf, cardLifecycle).
 */
export const entityCard = async (
  graph: GraphStore,
  documents: DocumentStore,
  wiki: Pick<WikiStore, 'clusterIdsOf'>,
  name: string,
  now = Date.now(),
  visible: ReadonlySet<string> | null = null,
  asOf?: string,
) => (await entityCardOf(graph, documents, wiki, name, now, visible, asOf))?.card ?? null;

/**
 * entityCard and the ids of the card's source facts (the `source_fact_ids` of its entities, as of `asOf` when given),
 * which the card route reads the lifecycle items of (cardLifecycle). Null when the name is unknown (or not visible).
 */
const entityCardOf = async (
  graph: GraphStore,
  documents: DocumentStore,
  wiki: Pick<WikiStore, 'clusterIdsOf'>,
  name: string,
  now = Date.now(),
  visible: ReadonlySet<string> | null = null,
  asOf?: string,
) => {
  const found = (await graph.findEntities({ names: [name], asOf })).filter(
    (e) => !visible || visible.has(e.channel_id),
  );
  if (found.length === 0) return null;
  const groups = new Map<string, GraphEntity[]>();
  for (const e of found) {
    const k = `${e.type}\u0000${normalizeEntityName(e.name)}`;
    groups.set(k, [...(groups.get(k) ?? []), e]);
  }
  const weight = (g: GraphEntity[]) => g.reduce((n, e) => n + e.mention_count, 0);
  const group = [...groups.values()].sort((a, b) => weight(b) - weight(a))[0]!;
  const main = [...group].sort((a, b) => b.mention_count - a.mention_count)[0]!;
  const factIds = [...new Set(group.flatMap((e) => e.source_fact_ids))];
  const [memories, clusters] = await Promise.all([
    documents.getMemories(factIds, { asOf }),
    wiki.clusterIdsOf(factIds),
  ]);
  const facts = [...memories.values()];
  const breakdown: Record<string, number> = {};
  for (const f of facts) breakdown[f.fact_type] = (breakdown[f.fact_type] ?? 0) + 1;
  // Facts still valid first; a superseded decision's card still shows the fact it came from (history kept).
  const key = [...facts]
    .sort(
      (a, b) =>
        Number(!!a.superseded_by) - Number(!!b.superseded_by) ||
        rank(b) - rank(a) ||
        b.message_ts.localeCompare(a.message_ts),
    )
    .slice(0, KEY_FACTS);
  // Only relationships that touch the entity (one end in the group), each named by its OTHER end (docs/conventions.md):
  // a neighbourhood's edges also join two neighbours, which are not this entity's relations.
  const ids = new Set(group.map((e) => e.id));
  const related = new Map<string, { name: string; type: string; relationship: string }>();
  for (const { relationship, other } of await graph.incidentRelationships([...ids], { limit: RELATED_SCAN, asOf })) {
    const k = `${other.name}\u0000${other.type}\u0000${relationship.type}`;
    if (!related.has(k)) related.set(k, { name: other.name, type: other.type, relationship: relationship.type });
  }
  const lastMentioned = group
    .map((e) => e.last_mentioned_at)
    .sort()
    .at(-1)!;
  const firstMentioned = group.map((e) => e.message_ts).sort()[0]!;
  const channels = [...new Set(group.map((e) => e.channel_id))].sort();
  const channelNames = new Map((await documents.listChannels()).map((c) => [c.id, c.name]));
  const card = {
    id: deterministicId('entity-card', main.type, normalizeEntityName(main.name)),
    tier: 'entity_card' as const,
    entity_id: main.id,
    entity_name: main.name,
    entity_type: main.type,
    channel_ids: channels,
    cluster_ids: [...new Set(facts.flatMap((f) => clusters.get(f.id) ?? []))].sort(),
    fact_count: factIds.length,
    fact_type_breakdown: breakdown,
    key_facts: key.map((f) => f.memory_text),
    related_entities: [...related.values()].slice(0, RELATED_ON_CARD),
    last_mentioned_at: lastMentioned,
    staleness_score: stalenessScore(lastMentioned, now),
    summary: cardSummary(
      main,
      factIds.length,
      // Channels where it is mentioned most first.
      [...new Set([...group].sort((a, b) => b.mention_count - a.mention_count).map((e) => e.channel_id))].map(
        (c) => channelNames.get(c) ?? c,
      ),
      firstMentioned,
      lastMentioned,
      key[0]?.memory_text,
      related.size,
    ),
    updated_at: group
      .map((e) => e.updated_at)
      .sort()
      .at(-1)!,
  };
  return { card, factIds };
};

/**
 * An entity card's `lifecycle` (issue 27 point 1; docs/graph.md "Routes"): the lifecycle items opened by the card's
 * source facts (an item's id is its fact's id) in the detail form of GET /api/decisions/{item_id}, newest opened
 * first (created_at, then id); [] when none, or without a lifecycle store. `visible` (a restricted caller's channels):
 * items of other channels are left out. `asOf`: each item as it stood then (itemAsOf); items opened later are left out.
 */
export const cardLifecycle = async (
  lifecycle: Pick<LifecycleStore, 'byIds'> | null | undefined,
  factIds: readonly string[],
  visible: ReadonlySet<string> | null = null,
  asOf?: string,
) => {
  if (!lifecycle || factIds.length === 0) return [];
  const items: LifecycleItem[] = [];
  for (const item of (await lifecycle.byIds(factIds)).values()) {
    if (visible && !visible.has(item.channelId)) continue;
    const then = asOf === undefined ? item : itemAsOf(item, asOf);
    if (then) items.push(then);
  }
  return items
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.itemId.localeCompare(b.itemId))
    .map(lifecycleDetailView);
};

const IMPORTANCE_RANK: Record<string, number> = { high: 1, medium: 0.9, low: 0.8 };
const rank = (f: { quality_score: number; importance: string }) =>
  f.quality_score * (IMPORTANCE_RANK[f.importance] ?? 0.8);

/** An extractive summary (no model): what the entity is, where and when it is mentioned, its top fact. */
const cardSummary = (
  e: GraphEntity,
  facts: number,
  channels: readonly string[],
  first: string,
  last: string,
  topFact: string | undefined,
  related: number,
): string => {
  const day = (t: string) => t.slice(0, 10);
  const named = channels.slice(0, 5).map((c) => `#${c}`);
  const where = channels.length > 5 ? `${named.join(', ')} and ${channels.length - 5} more channels` : named.join(', ');
  const span = day(first) === day(last) ? `on ${day(last)}` : `from ${day(first)} to ${day(last)}`;
  const parts = [
    `${e.name} (${e.type}) is mentioned in ${facts} fact${facts === 1 ? '' : 's'} in ${where} ${span}` +
      (related > 0 ? `, related to ${related} other entit${related === 1 ? 'y' : 'ies'}.` : '.'),
  ];
  if (e.type === 'Decision' && e.properties.decided_by)
    parts.push(`Decided by ${e.properties.decided_by} (${e.properties.status ?? 'agreed'}).`);
  if (topFact) parts.push(`Key fact: ${topFact}`);
  return parts.join(' ');
};

/** What the graph routes read: the graph, the facts and messages behind it, the wiki's clusters. */
export interface GraphRoutesOptions {
  graph: GraphStore;
  documents: DocumentStore;
  wiki: WikiStore<WikiPage, WikiStructure>;
  /**
   * The lifecycle store: decisions' status and superseded_by (graph-decisions.ts) and a card's `lifecycle`; absent:
   * the graph's own status, and `lifecycle: []`.
   */
  lifecycle?: Pick<LifecycleStore, 'byIds'> | null;
}

/**
 * Every /api/graph route (spec "Graph"). Limits: entities default 50, max 200; relationships default 50
 * (max 200); cards default 20 (max 200); neighbors depth default 1, max 3. The shapes of subgraph, path
 * and common-neighbors are ours ({nodes, edges}, docs/graph.md "Routes"). Every route takes `as_of` (issue 27 point 2,
 * GraphAsOf): the graph as it stood at that instant; a bad one is 400 INVALID_REQUEST, a future one is now.
 */
export const graphRoutes: FastifyPluginAsync<GraphRoutesOptions> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const { graph, documents } = ports;
  const known = channelCheck(ports); // an unknown channel_id is 404 NOT_FOUND (docs/conventions.md)

  app.get(
    '/api/graph/entities',
    {
      schema: {
        querystring: z.object({
          channel_id: z.string().min(1),
          type: EntityType.optional(),
          status: z.enum(['active', 'pending']).optional(),
          limit: Limit(50, 200),
          as_of: AsOf.optional(),
        }),
      },
    },
    async ({ query }) => {
      await known(query.channel_id);
      return (
        await graph.listEntities({
          channelId: query.channel_id,
          type: query.type,
          status: query.status,
          limit: query.limit,
          asOf: query.as_of,
        })
      ).map((e) => entityView(e));
    },
  );

  // The literal `cards` segment is the card list, not an entity id (spec).
  app.get(
    '/api/graph/entities/cards',
    {
      schema: {
        querystring: z.object({
          channel_id: z.string().min(1).optional(),
          entity_type: EntityType.optional(),
          limit: Limit(20, 200),
          as_of: AsOf.optional(),
        }),
      },
    },
    async ({ query, visibleChannels }) => {
      await known(query.channel_id);
      const asOf = query.as_of;
      const now = asOf ? Date.parse(asOf) : Date.now();
      const groups = await graph.entityGroups({
        channelId: query.channel_id,
        channels: visibleChannels ?? undefined, // a restricted caller's channels only (visibility.ts)
        type: query.entity_type,
        limit: query.limit,
        asOf,
      });
      const main = new Map(
        (
          await graph.getEntities(
            groups.flatMap((g) => g.entity_ids),
            { asOf },
          )
        ).map((e) => [e.id, e]),
      );
      return groups.map((g) => {
        const best = g.entity_ids
          .map((id) => main.get(id))
          .filter((e): e is GraphEntity => !!e)
          .sort((a, b) => b.mention_count - a.mention_count)[0];
        return {
          entity_id: best?.id ?? g.entity_ids[0]!,
          entity_name: g.name,
          entity_type: g.type,
          fact_count: g.fact_count,
          staleness_score: stalenessScore(g.last_mentioned_at, now),
        };
      });
    },
  );

  /** The entity `ref` when the caller may see its channel; else 404, as for an unknown entity. */
  const visibleEntity = async (ref: string, visible: ReadonlySet<string> | null, asOf?: string) => {
    const e = await graph.getEntity(ref, { asOf });
    if (!e || (visible && !visible.has(e.channel_id))) throw notFound('entity', ref);
    return e;
  };

  app.get(
    '/api/graph/entities/:ref',
    { schema: { params: z.object({ ref: z.string() }), querystring: AsOfQuery } },
    async (request) => {
      const { params, query } = request;
      const e = await visibleEntity(params.ref, visibleOf(request), query.as_of);
      return entityView(e, true);
    },
  );

  app.get(
    '/api/graph/entities/:ref/neighbors',
    {
      schema: {
        params: z.object({ ref: z.string() }),
        querystring: z.object({ depth: Limit(1, 3), limit: Limit(50, 200), as_of: AsOf.optional() }),
      },
    },
    async (request) => {
      const { params, query } = request;
      const visible = visibleOf(request);
      await visibleEntity(params.ref, visible, query.as_of);
      const g = visibleGraph(
        await graph.neighborhood([params.ref], { depth: query.depth, limit: query.limit, asOf: query.as_of }),
        visible,
      );
      return { nodes: g.nodes.map((n) => ({ id: n.id, name: n.name, type: n.type })), edges: g.edges.map(edgeView) };
    },
  );

  app.get(
    '/api/graph/entities/:ref/card',
    { schema: { params: z.object({ ref: z.string().min(1) }), querystring: AsOfQuery } },
    async (request) => {
      const { params, query } = request;
      const asOf = query.as_of;
      const now = asOf ? Date.parse(asOf) : Date.now();
      const visible = visibleOf(request);
      const found = await entityCardOf(graph, documents, ports.wiki, params.ref, now, visible, asOf);
      if (!found) throw notFound('entity', params.ref);
      return { ...found.card, lifecycle: await cardLifecycle(ports.lifecycle, found.factIds, visible, asOf) };
    },
  );

  app.get(
    '/api/graph/relationships',
    {
      schema: {
        querystring: z.object({
          channel_id: z.string().min(1),
          type: RelationshipType.optional(),
          source: z.string().min(1).optional(),
          target: z.string().min(1).optional(),
          limit: Limit(50, 200),
          as_of: AsOf.optional(),
        }),
      },
    },
    async ({ query }) => {
      await known(query.channel_id);
      return (
        await graph.listRelationships({
          channelId: query.channel_id,
          type: query.type,
          source: query.source,
          target: query.target,
          limit: query.limit,
          asOf: query.as_of,
        })
      ).map(relationshipView);
    },
  );

  app.get(
    '/api/graph/decisions',
    {
      schema: {
        querystring: z.object({
          channel_id: z.string().min(1),
          status: z.string().min(1).optional(),
          as_of: AsOf.optional(), // issue 27 point 2: each decision in the state it had then
        }),
      },
    },
    async ({ query }) => {
      await known(query.channel_id);
      const rows = await graph.listEntities({
        channelId: query.channel_id,
        type: 'Decision',
        limit: 10_000,
        asOf: query.as_of,
      });
      return (await decisionRecords(rows, ports.lifecycle, query.as_of))
        .filter((d) => !query.status || d.status === query.status)
        .sort((a, b) => b.date.localeCompare(a.date) || a.name.localeCompare(b.name));
    },
  );

  app.get(
    '/api/graph/subgraph',
    {
      schema: {
        querystring: z.object({
          entities: Names,
          depth: Limit(1, 3),
          limit: Limit(50, 200),
          channel_id: z.string().min(1).optional(),
          as_of: AsOf.optional(),
        }),
      },
    },
    async (request) => {
      const { query } = request;
      const visible = visibleOf(request);
      await known(query.channel_id);
      const groups = await resolveNames(graph, query.entities, query.channel_id, visible, query.as_of);
      const g = await graph.neighborhood(groups.flat(), { depth: query.depth, limit: query.limit, asOf: query.as_of });
      return graphView(visibleGraph(g, visible));
    },
  );

  app.get(
    '/api/graph/path',
    {
      schema: {
        querystring: z.object({
          source: z.string().min(1),
          target: z.string().min(1),
          max_depth: Limit(3, 6),
          channel_id: z.string().min(1).optional(),
          as_of: AsOf.optional(),
        }),
      },
    },
    async (request) => {
      const { query } = request;
      const visible = visibleOf(request);
      await known(query.channel_id);
      const asOf = query.as_of;
      const [from, to] = await resolveNames(graph, [query.source, query.target], query.channel_id, visible, asOf);
      const found = await graph.shortestPath(from!, to!, query.max_depth, { asOf });
      // A path through a channel the caller does not see is no path for it (relationships stay within a channel).
      const path = found && visibleGraph(found, visible).nodes.length === found.nodes.length ? found : null;
      return { ...graphView(path ?? { nodes: [], edges: [] }), length: path ? path.edges.length : null };
    },
  );

  app.get(
    '/api/graph/common-neighbors',
    {
      schema: {
        querystring: z.object({ entities: Names, channel_id: z.string().min(1).optional(), as_of: AsOf.optional() }),
      },
    },
    async (request) => {
      const { query } = request;
      const visible = visibleOf(request);
      if (query.entities.length < 2)
        throw new AtlasError('INVALID_REQUEST', 'common-neighbors needs at least two comma-separated entity names');
      await known(query.channel_id);
      const groups = await resolveNames(graph, query.entities, query.channel_id, visible, query.as_of);
      return graphView(visibleGraph(await graph.commonNeighbors(groups, { asOf: query.as_of }), visible));
    },
  );
};
