import { TOPICS } from '@atlas/core';
import type { Projector } from '@atlas/eventlog';
import type { AuditStore } from '@atlas/stores';

/**
 * AuditRecorded (atlas.audit) → the audit trail's read store (AuditStore, docs/access.md "Audit trail"). Idempotent:
 * an entry is written once by its id, so redelivery and replay end equal; each batch also drops the entries past
 * AUDIT_RETENTION_DAYS (one written already past it is skipped).
 */
export const auditProjector: Projector<{ audit: Pick<AuditStore, 'apply' | 'truncate'> }, 'AuditRecorded'> = {
  name: 'audit',
  topics: [TOPICS.audit],
  handles: ['AuditRecorded'],
  reset: ({ audit }) => audit.truncate(),
  handle: async (events, { audit }) => {
    await audit.apply(events);
  },
};
