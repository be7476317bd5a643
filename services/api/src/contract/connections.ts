import { z } from 'zod';
import {
  ConnectionStatus,
  Count,
  CronSchedule,
  Id,
  Int,
  orNull,
  Percentage,
  Platform,
  SyncErrorCode,
  SyncStage,
  SyncStatus,
  Timestamp,
  ValidationErrorCode,
} from './primitives.js';

/*
 * Connections and sync (spec "Resources and their fields → Connection", "Connection channel", "Sync job"; "Endpoints →
 * Connections", "Sync"). Credentials are omitted from every response: the strict objects refuse any field not listed.
 */

const connectionCore = {
  id: Id,
  name: z.string().min(1),
  platform: Platform,
  status: ConnectionStatus,
  created_at: Timestamp,
  channel_count: Count,
};

/** Spec "Connection", the create response (POST /api/connections): last_sync is absent, settings detail only. */
export const ConnectionCreatedSchema = z.strictObject(connectionCore);

/** Spec "Connection", list form (GET /api/connections): last_sync (null before a sync), no settings (detail only). */
export const ConnectionSchema = z.strictObject({ ...connectionCore, last_sync: orNull(Timestamp) });

/** Spec "Connection" settings (detail only). */
export const ConnectionSettingsSchema = z.strictObject({
  sync_interval_minutes: Int.min(1),
  wiki_enabled: z.boolean(),
  graph_enabled: z.boolean(),
});

/**
 * Spec "Connection", detail form (GET /api/connections/{id}; also the PUT answer): the list form plus settings;
 * updated_at and validated_at are documented additions (README "Connections").
 */
export const ConnectionDetailSchema = z.strictObject({
  ...ConnectionSchema.shape,
  settings: ConnectionSettingsSchema,
  updated_at: Timestamp, // documented addition
  validated_at: orNull(Timestamp), // documented addition
});

/**
 * Spec "POST /api/connections/{connection_id}/validate": success `{valid: true, connection {id, status,
 * validated_at}}` (workspace, bot, scopes: documented additions, README "Connections"), or failure `{valid: false,
 * error {code, message, required_scopes (INSUFFICIENT_PERMISSIONS)}}` (retry_after: documented addition).
 */
export const ConnectionValidationSchema = z.discriminatedUnion('valid', [
  z.strictObject({
    valid: z.literal(true),
    connection: z.strictObject({ id: Id, status: z.literal('connected'), validated_at: Timestamp }),
    workspace: z.strictObject({ id: Id, name: z.string() }).optional(), // documented addition
    bot: z.strictObject({ id: Id, name: z.string() }).optional(), // documented addition
    scopes: z.array(z.string()).optional(), // documented addition
  }),
  z
    .strictObject({
      valid: z.literal(false),
      error: z.strictObject({
        code: ValidationErrorCode,
        message: z.string().min(1),
        required_scopes: z.array(z.string()).optional(),
        retry_after: Int.min(0).optional(), // documented addition
      }),
    })
    .refine(
      (v) => (v.error.code === 'INSUFFICIENT_PERMISSIONS') === (v.error.required_scopes !== undefined),
      'required_scopes is present exactly for INSUFFICIENT_PERMISSIONS',
    ),
]);

/** Spec "Connection channel": an entry of a connection's channel list. */
export const ConnectionChannelSchema = z.strictObject({
  id: Id,
  name: z.string().min(1),
  is_private: z.boolean(),
  member_count: Count,
  sync_enabled: z.boolean(),
});

/** PUT /api/connections/{id}/channels (spec: "not shown"; README "Connections": `{connection_id, channel_count, channels}`). */
export const ConnectionChannelsUpdatedSchema = z.strictObject({
  connection_id: Id,
  channel_count: Count,
  channels: z.array(ConnectionChannelSchema),
});

/** Spec "POST /api/sync" response (also POST /api/channels/{channel_id}/sync, README "Sync"). */
export const SyncStartedSchema = z.strictObject({
  status: z.literal('started'),
  job_id: Id,
  channel_id: Id,
  estimated_messages: Count,
  started_at: Timestamp,
});

/** Spec "Errors → Sync errors": `{code, message, details {retry_after (int seconds), failing_message_id}}`. */
export const SyncErrorSchema = z.strictObject({
  code: SyncErrorCode,
  message: z.string().min(1),
  details: z.strictObject({ retry_after: orNull(Int.min(0)), failing_message_id: orNull(z.string()) }),
});

/**
 * Spec "Sync job" (GET /api/sync/status and GET /api/channels/{channel_id}/sync/status): progress counts are ints,
 * percentage 0..100; a failed job carries `error` (spec "Sync errors"). completed_at: undocumented addition
 * (UNDOCUMENTED_FIELDS).
 */
export const SyncJobSchema = z
  .strictObject({
    job_id: Id,
    channel_id: Id,
    status: SyncStatus,
    progress: z.strictObject({
      total_messages: Count,
      processed_messages: Count,
      failing_messages: Count,
      percentage: Percentage,
    }),
    started_at: Timestamp,
    estimated_completion: orNull(Timestamp), // null while nothing can be estimated (the null convention)
    current_stage: SyncStage,
    completed_at: orNull(Timestamp), // documented addition (docs/conventions.md): when the job ended, null before
    error: orNull(SyncErrorSchema), // spec "Sync errors" on a failed job; null otherwise (docs/conventions.md)
  })
  .refine((j) => (j.status === 'failed') === (j.error !== null), 'error is an object exactly on a failed job')
  .refine(
    (j) => ['completed', 'failed', 'cancelled'].includes(j.status) === (j.completed_at !== null),
    'completed_at is set exactly on an ended job',
  );

/** Spec "Sync history entry"; error is null or the sync error object. */
export const SyncHistoryEntrySchema = z.strictObject({
  job_id: Id,
  channel_id: Id,
  status: SyncStatus,
  started_at: Timestamp,
  completed_at: orNull(Timestamp),
  duration_seconds: Count,
  messages_synced: Count,
  facts_extracted: Count,
  entities_created: Count,
  error: orNull(SyncErrorSchema),
});

/** Spec "GET /api/sync/history": `{history: [sync history entries]}`. */
export const SyncHistorySchema = z.strictObject({ history: z.array(SyncHistoryEntrySchema) });

/** Spec "POST /api/sync/cancel": `{status: cancelled, job_id, cancelled_at}`. */
export const SyncCancelledSchema = z.strictObject({
  status: z.literal('cancelled'),
  job_id: Id,
  cancelled_at: Timestamp,
});

/**
 * Spec "Sync schedule": channel_id, schedule (five cron fields), enabled, next_sync, last_sync (null when none, the
 * null convention); updated_at is a documented addition (README "Sync schedules"). Also the PUT answer.
 */
export const SyncScheduleSchema = z.strictObject({
  channel_id: Id,
  schedule: CronSchedule,
  enabled: z.boolean(),
  next_sync: orNull(Timestamp),
  last_sync: orNull(Timestamp),
  updated_at: Timestamp, // documented addition
});

/** Spec "GET /api/sync/schedules": `{schedules: [sync schedule]}`. */
export const SyncSchedulesSchema = z.strictObject({ schedules: z.array(SyncScheduleSchema) });
