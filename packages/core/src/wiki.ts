import { z } from 'zod';

/**
 * Data of `WikiRefreshRequested` (atlas.commands, key channel_id): generate a channel's wiki (spec "Wiki":
 * POST /api/wiki/refresh, POST /api/admin/wiki/rebuild). `mode` full or incremental; `requestedAt` ISO 8601 UTC;
 * `requestedBy` the surface that asked (`api`, `admin`). The wiki worker records the job in the wiki store's job
 * history (queued → running → completed | failed) and runs it.
 */
export const WikiRefreshRequested = z.object({
  jobId: z.string().uuid(),
  channelId: z.string(),
  mode: z.enum(['full', 'incremental']),
  requestedAt: z.string(),
  requestedBy: z.string(),
});
export type WikiRefreshRequested = z.infer<typeof WikiRefreshRequested>;
