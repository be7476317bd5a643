import type { Generated } from 'kysely';
import type { DocumentTables } from '../documents/tables.js';

/**
 * The reconciler's read store (intent-store.ts; migrateIntents creates it), and the document store's `memories`
 * it reads (same database, read only). Times as the driver returns them (Date or ISO string). A type, not an
 * interface: `withTables<T>()` takes only types with an implicit index signature.
 */
export type IntentTables = {
  write_intents: {
    intent_id: string;
    message_id: string;
    channel_id: string;
    fact_count: Generated<number>;
    extracted_at: string | null;
    facts_partition: number | null;
    facts_offset: number | null;
    created_at: Date | string | null;
    vector_status: string | null;
    vector_error: string | null;
    graph_status: string | null;
    graph_error: string | null;
    retry_count: Generated<number>;
    state: Generated<string>;
    last_attempt_at: Date | string | null;
    updated_at: Date | string;
  };
  memories: Pick<DocumentTables['memories'], 'id' | 'message_uuid'>;
};
