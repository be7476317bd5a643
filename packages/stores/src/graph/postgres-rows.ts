import type { EntityType } from '@atlas/core';
import { sql } from 'kysely';
import type { GraphEntity, GraphNode, GraphRelationship } from './port.js';
import { UUID } from './validate.js';

type Time = Date | string;

/** A graph_entities row as ENTITY_COLUMNS selects it: GraphEntity's stored fields, times as the driver returns them. */
export type EntityRow = Omit<
  GraphEntity,
  'scope' | 'status' | 'message_ts' | 'last_mentioned_at' | 'created_at' | 'updated_at'
> & { message_ts: Time; last_mentioned_at: Time; created_at: Time; updated_at: Time };

/** A relationship as RELATIONSHIP_SELECT returns it: GraphRelationship with created_at as the driver returns it. */
export type RelationshipRow = Omit<GraphRelationship, 'created_at'> & { created_at: Time };

export const iso = (x: Time): string => new Date(x).toISOString();
export const uuids = (ids: readonly string[]): string[] => [...new Set(ids.filter((id) => UUID.test(id)))];

export const ENTITY_COLUMNS = sql.raw(`e.id, e.channel_id, e.type, e.name, e.aliases, e.properties, e.source_fact_ids,
  e.confidence, e.mention_count, e.source_message_id, e.message_ts, e.last_mentioned_at, e.created_at, e.updated_at`);

export const RELATIONSHIP_SELECT = sql`select r.id, r.type, s.name as source, t.name as target, r.source_id, r.target_id,
    r.channel_id, r.confidence, to_char(r.valid_from, 'YYYY-MM-DD') as valid_from,
    to_char(r.valid_until, 'YYYY-MM-DD') as valid_until, r.context, r.source_message_id, r.source_fact_id, r.created_at
  from graph_relationships r join graph_entities s on s.id = r.source_id join graph_entities t on t.id = r.target_id`;

export const RELATIONSHIP_ORDER = sql`order by r.confidence desc, r.valid_from, r.id`;

/** Undirected adjacency of `w.id` (lateral): neighbour id, relationship id and confidence. */
export const ADJACENT = sql`(select r.target_id as nb, r.id as rid, r.confidence from graph_relationships r where r.source_id = w.id
    union all select r.source_id, r.id, r.confidence from graph_relationships r where r.target_id = w.id)`;

export const toRelationship = (r: RelationshipRow): GraphRelationship => ({
  id: r.id,
  type: r.type,
  source: r.source,
  target: r.target,
  source_id: r.source_id,
  target_id: r.target_id,
  channel_id: r.channel_id,
  confidence: Number(r.confidence),
  valid_from: r.valid_from,
  valid_until: r.valid_until ?? null,
  context: r.context,
  source_message_id: r.source_message_id,
  source_fact_id: r.source_fact_id ?? null,
  created_at: iso(r.created_at),
});

export const toNode = (e: { id: string; name: string; type: EntityType; channel_id: string }): GraphNode => ({
  id: e.id,
  name: e.name,
  type: e.type,
  channel_id: e.channel_id,
});

/** Connection-level failure (server down, connection lost, pool or embedded database closed). */
export const isUnavailable = (e: unknown): boolean => {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    /^(08|57P0[1-3]|53300|E(CONN|HOST|NETUNREACH|NOTFOUND|TIMEDOUT|PIPE|AI_AGAIN))/.test(code)
  )
    return true;
  if (/ECONNREFUSED|ECONNRESET|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|terminat|closed|destroyed|timeout/i.test(e.message))
    return true;
  const inner = (e as { errors?: unknown }).errors;
  return Array.isArray(inner) && inner.some(isUnavailable);
};

/** A Postgres array as returned by the driver (an array, or its text form when the driver leaves it unparsed). */
export const toArray = (x: string[] | string | null | undefined): string[] => {
  if (Array.isArray(x)) return x;
  if (!x || x === '{}') return [];
  return x
    .slice(1, -1)
    .split(',')
    .map((s) => s.replace(/^"|"$/g, ''));
};
