type Time = Date | string;

/**
 * The channel-access read store's tables (access-store.ts; migrateAccess creates them), written only by the
 * channel-access projector from ChannelMembershipObserved (atlas.access). Times as the driver returns them (Date or
 * ISO string). A type, not an interface: `withTables<T>()` takes only types with an implicit index signature.
 * - `channel_access`: per channel its latest observation: platform, connection (null: an import), private or not,
 *   whether a member list is known (`members_known` false = public to the workspace), source and observed_at;
 * - `channel_access_members`: the member user ids of that latest observation.
 */
export type AccessTables = {
  channel_access: {
    channel_id: string;
    platform: 'platform_a' | 'platform_b';
    connection_id: string | null;
    is_private: boolean;
    members_known: boolean;
    source: 'sync' | 'refresh' | 'import';
    observed_at: Time;
    updated_at: Time;
  };
  channel_access_members: {
    channel_id: string;
    user_id: string;
  };
};
