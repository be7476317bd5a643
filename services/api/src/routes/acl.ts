import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

/**
 * Body of POST /api/admin/acl/refresh (spec "Admin": `user_id` string): the platform user whose access to report
 * (Slack `U…` or Discord snowflake), and optionally its platform (a documented addition; default: both).
 */
export const AclRefreshBody = z
  .object({
    user_id: z.string().trim().min(1).max(200),
    platform: z.enum(['platform_a', 'platform_b']).optional(),
  })
  .strict();
export type AclRefreshBody = z.infer<typeof AclRefreshBody>;

/** What the ACL route needs: the refresh (@atlas/runtime refreshChannelAccess on the runtime). */
export interface AclRoutesOptions {
  /**
   * Re-reads the platform membership of every selected channel of every connected connection now, waits (bounded) for
   * the channel-access read model, and answers the refresh result (docs/access.md "The ACL refresh"). Absent: the
   * route is not registered.
   */
  refreshAcl?: (req: AclRefreshBody) => Promise<object>;
}

/**
 * POST /api/admin/acl/refresh (spec "Admin": "refresh the access list of a user"; docs/access.md "The ACL refresh"):
 * body `{user_id, platform?}`; answers 200 with the refresh result (`user_id`, `refreshed_at`, `channels_checked`,
 * `private_channels`, `visible_private_channels`, `failed`, `caught_up`). 400 INVALID_REQUEST (the shared error body,
 * failing fields in details.issues) for a missing or empty user_id, an unknown platform or another field. An admin
 * route: the auth hook decides who may call it.
 */
export const aclRoutes: FastifyPluginAsync<AclRoutesOptions> = async (parent, { refreshAcl }) => {
  if (!refreshAcl) return;
  const app = parent.withTypeProvider<ZodTypeProvider>();
  app.post('/api/admin/acl/refresh', { schema: { body: AclRefreshBody } }, async ({ body }) =>
    refreshAcl({ user_id: body.user_id, ...(body.platform ? { platform: body.platform } : {}) }),
  );
};
