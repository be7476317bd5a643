import { digestReply, renderPlatformA, renderPlatformB } from '@atlas/bot';
import { cronJob, type DigestPosted, type NewEvent, TOPICS } from '@atlas/core';
import type { PlatformClient, PlatformCredentials } from '@atlas/platforms';
import { channelDigest, type DigestSources, digestPeriodOf } from '@atlas/query';
import type { ConnectionStore, DocumentStore } from '@atlas/stores';

const DAY_MS = 86_400_000;

/** What the digest poster reads and writes. */
export interface DigestPostDeps extends DigestSources {
  documents: DigestSources['documents'] & Pick<DocumentStore, 'channelsWithDigest'>;
  connections: Pick<ConnectionStore, 'connectionsOfChannel' | 'credentials'>;
  /** The live platform client of a connection's credentials (the mock platform under ADAPTER_MOCK). */
  platformClient: (credentials: PlatformCredentials) => PlatformClient;
  /** Appends the DigestPosted record to atlas.messages. */
  append: (event: NewEvent<'DigestPosted'>) => Promise<void>;
  log?: { info(msg: string): void; warn(msg: string): void };
}

/** What one pass did: `posted` (one per channel posted to), `quiet` (nothing to say), `failed` (tried again next pass). */
export interface DigestPass {
  posted: DigestPosted[];
  quiet: string[];
  notDue: string[];
  failed: { channelId: string; reason: string }[];
}

/**
 * When a channel's next digest is due (docs/digests.md "Posted digests"): `days` after the end of the last one posted;
 * at once when none was posted yet. ms since the epoch. Pure.
 */
export const nextDigestDue = (lastPeriodEnd: string | null, days: number): number =>
  lastPeriodEnd === null ? Number.NEGATIVE_INFINITY : Date.parse(lastPeriodEnd) + days * DAY_MS;

/**
 * A digest as the text the bot posts on `platform`: the same shaping as `/atlas digest` (digestReply), in the
 * platform's markup (platform_a mrkdwn with the sources as links; platform_b Markdown within its 2,000 characters).
 */
export const digestPostText = (platform: 'platform_a' | 'platform_b', digest: object): string => {
  const reply = { ...digestReply(digest as Record<string, unknown>), visibility: 'in_channel' as const };
  return platform === 'platform_a' ? renderPlatformA(reply).text : renderPlatformB(reply).content;
};

/**
 * The posted digest (issue 27 point 4; docs/digests.md "Posted digests"). One pass (`runDigestPass`) looks at every
 * channel whose settings opt in (digest_enabled) and, for each whose digest is due (nextDigestDue: `digest_days` after
 * the period of the last one posted, at once for the first), composes the digest of the `digest_days` days before
 * `now` (channelDigest, the same as GET /api/channels/{channel_id}/digest) and posts it to the channel on its platform
 * through the first connection listing the channel (its bot token), then appends DigestPosted (atlas.messages), which
 * the documents projector keeps as the channel's last post. A quiet period (no decision, action item or topic) is not
 * posted and not recorded: the channel is looked at again next pass. A failed post (no connection, the platform
 * refusing or down) is logged and tried again next pass; one channel's failure does not stop the others. Posts made
 * by this process are remembered too, so a pass that runs before the projector applied the record does not post twice.
 */
export class DigestPoster {
  private readonly postedHere = new Map<string, string>();

  constructor(private readonly deps: DigestPostDeps) {}

  /** One pass at `now` (ms since the epoch; default the clock). Never throws for a channel's failure. */
  async runDigestPass(now: number = Date.now()): Promise<DigestPass> {
    const out: DigestPass = { posted: [], quiet: [], notDue: [], failed: [] };
    for (const { channelId, days, lastPost } of await this.deps.documents.channelsWithDigest()) {
      const stored = lastPost?.periodEnd ?? null;
      const here = this.postedHere.get(channelId) ?? null;
      const last = here && (!stored || here > stored) ? here : stored;
      if (now < nextDigestDue(last, days)) {
        out.notDue.push(channelId);
        continue;
      }
      try {
        const posted = await this.postOne(channelId, days, now);
        if (posted) out.posted.push(posted);
        else out.quiet.push(channelId);
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        out.failed.push({ channelId, reason });
        this.deps.log?.warn(`digest: the digest of channel ${channelId} could not be posted: ${reason}`);
      }
    }
    if (out.posted.length > 0) this.deps.log?.info(`digest: posted to ${out.posted.length} channel(s)`);
    return out;
  }

  private async postOne(channelId: string, days: number, now: number): Promise<DigestPosted | null> {
    const { start, end } = digestPeriodOf(now, days);
    const digest = await channelDigest(this.deps, channelId, start, end);
    if (!digest.has_activity) return null;
    const [target] = await this.deps.connections.connectionsOfChannel(channelId);
    if (!target) throw new Error('the channel is in no connection, so there is no bot token to post with');
    const found = await this.deps.connections.credentials(target.connection_id);
    if (!found) throw new Error(`connection '${target.connection_id}' no longer exists`);
    const client = this.deps.platformClient({ platform: found.platform, ...found.credentials } as PlatformCredentials);
    const { message_id } = await client.postMessage(channelId, digestPostText(found.platform, digest));
    const data: DigestPosted = {
      channelId,
      platform: found.platform,
      connectionId: target.connection_id,
      periodStart: start,
      periodEnd: end,
      days,
      platformMessageId: message_id,
      citations: digest.citations.length,
      postedAt: new Date().toISOString(),
    };
    this.postedHere.set(channelId, end);
    await this.deps.append({ type: 'DigestPosted', key: channelId, data });
    return data;
  }
}

/** A running digest schedule: when its next pass runs, and how to stop it. */
export interface DigestScheduler {
  poster: DigestPoster;
  nextRun(): Date | null;
  stop(): void;
}

/**
 * Runs DigestPoster passes at `cron` (five fields, UTC; DIGEST_CRON, every 15 minutes by default); `off` runs none.
 * Throws AtlasError for a bad expression (at start).
 */
export const startDigestScheduler = (deps: DigestPostDeps, opts: { cron: string }): DigestScheduler => {
  const poster = new DigestPoster(deps);
  if (opts.cron.trim() === 'off') return { poster, nextRun: () => null, stop: () => undefined };
  const job = cronJob(opts.cron, { name: 'DIGEST_CRON' }, async () => {
    try {
      await poster.runDigestPass();
    } catch (err) {
      deps.log?.warn(`digest pass failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return { poster, nextRun: () => job.nextRun(), stop: () => job.stop() };
};

/** The digest poster's dependencies on a runtime: its stores, platform clients as sync has them, and its log. */
export const digestPostDepsOf = (
  rt: {
    documents: DigestPostDeps['documents'];
    lifecycle: NonNullable<DigestSources['lifecycle']>;
    connections: DigestPostDeps['connections'];
    eventLog: { append(topic: string, events: NewEvent[]): Promise<unknown> };
  },
  platformClient: DigestPostDeps['platformClient'],
  log?: DigestPostDeps['log'],
): DigestPostDeps => ({
  documents: rt.documents,
  lifecycle: rt.lifecycle,
  connections: rt.connections,
  platformClient,
  append: async (event) => {
    await rt.eventLog.append(TOPICS.messages, [event]);
  },
  ...(log ? { log } : {}),
});
