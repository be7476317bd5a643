import { AUDIT_ACTIONS } from '@atlas/core';
import type { AuditStore } from '@atlas/stores';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

/**
 * Query of GET /api/admin/audit (docs/access.md "Audit trail"): filters `action`, `principal` (exact name), `since`
 * (inclusive) and `until` (exclusive, ISO 8601 with an offset, `since` not after `until`); `limit` 1-200 (default 50);
 * `cursor` from a previous page's `next_cursor`.
 */
export const AuditQuery = z
  .object({
    action: z.enum(AUDIT_ACTIONS).optional(),
    principal: z.string().min(1).max(200).optional(),
    since: z.iso.datetime({ offset: true }).optional(),
    until: z.iso.datetime({ offset: true }).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: z.string().min(1).max(1000).optional(),
  })
  .refine((q) => !q.since || !q.until || Date.parse(q.since) <= Date.parse(q.until), {
    message: 'since must not be after until',
    path: ['since'],
  });

/** What the audit route reads: the audit trail's read store. Absent: not registered. */
export interface AuditRoutesOptions {
  audit?: Pick<AuditStore, 'list'> | null;
}

/**
 * GET /api/admin/audit (a documented addition, docs/access.md "Audit trail"; admins only, as every /api/admin route in
 * policy.ts): the audit trail newest first, `{entries: [{id, action, principal, key_id, method, route, status,
 * address, reason, at}], next_cursor}` (`next_cursor` null on the last page). 400 INVALID_REQUEST (the shared error
 * body) for an unknown action, a bad time, a limit outside 1-200, `since` after `until`, or a cursor no page gave.
 */
export const auditRoutes: FastifyPluginAsync<AuditRoutesOptions> = async (root, { audit }) => {
  if (!audit) return;
  const app = root.withTypeProvider<ZodTypeProvider>();
  app.get('/api/admin/audit', { schema: { querystring: AuditQuery } }, async ({ query }) =>
    audit.list({
      action: query.action,
      principal: query.principal,
      since: query.since,
      until: query.until,
      cursor: query.cursor ?? null,
      limit: query.limit,
    }),
  );
};
