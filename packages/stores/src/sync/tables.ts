import type { Generated } from 'kysely';
import type { DocumentTables } from '../documents/tables.js';

type Time = Date | string;

/**
 * The sync jobs read store (sync-store.ts; migrateSync creates it), the schedules (schedule-store.ts;
 * migrateSyncSchedules), and the document store's tables the sync store reads (same database, read only). Times as
 * the driver returns them (Date or ISO string). A type, not an interface: `withTables<T>()` takes only types with
 * an implicit index signature.
 */
export type SyncTables = {
  sync_jobs: {
    job_id: string;
    channel_id: string;
    connection_id: string | null;
    platform: string | null;
    force: Generated<boolean>;
    estimated_messages: Generated<number>;
    requested_by: string | null;
    requested_at: Time | null;
    cancel_requested_at: Time | null;
    seq: Generated<number>;
    status: Generated<string>;
    stage: string | null;
    total_messages: Generated<number>;
    processed_messages: Generated<number>;
    failing_messages: Generated<number>;
    percentage: Generated<number>;
    started_at: Time | null;
    estimated_completion: Time | null;
    completed_at: Time | null;
    cursor: string | null;
    messages_synced: Generated<number>;
    facts_extracted: Generated<number>;
    entities_created: Generated<number>;
    /** JSON text on write, parsed (or text) on read. */
    error: unknown;
    updated_at: Generated<Time>;
  };
  sync_channels: {
    channel_id: string;
    cursor: string | null;
    last_sync: Time | null;
    last_job_id: string | null;
    updated_at: Generated<Time>;
  };
  sync_schedules: { channel_id: string; schedule: string; enabled: boolean; updated_at: Time };
  messages: Pick<DocumentTables['messages'], 'channel_id' | 'id' | 'platform' | 'thread_ts' | 'ts' | 'deleted_at'>;
  memories: Pick<DocumentTables['memories'], 'id' | 'channel_id' | 'created_at'>;
  memory_entities: Pick<DocumentTables['memory_entities'], 'fact_id' | 'entity_id' | 'channel_id'>;
};
