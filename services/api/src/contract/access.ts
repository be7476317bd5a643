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
