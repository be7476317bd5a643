import type { Generated } from 'kysely';
import type { DeadLetterRecord, DeadLetterStatus } from './port.js';

/**
 * The dead-letters projector's read store (dead-letter-store.ts; migrateDeadLetters creates it). Times as the driver
 * returns them (Date or ISO string). A type, not an interface: `withTables<T>()` takes only types with an implicit
 * index signature.
 */
export type DeadLetterTables = {
  dead_letters: Pick<
    DeadLetterRecord,
    'id' | 'topic' | 'partition' | 'offset' | 'event_type' | 'key' | 'error' | 'error_code' | 'attempts'
  > & {
    group_name: string;
    failed_at: Date | string;
    /** The original event's data as JSON text, or null when the DeadLettered event did not keep it. */
    event_data: string | null;
    status: Generated<DeadLetterStatus>;
    redriven_at: Date | string | null;
    redrive_topic: string | null;
    redrive_partition: number | null;
    redrive_offset: number | null;
    updated_at: Generated<Date | string>;
  };
};
