import { AUDIT_ACTIONS, ROLES } from '@atlas/core';
import { z } from 'zod';
import { Count, Id, Timestamp } from './primitives.js';

/**
 * POST /api/admin/acl/refresh (spec: response not shown; docs/access.md "The ACL refresh"): the user asked about, when
 * the platforms were read, how many selected channels were checked and how many of them are private, the private
 * channels the user may see now, the channels that could not be read (with a spec sync error code), and whether the
 * read model had caught up within the wait.
 */
export const AclRefreshResultSchema = z.strictObject({
  user_id: Id,
  refreshed_at: Timestamp,
  channels_checked: Count,
  private_channels: Count,
  visible_private_channels: z.array(Id),
  failed: z.array(z.strictObject({ channel_id: Id, code: z.string().min(1) })),
  caught_up: z.boolean(),
});

/** An API key's record (docs/access.md "API keys"): never the key itself nor its hash. */
export const ApiKeySchema = z.strictObject({
  key_id: Id,
  name: z.string().min(1),
  role: z.enum(ROLES),
  prefix: z.string().startsWith('atlas_'),
  scope: z.strictObject({ connections: z.array(Id).nullable(), channels: z.array(Id).nullable() }).nullable(),
  identity: z.strictObject({ platform: z.enum(['platform_a', 'platform_b']), user_id: z.string().min(1) }).nullable(),
  created_at: Timestamp,
  last_used_at: Timestamp.nullable(),
  expires_at: Timestamp.nullable(),
  revoked_at: Timestamp.nullable(),
});

/** GET /api/me (docs/access.md "Who am I"): the caller; `kind` `local` on the open loopback default. */
export const MeSchema = z.strictObject({
  name: z.string().min(1),
  kind: z.enum(['key', 'bootstrap', 'bridge', 'local']),
  role: z.enum(ROLES),
  key_id: Id.nullable(),
  scope: ApiKeySchema.shape.scope,
  identity: ApiKeySchema.shape.identity,
});

/** GET /api/admin/keys: `{keys}`. */
export const ApiKeyListSchema = z.strictObject({ keys: z.array(ApiKeySchema) });

/** POST /api/admin/keys (201): the record and the key, shown this once. */
export const ApiKeyCreatedSchema = z.strictObject({ key: ApiKeySchema, secret: z.string().startsWith('atlas_') });

/** GET /api/admin/audit (docs/access.md "Audit trail"): entries newest first, `next_cursor` null on the last page. */
export const AuditPageSchema = z.strictObject({
  entries: z.array(
    z.strictObject({
      id: Id,
      action: z.enum(AUDIT_ACTIONS),
      principal: z.string().min(1).nullable(),
      key_id: Id.nullable(),
      method: z.string().min(1),
      route: z.string().min(1),
      status: Count.nullable(),
      address: z.string().min(1),
      reason: z.string().min(1).nullable(),
      at: Timestamp,
    }),
  ),
  next_cursor: z.string().min(1).nullable(),
});
