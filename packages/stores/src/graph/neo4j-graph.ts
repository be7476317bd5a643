/*
 * GraphStore on Neo4j 5.23 or later (scoped `CALL () {}` subqueries; tested on 5.26 LTS community), through the
 * official driver over Bolt.
 *
 * Data model. Every node carries `ns` (the store's namespace, default `atlas`), so that several stores (parallel
 * test runs, environments) share one database without seeing each other; every query is anchored on `ns`.
 * - (:Entity {ns, id, channel_id, type, name, norm, aliases, alias_norms, source_fact_ids, props, confidence,
 *   mention_count, source_message_id, message_ts, last_mentioned_at, created_at, updated_at}): the folded entity.
 *   `props` is the JSON of the properties map (Neo4j has no map properties); `norm`/`alias_norms` are
 *   normalizeEntityName of the name and aliases. Uniqueness constraint on (ns, id).
 * - (:Message {ns, uuid, channel_id, source_message_id, message_ts})-[:MENTIONS {ord, name, aliases, confidence,
 *   fact_ids, props}]->(:Entity): the mentions, one relationship per entity of EntitiesExtracted.entities (`ord` is
 *   its index there). Uniqueness constraint on (ns, uuid).
 * - (:Entity)-[:REL {id, type, channel_id, confidence, valid_from, valid_until, context, source_message_id,
 *   source_fact_id, created_at}]->(:Entity): the folded relationship, stored in its declared direction and read in
 *   both. Its evidence is kept as (:RelEvidence {ns, message_uuid, channel_id, rel_id, type, source_id, target_id,
 *   confidence, valid_from, valid_until, context, source_fact_id, source_message_id, message_ts, ord}) nodes.
 * - (:Supersession {ns, message_uuid, channel_id, message_ts, ord, fact_id, superseded_by, old_entity_id,
 *   new_entity_id, certain, invalid_at, reason}) nodes (only those naming both entities).
 * - (:ChannelLock {ns, channel_id}): written first by every transaction that changes a channel, so that two writers
 *   fold one channel one after the other (like PostgresGraphStore's advisory lock).
 * applyMessageGraphs is one write transaction of three round trips: (1) lock the channels, read the messages' old
 * contribution and replace it; (2) read the touched entities' mentions, their supersessions and the touched
 * relationships' evidence; fold in TypeScript; (3) write the folds and delete what is left without mentions or
 * evidence.
 *
 * TCP_NODELAY. neo4j-driver 5 writes a Bolt message over ~1,400 bytes in several socket writes and never sets
 * TCP_NODELAY, so Nagle holds the last write until the server's delayed ACK: every query with a long text or long
 * parameters took ~45 ms on loopback (server time 1-3 ms), a two-message applyMessageGraphs ~150 ms. The driver has
 * no socket option, so this module subscribes to Node's `net.client.socket` diagnostics channel while a store is
 * open and sets TCP_NODELAY on client sockets that connect to the port of an open store's URL (a Bolt port; the
 * option changes only how bytes are packed into segments); a query then takes 2-8 ms on loopback.
 */

import { randomUUID } from 'node:crypto';
import { AtlasError, type EntitiesExtracted, type EntityType, normalizeEntityName } from '@atlas/core';
import neo4j, { type Driver, type ManagedTransaction, Neo4jError } from 'neo4j-driver';
import { contributionOf, replaceContributions, writeFolds } from './neo4j/apply.js';
import { contributionsAsOf, settleAsOfView } from './neo4j/as-of.js';
import { EDGE, edgeOf, isUnavailable, limitOf, NODE, type Row, run } from './neo4j/cypher.js';
import { foldEntities } from './neo4j/entity-fold.js';
import { readFoldState } from './neo4j/fold-state.js';
import { boltPort, noDelayOff, noDelayOn } from './neo4j/nodelay.js';
import { foldRelationships } from './neo4j/relationship-fold.js';
import { DELETE_BATCH, LABELS, SCHEMA } from './neo4j/schema.js';
import { commonNeighborsIn, entityGroupsOf, neighborhoodIn, shortestPathIn } from './neo4j/traversals.js';
import type {
  EntityGroup,
  EntityGroupQuery,
  EntityQuery,
  GraphAsOf,
  GraphEntity,
  GraphNode,
  GraphRelationship,
  GraphStore,
  RelationshipQuery,
  Subgraph,
} from './port.js';
import { validateEntitySet } from './validate.js';

export interface Neo4jGraphStoreOptions {
  /** Bolt URL (`NEO4J_URL`), e.g. `bolt://127.0.0.1:7687` or `neo4j://host:7687`. */
  url: string;
  /** Basic auth user; without it no credentials are sent (a server with auth disabled accepts that). */
  user?: string | undefined;
  /** Basic auth password (default empty). */
  password?: string | undefined;
  /** Database name; default the server's default database. */
  database?: string | undefined;
  /** An entity is `active` when its confidence ≥ this, else `pending`. Default 0.6 (ENTITY_THRESHOLD). */
  entityThreshold?: number | undefined;
  /**
   * Value of the `ns` property on every node this store writes, and the only one it reads or deletes (truncate).
   * Default `atlas`. Tests use a fresh one per run.
   */
  namespace?: string | undefined;
}

/**
 * GraphStore on Neo4j 5 (see the top of this file for the data model; the fold's steps are in neo4j/). Connections are opened lazily; the first
 * call creates the constraints and indexes it needs (IF NOT EXISTS). One write transaction per applyMessageGraphs,
 * deleteChannel, and truncate batch; reads run in read transactions. Neo4j integers come back as JS numbers,
 * timestamps as ISO 8601 UTC strings, relationship dates as YYYY-MM-DD.
 *
 * Semantics the port leaves open are those of PostgresGraphStore (the contract suite pins them): the last set of a
 * message in a batch wins; mention order is (message_ts, message id, position); aliases are the exact-string union
 * minus the name ignoring case, sorted by code point; supersessions need both entity ids, and one whose new entity
 * does not exist is ignored until it does (among several, the new entity with the latest message_ts names it);
 * relationship valid_until comes from the latest evidence by (valid_from, message time); neighborhood clamps depth
 * to 1..3 and ranks by the best relationship to a node one hop closer; a source that is also a target is a 0-hop
 * path; commonNeighbors never returns a queried entity; entityGroups with channelId lists the groups having an
 * entity there, aggregated over all channels. Ordering ties on names use code point order.
 *
 * Concurrency: every write transaction first writes the (:ChannelLock) of its channels (sorted), so writers of one
 * channel fold one after the other; Neo4j's transient errors (deadlocks, lock timeouts) are retried by the driver.
 *
 * Errors are AtlasError: INVALID_REQUEST when an event is malformed (a relationship end that is not an entity of the
 * event, an id that is not a UUID, a messageTs that does not parse, a relationship date not starting YYYY-MM-DD;
 * nothing of the batch is written then); STORE_UNAVAILABLE (retriable) when the server cannot be reached, the
 * session expired, or Neo4j reports a transient error after the driver's own retries (5 s); INTERNAL_ERROR for
 * anything else it refuses.
 */
export class Neo4jGraphStore implements GraphStore {
  readonly namespace: string;
  private readonly driver: Driver;
  private readonly threshold: number;
  private schema: Promise<void> | undefined;
  private readonly port: number;
  private closed = false;

  constructor(private readonly opts: Neo4jGraphStoreOptions) {
    this.namespace = opts.namespace ?? 'atlas';
    this.threshold = opts.entityThreshold ?? 0.6;
    const auth = opts.user ? neo4j.auth.basic(opts.user, opts.password ?? '') : undefined;
    this.port = boltPort(opts.url);
    noDelayOn(this.port);
    // Short retry window: an unreachable server fails within seconds (callers retry on STORE_UNAVAILABLE).
    this.driver = neo4j.driver(opts.url, auth, {
      disableLosslessIntegers: true,
      maxTransactionRetryTime: 5_000,
      connectionTimeout: 5_000,
      connectionAcquisitionTimeout: 10_000,
      logging: { level: 'error', logger: () => {} },
    });
  }

  // ------------------------------------------------------------------------------------------------ writes

  /**
   * Replaces each message's mentions, relationship evidence and supersessions, then re-folds what they touched: one
   * write transaction of three round trips (replace, read the fold state, write the folds).
   */
  async applyMessageGraphs(sets: readonly EntitiesExtracted[]): Promise<void> {
    if (sets.length === 0) return;
    for (const set of sets) validateEntitySet(set);
    const contribution = contributionOf(sets, this.namespace);
    const now = new Date().toISOString();
    await this.write('applyMessageGraphs', async (tx) => {
      const ns = this.namespace;
      const { touched, rels } = await replaceContributions(tx, ns, now, contribution);
      const state = await readFoldState(
        tx,
        ns,
        touched,
        rels.map((r) => r.id),
      );
      await writeFolds(tx, ns, now, foldEntities(state, now), foldRelationships(state.evidence, rels));
    });
  }
  /** Deletes every node of this store's namespace (with their relationships), in batches of 5,000 nodes. */
  async truncate(): Promise<void> {
    for (const label of LABELS) {
      for (;;) {
        const n = await this.write('truncate', async (tx) => {
          const [r] = await run(
            tx,
            `MATCH (n:${label} {ns: $ns}) WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS n`,
            { ns: this.namespace, batch: neo4j.int(DELETE_BATCH) },
          );
          return (r?.n as number | undefined) ?? 0;
        });
        if (n < DELETE_BATCH) break;
      }
    }
  }

  /** Deletes a channel's entities, relationships, mentions, evidence and supersessions, in one transaction. */
  async deleteChannel(channelId: string): Promise<{ entities: number; relationships: number }> {
    return this.write('deleteChannel', async (tx) => {
      const p = { ns: this.namespace, c: channelId, now: new Date().toISOString() };
      await run(tx, 'MERGE (l:ChannelLock {ns: $ns, channel_id: $c}) SET l.locked_at = $now', p);
      const [e] = await run(tx, 'MATCH (e:Entity {ns: $ns, channel_id: $c}) RETURN count(e) AS n', p);
      const [r] = await run(
        tx,
        'MATCH (:Entity {ns: $ns, channel_id: $c})-[r:REL]->(:Entity {ns: $ns}) RETURN count(r) AS n',
        p,
      );
      await run(tx, 'MATCH (m:Message {ns: $ns, channel_id: $c}) DETACH DELETE m', p);
      await run(tx, 'MATCH (v:RelEvidence {ns: $ns, channel_id: $c}) DELETE v', p);
      await run(tx, 'MATCH (s:Supersession {ns: $ns, channel_id: $c}) DELETE s', p);
      await run(tx, 'MATCH (e:Entity {ns: $ns, channel_id: $c}) DETACH DELETE e', p);
      return { entities: (e?.n as number) ?? 0, relationships: (r?.n as number) ?? 0 };
    });
  }

  // ------------------------------------------------------------------------------------------------ reads

  /** listEntities for several queries, answered in order (one read each). */
  async listEntitiesMany(queries: readonly EntityQuery[]): Promise<GraphEntity[][]> {
    const out: GraphEntity[][] = [];
    for (const q of queries) out.push(await this.listEntities(q));
    return out;
  }

  /** A channel's entities, most mentioned first, then by name (and id). */
  async listEntities(q: EntityQuery): Promise<GraphEntity[]> {
    if (q.asOf !== undefined)
      return this.asOfView(q.asOf, q.channelId, (v) => v.listEntities({ ...q, asOf: undefined }));
    const rows = await this.read('listEntities', (tx) =>
      run(
        tx,
        `MATCH (e:Entity {ns: $ns, channel_id: $c})
         WHERE ($type IS NULL OR e.type = $type)
           AND ($status IS NULL OR (CASE WHEN e.confidence >= $th THEN 'active' ELSE 'pending' END) = $status)
         RETURN e {.*} AS e ORDER BY e.mention_count DESC, e.name, e.id LIMIT $limit`,
        {
          ns: this.namespace,
          c: q.channelId,
          type: q.type ?? null,
          status: q.status ?? null,
          th: this.threshold,
          limit: limitOf(q.limit),
        },
      ),
    );
    return rows.map((r) => this.entity(r.e as Row));
  }

  /** The entity, or null when this namespace has none with that id. */
  async getEntity(id: string, at: GraphAsOf = {}): Promise<GraphEntity | null> {
    const [e] = await this.getEntities([id], at);
    return e ?? null;
  }

  /** Entities by ids; unknown ids are left out. */
  async getEntities(ids: readonly string[], at: GraphAsOf = {}): Promise<GraphEntity[]> {
    if (ids.length === 0) return [];
    if (at.asOf !== undefined) return this.asOfView(at.asOf, undefined, (v) => v.getEntities(ids));
    const rows = await this.read('getEntities', (tx) =>
      run(tx, 'MATCH (e:Entity {ns: $ns}) WHERE e.id IN $ids RETURN e {.*} AS e ORDER BY e.id', {
        ns: this.namespace,
        ids: [...new Set(ids)],
      }),
    );
    return rows.map((r) => this.entity(r.e as Row));
  }

  /** Entities whose normalised name or alias is one of `names` (normalised here); most mentioned first. */
  async findEntities(
    q: {
      names: readonly string[];
      channelId?: string | undefined;
      type?: EntityType | undefined;
    } & GraphAsOf,
  ): Promise<GraphEntity[]> {
    if (q.asOf !== undefined)
      return this.asOfView(q.asOf, q.channelId, (v) => v.findEntities({ ...q, asOf: undefined }));
    const names = [...new Set(q.names.map(normalizeEntityName))].filter((n) => n !== '');
    if (names.length === 0) return [];
    const rows = await this.read('findEntities', (tx) =>
      run(
        tx,
        `MATCH (e:Entity {ns: $ns})
         WHERE ($c IS NULL OR e.channel_id = $c) AND ($type IS NULL OR e.type = $type)
           AND (e.norm IN $names OR any(a IN e.alias_norms WHERE a IN $names))
         RETURN e {.*} AS e ORDER BY e.mention_count DESC, e.name, e.id`,
        { ns: this.namespace, c: q.channelId ?? null, type: q.type ?? null, names },
      ),
    );
    return rows.map((r) => this.entity(r.e as Row));
  }

  /** A channel's relationships, highest confidence first, then valid_from and id. */
  async listRelationships(q: RelationshipQuery): Promise<GraphRelationship[]> {
    if (q.asOf !== undefined)
      return this.asOfView(q.asOf, q.channelId, (v) => v.listRelationships({ ...q, asOf: undefined }));
    const rows = await this.read('listRelationships', (tx) =>
      run(
        tx,
        `MATCH (a:Entity {ns: $ns, channel_id: $c})-[r:REL]->(b:Entity {ns: $ns})
         WHERE ($type IS NULL OR r.type = $type) AND ($src IS NULL OR a.norm = $src) AND ($tgt IS NULL OR b.norm = $tgt)
         RETURN ${EDGE} ORDER BY r.confidence DESC, r.valid_from, r.id LIMIT $limit`,
        {
          ns: this.namespace,
          c: q.channelId,
          type: q.type ?? null,
          src: q.source === undefined ? null : normalizeEntityName(q.source),
          tgt: q.target === undefined ? null : normalizeEntityName(q.target),
          limit: limitOf(q.limit),
        },
      ),
    );
    return rows.map(edgeOf);
  }

  /**
   * Neighbourhood of the seeds up to `depth` hops (clamped to 1..3), relationships read in both directions. The hop
   * count of each entity comes from a breadth-first variable-length expansion (`[:REL*1..depth]` with
   * min(length(p))); its rank confidence is the best relationship joining it to an entity one hop closer.
   */
  async neighborhood(seedIds: readonly string[], q: { depth: number; limit: number } & GraphAsOf): Promise<Subgraph> {
    if (q.asOf !== undefined)
      return this.asOfView(q.asOf, undefined, (v) => v.neighborhood(seedIds, { depth: q.depth, limit: q.limit }));
    const depth = Math.min(3, Math.max(1, Math.trunc(q.depth) || 1));
    const seeds = [...new Set(seedIds)];
    if (seeds.length === 0) return { nodes: [], edges: [] };
    return this.read('neighborhood', (tx) => neighborhoodIn(tx, this.namespace, seeds, depth, q.limit));
  }

  /** Relationships with exactly one end among `entityIds`, with that other end (see the port), by confidence. */
  async incidentRelationships(
    entityIds: readonly string[],
    q: { limit: number } & GraphAsOf,
  ): Promise<{ relationship: GraphRelationship; other: GraphNode }[]> {
    if (q.asOf !== undefined)
      return this.asOfView(q.asOf, undefined, (v) => v.incidentRelationships(entityIds, { limit: q.limit }));
    const ids = [...new Set(entityIds)];
    if (ids.length === 0 || Math.trunc(q.limit) <= 0) return [];
    const rows = await this.read('incidentRelationships', (tx) =>
      run(
        tx,
        `MATCH (x:Entity {ns: $ns}) WHERE x.id IN $ids
         MATCH (x)-[r:REL]-(o:Entity {ns: $ns}) WHERE NOT o.id IN $ids
         WITH r, startNode(r) AS a, endNode(r) AS b, o
         RETURN ${EDGE}, ${NODE('o')} AS o ORDER BY r.confidence DESC, r.valid_from, r.id LIMIT $limit`,
        { ns: this.namespace, ids, limit: limitOf(q.limit) },
      ),
    );
    return rows.map((row) => ({ relationship: edgeOf(row), other: row.o as GraphNode }));
  }

  /** A fewest-hops path (1..maxDepth hops) with Cypher shortestPath; an id in both lists is a path of one node. */
  async shortestPath(
    sourceIds: readonly string[],
    targetIds: readonly string[],
    maxDepth: number,
    at: GraphAsOf = {},
  ): Promise<Subgraph | null> {
    if (at.asOf !== undefined)
      return this.asOfView(at.asOf, undefined, (v) => v.shortestPath(sourceIds, targetIds, maxDepth));
    const src = [...new Set(sourceIds)];
    const tgt = [...new Set(targetIds)];
    if (src.length === 0 || tgt.length === 0) return null;
    const depth = Math.trunc(maxDepth);
    return this.read('shortestPath', (tx) => shortestPathIn(tx, this.namespace, src, tgt, depth));
  }

  /**
   * Entities adjacent to at least one member of every group (group members themselves excluded), by the summed
   * confidence of the relationships joining them to the groups, then name; edges: those relationships.
   */
  async commonNeighbors(groups: readonly (readonly string[])[], at: GraphAsOf = {}): Promise<Subgraph> {
    if (at.asOf !== undefined) return this.asOfView(at.asOf, undefined, (v) => v.commonNeighbors(groups));
    const gs = groups.map((g) => [...new Set(g)]);
    if (gs.length === 0 || gs.some((g) => g.length === 0)) return { nodes: [], edges: [] };
    const members = new Set(gs.flat());
    return this.read('commonNeighbors', (tx) => commonNeighborsIn(tx, this.namespace, gs, members));
  }

  /**
   * Entity cards: entities grouped by (type, normalised name) across channels. With channelId, the groups that have
   * an entity in that channel, each still aggregated over all channels. entity_ids most mentioned first (then
   * earliest message_ts, id; the first gives the name), channel_ids sorted, fact_count = distinct source facts;
   * groups by fact_count desc, then last_mentioned_at desc, key, type.
   */
  async entityGroups(q: EntityGroupQuery): Promise<EntityGroup[]> {
    // Groups aggregate over every channel: the view holds every channel's contributions by then.
    if (q.asOf !== undefined) return this.asOfView(q.asOf, undefined, (v) => v.entityGroups({ ...q, asOf: undefined }));
    const rows = await this.read('entityGroups', (tx) =>
      run(
        tx,
        `MATCH (k:Entity {ns: $ns})
         WHERE ($c IS NULL OR k.channel_id = $c) AND ($type IS NULL OR k.type = $type)
           AND ($cs IS NULL OR k.channel_id IN $cs)
         WITH DISTINCT k.type AS type, k.norm AS norm
         MATCH (e:Entity {ns: $ns, norm: norm}) WHERE e.type = type AND ($cs IS NULL OR e.channel_id IN $cs)
         RETURN e.id AS id, e.type AS type, e.norm AS norm, e.name AS name, e.channel_id AS channel_id,
                e.mention_count AS mentions, e.message_ts AS first, e.source_fact_ids AS facts,
                e.last_mentioned_at AS last`,
        { ns: this.namespace, c: q.channelId ?? null, cs: q.channels ? [...q.channels] : null, type: q.type ?? null },
      ),
    );
    return entityGroupsOf(rows, q.limit);
  }

  /** Entities (nodes) and REL relationships of this namespace. */
  /**
   * Runs `fn` on the graph as it stood at `asOf` (GraphAsOf; issue 27 point 2): the contributions of messages at or
   * before it (in `channelId`, or every channel) are read back (neo4j/as-of.ts) and applied to a scratch namespace of
   * this database, which folds them exactly as the store folds today; relationships not valid on the as-of date are
   * dropped there and created_at/updated_at set to message times; `fn` reads that view, which is deleted after.
   * Cost: the contributions by then are written once per read.
   */
  private async asOfView<T>(
    asOf: string,
    channelId: string | undefined,
    fn: (view: Neo4jGraphStore) => Promise<T>,
  ): Promise<T> {
    const at = new Date(asOf).toISOString();
    const sets = await this.read('asOf', (tx) => contributionsAsOf(tx, this.namespace, at, channelId));
    const view = new Neo4jGraphStore({ ...this.opts, namespace: `${this.namespace}:as-of:${randomUUID()}` });
    try {
      await view.applyMessageGraphs(sets);
      await view.write('asOf', (tx) => settleAsOfView(tx, view.namespace, at.slice(0, 10)));
      return await fn(view);
    } finally {
      await view.truncate().catch(() => undefined);
      await view.close();
    }
  }

  async counts(channelId?: string): Promise<{ nodes: number; relationships: number }> {
    return this.read('counts', async (tx) => {
      const p = { ns: this.namespace, c: channelId ?? null };
      const inChannel = 'WHERE $c IS NULL OR e.channel_id = $c';
      const [n] = await run(tx, `MATCH (e:Entity {ns: $ns}) ${inChannel} RETURN count(e) AS n`, p);
      const [r] = await run(
        tx,
        `MATCH (e:Entity {ns: $ns})-[r:REL]->(:Entity {ns: $ns}) ${inChannel} RETURN count(r) AS n`,
        p,
      );
      return { nodes: (n?.n as number) ?? 0, relationships: (r?.n as number) ?? 0 };
    });
  }

  /** Runs `RETURN 1` on the database; AtlasError STORE_UNAVAILABLE (retriable) when the server does not answer. */
  async ping(): Promise<void> {
    await this.call('ping', async () => {
      const session = this.driver.session(this.sessionConfig('READ'));
      try {
        await session.run('RETURN 1');
      } finally {
        await session.close();
      }
    });
  }

  /** Closes the driver's connections. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      noDelayOff(this.port);
    }
    await this.driver.close();
  }

  // ------------------------------------------------------------------------------------------------ plumbing

  private entity(e: Row): GraphEntity {
    const confidence = (e.confidence as number | undefined) ?? 0;
    return {
      id: e.id as string,
      name: e.name as string,
      type: e.type as EntityType,
      scope: 'channel',
      channel_id: e.channel_id as string,
      status: confidence >= this.threshold ? 'active' : 'pending',
      properties: e.props ? (JSON.parse(e.props as string) as Record<string, string>) : {},
      aliases: (e.aliases as string[] | undefined) ?? [],
      source_fact_ids: (e.source_fact_ids as string[] | undefined) ?? [],
      created_at: e.created_at as string,
      updated_at: e.updated_at as string,
      source_message_id: e.source_message_id as string,
      message_ts: e.message_ts as string,
      confidence,
      mention_count: (e.mention_count as number | undefined) ?? 0,
      last_mentioned_at: e.last_mentioned_at as string,
    };
  }

  private sessionConfig(mode: 'READ' | 'WRITE') {
    return {
      defaultAccessMode: mode === 'READ' ? neo4j.session.READ : neo4j.session.WRITE,
      ...(this.opts.database ? { database: this.opts.database } : {}),
    };
  }

  private ensureSchema(): Promise<void> {
    this.schema ??= (async () => {
      const session = this.driver.session(this.sessionConfig('WRITE'));
      try {
        for (const ddl of SCHEMA) {
          try {
            await session.executeWrite((tx) => tx.run(ddl));
          } catch (e) {
            // Another store created the same rule meanwhile.
            if (!(e instanceof Neo4jError && /AlreadyExists/.test(e.code))) throw e;
          }
        }
      } finally {
        await session.close();
      }
    })().catch((e: unknown) => {
      this.schema = undefined;
      throw e;
    });
    return this.schema;
  }

  private write<T>(what: string, fn: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
    return this.call(what, async () => {
      await this.ensureSchema();
      const session = this.driver.session(this.sessionConfig('WRITE'));
      try {
        return await session.executeWrite(fn);
      } finally {
        await session.close();
      }
    });
  }

  private read<T>(what: string, fn: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
    return this.call(what, async () => {
      const session = this.driver.session(this.sessionConfig('READ'));
      try {
        return await session.executeRead(fn);
      } finally {
        await session.close();
      }
    });
  }

  /** Runs fn and turns driver failures into AtlasError (STORE_UNAVAILABLE when a later retry can succeed). */
  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof AtlasError) throw e;
      const msg = `${what} on ${this.opts.url}: ${e instanceof Error ? e.message : String(e)}`;
      if (isUnavailable(e)) {
        throw new AtlasError('STORE_UNAVAILABLE', `graph store unavailable: ${msg}`, { retriable: true, cause: e });
      }
      const code = e instanceof Neo4jError ? e.code : undefined;
      throw new AtlasError('INTERNAL_ERROR', `graph store refused ${msg}`, { cause: e, details: { code } });
    }
  }
}
