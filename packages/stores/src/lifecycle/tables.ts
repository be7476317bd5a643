/** The lifecycle store's tables (migrateLifecycle). A type, not an interface: `withTables<T>()` needs an index signature. */
export type LifecycleTables = {
  lifecycle_facts: { fact_id: string; channel_id: string; message_id: string; message_ts: string; data: string };
  lifecycle_signals: { message_id: string; channel_id: string; ts: string; data: string };
  lifecycle_supersessions: {
    message_id: string;
    channel_id: string;
    fact_id: string;
    superseded_by: string;
    invalid_at: string;
    certain: boolean;
  };
  lifecycle_resolutions: {
    contradiction_id: string;
    channel_id: string;
    fact_id: string;
    superseded_by: string;
    outcome: string;
  };
  lifecycle_items: {
    item_id: string;
    channel_id: string;
    kind: string;
    state: string;
    owner: string | null;
    due_date: string | null;
    created_at: string;
    updated_at: string;
    superseded_by: string | null;
    data: string;
  };
};
