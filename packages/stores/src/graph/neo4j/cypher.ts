// Cypher plumbing shared by the Neo4j graph store's parts: running a query, rows, projections, orderings, times.
import type { RelationshipType } from '@atlas/core';
import neo4j, { type ManagedTransaction, Neo4jError } from 'neo4j-driver';
import type { GraphRelationship } from '../port.js';

/** A record of a Cypher result, as a plain object. */
export type Row = Record<string, unknown>;

/** Connection-level failures and Neo4j's transient errors (the driver has already retried those for 5 s). */
export const isUnavailable = (e: unknown): boolean => {
  if (e instanceof Neo4jError) {
    if (['ServiceUnavailable', 'SessionExpired'].includes(e.code) || e.code.startsWith('Neo.TransientError.')) {
      return true;
    }
  }
  const text = e instanceof Error ? `${(e as { code?: unknown }).code ?? ''} ${e.message}` : String(e);
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EPIPE|socket hang up/i.test(text);
};

export const NODE = (v: string) => `${v} {.id, .name, .type, .channel_id}`;
/** Projection of a REL `r` from `a` to `b` that edgeOf reads. */
export const EDGE = 'r {.*} AS r, a.id AS a_id, a.name AS a_name, b.id AS b_id, b.name AS b_name';

export const edgeOf = (row: Row): GraphRelationship => {
  const r = row.r as Row;
  return {
    id: r.id as string,
    type: r.type as RelationshipType,
    source: row.a_name as string,
    target: row.b_name as string,
    source_id: row.a_id as string,
    target_id: row.b_id as string,
    channel_id: r.channel_id as string,
    confidence: r.confidence as number,
    valid_from: r.valid_from as string,
    valid_until: (r.valid_until as string | undefined) ?? null,
    context: (r.context as string | undefined) ?? '',
    source_message_id: r.source_message_id as string,
    source_fact_id: (r.source_fact_id as string | undefined) ?? null,
    created_at: r.created_at as string,
  };
};

/** Relationship order of the reads: confidence desc, then valid_from, then id. */
export const byConfidence = (a: GraphRelationship, b: GraphRelationship): number =>
  b.confidence - a.confidence || cmp(a.valid_from, b.valid_from) || cmp(a.id, b.id);

export const run = async (tx: ManagedTransaction, cypher: string, params: Row = {}): Promise<Row[]> =>
  (await tx.run(cypher, params)).records.map((r) => r.toObject() as Row);

export const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export const limitOf = (n: number) => neo4j.int(Math.max(0, Math.trunc(n)));

export const tsMs = (s: string): number => {
  const t = Date.parse(s);
  return Number.isNaN(t) ? 0 : t;
};

/** ISO 8601 UTC with milliseconds; left as given when it does not parse. */
export const isoTs = (s: string): string => {
  const t = Date.parse(s);
  return Number.isNaN(t) ? s : new Date(t).toISOString();
};
