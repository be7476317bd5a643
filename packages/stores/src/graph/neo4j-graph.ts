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
 * option changes only how bytes are packed into segments). Measured: ~45 ms → 2-8 ms per query, ~150 → ~25 ms per
 * small applyMessageGraphs.
 */

import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import {
  AtlasError,
  type EntitiesExtracted,
  type EntityType,
  normalizeEntityName,
  type RelationshipType,
  relationshipUuid,
} from '@atlas/core';
import neo4j, { type Driver, type ManagedTransaction, Neo4jError } from 'neo4j-driver';
import type {
  EntityGroup,
  EntityQuery,
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

type Row = Record<string, unknown>;

interface MentionRow {
  uuid: string;
  ts: string;
  smid: string;
  ord: number;
  name: string;
  aliases: string[];
  confidence: number;
  fact_ids: string[];
  props: string;
}

interface EvidenceRow {
  message_uuid: string;
  channel_id: string;
  rel_id: string;
  type: string;
  source_id: string;
  target_id: string;
  confidence: number;
  valid_from: string;
  valid_until: string | null;
  context: string;
  source_fact_id: string | null;
  source_message_id: string;
  message_ts: string;
  ord: number;
}

interface FoldState {
  entities: { id: string; mentions: MentionRow[] }[];
  supersessions: Row[];
  evidence: EvidenceRow[];
}

interface RelRef {
  id: string;
  source_id: string;
  target_id: string;
}

const LABELS = ['Message', 'Entity', 'RelEvidence', 'Supersession', 'ChannelLock'] as const;

/** Constraints and indexes; every name carries the `atlas_` prefix. All are created IF NOT EXISTS. */
const SCHEMA = [
  'CREATE CONSTRAINT atlas_entity_id IF NOT EXISTS FOR (n:Entity) REQUIRE (n.ns, n.id) IS UNIQUE',
  'CREATE CONSTRAINT atlas_message_uuid IF NOT EXISTS FOR (n:Message) REQUIRE (n.ns, n.uuid) IS UNIQUE',
  'CREATE CONSTRAINT atlas_channel_lock IF NOT EXISTS FOR (n:ChannelLock) REQUIRE (n.ns, n.channel_id) IS UNIQUE',
  'CREATE INDEX atlas_entity_channel IF NOT EXISTS FOR (n:Entity) ON (n.ns, n.channel_id)',
  'CREATE INDEX atlas_entity_norm IF NOT EXISTS FOR (n:Entity) ON (n.ns, n.norm)',
  'CREATE INDEX atlas_message_channel IF NOT EXISTS FOR (n:Message) ON (n.ns, n.channel_id)',
  'CREATE INDEX atlas_evidence_message IF NOT EXISTS FOR (n:RelEvidence) ON (n.ns, n.message_uuid)',
  'CREATE INDEX atlas_evidence_rel IF NOT EXISTS FOR (n:RelEvidence) ON (n.ns, n.rel_id)',
  'CREATE INDEX atlas_evidence_channel IF NOT EXISTS FOR (n:RelEvidence) ON (n.ns, n.channel_id)',
  'CREATE INDEX atlas_supersession_message IF NOT EXISTS FOR (n:Supersession) ON (n.ns, n.message_uuid)',
  'CREATE INDEX atlas_supersession_old IF NOT EXISTS FOR (n:Supersession) ON (n.ns, n.old_entity_id)',
  'CREATE INDEX atlas_supersession_new IF NOT EXISTS FOR (n:Supersession) ON (n.ns, n.new_entity_id)',
  'CREATE INDEX atlas_supersession_channel IF NOT EXISTS FOR (n:Supersession) ON (n.ns, n.channel_id)',
];

const DELETE_BATCH = 5000;

/**
 * GraphStore on Neo4j 5 (see the top of this file for the data model). Connections are opened lazily; the first
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

  /** Replaces each message's mentions, relationship evidence and supersessions, then re-folds what they touched. */
  async applyMessageGraphs(sets: readonly EntitiesExtracted[]): Promise<void> {
    if (sets.length === 0) return;
    for (const set of sets) validateEntitySet(set);
    // The last set of a message is its contribution: earlier sets of the same message in the batch are replaced.
    const last = new Map<string, EntitiesExtracted>();
    for (const s of sets) {
      last.delete(s.messageId);
      last.set(s.messageId, s);
    }
    const finals = [...last.values()];
    const uuids = finals.map((s) => s.messageId);
    const now = new Date().toISOString();

    const messages: Row[] = [];
    const mentions: Row[] = [];
    const evidence: Row[] = [];
    const supersessions: Row[] = [];
    for (const s of finals) {
      const ts = isoTs(s.messageTs);
      if (s.entities.length > 0) {
        messages.push({
          uuid: s.messageId,
          channel_id: s.channelId,
          source_message_id: s.sourceMessageId,
          message_ts: ts,
        });
      }
      s.entities.forEach((e, ord) => {
        mentions.push({
          uuid: s.messageId,
          entity_id: e.entityId,
          channel_id: s.channelId,
          type: e.type,
          ord,
          name: e.name,
          aliases: [...new Set(e.aliases.filter((a) => a.trim() !== ''))],
          confidence: e.confidence,
          fact_ids: [...new Set(e.factIds)],
          props: JSON.stringify(e.properties),
        });
      });
      s.relationships.forEach((r, ord) => {
        evidence.push({
          ns: this.namespace,
          message_uuid: s.messageId,
          channel_id: s.channelId,
          rel_id: relationshipUuid(r.type, r.sourceId, r.targetId),
          type: r.type,
          source_id: r.sourceId,
          target_id: r.targetId,
          confidence: r.confidence,
          valid_from: r.validFrom.slice(0, 10),
          valid_until: r.validUntil === null ? null : r.validUntil.slice(0, 10),
          context: r.context,
          source_fact_id: r.sourceFactId,
          source_message_id: s.sourceMessageId,
          message_ts: ts,
          ord,
        });
      });
      s.supersessions.forEach((x, ord) => {
        // Without both entity ids a supersession concerns facts only: nothing of the graph depends on it.
        if (x.oldEntityId === null || x.newEntityId === null) return;
        supersessions.push({
          ns: this.namespace,
          message_uuid: s.messageId,
          channel_id: s.channelId,
          message_ts: ts,
          ord,
          fact_id: x.factId,
          superseded_by: x.supersededBy,
          old_entity_id: x.oldEntityId,
          new_entity_id: x.newEntityId,
          certain: x.certain,
          invalid_at: x.invalidAt,
          reason: x.reason,
        });
      });
    }

    const channels = [...new Set(finals.map((s) => s.channelId))].sort();

    await this.write('applyMessageGraphs', async (tx) => {
      const ns = this.namespace;
      // 1. lock the channels, collect what the messages contributed before, replace it (one round trip)
      const [old] = await run(
        tx,
        `CALL () {
           UNWIND $channels AS c
           MERGE (l:ChannelLock {ns: $ns, channel_id: c})
           SET l.locked_at = $now
         }
         CALL () {
           MATCH (m:Message {ns: $ns})-[:MENTIONS]->(e:Entity) WHERE m.uuid IN $uuids
           RETURN collect(DISTINCT e.id) AS entities
         }
         CALL () {
           MATCH (v:RelEvidence {ns: $ns}) WHERE v.message_uuid IN $uuids
           RETURN collect(DISTINCT {id: v.rel_id, source_id: v.source_id, target_id: v.target_id}) AS rels
         }
         CALL () {
           MATCH (s:Supersession {ns: $ns}) WHERE s.message_uuid IN $uuids
           RETURN collect(DISTINCT s.old_entity_id) AS superseded
         }
         CALL () { MATCH (m:Message {ns: $ns}) WHERE m.uuid IN $uuids DETACH DELETE m }
         CALL () { MATCH (v:RelEvidence {ns: $ns}) WHERE v.message_uuid IN $uuids DELETE v }
         CALL () { MATCH (s:Supersession {ns: $ns}) WHERE s.message_uuid IN $uuids DELETE s }
         CALL () {
           UNWIND $messages AS r
           CREATE (:Message {ns: $ns, uuid: r.uuid, channel_id: r.channel_id, source_message_id: r.source_message_id,
                             message_ts: r.message_ts})
         }
         CALL () {
           UNWIND $mentions AS r
           MATCH (m:Message {ns: $ns, uuid: r.uuid})
           MERGE (e:Entity {ns: $ns, id: r.entity_id})
             ON CREATE SET e.channel_id = r.channel_id, e.type = r.type, e.name = r.name, e.mention_count = 0
           CREATE (m)-[:MENTIONS {ord: r.ord, name: r.name, aliases: r.aliases, confidence: r.confidence,
                                  fact_ids: r.fact_ids, props: r.props}]->(e)
         }
         CALL () { UNWIND $evidence AS r CREATE (v:RelEvidence) SET v = r }
         CALL () { UNWIND $supersessions AS r CREATE (s:Supersession) SET s = r }
         RETURN entities, rels, superseded`,
        { ns, now, channels, uuids, messages, mentions, evidence, supersessions },
      );
      const touched = new Set<string>([
        ...((old?.entities as string[]) ?? []),
        ...((old?.superseded as string[]) ?? []),
        ...mentions.map((m) => m.entity_id as string),
        ...supersessions.map((x) => x.old_entity_id as string),
      ]);
      const rels = new Map<string, RelRef>();
      for (const r of (old?.rels as RelRef[]) ?? []) rels.set(r.id, r);
      for (const v of evidence) {
        const id = v.rel_id as string;
        rels.set(id, { id, source_id: v.source_id as string, target_id: v.target_id as string });
      }
      // 2. read what the folds need (one round trip), 3. fold in TypeScript and write (one round trip)
      const state = await this.readFoldState(tx, [...touched], [...rels.keys()]);
      const entities = this.foldEntities(state, now);
      const relationships = this.foldRelationships(state.evidence, [...rels.values()]);
      await run(
        tx,
        `CALL () {
           UNWIND $entityRows AS r
           MATCH (e:Entity {ns: $ns, id: r.id})
           SET e += r.fields, e.created_at = coalesce(e.created_at, $now)
         }
         CALL () { MATCH (e:Entity {ns: $ns}) WHERE e.id IN $goneEntities DETACH DELETE e }
         CALL () {
           UNWIND $goneRels AS r
           MATCH (:Entity {ns: $ns, id: r.source_id})-[x:REL {id: r.id}]->(:Entity {ns: $ns, id: r.target_id})
           DELETE x
         }
         CALL () {
           UNWIND $relRows AS r
           MATCH (a:Entity {ns: $ns, id: r.source_id}), (b:Entity {ns: $ns, id: r.target_id})
           MERGE (a)-[x:REL {id: r.id}]->(b)
             ON CREATE SET x.created_at = $now
           SET x += r.fields
         }
         RETURN count(*) AS done`,
        {
          ns,
          now,
          entityRows: entities.rows,
          goneEntities: entities.gone,
          goneRels: relationships.gone,
          relRows: relationships.rows,
        },
      );
    });
  }

  /**
   * One read for the folds: the mentions of the touched entities and of the entities a certain supersession says
   * a touched one replaced (their superseded_by shows its name), those supersessions with their new entity's
   * current name and message_ts, and the evidence of the touched relationships.
   */
  private async readFoldState(tx: ManagedTransaction, touched: string[], relIds: string[]): Promise<FoldState> {
    const [r] = await run(
      tx,
      `CALL () {
         MATCH (s:Supersession {ns: $ns}) WHERE s.new_entity_id IN $ids AND s.certain
         RETURN $ids + [x IN collect(DISTINCT s.old_entity_id) WHERE NOT x IN $ids] AS ids
       }
       CALL (ids) {
         UNWIND ids AS id
         MATCH (e:Entity {ns: $ns, id: id})
         OPTIONAL MATCH (m:Message)-[k:MENTIONS]->(e)
         WITH e, collect(CASE WHEN m IS NULL THEN null ELSE {uuid: m.uuid, ts: m.message_ts, smid: m.source_message_id,
           ord: k.ord, name: k.name, aliases: k.aliases, confidence: k.confidence, fact_ids: k.fact_ids, props: k.props}
           END) AS mentions
         RETURN collect({id: e.id, mentions: mentions}) AS entities
       }
       CALL (ids) {
         MATCH (s:Supersession {ns: $ns}) WHERE s.old_entity_id IN ids AND s.certain
         OPTIONAL MATCH (n:Entity {ns: $ns, id: s.new_entity_id})
         RETURN collect({old_id: s.old_entity_id, new_id: s.new_entity_id, ts: s.message_ts, uuid: s.message_uuid,
                         ord: s.ord, new_name: n.name, new_ts: n.message_ts}) AS supersessions
       }
       CALL () {
         MATCH (v:RelEvidence {ns: $ns}) WHERE v.rel_id IN $relIds
         RETURN collect(v {.*}) AS evidence
       }
       RETURN entities, supersessions, evidence`,
      { ns: this.namespace, ids: touched, relIds },
    );
    return {
      entities: (r?.entities as FoldState['entities']) ?? [],
      supersessions: (r?.supersessions as Row[]) ?? [],
      evidence: (r?.evidence as EvidenceRow[]) ?? [],
    };
  }

  /**
   * Folds entities from their mentions (see GraphStore): rows to SET on the Entity nodes, and the ids of those left
   * without a mention (deleted with their relationships).
   */
  private foldEntities(state: FoldState, now: string): { rows: Row[]; gone: string[] } {
    // Pass 1: everything but the supersession overlay (which needs the new entities' folded names).
    const folded = new Map<string, Row>();
    const gone = new Set<string>();
    for (const r of state.entities) {
      const id = r.id;
      const ms = r.mentions.sort((a, b) => tsMs(a.ts) - tsMs(b.ts) || cmp(a.uuid, b.uuid) || a.ord - b.ord);
      const first = ms[0];
      if (!first) {
        gone.add(id);
        continue;
      }
      const lowerName = first.name.toLowerCase();
      const aliases = [...new Set(ms.flatMap((m) => m.aliases))].filter((a) => a.toLowerCase() !== lowerName).sort();
      const props: Record<string, string> = {};
      for (const m of ms) Object.assign(props, JSON.parse(m.props) as Record<string, string>);
      let keep = 1;
      for (const m of ms) keep *= 1 - m.confidence;
      folded.set(id, {
        name: first.name,
        norm: normalizeEntityName(first.name),
        aliases,
        alias_norms: [...new Set(ms.flatMap((m) => m.aliases).map(normalizeEntityName))].filter((a) => a !== ''),
        source_fact_ids: [...new Set(ms.flatMap((m) => m.fact_ids))],
        props,
        confidence: 1 - keep,
        mention_count: new Set(ms.map((m) => m.uuid)).size,
        source_message_id: first.smid,
        message_ts: first.ts,
        last_mentioned_at: ms.reduce((a, m) => (tsMs(m.ts) > tsMs(a) ? m.ts : a), first.ts),
        updated_at: now,
      });
    }
    // Pass 2: a certain supersession whose new entity exists marks the old entity `superseded`, superseded_by = the
    // new entity's name; among several, the new entity with the latest message_ts wins (then the latest
    // supersession by message time, message id, position). Others wait until their new entity exists.
    const newest = new Map<string, { key: [number, number, string, number]; name: string }>();
    for (const s of state.supersessions) {
      const newId = s.new_id as string;
      if (gone.has(newId)) continue;
      const f = folded.get(newId);
      const name = f ? (f.name as string) : (s.new_name as string | null);
      const newTs = f ? (f.message_ts as string) : (s.new_ts as string | null);
      if (name === null || name === undefined || newTs === null || newTs === undefined) continue;
      const key: [number, number, string, number] = [
        tsMs(newTs),
        tsMs(s.ts as string),
        s.uuid as string,
        s.ord as number,
      ];
      const cur = newest.get(s.old_id as string);
      if (!cur || (key[0] - cur.key[0] || key[1] - cur.key[1] || cmp(key[2], cur.key[2]) || key[3] - cur.key[3]) > 0) {
        newest.set(s.old_id as string, { key, name });
      }
    }
    const rows: Row[] = [];
    for (const [id, { props, ...fields }] of folded) {
      const merged = props as Record<string, string>;
      const sup = newest.get(id);
      if (sup) {
        merged.status = 'superseded';
        merged.superseded_by = sup.name;
      }
      rows.push({ id, fields: { ...fields, props: JSON.stringify(merged) } });
    }
    return { rows, gone: [...gone] };
  }

  /** Folds relationships from their evidence: rows to MERGE, and those left without evidence (deleted). */
  private foldRelationships(evidence: EvidenceRow[], refs: RelRef[]): { rows: Row[]; gone: RelRef[] } {
    const byRel = new Map<string, EvidenceRow[]>();
    for (const v of evidence) {
      const list = byRel.get(v.rel_id) ?? [];
      list.push(v);
      byRel.set(v.rel_id, list);
    }
    const rows: Row[] = [];
    const gone: RelRef[] = [];
    for (const ref of refs) {
      const ev = (byRel.get(ref.id) ?? []).sort(
        (a, b) =>
          cmp(a.valid_from, b.valid_from) ||
          tsMs(a.message_ts) - tsMs(b.message_ts) ||
          cmp(a.message_uuid, b.message_uuid) ||
          a.ord - b.ord,
      );
      const first = ev[0];
      const last = ev[ev.length - 1];
      if (!first || !last) {
        gone.push(ref);
        continue;
      }
      let keep = 1;
      for (const v of ev) keep *= 1 - v.confidence;
      rows.push({
        id: ref.id,
        source_id: first.source_id,
        target_id: first.target_id,
        fields: {
          type: first.type,
          channel_id: first.channel_id,
          confidence: 1 - keep,
          valid_from: first.valid_from,
          valid_until: last.valid_until ?? null,
          context: first.context,
          source_message_id: first.source_message_id,
          source_fact_id: first.source_fact_id ?? null,
        },
      });
    }
    return { rows, gone };
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
  async getEntity(id: string): Promise<GraphEntity | null> {
    const [e] = await this.getEntities([id]);
    return e ?? null;
  }

  /** Entities by ids; unknown ids are left out. */
  async getEntities(ids: readonly string[]): Promise<GraphEntity[]> {
    if (ids.length === 0) return [];
    const rows = await this.read('getEntities', (tx) =>
      run(tx, 'MATCH (e:Entity {ns: $ns}) WHERE e.id IN $ids RETURN e {.*} AS e ORDER BY e.id', {
        ns: this.namespace,
        ids: [...new Set(ids)],
      }),
    );
    return rows.map((r) => this.entity(r.e as Row));
  }

  /** Entities whose normalised name or alias is one of `names` (normalised here); most mentioned first. */
  async findEntities(q: {
    names: readonly string[];
    channelId?: string | undefined;
    type?: EntityType | undefined;
  }): Promise<GraphEntity[]> {
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
  async neighborhood(seedIds: readonly string[], q: { depth: number; limit: number }): Promise<Subgraph> {
    const depth = Math.min(3, Math.max(1, Math.trunc(q.depth) || 1));
    const seeds = [...new Set(seedIds)];
    if (seeds.length === 0) return { nodes: [], edges: [] };
    return this.read('neighborhood', async (tx) => {
      const ns = this.namespace;
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
      const edges = await this.edgesAmong(tx, [...nodes.keys()]);
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
        .slice(0, Math.max(0, Math.trunc(q.limit)));
      const keep = new Set([...ordered, ...others].map((n) => n.id));
      return {
        nodes: [...ordered, ...others],
        edges: edges.filter((e) => keep.has(e.source_id) && keep.has(e.target_id)).sort(byConfidence),
      };
    });
  }

  /** A fewest-hops path (1..maxDepth hops) with Cypher shortestPath; an id in both lists is a path of one node. */
  async shortestPath(
    sourceIds: readonly string[],
    targetIds: readonly string[],
    maxDepth: number,
  ): Promise<Subgraph | null> {
    const src = [...new Set(sourceIds)];
    const tgt = [...new Set(targetIds)];
    if (src.length === 0 || tgt.length === 0) return null;
    const depth = Math.trunc(maxDepth);
    return this.read('shortestPath', async (tx) => {
      const ns = this.namespace;
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
    });
  }

  /**
   * Entities adjacent to at least one member of every group (group members themselves excluded), by the summed
   * confidence of the relationships joining them to the groups, then name; edges: those relationships.
   */
  async commonNeighbors(groups: readonly (readonly string[])[]): Promise<Subgraph> {
    const gs = groups.map((g) => [...new Set(g)]);
    if (gs.length === 0 || gs.some((g) => g.length === 0)) return { nodes: [], edges: [] };
    const members = new Set(gs.flat());
    return this.read('commonNeighbors', async (tx) => {
      const rows = await run(
        tx,
        `UNWIND range(0, size($groups) - 1) AS gi
         UNWIND $groups[gi] AS mid
         MATCH (m:Entity {ns: $ns, id: mid})-[r:REL]-(n:Entity)
         WITH gi, n, r, startNode(r) AS a, endNode(r) AS b
         RETURN gi, ${NODE('n')} AS n, ${EDGE}`,
        { ns: this.namespace, groups: gs },
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
    });
  }

  /**
   * Entity cards: entities grouped by (type, normalised name) across channels. With channelId, the groups that have
   * an entity in that channel, each still aggregated over all channels. entity_ids most mentioned first (then
   * earliest message_ts, id; the first gives the name), channel_ids sorted, fact_count = distinct source facts;
   * groups by fact_count desc, then last_mentioned_at desc, key, type.
   */
  async entityGroups(q: {
    channelId?: string | undefined;
    type?: EntityType | undefined;
    limit: number;
  }): Promise<EntityGroup[]> {
    const rows = await this.read('entityGroups', (tx) =>
      run(
        tx,
        `MATCH (k:Entity {ns: $ns})
         WHERE ($c IS NULL OR k.channel_id = $c) AND ($type IS NULL OR k.type = $type)
         WITH DISTINCT k.type AS type, k.norm AS norm
         MATCH (e:Entity {ns: $ns, norm: norm}) WHERE e.type = type
         RETURN e.id AS id, e.type AS type, e.norm AS norm, e.name AS name, e.channel_id AS channel_id,
                e.mention_count AS mentions, e.message_ts AS first, e.source_fact_ids AS facts,
                e.last_mentioned_at AS last`,
        { ns: this.namespace, c: q.channelId ?? null, type: q.type ?? null },
      ),
    );
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
      .slice(0, Math.max(0, Math.trunc(q.limit)));
  }

  /** Entities (nodes) and REL relationships of this namespace. */
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

  /** Every REL between two of the given entities. */
  private async edgesAmong(tx: ManagedTransaction, ids: string[]): Promise<GraphRelationship[]> {
    const rows = await run(
      tx,
      `MATCH (a:Entity {ns: $ns})-[r:REL]->(b:Entity {ns: $ns}) WHERE a.id IN $ids AND b.id IN $ids RETURN ${EDGE}`,
      { ns: this.namespace, ids },
    );
    return rows.map(edgeOf);
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

/** Open stores per Bolt port: client sockets to these ports get TCP_NODELAY (see the top of this file). */
const noDelayPorts = new Map<number, number>();
const NET_CLIENT_SOCKET = 'net.client.socket';

const onClientSocket = (message: unknown): void => {
  const socket = (message as { socket?: Socket } | null)?.socket;
  socket?.once('connect', () => {
    if (socket.remotePort !== undefined && noDelayPorts.has(socket.remotePort)) socket.setNoDelay(true);
  });
};

const noDelayOn = (port: number): void => {
  if (noDelayPorts.size === 0) diagnostics.subscribe(NET_CLIENT_SOCKET, onClientSocket);
  noDelayPorts.set(port, (noDelayPorts.get(port) ?? 0) + 1);
};

const noDelayOff = (port: number): void => {
  const n = (noDelayPorts.get(port) ?? 1) - 1;
  if (n > 0) noDelayPorts.set(port, n);
  else noDelayPorts.delete(port);
  if (noDelayPorts.size === 0) diagnostics.unsubscribe(NET_CLIENT_SOCKET, onClientSocket);
};

/** Port of a bolt://, neo4j:// (+s, +ssc) URL; 7687 when it names none. */
const boltPort = (url: string): number => {
  const m = /^[a-z0-9+]+:\/\/(?:[^@/]*@)?(?:\[[^\]]*\]|[^:/?#]*)(?::(\d+))?/i.exec(url);
  return m?.[1] ? Number(m[1]) : 7687;
};

/** Connection-level failures and Neo4j's transient errors (the driver has already retried those for 5 s). */
const isUnavailable = (e: unknown): boolean => {
  if (e instanceof Neo4jError) {
    if (['ServiceUnavailable', 'SessionExpired'].includes(e.code) || e.code.startsWith('Neo.TransientError.')) {
      return true;
    }
  }
  const text = e instanceof Error ? `${(e as { code?: unknown }).code ?? ''} ${e.message}` : String(e);
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EPIPE|socket hang up/i.test(text);
};

const NODE = (v: string) => `${v} {.id, .name, .type, .channel_id}`;
/** Projection of a REL `r` from `a` to `b` that edgeOf reads. */
const EDGE = 'r {.*} AS r, a.id AS a_id, a.name AS a_name, b.id AS b_id, b.name AS b_name';

const edgeOf = (row: Row): GraphRelationship => {
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
const byConfidence = (a: GraphRelationship, b: GraphRelationship): number =>
  b.confidence - a.confidence || cmp(a.valid_from, b.valid_from) || cmp(a.id, b.id);

const run = async (tx: ManagedTransaction, cypher: string, params: Row = {}): Promise<Row[]> =>
  (await tx.run(cypher, params)).records.map((r) => r.toObject() as Row);

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const limitOf = (n: number) => neo4j.int(Math.max(0, Math.trunc(n)));

const tsMs = (s: string): number => {
  const t = Date.parse(s);
  return Number.isNaN(t) ? 0 : t;
};

/** ISO 8601 UTC with milliseconds; left as given when it does not parse. */
const isoTs = (s: string): string => {
  const t = Date.parse(s);
  return Number.isNaN(t) ? s : new Date(t).toISOString();
};
