import type { Config } from '@atlas/core';
import type { Db } from '@atlas/db';
import { PgVectorStore } from './pgvector-store.js';
import type { VectorStore } from './port.js';
import { QdrantVectorStore } from './qdrant-store.js';

/** The vector store adapter configuration picks: `qdrant` when QDRANT_URL is set, else `pgvector`. */
export const vectorStoreKind = (cfg: Pick<Config, 'QDRANT_URL'>): 'qdrant' | 'pgvector' =>
  cfg.QDRANT_URL ? 'qdrant' : 'pgvector';

/**
 * The vector store of vectors `dim` long in the index `index` (a vector space's, spaces.ts; default the pre-space
 * `<prefix>_<dim>` collection or `vector_facts_<dim>` table), unguarded: Qdrant at QDRANT_URL (QDRANT_API_KEY, collection
 * QDRANT_COLLECTION, made on first use), else pgvector in `db` (its migration migrateVectors runs first). pgvector
 * keeps channel matrices in memory up to VECTOR_MEMORY_INDEX_MB (MiB; 4 bytes a dimension), and none with
 * DATABASE_URL (other processes write a server database, so a process's matrices would go stale). Reaches no server.
 */
export const createVectorStore = (
  cfg: Config,
  db: Db,
  dim: number,
  index?: string,
): VectorStore & { drop(): Promise<void> } =>
  cfg.QDRANT_URL
    ? new QdrantVectorStore({
        url: cfg.QDRANT_URL,
        apiKey: cfg.QDRANT_API_KEY,
        collection: cfg.QDRANT_COLLECTION,
        collectionName: index,
        dim,
      })
    : new PgVectorStore(db, dim, {
        memoryIndexMaxVectors: cfg.DATABASE_URL ? 0 : Math.floor((cfg.VECTOR_MEMORY_INDEX_MB * 2 ** 20) / (4 * dim)),
        ...(index ? { table: index } : {}),
      });
