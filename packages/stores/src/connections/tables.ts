type Time = Date | string;

/**
 * The connection store's tables (connection-store.ts; migrateConnections creates them). Times as the driver returns
 * them (Date or ISO string); `settings` JSON text on write, parsed (or text) on read; `credentials` the encrypted
 * envelope. A type, not an interface: `withTables<T>()` takes only types with an implicit index signature.
 */
export type ConnectionTables = {
  connections: {
    id: string;
    name: string;
    platform: 'platform_a' | 'platform_b';
    status: 'connected' | 'disconnected' | 'error';
    created_at: Time;
    updated_at: Time;
    last_sync: Time | null;
    validated_at: Time | null;
    settings: unknown;
    credentials: string;
  };
  connection_channels: {
    connection_id: string;
    channel_id: string;
    name: string;
    is_private: boolean;
    member_count: number;
    sync_enabled: boolean;
    updated_at: Time;
  };
};
