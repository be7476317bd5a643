import { randomUUID } from 'node:crypto';
import { AtlasError, type NewEvent, notFound, SYNC_STAGES, type SyncJobError } from '@atlas/core';
import type { ConnectionStore, DocumentStore, SyncJobRecord, SyncStore } from '@atlas/stores';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { unknownChannel } from './known-channel.js';

/** What the sync routes need: the job store, the connections, the command log and SYNC_MAX_MESSAGES. */
export interface SyncPorts {
  store: Pick<SyncStore, 'getJob' | 'activeJob' | 'history' | 'channelState'>;
  connections: Pick<ConnectionStore, 'connectionsOfChannel'>;
  /** Appends a command to atlas.commands (keyed by channel id). */
  command(event: NewEvent<'SyncRequested'> | NewEvent<'SyncCancelled'>): Promise<void>;
  /** SYNC_MAX_MESSAGES: the size of a first sync (estimated_messages). */
  maxMessages: number;
  /** How long a command waits to see its effect in the store (read-your-writes), ms; default 3000. */
  settleMs?: number;
  now?: () => Date;
}

const ChannelId = z.string().min(1).max(200);
const SyncBody = z.object({ channel_id: ChannelId, force: z.boolean().optional().default(false) });
const ChannelParams = z.object({ channel_id: ChannelId });
const ChannelSyncBody = z.object({ force: z.boolean().optional().default(false) }).nullish();
const StatusQuery = z.object({ channel_id: ChannelId, job_id: z.string().min(1).max(200).optional() });
const HistoryQuery = z.object({
  channel_id: ChannelId,
  limit: z.coerce.number().int().min(1).max(100).default(10),
});
const CancelBody = z.object({ job_id: z.string().min(1).max(200) });

const OPEN = new Set(['queued', 'running']);

/** Spec "Sync errors": `{code, message, details {retry_after, failing_message_id}}`. */
const errorView = (e: SyncJobError | null) =>
  e && {
    code: e.code,
    message: e.message,
    details: { retry_after: e.retryAfter, failing_message_id: e.failingMessageId },
  };

/**
 * estimated_completion of a job at `now` (ms): null unless it is running (queued: nothing to extrapolate yet; finished:
 * completed_at says when it ended; docs/conventions.md "Values that do not exist"). A running job's stored estimate
 * (its worker's extrapolation of the pace of its run) while it lies ahead; once it has passed, or before the worker
 * made one, the pace since started_at extrapolated from now: never a time in the past while the job runs. null when
 * the job has made no progress yet.
 */
export const estimatedCompletion = (j: SyncJobRecord, now: number): string | null => {
  if (j.status !== 'running') return null;
  if (j.estimated_completion && Date.parse(j.estimated_completion) > now) return j.estimated_completion;
  const elapsed = j.started_at ? now - Date.parse(j.started_at) : 0;
  if (j.percentage <= 0 || j.percentage >= 100 || !(elapsed > 0)) return null;
  return new Date(now + Math.max(1, (elapsed * (100 - j.percentage)) / j.percentage)).toISOString();
};

/**
 * Spec "Sync job": job_id, channel_id, status, progress {total_messages, processed_messages, failing_messages,
 * percentage}, started_at, estimated_completion (estimatedCompletion: null unless running), current_stage, plus
 * completed_at (null until the job has ended) and error (the spec's sync error of a failed job, else null). A queued
 * job's stage is the first one. percentage: job-state.ts STAGE_BANDS (100 only when completed).
 */
export const jobView = (j: SyncJobRecord, now: number = Date.now()) => ({
  job_id: j.job_id,
  channel_id: j.channel_id,
  status: j.status,
  progress: {
    total_messages: j.total_messages,
    processed_messages: j.processed_messages,
    failing_messages: j.failing_messages,
    percentage: j.percentage,
  },
  started_at: j.started_at,
  estimated_completion: estimatedCompletion(j, now),
  current_stage: j.stage ?? SYNC_STAGES[0],
  completed_at: j.completed_at,
  error: j.status === 'failed' ? errorView(j.error) : null,
});

/** Spec "Sync history entry". duration_seconds: whole seconds from started_at to completed_at (or now). */
const historyView = (j: SyncJobRecord, now: Date) => ({
  job_id: j.job_id,
  channel_id: j.channel_id,
  status: j.status,
  started_at: j.started_at,
  completed_at: j.completed_at,
  duration_seconds: j.started_at
    ? Math.max(
        0,
        Math.round(((j.completed_at ? Date.parse(j.completed_at) : now.getTime()) - Date.parse(j.started_at)) / 1000),
      )
    : 0,
  messages_synced: j.messages_synced,
  facts_extracted: j.facts_extracted,
  entities_created: j.entities_created,
  error: errorView(j.error),
});

/**
 * Sync routes (spec "Endpoints → Sync", docs/sync.md "Jobs"): POST /api/sync and POST /api/channels/{channel_id}/sync
 * append SyncRequested (atlas.commands) and answer `{status: 'started', job_id, channel_id, estimated_messages,
 * started_at}`; GET /api/sync/status and /api/channels/{channel_id}/sync/status return the sync job object; GET
 * /api/sync/history returns `{history}`; POST /api/sync/cancel appends SyncCancelled and answers `{status:
 * 'cancelled', job_id, cancelled_at}`. Errors: 404 NOT_FOUND for an unknown channel or job, 400 INVALID_REQUEST for a
 * channel in no connection, not selected in its connection, or with sync_enabled off (channel settings), 409 CONFLICT (details.job_id) for a second sync while one is open or a cancel of a
 * finished job (also of one that completed or failed before the worker saw the cancel).
 */
export const syncRoutes: FastifyPluginAsync<{ documents: DocumentStore; sync?: SyncPorts }> = async (
  parent,
  { documents, sync },
) => {
  if (!sync) return;
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const now = () => sync.now?.() ?? new Date();

  /** Polls the store until `ok` holds for the job (the sync-jobs projector folded the command), up to settleMs. */
  const settle = async (jobId: string, ok: (j: SyncJobRecord) => boolean) => {
    const until = Date.now() + (sync.settleMs ?? 3000);
    for (;;) {
      const j = await sync.store.getJob(jobId);
      if ((j && ok(j)) || Date.now() > until) return j;
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  /**
   * The unknown-channel rule (docs/conventions.md): a channel the document store has, or one a connection lists (that
   * is how its first sync starts); else 404 NOT_FOUND.
   */
  const knownChannel = async (channelId: string) => {
    if ((await documents.knownChannels([channelId])).has(channelId)) return;
    if ((await sync.connections.connectionsOfChannel(channelId)).length > 0) return;
    throw unknownChannel(channelId);
  };

  const start = async (channelId: string, force: boolean) => {
    const links = await sync.connections.connectionsOfChannel(channelId);
    if (links.length === 0) {
      if (!(await documents.knownChannels([channelId])).has(channelId)) throw unknownChannel(channelId);
      throw new AtlasError(
        'INVALID_REQUEST',
        `channel '${channelId}' is in no connection: add it with PUT /api/connections/{connection_id}/channels, then sync`,
        { details: { channel_id: channelId } },
      );
    }
    const link = links[0]!; // sync-enabled entries first
    if (!link.channel.sync_enabled)
      throw new AtlasError(
        'INVALID_REQUEST',
        `channel '${channelId}' is not selected for sync in connection '${link.connection_id}': select it with PUT /api/connections/{connection_id}/channels`,
        { details: { channel_id: channelId, connection_id: link.connection_id } },
      );
    if ((await documents.channelSettings(channelId))?.sync_enabled === false)
      throw new AtlasError(
        'INVALID_REQUEST',
        `sync is disabled for channel '${channelId}': enable it with PUT /api/channels/{channel_id}/settings`,
        { details: { channel_id: channelId } },
      );
    const open = await sync.store.activeJob(channelId);
    if (open)
      throw new AtlasError(
        'CONFLICT',
        `a sync of channel '${channelId}' is already ${open.status} (job ${open.job_id})`,
        {
          details: { channel_id: channelId, job_id: open.job_id },
        },
      );
    const state = await sync.store.channelState(channelId);
    const estimated = await estimate(channelId, force || !state?.last_sync);
    const jobId = randomUUID();
    const startedAt = now().toISOString();
    await sync.command({
      type: 'SyncRequested',
      key: channelId,
      data: {
        jobId,
        channelId,
        connectionId: link.connection_id,
        platform: link.platform,
        force,
        estimatedMessages: estimated,
        requestedAt: startedAt,
        requestedBy: 'api',
      },
    });
    await settle(jobId, () => true);
    return {
      status: 'started' as const,
      job_id: jobId,
      channel_id: channelId,
      estimated_messages: estimated,
      started_at: startedAt,
    };
  };

  /**
   * estimated_messages: a first or forced sync, the channel's stored messages or SYNC_MAX_MESSAGES, whichever is
   * larger for force and smaller otherwise; an incremental one, the mean of the last five completed syncs.
   */
  const estimate = async (channelId: string, full: boolean): Promise<number> => {
    if (full) {
      const stored = (await documents.getChannel(channelId))?.message_count ?? 0;
      return stored > 0 ? stored : sync.maxMessages;
    }
    const done = (await sync.store.history(channelId, 20)).filter((j) => j.status === 'completed').slice(0, 5);
    return done.length ? Math.round(done.reduce((s, j) => s + j.messages_synced, 0) / done.length) : 0;
  };

  const status = async (channelId: string, jobId?: string) => {
    await knownChannel(channelId);
    const job = jobId ? await sync.store.getJob(jobId) : (await sync.store.history(channelId, 1))[0];
    if (!job || job.channel_id !== channelId)
      throw jobId ? notFound('sync job', jobId) : notFound('sync job of channel', channelId);
    return jobView(job, now().getTime());
  };

  app.post('/api/sync', { schema: { body: SyncBody } }, ({ body }) => start(body.channel_id, body.force));
  app.post(
    '/api/channels/:channel_id/sync',
    { schema: { params: ChannelParams, body: ChannelSyncBody } },
    ({ params, body }) => start(params.channel_id, body?.force ?? false),
  );
  app.get('/api/sync/status', { schema: { querystring: StatusQuery } }, ({ query }) =>
    status(query.channel_id, query.job_id),
  );
  app.get('/api/channels/:channel_id/sync/status', { schema: { params: ChannelParams } }, ({ params }) =>
    status(params.channel_id),
  );
  app.get('/api/sync/history', { schema: { querystring: HistoryQuery } }, async ({ query }) => {
    await knownChannel(query.channel_id);
    const at = now();
    return { history: (await sync.store.history(query.channel_id, query.limit)).map((j) => historyView(j, at)) };
  });
  app.post('/api/sync/cancel', { schema: { body: CancelBody } }, async ({ body, visibleChannels }) => {
    const job = await sync.store.getJob(body.job_id);
    // A job of a channel the caller does not see (visibility.ts) is unknown to it.
    if (!job || (visibleChannels && !visibleChannels.includes(job.channel_id))) throw notFound('sync job', body.job_id);
    if (!OPEN.has(job.status))
      throw new AtlasError('CONFLICT', `sync job '${job.job_id}' is already ${job.status}`, {
        details: { job_id: job.job_id, status: job.status },
      });
    const cancelledAt = now().toISOString();
    await sync.command({
      type: 'SyncCancelled',
      key: job.channel_id,
      data: { jobId: job.job_id, channelId: job.channel_id, cancelledAt },
    });
    const ended = await settle(job.job_id, (j) => !OPEN.has(j.status));
    // The job reached its end before the worker saw the cancel: say what it became, not that it was cancelled.
    if (ended && !OPEN.has(ended.status) && ended.status !== 'cancelled')
      throw new AtlasError('CONFLICT', `sync job '${job.job_id}' is already ${ended.status}`, {
        details: { job_id: job.job_id, status: ended.status },
      });
    return { status: 'cancelled' as const, job_id: job.job_id, cancelled_at: cancelledAt };
  });
};
