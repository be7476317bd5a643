type Time = Date | string;

/**
 * The audit read store's table (audit-store.ts; migrateAudit creates it), written only by the audit projector from
 * AuditRecorded (atlas.audit): one row per audit entry, `id` the event's own id. Times as the driver returns them
 * (Date or ISO string). A type, not an interface: `withTables<T>()` takes only types with an implicit index signature.
 */
export type AuditTables = {
  audit_entries: {
    id: string;
    action: 'key_used' | 'access_denied' | 'admin_action';
    principal: string | null;
    key_id: string | null;
    method: string;
    route: string;
    status: number | null;
    address: string;
    reason: string | null;
    at: Time;
  };
};
