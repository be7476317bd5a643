import type { EntityType } from '@atlas/core';
import type { GraphEntity, GraphStore } from '@atlas/stores';
import type { GraphExpansion } from './search.js';

/** Finds the entities a question names, given the channel's people (pipeline `questionEntities`). */
export type EntityRecogniser = (
  text: string,
  people: readonly { name: string; aliases: string[] }[],
) => { name: string; type: EntityType }[];

/** An entity with more source facts than this is too broad to expand (a channel's regular, a common tool). */
export const MAX_EXPANDED_FACTS = 40;

/**
 * Graph-expanded retrieval (entities of the question → their facts): the entities the query names are
 * looked up in the channel's graph; each one specific enough (at most MAX_EXPANDED_FACTS facts, and not a
 * Person: people are who said things, not what was said) gives its facts graph score 1, and its direct
 * neighbours' facts 0.5 (the multi-hop step). All channels when channelId is null. Pure reads.
 */
export const graphExpansion =
  (graph: GraphStore, recognise: EntityRecogniser): GraphExpansion =>
  async (query, channelId) => {
    const scores = new Map<string, number>();
    const people = channelId
      ? (await graph.listEntities({ channelId, type: 'Person', limit: 200 })).map((e) => ({
          name: e.name,
          aliases: e.aliases,
        }))
      : [];
    const named = recognise(query, people).filter((e) => e.type !== 'Person');
    if (named.length === 0) return scores;
    const specific = (e: GraphEntity) => e.type !== 'Person' && e.source_fact_ids.length <= MAX_EXPANDED_FACTS;
    const found = (
      await graph.findEntities({ names: named.map((e) => e.name), channelId: channelId ?? undefined })
    ).filter(specific);
    const add = (ids: readonly string[], score: number) => {
      for (const id of ids) scores.set(id, Math.max(scores.get(id) ?? 0, score));
    };
    for (const e of found) add(e.source_fact_ids, 1);
    if (found.length === 0) return scores;
    const hood = await graph.neighborhood(
      found.map((e) => e.id),
      { depth: 1, limit: 20 },
    );
    const seeds = new Set(found.map((e) => e.id));
    const neighbours = await graph.getEntities(hood.nodes.filter((n) => !seeds.has(n.id)).map((n) => n.id));
    for (const e of neighbours.filter(specific)) add(e.source_fact_ids, 0.5);
    return scores;
  };
