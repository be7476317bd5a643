import { MessageIngested, messageUuid, type NewEvent, TOPICS } from '@atlas/core';
import type { PlatformClient } from '@atlas/platforms';
import type { SyncJobRecord } from '@atlas/stores';
import { observeMembership } from '../access/membership.js';
import { JobState, syncErrorOf } from './job-state.js';
import { channelEvent, clientOf, platformChannel } from './platform-channel.js';
import { channelPartition, endOffset, waitForGroups } from './stage-wait.js';
import { JobCancelled, type SyncJobDeps, WorkerShutdown } from './types.js';

export { syncErrorOf } from './job-state.js';
export { JobCancelled, type SyncJobDeps, WorkerShutdown } from './types.js';

/** What one run of a job appends to atlas.messages: dedupe by content hash, counts, the last offset it wrote. */
class Fetcher {
  /** Platform ids seen on the platform during this run. */
  readonly seen = new Set<string>();
  /** The highest offset this run appended to the channel's partition of atlas.messages (-1: none). */
  lastOffset = -1;

  constructor(
    private readonly channelId: string,
    /** Content hashes of the stored messages, by platform id (updated as this run appends). */
    readonly known: Map<string, string>,
    private readonly state: JobState,
    private readonly deps: SyncJobDeps,
  ) {}

  /** Appends the new or changed messages (MessageIngested) in appends of batchSize; invalid ones count as failing. */
  async messages(messages: readonly MessageIngested[]): Promise<void> {
    const fresh: NewEvent[] = [];
    for (const m of messages) {
      this.seen.add(m.platformMessageId);
      if (!MessageIngested.safeParse(m).success) {
        this.state.failing += 1;
        continue;
      }
      if (this.known.get(m.platformMessageId) === m.contentHash) continue;
      this.known.set(m.platformMessageId, m.contentHash);
      fresh.push({ type: 'MessageIngested', key: this.channelId, data: m });
    }
    await this.append(fresh);
  }

  /** Appends MessageDeleted for stored messages this run did not see (a full pass only). */
  async deletions(platform: PlatformClient['platform']): Promise<void> {
    const deletedAt = (this.deps.now?.() ?? new Date()).toISOString();
    const channelId = this.channelId;
    await this.append(
      [...this.known.keys()]
        .filter((id) => !this.seen.has(id))
        .map((id) => ({
          type: 'MessageDeleted',
          key: channelId,
          data: {
            messageId: messageUuid(platform, channelId, id),
            platform,
            channelId,
            platformMessageId: id,
            deletedAt,
          },
        })),
    );
  }

  private async append(events: NewEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += this.deps.batchSize) {
      const pos = await this.deps.eventLog.append(TOPICS.messages, events.slice(i, i + this.deps.batchSize));
      this.lastOffset = Math.max(this.lastOffset, ...pos.map((p) => p.offset));
    }
    this.state.synced += events.length;
  }
}

/** The job's context while it runs. */
interface Run {
  job: SyncJobRecord;
  deps: SyncJobDeps;
  signal: AbortSignal;
  state: JobState;
  client: PlatformClient;
  fetcher: Fetcher;
  /** The platform id being fetched after (or the thread root) when a call fails: the error's failing_message_id. */
  failingId: string | null;
}

const checkAbort = (signal: AbortSignal) => {
  if (signal.aborted) throw signal.reason;
};

/**
 * fetching_messages: pages of batchSize top-level messages after the cursor until the platform has no more or `cap`
 * messages were processed; the cursor is persisted after each page. Returns true when it stopped at the cap.
 */
const fetchHistory = async (run: Run, cap: number): Promise<boolean> => {
  const { job, deps, state, signal } = run;
  for (;;) {
    checkAbort(signal);
    const remaining = cap - state.processed;
    if (remaining <= 0) return true;
    run.failingId = state.cursor;
    const page = await run.client.fetchMessages(job.channel_id, {
      after: state.cursor,
      limit: Math.min(deps.batchSize, remaining),
      signal,
    });
    await run.fetcher.messages(page.messages);
    state.processed += page.messages.length;
    state.cursor = page.cursor ?? state.cursor;
    state.total = page.hasMore ? Math.max(state.total, state.processed + deps.batchSize) : state.processed;
    await state.emit();
    if (!page.hasMore) return false;
  }
};

/** Late replies: for the channel's most recently active Slack threads, replies newer than the newest stored one. */
const fetchLateReplies = async (run: Run): Promise<void> => {
  const { job, deps, signal } = run;
  for (const head of await deps.sync.threadHeads(job.channel_id, deps.lateReplyThreads ?? 25)) {
    checkAbort(signal);
    if (run.fetcher.seen.has(head.threadTs)) continue;
    run.failingId = head.threadTs;
    const replies = await run.client.fetchReplies(job.channel_id, head.threadTs, {
      after: head.latestReplyTs,
      limit: 200,
      signal,
    });
    await run.fetcher.messages(replies);
    run.state.processed += replies.length;
  }
};

/**
 * extracting_facts, building_graph: waits until the stage groups have consumed what this job appended, reporting
 * their measured progress to the job's state (each stage's two waits fill its two halves: messages then facts for
 * extracting_facts, facts then graph for building_graph; a wait with no groups counts as done).
 */
const waitForPipeline = async (run: Run): Promise<void> => {
  const { job, deps, state, signal } = run;
  const wait = async (
    groups: string[],
    topic: string,
    target: (p: number) => Promise<number>,
    half: 0 | 1,
  ): Promise<void> => {
    const report = (f: number) => state.progress((half + f) / 2);
    if (groups.length === 0) return report(1);
    const p = await channelPartition(deps.eventLog, topic, job.channel_id);
    const ok = await waitForGroups(deps.eventLog, groups, topic, p, await target(p), signal, {
      pollMs: deps.pollMs,
      timeoutMs: deps.stageTimeoutMs,
      onProgress: report,
    });
    if (!ok) deps.log?.warn({ jobId: job.job_id, topic, groups }, 'sync: projectors did not catch up in time');
  };
  // Offsets after the facts projector passed this job's messages: every fact set of them is on atlas.facts by then.
  const end = (topic: string, groups: string[]) => (p: number) =>
    endOffset(deps.eventLog, groups[0] ?? 'none', topic, p);
  state.enter('extracting_facts');
  await state.emit();
  await wait(deps.stageGroups.messages, TOPICS.messages, async () => run.fetcher.lastOffset + 1, 0);
  await wait(deps.stageGroups.facts, TOPICS.facts, end(TOPICS.facts, deps.stageGroups.facts), 1);
  state.enter('building_graph');
  await state.emit();
  await wait(deps.stageGroups.graphFacts, TOPICS.facts, end(TOPICS.facts, deps.stageGroups.graphFacts), 0);
  await wait(deps.stageGroups.graph, TOPICS.graph, end(TOPICS.graph, deps.stageGroups.graph), 1);
};

/** Records the end of a job that did not complete: cancelled, or failed with the spec's error; nothing on shutdown. */
const endRun = async (
  run: { job: SyncJobRecord; deps: SyncJobDeps; state: JobState },
  reason: unknown,
  failingId: string | null,
) => {
  if (reason instanceof WorkerShutdown) return;
  const { job, deps, state } = run;
  try {
    if (reason instanceof JobCancelled) {
      state.status = 'cancelled';
      await state.emit();
    } else {
      deps.log?.warn({ jobId: job.job_id, err: reason }, 'sync job failed');
      state.status = 'failed';
      await state.emit(syncErrorOf(reason, failingId));
    }
  } catch (emitErr) {
    deps.log?.warn({ jobId: job.job_id, err: emitErr }, 'sync: could not record the end of a job');
  }
};

/**
 * Runs one sync job (spec "States and transitions → Sync job") from queued or from where a restart left it: running
 * through fetching_messages → extracting_facts → building_graph → generating_wiki, then completed; failed with the
 * spec's error on a platform or internal failure; cancelled when `signal` aborts with JobCancelled. On WorkerShutdown
 * it returns without a terminal state, so the next worker resumes from the job's last cursor.
 *
 * First the channel's membership (PlatformClient.listMembers) is appended as ChannelMembershipObserved (`source:
 * 'sync'`, atlas.access; unreadable: a private channel without members, hidden from everyone until a read succeeds).
 * Fetching: pages of `batchSize` top-level messages (Slack: with their threads) after the cursor (the job's, else the
 * channel's; none or force: the start), each page's new or changed messages (content hash vs the document store)
 * appended as MessageIngested (`source: 'sync'`) in appends of `batchSize`, then the cursor is persisted
 * (SyncJobUpdated); a channel whose stored messages are all gone (its data deleted) starts over like a first sync.
 * Until a sync of the channel has completed, a job processes at most `maxMessages` messages (counted
 * across restarts); after that, a job also asks for late replies of the channel's recently active Slack threads; a
 * forced full pass appends MessageDeleted for stored messages the platform no longer has. Later stages wait only for
 * the projectors' progress on what this job appended. Never throws.
 */
export const runSyncJob = async (job: SyncJobRecord, deps: SyncJobDeps, signal: AbortSignal): Promise<void> => {
  const state = new JobState(job, deps);
  let run: Run | undefined;
  try {
    const channelId = job.channel_id;
    const client = await clientOf(job, deps);
    await state.emit();
    const { channel, workspace } = await platformChannel(client, channelId, signal);
    // Channel access (docs/access.md): who can see the channel, read on every sync before its messages are appended.
    const membership = await observeMembership(client, job.connection_id, channel, 'sync', {
      signal,
      ...(deps.now ? { now: deps.now } : {}),
      onError: (err) => deps.log?.warn({ jobId: job.job_id, err }, 'sync: channel membership unreadable; fails closed'),
    });
    if (signal.aborted) throw signal.reason;
    await deps.eventLog.append(TOPICS.access, [membership]);
    const before = await deps.documents.getChannel(channelId);
    const discovered = channelEvent(client.platform, workspace, channel);
    if (!before) await deps.eventLog.append(TOPICS.messages, [discovered]);

    const channelState = await deps.sync.channelState(channelId);
    const known = await deps.documents.messageHashes(channelId);
    // No stored message left behind a cursor: the channel's data was deleted since (DELETE …/data); start over.
    const emptied = known.size === 0 && Boolean(channelState?.cursor);
    const first = !job.force && (!channelState?.last_sync || emptied);
    state.cursor = job.cursor ?? (job.force || emptied ? null : (channelState?.cursor ?? null));
    const fullPass = job.force && job.cursor === null;
    const fetcher = new Fetcher(channelId, known, state, deps);
    run = { job, deps, signal, state, client, fetcher, failingId: null };
    const capped = await fetchHistory(run, first ? deps.maxMessages : Number.POSITIVE_INFINITY);
    if (!first && !fullPass && client.platform === 'platform_a') await fetchLateReplies(run);
    if (fullPass && !capped) await fetcher.deletions(client.platform);
    run.failingId = null;
    state.total = state.processed;

    await waitForPipeline(run);
    state.enter('generating_wiki');
    await state.emit();
    await deps.generateWiki?.(channelId).catch((err: unknown) => {
      deps.log?.warn({ jobId: job.job_id, err }, 'sync: wiki generation failed; the wiki scheduler retries it');
    });
    await state.progress(1);
    const outcome = await deps.sync.outcomeSince(
      channelId,
      job.started_at ?? job.requested_at ?? new Date(0).toISOString(),
    );
    state.facts = outcome.facts;
    state.entities = outcome.entities;
    if (signal.aborted) throw signal.reason; // a cancel that arrived during the last steps still ends it cancelled
    await deps.eventLog.append(TOPICS.messages, [discovered]); // the channel's last_sync
    if (job.connection_id)
      await deps.connections.update(job.connection_id, { last_sync: (deps.now?.() ?? new Date()).toISOString() });
    state.status = 'completed';
    await state.emit();
  } catch (err) {
    await endRun({ job, deps, state }, signal.aborted ? signal.reason : err, run?.failingId ?? null);
  }
};
