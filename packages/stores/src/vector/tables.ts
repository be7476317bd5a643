import type { FactsExtracted } from '@atlas/core';
import type { ColumnType, Generated } from 'kysely';

/**
 * The embedding backlog (backlog.ts; migrateEmbeddingBacklog creates it). The vectors themselves live in one table
 * per dimension (`vector_facts_<dim>`, pgvector-store.ts), which no static interface names. A type, not an interface:
 * `withTables<T>()` takes only types with an implicit index signature.
 */
export type VectorTables = {
  embedding_backlog: {
    message_id: string;
    /** The queued set: JSON text on write, parsed on read (the store also accepts text). */
    payload: ColumnType<FactsExtracted, string, string>;
    queued_at: Generated<Date | string>;
  };
};
