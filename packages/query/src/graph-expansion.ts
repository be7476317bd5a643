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

/** Relationships from a person that lead to what the person did: the multi-hop step from a named person. */
const PERSON_EDGES = new Set(['PARTICIPATED_IN', 'MEMBER_OF', 'WORKS_ON', 'DECIDED_BY']);

/**
 * A question about what someone took part in or belongs to: only then does a named person lead to its
 * meetings, teams, projects and decisions (measured on LoCoMo: without this cue, single-hop questions about a
 * person lost a point of recall@10 to facts of that person's events).
 */
export const PARTICIPATION_CUE =
  /\b(?:events?|activit(?:y|ies)|participat\w*|join\w*|groups?|attend\w*|class(?:es)?|trips?|parades?|races?|programs?|meetups?|conferences?|communit(?:y|ies)|workshops?|meetings?|teams?|projects?|decid\w*|decisions?|took part|take part|works? on|working on)\b/i;

/** Graph scores of the expansion: facts of a named entity, of its neighbours, of what a named person did. */
export const EXPANSION_SCORES = { named: 1, neighbour: 0.5, personTarget: 0.5 };

/**
 * Graph-expanded retrieval (entities of the question → their facts): the entities the query names are
 * looked up in the channel's graph (all channels when channelId is null).
 * - A named entity specific enough (at most MAX_EXPANDED_FACTS facts, not a Person) gives its facts graph
 *   score 1, and its direct neighbours' facts 0.5.
 * - A named Person gives the facts of the meetings, teams, projects and decisions it is linked to by
 *   PARTICIPATED_IN, MEMBER_OF, WORKS_ON or DECIDED_BY 0.5 ("what events has Caroline taken part in"), when the
 *   question asks about such things (PARTICIPATION_CUE); the person's own facts are left to search (people are
 *   who said things, not what was said).
 * Pure reads; each id keeps its best score.
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
    const named = recognise(query, people);
    if (named.length === 0) return scores;
    const found = await graph.findEntities({ names: named.map((e) => e.name), channelId: channelId ?? undefined });
    const specific = (e: GraphEntity) => e.type !== 'Person' && e.source_fact_ids.length <= MAX_EXPANDED_FACTS;
    const add = (ids: readonly string[], score: number) => {
      for (const id of ids) scores.set(id, Math.max(scores.get(id) ?? 0, score));
    };
    const things = found.filter(specific);
    const persons = PARTICIPATION_CUE.test(query) ? found.filter((e) => e.type === 'Person') : [];
    for (const e of things) add(e.source_fact_ids, EXPANSION_SCORES.named);
    const seeds = [...things, ...persons];
    if (seeds.length === 0) return scores;
    const hood = await graph.neighborhood(
      seeds.map((e) => e.id),
      { depth: 1, limit: 50 },
    );
    const seedIds = new Set(seeds.map((e) => e.id));
    const personIds = new Set(persons.map((e) => e.id));
    const thingIds = new Set(things.map((e) => e.id));
    const score = new Map<string, number>();
    for (const edge of hood.edges) {
      for (const [from, to] of [
        [edge.source_id, edge.target_id],
        [edge.target_id, edge.source_id],
      ] as const) {
        if (seedIds.has(to)) continue;
        if (thingIds.has(from)) score.set(to, Math.max(score.get(to) ?? 0, EXPANSION_SCORES.neighbour));
        if (personIds.has(from) && edge.source_id === from && PERSON_EDGES.has(edge.type))
          score.set(to, Math.max(score.get(to) ?? 0, EXPANSION_SCORES.personTarget));
      }
    }
    for (const e of (await graph.getEntities([...score.keys()])).filter(specific))
      add(e.source_fact_ids, score.get(e.id)!);
    return scores;
  };
