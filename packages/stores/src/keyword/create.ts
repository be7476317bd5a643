import type { Config } from '@atlas/core';
import type { Db } from '@atlas/db';
import { ElasticsearchKeywordIndex } from './elasticsearch-index.js';
import type { KeywordIndex } from './port.js';
import { PostgresKeywordIndex } from './postgres-index.js';

/** The keyword index adapter configuration picks: `elasticsearch` when ELASTICSEARCH_URL is set, else `postgres`. */
export const keywordIndexKind = (cfg: Pick<Config, 'ELASTICSEARCH_URL'>): 'elasticsearch' | 'postgres' =>
  cfg.ELASTICSEARCH_URL ? 'elasticsearch' : 'postgres';

/**
 * The keyword index, unguarded: Elasticsearch (or OpenSearch) at ELASTICSEARCH_URL, index ELASTICSEARCH_INDEX, else
 * Postgres full text in `db` (migrateKeywordIndex runs first). Reaches no server.
 */
export const createKeywordIndex = (cfg: Config, db: Db): KeywordIndex =>
  cfg.ELASTICSEARCH_URL
    ? new ElasticsearchKeywordIndex({ url: cfg.ELASTICSEARCH_URL, index: cfg.ELASTICSEARCH_INDEX })
    : new PostgresKeywordIndex(db);
