/** Kysely table types of the embedded log (int8 columns come back as string or number: use Number()). */
export interface EventLogTables {
  eventlog_topics: { name: string; partitions: number };
  eventlog_partitions: { topic: string; partition: number; next_offset: number | string };
  eventlog_records: {
    topic: string;
    partition: number;
    offset: number | string;
    key: string;
    type: string;
    value: Uint8Array;
    timestamp: number | string;
  };
  eventlog_offsets: { group_id: string; topic: string; partition: number; next_offset: number | string };
  eventlog_members: { group_id: string; member_id: string; heartbeat_at: number | string };
  eventlog_leases: {
    group_id: string;
    topic: string;
    partition: number;
    member_id: string;
    expires_at: number | string;
  };
}
