import { z } from 'zod';

/** Spec "States and transitions → Sync job": the states of a job. */
export const SyncJobStatus = z.enum(['queued', 'running', 'completed', 'failed', 'cancelled']);
export type SyncJobStatus = z.infer<typeof SyncJobStatus>;

/** Spec "Sync job" current_stage, in the order a running job passes them. */
export const SYNC_STAGES = ['fetching_messages', 'extracting_facts', 'building_graph', 'generating_wiki'] as const;
export const SyncStage = z.enum(SYNC_STAGES);
export type SyncStage = z.infer<typeof SyncStage>;

/** Spec "Errors → Sync errors" codes. */
export const SyncErrorCodeSchema = z.enum([
  'PLATFORM_ERROR',
  'AUTH_ERROR',
  'RATE_LIMIT',
  'CHANNEL_NOT_FOUND',
  'INTERNAL_ERROR',
]);

/**
 * The error of a failed job (spec "Sync errors"): code, message, and details — retryAfter in whole seconds (RATE_LIMIT,
 * PLATFORM_ERROR when the platform said), failingMessageId the platform id of the message (or thread root) being
 * fetched when the job failed; null when not applicable.
 */
export const SyncJobError = z.object({
  code: SyncErrorCodeSchema,
  message: z.string(),
  retryAfter: z.number().int().min(0).nullable(),
  failingMessageId: z.string().nullable(),
});
export type SyncJobError = z.infer<typeof SyncJobError>;

/**
 * Data of `SyncRequested` (topic atlas.commands, key channel_id): POST /api/sync (or the scheduler) asks for a sync
 * of one channel of a connection. `force` re-syncs the whole history; `estimatedMessages` is what the response
 * promised; `requestedAt` (ISO 8601 UTC) is the job's started_at.
 */
export const SyncRequested = z.object({
  jobId: z.string().uuid(),
  channelId: z.string(),
  connectionId: z.string(),
  platform: z.enum(['platform_a', 'platform_b']),
  force: z.boolean(),
  estimatedMessages: z.number().int().min(0),
  requestedAt: z.string(),
  requestedBy: z.string(),
});
export type SyncRequested = z.infer<typeof SyncRequested>;

/** Data of `SyncCancelled` (atlas.commands, key channel_id): POST /api/sync/cancel; `cancelledAt` ISO 8601 UTC. */
export const SyncCancelled = z.object({
  jobId: z.string().uuid(),
  channelId: z.string(),
  cancelledAt: z.string(),
});
export type SyncCancelled = z.infer<typeof SyncCancelled>;

/**
 * Data of `SyncJobUpdated` (atlas.sync-jobs, key channel_id): the whole state of a job after a transition or a batch,
 * written by the sync worker. `seq` grows per job (a fold keeps the highest), so redelivery and cross-topic order do
 * not matter. Counts are messages; `percentage` is 0..100; times are ISO 8601 UTC. `cursor` is the platform id after
 * which fetching continues (the channel's incremental cursor once the job has moved past it).
 */
export const SyncJobUpdated = z.object({
  jobId: z.string().uuid(),
  channelId: z.string(),
  seq: z.number().int().min(1),
  status: SyncJobStatus,
  stage: SyncStage.nullable(),
  totalMessages: z.number().int().min(0),
  processedMessages: z.number().int().min(0),
  failingMessages: z.number().int().min(0),
  percentage: z.number().min(0).max(100),
  startedAt: z.string(),
  estimatedCompletion: z.string().nullable(),
  completedAt: z.string().nullable(),
  cursor: z.string().nullable(),
  messagesSynced: z.number().int().min(0),
  factsExtracted: z.number().int().min(0),
  entitiesCreated: z.number().int().min(0),
  error: SyncJobError.nullable(),
  updatedAt: z.string(),
});
export type SyncJobUpdated = z.infer<typeof SyncJobUpdated>;
