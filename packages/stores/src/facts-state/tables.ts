/** The facts projector's conversation state (thread-roots.ts; migrateFactsState creates them).
 * A type, not an interface:
 * `withTables<T>()` takes only types with an implicit index signature. */
export type FactsStateTables = {
  facts_thread_roots: { channel_id: string; root_id: string; text: string; author_name: string };
  facts_channel_flow: {
    channel_id: string;
    message_id: string;
    message_at: Date | string;
    message_ts: string;
    text: string;
    author_name: string;
  };
};
