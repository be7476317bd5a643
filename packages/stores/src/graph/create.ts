import type { Config } from '@atlas/core';
import type { Db } from '@atlas/db';
import { Neo4jGraphStore } from './neo4j-graph.js';
import type { GraphStore } from './port.js';
import { PostgresGraphStore } from './postgres-graph.js';

/** The graph store adapter configuration picks: `neo4j` when NEO4J_URL is set, else `postgres`. */
export const graphStoreKind = (cfg: Pick<Config, 'NEO4J_URL'>): 'neo4j' | 'postgres' =>
  cfg.NEO4J_URL ? 'neo4j' : 'postgres';

/**
 * The knowledge graph store, unguarded: Neo4j at NEO4J_URL (NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE, nodes under
 * NEO4J_NAMESPACE), else Postgres tables in `db` (migrateGraph runs first). Both keep entities whose confidence
 * reaches ENTITY_THRESHOLD (0..1). Reaches no server: Neo4j is dialled on the first call.
 */
export const createGraphStore = (cfg: Config, db: Db): GraphStore =>
  cfg.NEO4J_URL
    ? new Neo4jGraphStore({
        url: cfg.NEO4J_URL,
        user: cfg.NEO4J_USER,
        password: cfg.NEO4J_PASSWORD,
        database: cfg.NEO4J_DATABASE,
        namespace: cfg.NEO4J_NAMESPACE,
        entityThreshold: cfg.ENTITY_THRESHOLD,
      })
    : new PostgresGraphStore(db, { entityThreshold: cfg.ENTITY_THRESHOLD });
