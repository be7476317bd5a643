import { AtlasError, type NewEvent, nextScheduleRun, parseSchedule } from '@atlas/core';
import type { ConnectionStore, DocumentStore, SyncScheduleRecord, SyncScheduleStore, SyncStore } from '@atlas/stores';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { unknownChannel } from './known-channel.js';

/** What the schedule routes need: the schedule store, each channel's last sync, the connections and the command log. */
export interface SchedulePorts {
  store: Pick<SyncScheduleStore, 'get' | 'list'>;
  sync: Pick<SyncStore, 'channelState'>;
  connections: Pick<ConnectionStore, 'connectionsOfChannel'>;
  /** Appends SyncScheduleUpdated to atlas.commands (keyed by channel id). */
  command(event: NewEvent<'SyncScheduleUpdated'>): Promise<void>;
  /** How long PUT waits to see the saved schedule in the store (read-your-writes), ms; default 3000. */
  settleMs?: number;
  now?: () => Date;
}

/** Body of PUT /api/sync/schedules (spec "Sync"): schedule may be left out to toggle `enabled` of a saved one. */
export const PutScheduleBody = z
  .object({
    channel_id: z.string().min(1).max(200),
    schedule: z.string().trim().min(1).max(200).optional(),
    enabled: z.boolean().optional().default(true),
  })
  .strict();

/** The next run (ISO 8601), or null when there is none or the saved expression no longer parses. */
const nextOf = (schedule: string, now: Date): string | null => {
  try {
    return nextScheduleRun(schedule, now)?.toISOString() ?? null;
  } catch {
    return null;
  }
};

/**
 * Spec "Sync schedule": channel_id, schedule, enabled, next_sync (the next cron time after now, UTC; null while
 * disabled), last_sync (the channel's last completed sync, by any trigger; null before one), plus updated_at (when it
 * was saved; due times before it are never fired).
 */
export const scheduleView = (s: SyncScheduleRecord, lastSync: string | null, now: Date) => ({
  channel_id: s.channel_id,
  schedule: s.schedule,
  enabled: s.enabled,
  next_sync: s.enabled ? nextOf(s.schedule, now) : null,
  last_sync: lastSync,
  updated_at: s.updated_at,
});

/**
 * Sync schedule routes (spec "Endpoints → Sync", docs/sync.md "Sync schedules"). GET /api/sync/schedules answers
 * `{schedules: [scheduleView]}` by channel id. PUT /api/sync/schedules `{channel_id, schedule?, enabled?}` (enabled
 * defaults to true; schedule defaults to the saved one) appends SyncScheduleUpdated, waits until the store shows it and
 * answers the saved schedule (scheduleView). 400 INVALID_REQUEST: a schedule that is not a five-field cron expression
 * (croner refuses it; details.issues), a channel that is unknown or in no connection, no schedule given for a channel
 * without one. The scheduler beside the sync worker fires due schedules (runDueSchedules).
 */
export const syncScheduleRoutes: FastifyPluginAsync<{ documents: DocumentStore; schedules?: SchedulePorts }> = async (
  parent,
  { documents, schedules },
) => {
  if (!schedules) return;
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const now = () => schedules.now?.() ?? new Date();
  const lastSync = async (channelId: string) => (await schedules.sync.channelState(channelId))?.last_sync ?? null;

  app.get('/api/sync/schedules', async ({ visibleChannels }) => {
    const at = now();
    // A restricted caller lists the schedules of its visible channels only (visibility.ts).
    const rows = (await schedules.store.list()).filter(
      (s) => !visibleChannels || visibleChannels.includes(s.channel_id),
    );
    return { schedules: await Promise.all(rows.map(async (s) => scheduleView(s, await lastSync(s.channel_id), at))) };
  });

  app.put('/api/sync/schedules', { schema: { body: PutScheduleBody } }, async ({ body }) => {
    const channelId = body.channel_id;
    if ((await schedules.connections.connectionsOfChannel(channelId)).length === 0) {
      // Unknown anywhere: 404 (docs/conventions.md "Unknown channel"); known but in no connection: nothing to sync.
      if (!(await documents.knownChannels([channelId])).has(channelId)) throw unknownChannel(channelId);
      throw new AtlasError(
        'INVALID_REQUEST',
        `channel '${channelId}' is in no connection: add it with PUT /api/connections/{connection_id}/channels, then schedule it`,
        {
          details: {
            channel_id: channelId,
            issues: [{ path: 'body.channel_id', message: 'channel in no connection' }],
          },
        },
      );
    }
    const saved = await schedules.store.get(channelId);
    const expr = body.schedule ?? saved?.schedule;
    if (expr === undefined)
      throw new AtlasError('INVALID_REQUEST', `channel '${channelId}' has no schedule yet: give schedule`, {
        details: { channel_id: channelId, issues: [{ path: 'body.schedule', message: 'required' }] },
      });
    parseSchedule(expr); // throws INVALID_REQUEST with the reason
    const schedule = expr.trim().split(/\s+/).join(' ');
    // Strictly after the saved one, so the store's last-write-wins fold keeps this save.
    const at = new Date(Math.max(now().getTime(), saved ? Date.parse(saved.updated_at) + 1 : 0));
    const updatedAt = at.toISOString();
    await schedules.command({
      type: 'SyncScheduleUpdated',
      key: channelId,
      data: { channelId, schedule, enabled: body.enabled, updatedAt },
    });
    const until = Date.now() + (schedules.settleMs ?? 3000);
    for (;;) {
      const s = await schedules.store.get(channelId);
      if ((s && Date.parse(s.updated_at) >= at.getTime()) || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const record: SyncScheduleRecord = {
      channel_id: channelId,
      schedule,
      enabled: body.enabled,
      updated_at: updatedAt,
    };
    return scheduleView(record, await lastSync(channelId), now());
  });
};
