type Time = Date | string;

/**
 * The ask store's tables (ask-store.ts; migrateAsk creates them). Times as the driver returns them (Date or ISO
 * string); `citations` and `metadata` JSON text on write, parsed (or text) on read. A type, not an interface:
 * `withTables<T>()` takes only types with an implicit index signature.
 */
export type AskTables = {
  ask_sessions: {
    session_id: string;
    channel_id: string | null;
    /** Who made it (AskScope.owner); null: the open local default or the bootstrap key. */
    owner: string | null;
    created_at: Time;
    last_activity: Time;
  };
  ask_messages: {
    message_id: string;
    session_id: string;
    seq: number;
    role: 'user' | 'assistant';
    content: string;
    citations: unknown;
    created_at: Time;
    metadata: unknown;
  };
  ask_feedback: {
    message_id: string;
    session_id: string;
    rating: 'up' | 'down';
    comment: string | null;
    created_at: Time;
    updated_at: Time;
  };
};
