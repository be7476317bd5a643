import { deterministicId, dueScheduleRun, type NewEvent, TOPICS } from '@atlas/core';
import type { EventLog } from '@atlas/eventlog';
import type { ConnectionStore, DocumentStore, SyncJobRecord, SyncScheduleStore, SyncStore } from '@atlas/stores';

/** What the sync scheduler reads and where it appends (the runtime's stores and log). */
export interface SyncSchedulerDeps {
  eventLog: Pick<EventLog, 'append'>;
  schedules: Pick<SyncScheduleStore, 'list'>;
  sync: Pick<SyncStore, 'getJob' | 'history'>;
  connections: Pick<ConnectionStore, 'connectionsOfChannel'>;
  documents: Pick<DocumentStore, 'channelSettings' | 'getChannel'>;
  /** SYNC_MAX_MESSAGES: a first sync's estimated_messages. */
  maxMessages: number;
  /** The clock (tests inject one); default `new Date()`. */
  now?: () => Date;
  log?: { info(msg: string): void; warn(msg: string): void };
}

/** One due time of one schedule and what the pass did with it. */
export interface ScheduleOutcome {
  channel_id: string;
  /** The cron time that was due (ISO 8601 UTC). */
  due: string;
  /** The job id of that due time: UUID v5 of (channel, due time), the same in every process. */
  job_id: string;
  /**
   * `fired`: SyncRequested appended; `already_fired`: the job exists (this or another process fired it); `covered`: a
   * sync of the channel was open at the due time or started after it; `no_connection`: the channel is in no
   * connection that selects it; `sync_disabled`: the channel's sync_enabled setting is off.
   */
  outcome: 'fired' | 'already_fired' | 'covered' | 'no_connection' | 'sync_disabled';
}

/** The job id a schedule's due time gets (UUID v5): two schedulers firing the same due time request the same job. */
export const scheduledJobId = (channelId: string, due: Date): string =>
  deterministicId('sync-schedule', channelId, due.toISOString());

const OPEN = new Set(['queued', 'running']);

/** A job covers a due time when it was open then or started after it: that sync already reads what was due. */
const covers = (j: SyncJobRecord, due: number): boolean =>
  OPEN.has(j.status) ||
  (j.completed_at !== null && Date.parse(j.completed_at) >= due) ||
  (j.started_at !== null && Date.parse(j.started_at) >= due);

/**
 * One pass of the sync scheduler (docs/sync.md "Sync schedules"): for each enabled schedule, the latest due time at or
 * before now and after the schedule was saved (one catch-up firing after downtime, never a backlog) gets a
 * SyncRequested (`requestedBy: 'scheduler'`, job id scheduledJobId) on atlas.commands, unless that job exists already,
 * a sync of the channel was open at the due time or started since, the channel is in no connection selecting it, or its
 * sync_enabled setting is off. Idempotent across processes: the job id is a function of (channel, due time), so two
 * schedulers that both fire one due time request one job (the sync store and the worker key jobs by id).
 * estimated_messages as POST /api/sync: a first sync the stored messages or SYNC_MAX_MESSAGES, later the mean of the
 * last five completed syncs. Returns what it did per due schedule; throws what the stores and the log throw.
 */
export const runDueSchedules = async (deps: SyncSchedulerDeps): Promise<ScheduleOutcome[]> => {
  const now = deps.now?.() ?? new Date();
  const out: ScheduleOutcome[] = [];
  for (const s of await deps.schedules.list({ enabledOnly: true })) {
    let due: Date | null;
    try {
      due = dueScheduleRun(s.schedule, now, new Date(s.updated_at));
    } catch (err) {
      // Saved schedules were validated; one this croner refuses is skipped, never the whole pass.
      deps.log?.warn(`sync schedule of channel ${s.channel_id} skipped: ${(err as Error).message}`);
      continue;
    }
    if (!due) continue;
    const jobId = scheduledJobId(s.channel_id, due);
    const result = (outcome: ScheduleOutcome['outcome']) =>
      out.push({ channel_id: s.channel_id, due: due.toISOString(), job_id: jobId, outcome: outcome });
    if (await deps.sync.getJob(jobId)) {
      result('already_fired');
      continue;
    }
    const recent = await deps.sync.history(s.channel_id, 5);
    if (recent.some((j) => covers(j, due.getTime()))) {
      result('covered');
      continue;
    }
    const link = (await deps.connections.connectionsOfChannel(s.channel_id)).find((l) => l.channel.sync_enabled);
    if (!link) {
      result('no_connection');
      continue;
    }
    if ((await deps.documents.channelSettings(s.channel_id))?.sync_enabled === false) {
      result('sync_disabled');
      continue;
    }
    const event: NewEvent<'SyncRequested'> = {
      type: 'SyncRequested',
      key: s.channel_id,
      data: {
        jobId,
        channelId: s.channel_id,
        connectionId: link.connection_id,
        platform: link.platform,
        force: false,
        estimatedMessages: await estimate(deps, s.channel_id, recent),
        requestedAt: now.toISOString(),
        requestedBy: 'scheduler',
      },
    };
    await deps.eventLog.append(TOPICS.commands, [event]);
    result('fired');
  }
  return out;
};

/** As POST /api/sync: no completed sync yet → stored messages or SYNC_MAX_MESSAGES; else the mean of the last five. */
const estimate = async (deps: SyncSchedulerDeps, channelId: string, recent: SyncJobRecord[]): Promise<number> => {
  const done = recent.filter((j) => j.status === 'completed');
  if (done.length > 0) return Math.round(done.reduce((sum, j) => sum + j.messages_synced, 0) / done.length);
  const stored = (await deps.documents.getChannel(channelId))?.message_count ?? 0;
  return stored > 0 ? stored : deps.maxMessages;
};

/** A running sync scheduler. */
export interface SyncScheduler {
  /** Runs one pass now (after any pass in progress); resolves with its outcomes. */
  tick(): Promise<ScheduleOutcome[]>;
  stop(): void;
}

/**
 * Runs runDueSchedules every `intervalMs` (default 15 s; cron times have minute precision, so a due time fires
 * within that interval), never two passes at once. A failed pass is logged and the next one tries again (the due time
 * is still owed: it is read from the store, not kept in memory). Started beside the sync worker (`atlas start`,
 * `atlas run sync-worker`, `atlas run scheduler`).
 */
export const startSyncScheduler = (deps: SyncSchedulerDeps, opts: { intervalMs?: number } = {}): SyncScheduler => {
  let running: Promise<ScheduleOutcome[]> = Promise.resolve([]);
  const pass = (): Promise<ScheduleOutcome[]> => {
    running = running.then(
      async () => {
        try {
          const outcomes = await runDueSchedules(deps);
          for (const o of outcomes.filter((x) => x.outcome === 'fired'))
            deps.log?.info(`sync schedule: channel ${o.channel_id} due ${o.due}, job ${o.job_id} requested`);
          return outcomes;
        } catch (err) {
          deps.log?.warn(`sync schedule pass failed: ${err instanceof Error ? err.message : String(err)}`);
          return [];
        }
      },
      () => [],
    );
    return running;
  };
  const timer = setInterval(() => void pass(), opts.intervalMs ?? 15_000);
  timer.unref();
  return { tick: pass, stop: () => clearInterval(timer) };
};
