import {
  type ChannelDiscovered,
  MessageIngested,
  messageUuid,
  type NewEvent,
  type SyncJobError,
  type SyncJobUpdated,
  type SyncStage,
  TOPICS,
} from '@atlas/core';
import type { EventLog } from '@atlas/eventlog';
import {
  type ConnectionChannel,
  type PlatformClient,
  type PlatformCredentials,
  PlatformError,
  type ValidationResult,
} from '@atlas/platforms';
import type { ConnectionStore, DocumentStore, SyncJobRecord, SyncStore } from '@atlas/stores';
import { channelPartition, endOffset, waitForGroups } from './stage-wait.js';

/** What a sync job needs (the sync worker builds it from the runtime). */
export interface SyncJobDeps {
  eventLog: EventLog;
  sync: SyncStore;
  documents: DocumentStore;
  connections: ConnectionStore;
  platformClient: (credentials: PlatformCredentials) => PlatformClient;
  /** SYNC_BATCH_SIZE: top-level messages asked per page, and MessageIngested events per append. */
  batchSize: number;
  /** SYNC_MAX_MESSAGES: the first sync of a channel fetches at most this many top-level messages (with threads). */
  maxMessages: number;
  /**
   * Consumer groups each later stage waits for, per topic: `facts` (extracting_facts: the facts and documents groups
   * on atlas.messages, then documents, keyword, embeddings on atlas.facts) and `graph` (building_graph: entities on
   * atlas.facts, then graph and documents on atlas.graph). A stage with no groups does not wait (e.g. the graph
   * when entity extraction goes through an LLM: sync never waits on an LLM).
   */
  stageGroups: { messages: string[]; facts: string[]; graphFacts: string[]; graph: string[] };
  /** Regenerates the channel's wiki (generating_wiki); null: left to the wiki scheduler (stale wikis). */
  generateWiki: ((channelId: string) => Promise<unknown>) | null;
  /** Slack threads whose late replies an incremental sync looks for (the most recently active; default 25). */
  lateReplyThreads?: number;
  /** Longest wait of one stage for the projectors, ms (default 30 min); then the job completes with what it has. */
  stageTimeoutMs?: number;
  pollMs?: number;
  log?: { warn(obj: object, msg: string): void };
  now?: () => Date;
}

/** Why a job's signal aborted: a cancel request (the job ends `cancelled`) or a shutdown (it stays open to resume). */
export class JobCancelled extends Error {}
export class WorkerShutdown extends Error {}

/** Percentage where each stage starts (fetching fills 0..70 by messages fetched). */
const STAGE_START: Record<SyncStage, number> = {
  fetching_messages: 0,
  extracting_facts: 70,
  building_graph: 90,
  generating_wiki: 97,
};

/** The job's state, emitted as SyncJobUpdated events (atlas.sync-jobs) with a growing seq. */
class JobState {
  seq: number;
  status: SyncJobUpdated['status'] = 'running';
  stage: SyncStage = 'fetching_messages';
  total: number;
  processed: number;
  failing: number;
  synced: number;
  cursor: string | null;
  facts = 0;
  entities = 0;
  private readonly runStart = Date.now();
  private readonly processedAtStart: number;

  constructor(
    readonly job: SyncJobRecord,
    private readonly deps: SyncJobDeps,
  ) {
    this.seq = job.seq;
    this.total = Math.max(job.total_messages, job.estimated_messages);
    this.processed = job.processed_messages;
    this.processedAtStart = job.processed_messages;
    this.failing = job.failing_messages;
    this.synced = job.messages_synced;
    this.cursor = job.cursor;
  }

  percentage(): number {
    if (this.status === 'completed') return 100;
    const base = STAGE_START[this.stage];
    if (this.stage !== 'fetching_messages') return base;
    return Math.min(70, this.total > 0 ? (70 * this.processed) / this.total : 0);
  }

  /** Linear extrapolation of this run's pace; null before any progress. */
  private estimate(now: Date): string | null {
    if (this.status !== 'running') return now.toISOString();
    const pct = this.percentage();
    const done = this.processed - this.processedAtStart;
    if (pct <= 0 || (this.stage === 'fetching_messages' && done <= 0)) return null;
    const elapsed = Date.now() - this.runStart;
    const fraction =
      this.stage === 'fetching_messages' ? done / Math.max(1, this.total - this.processedAtStart) : pct / 100;
    const left = (elapsed / Math.max(fraction, 0.01)) * (1 - fraction) * (this.stage === 'fetching_messages' ? 1.4 : 1);
    return new Date(now.getTime() + left).toISOString();
  }

  async emit(error: SyncJobError | null = null): Promise<void> {
    const now = this.deps.now?.() ?? new Date();
    this.seq += 1;
    const terminal = this.status !== 'running';
    const data: SyncJobUpdated = {
      jobId: this.job.job_id,
      channelId: this.job.channel_id,
      seq: this.seq,
      status: this.status,
      stage: this.stage,
      totalMessages: this.total,
      processedMessages: this.processed,
      failingMessages: this.failing,
      percentage: Math.round(this.percentage() * 10) / 10,
      startedAt: this.job.started_at ?? now.toISOString(),
      estimatedCompletion: this.estimate(now),
      completedAt: terminal ? now.toISOString() : null,
      cursor: this.cursor,
      messagesSynced: this.synced,
      factsExtracted: this.facts,
      entitiesCreated: this.entities,
      error,
      updatedAt: now.toISOString(),
    };
    await this.deps.eventLog.append(TOPICS.syncJobs, [{ type: 'SyncJobUpdated', key: data.channelId, data }]);
  }
}

/** A validation failure as a sync error (spec "Sync errors"): credentials → AUTH_ERROR, and so on. */
const validationError = (v: Extract<ValidationResult, { valid: false }>): PlatformError => {
  const { code, message, retry_after } = v.error;
  if (code === 'RATE_LIMITED')
    return new PlatformError('RATE_LIMIT', message, { retriable: true, retryAfter: retry_after });
  if (code === 'NETWORK_ERROR' || code === 'PLATFORM_ERROR')
    return new PlatformError('PLATFORM_ERROR', message, { retriable: true, retryAfter: retry_after });
  return new PlatformError('AUTH_ERROR', message, { retriable: false });
};

/** A failure as the spec's job error: PlatformError codes pass through; anything else is INTERNAL_ERROR. */
export const syncErrorOf = (err: unknown, failingMessageId: string | null): SyncJobError =>
  err instanceof PlatformError
    ? {
        code: err.code,
        message: err.message,
        retryAfter: err.retryAfter === undefined ? null : Math.ceil(err.retryAfter),
        failingMessageId,
      }
    : {
        code: 'INTERNAL_ERROR',
        message: err instanceof Error ? err.message : String(err),
        retryAfter: null,
        failingMessageId,
      };

/**
 * Runs one sync job (spec "States and transitions → Sync job") from queued or from where a restart left it: running
 * through fetching_messages → extracting_facts → building_graph → generating_wiki, then completed; failed with the
 * spec's error on a platform or internal failure; cancelled when `signal` aborts with JobCancelled. On WorkerShutdown
 * it returns without a terminal state, so the next worker resumes from the job's last cursor.
 *
 * Fetching: pages of `batchSize` top-level messages (Slack: with their threads) after the cursor (the job's, else the
 * channel's; none or force: the start), each page's new or changed messages (content hash vs the document store)
 * appended as MessageIngested (`source: 'sync'`) in appends of `batchSize`, then the cursor is persisted
 * (SyncJobUpdated). A first sync (no channel cursor) stops after `maxMessages`; an incremental one also asks for late
 * replies of the channel's recently active Slack threads; a forced full pass appends MessageDeleted for stored
 * messages the platform no longer has. Later stages wait only for the projectors' progress on what this job
 * appended. Never throws.
 */
export const runSyncJob = async (job: SyncJobRecord, deps: SyncJobDeps, signal: AbortSignal): Promise<void> => {
  const state = new JobState(job, deps);
  let failingId: string | null = null;
  try {
    const channelId = job.channel_id;
    const client = await clientOf(job, deps);
    await state.emit();
    const { channel, workspace } = await platformChannel(client, channelId, signal);
    const before = await deps.documents.getChannel(channelId);
    const discovered = channelEvent(client.platform, workspace, channel);
    if (!before) await deps.eventLog.append(TOPICS.messages, [discovered]);

    // fetching_messages
    const channelState = await deps.sync.channelState(channelId);
    const first = !job.force && !channelState?.cursor;
    state.cursor = job.cursor ?? (job.force ? null : (channelState?.cursor ?? null));
    const fullPass = job.force && job.cursor === null;
    const cap = first ? deps.maxMessages : Number.POSITIVE_INFINITY;
    const known = await deps.documents.messageHashes(channelId);
    const seen = new Set<string>();
    let lastOffset = -1;
    const append = async (messages: MessageIngested[]) => {
      const fresh: NewEvent[] = [];
      for (const m of messages) {
        seen.add(m.platformMessageId);
        if (!MessageIngested.safeParse(m).success) {
          state.failing += 1;
          continue;
        }
        if (known.get(m.platformMessageId) === m.contentHash) continue;
        known.set(m.platformMessageId, m.contentHash);
        fresh.push({ type: 'MessageIngested', key: channelId, data: m });
      }
      for (let i = 0; i < fresh.length; i += deps.batchSize) {
        const pos = await deps.eventLog.append(TOPICS.messages, fresh.slice(i, i + deps.batchSize));
        lastOffset = Math.max(lastOffset, ...pos.map((p) => p.offset));
      }
      state.synced += fresh.length;
    };
    let capped = false;
    for (;;) {
      if (signal.aborted) throw signal.reason;
      const remaining = cap - state.processed;
      if (remaining <= 0) {
        capped = true;
        break;
      }
      failingId = state.cursor;
      const page = await client.fetchMessages(channelId, {
        after: state.cursor,
        limit: Math.min(deps.batchSize, remaining),
        signal,
      });
      await append(page.messages);
      state.processed += page.messages.length;
      state.cursor = page.cursor ?? state.cursor;
      state.total = page.hasMore ? Math.max(state.total, state.processed + deps.batchSize) : state.processed;
      await state.emit();
      if (!page.hasMore) break;
    }
    if (!first && !fullPass && client.platform === 'platform_a') {
      for (const head of await deps.sync.threadHeads(channelId, deps.lateReplyThreads ?? 25)) {
        if (signal.aborted) throw signal.reason;
        if (seen.has(head.threadTs)) continue;
        failingId = head.threadTs;
        const replies = await client.fetchReplies(channelId, head.threadTs, {
          after: head.latestReplyTs,
          limit: 200,
          signal,
        });
        await append(replies);
        state.processed += replies.length;
      }
    }
    if (fullPass && !capped) {
      const gone = [...known.keys()].filter((id) => !seen.has(id));
      const deletedAt = (deps.now?.() ?? new Date()).toISOString();
      const events: NewEvent[] = gone.map((id) => ({
        type: 'MessageDeleted',
        key: channelId,
        data: {
          messageId: messageUuid(client.platform, channelId, id),
          platform: client.platform,
          channelId,
          platformMessageId: id,
          deletedAt,
        },
      }));
      for (let i = 0; i < events.length; i += deps.batchSize) {
        const pos = await deps.eventLog.append(TOPICS.messages, events.slice(i, i + deps.batchSize));
        lastOffset = Math.max(lastOffset, ...pos.map((p) => p.offset));
      }
      state.synced += events.length;
    }
    failingId = null;
    state.total = state.processed;

    // extracting_facts, building_graph: the projectors catch up on what this job appended.
    state.stage = 'extracting_facts';
    await state.emit();
    const wait = async (groups: string[], topic: string, target: (p: number) => Promise<number>) => {
      if (groups.length === 0) return;
      const p = await channelPartition(deps.eventLog, topic, channelId);
      const ok = await waitForGroups(deps.eventLog, groups, topic, p, await target(p), signal, {
        pollMs: deps.pollMs,
        timeoutMs: deps.stageTimeoutMs,
      });
      if (!ok) deps.log?.warn({ jobId: job.job_id, topic, groups }, 'sync: projectors did not catch up in time');
    };
    const factsEnd = (p: number) => endOffset(deps.eventLog, deps.stageGroups.facts[0] ?? 'none', TOPICS.facts, p);
    await wait(deps.stageGroups.messages, TOPICS.messages, async () => lastOffset + 1);
    await wait(deps.stageGroups.facts, TOPICS.facts, factsEnd);
    state.stage = 'building_graph';
    await state.emit();
    await wait(deps.stageGroups.graphFacts, TOPICS.facts, factsEnd);
    await wait(deps.stageGroups.graph, TOPICS.graph, (p) =>
      endOffset(deps.eventLog, deps.stageGroups.graph[0] ?? 'none', TOPICS.graph, p),
    );

    // generating_wiki
    state.stage = 'generating_wiki';
    await state.emit();
    if (deps.generateWiki) {
      await deps.generateWiki(channelId).catch((err: unknown) => {
        deps.log?.warn({ jobId: job.job_id, err }, 'sync: wiki generation failed; the wiki scheduler retries it');
      });
    }
    const after = await deps.documents.getChannel(channelId);
    state.facts = Math.max(0, (after?.fact_count ?? 0) - (before?.fact_count ?? 0));
    state.entities = Math.max(0, (after?.entity_count ?? 0) - (before?.entity_count ?? 0));
    await deps.eventLog.append(TOPICS.messages, [discovered]); // the channel's last_sync
    if (job.connection_id)
      await deps.connections.update(job.connection_id, { last_sync: (deps.now?.() ?? new Date()).toISOString() });
    state.status = 'completed';
    await state.emit();
  } catch (err) {
    const reason = signal.aborted ? signal.reason : err;
    if (reason instanceof WorkerShutdown) return;
    try {
      if (reason instanceof JobCancelled) {
        state.status = 'cancelled';
        await state.emit();
      } else {
        deps.log?.warn({ jobId: job.job_id, err }, 'sync job failed');
        state.status = 'failed';
        await state.emit(syncErrorOf(err, failingId));
      }
    } catch (emitErr) {
      deps.log?.warn({ jobId: job.job_id, err: emitErr }, 'sync: could not record the end of a job');
    }
  }
};

/** The platform client of the job's connection (its stored credentials); CHANNEL_NOT_FOUND when it is gone. */
const clientOf = async (job: SyncJobRecord, deps: SyncJobDeps): Promise<PlatformClient> => {
  const found = job.connection_id ? await deps.connections.credentials(job.connection_id) : null;
  if (!found)
    throw new PlatformError('CHANNEL_NOT_FOUND', `connection '${job.connection_id}' of the channel no longer exists`, {
      retriable: false,
    });
  return deps.platformClient({ platform: found.platform, ...found.credentials } as PlatformCredentials);
};

/** The channel on the platform (listChannels) and the workspace (validate); CHANNEL_NOT_FOUND when not listed. */
const platformChannel = async (client: PlatformClient, channelId: string, signal: AbortSignal) => {
  const v = await client.validate();
  if (!v.valid) throw validationError(v);
  if (signal.aborted) throw signal.reason;
  const channel = (await client.listChannels()).find((c) => c.id === channelId);
  if (!channel)
    throw new PlatformError('CHANNEL_NOT_FOUND', `channel '${channelId}' does not exist or the bot cannot see it`, {
      retriable: false,
    });
  return { channel, workspace: v.workspace };
};

/** ChannelDiscovered (`source: 'sync'`) as the importer maps the same channel. */
const channelEvent = (
  platform: PlatformClient['platform'],
  workspace: { id: string; name: string },
  c: ConnectionChannel,
): NewEvent<'ChannelDiscovered'> => {
  const data: ChannelDiscovered = {
    platform,
    workspaceId: workspace.id,
    workspaceName: workspace.name,
    channelId: c.id,
    name: c.name.replace(/^#/, ''),
    isPrivate: c.is_private,
    memberCount: Math.max(0, Math.round(c.member_count)),
    topic: c.topic ?? null,
    createdAt: c.created_at ?? null,
    source: 'sync',
  };
  return { type: 'ChannelDiscovered', key: c.id, data };
};
