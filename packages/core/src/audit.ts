import { z } from 'zod';

/** What an audit entry records (docs/access.md "Audit trail"). */
export const AUDIT_ACTIONS = ['key_used', 'access_denied', 'admin_action'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * Data of `AuditRecorded` (atlas.audit, key: the principal's name, else the client address): one entry of the audit
 * trail (docs/access.md "Audit trail"), appended by the API's auth hook without waiting (an append that fails is
 * logged; the request is answered regardless). The audit projector keeps them in the audit read store (AuditStore)
 * for AUDIT_RETENTION_DAYS; GET /api/admin/audit reads them.
 * - `id`: a UUID given at the append, the entry's id in the read store (redelivery and replay write it once);
 * - `action`: `key_used` (a stored key authenticated a request; at most once a minute per key and process),
 *   `access_denied` (a 401 or 403 of the auth hook), `admin_action` (an admin route that changes something answered
 *   below 400);
 * - `principal`: the caller's name (a key's name, `bootstrap`, `bridge:<platform>:<user>`, `local`); null when no
 *   credential was accepted; `keyId`: the stored key's id, null for any other caller;
 * - `method`, `route`: the HTTP method and the route pattern (`/api/admin/keys/:key_id`), or the path when no route
 *   matched;
 * - `status`: the HTTP status answered (401, 403, 2xx of an admin action); null for `key_used`;
 * - `address`: the client address Fastify saw; `reason`: why access was denied (`missing`, `malformed`, `unknown`,
 *   `revoked`, `expired`, `bridge_key`, `role reader below admin`), else null;
 * - `at`: when (ISO 8601 UTC).
 */
export const AuditRecorded = z.object({
  id: z.string().min(1),
  action: z.enum(AUDIT_ACTIONS),
  principal: z.string().nullable(),
  keyId: z.string().nullable(),
  method: z.string().min(1),
  route: z.string(),
  status: z.number().int().nullable(),
  address: z.string(),
  reason: z.string().nullable(),
  at: z.string(),
});
export type AuditRecorded = z.infer<typeof AuditRecorded>;
