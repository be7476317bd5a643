import { type NewEvent, TOPICS } from '@atlas/core';
import type { EventLog } from '@atlas/eventlog';
import type { PlatformClient, PlatformCredentials } from '@atlas/platforms';
import type { ConnectionStore } from '@atlas/stores';
import { codeOf, membershipEvent } from './membership.js';

/** What the ACL refresh reads and where it appends (the runtime's connections, platform clients and log). */
export interface AclRefreshDeps {
  eventLog: Pick<EventLog, 'append'>;
  connections: Pick<ConnectionStore, 'list' | 'channels' | 'credentials'>;
  /** A platform client for a connection's credentials (the live clients, the mock platform with ADAPTER_MOCK). */
  platformClient: (credentials: PlatformCredentials) => PlatformClient;
  /** The clock (tests inject one); default `new Date()`. */
  now?: () => Date;
  log?: { info(msg: string): void; warn(msg: string): void };
}

/** One channel the refresh read (or failed to read). */
export interface AclRefreshChannel {
  channel_id: string;
  connection_id: string;
  platform: PlatformClient['platform'];
  /** As the platform said; null when the read failed (then `code` says why). */
  is_private: boolean | null;
  /** The spec code of the failure (CHANNEL_NOT_FOUND, AUTH_ERROR, RATE_LIMIT, PLATFORM_ERROR, …), else null. */
  code: string | null;
}

/** What one refresh pass did: when it started and each selected channel of each connected connection. */
export interface AclRefreshOutcome {
  /** ISO 8601 UTC: when the pass started. */
  refreshed_at: string;
  channels: AclRefreshChannel[];
  /** ChannelMembershipObserved events appended (one per channel read). */
  appended: number;
}

/**
 * One ACL refresh pass (docs/access.md "Channel access"): for every connection whose status is `connected`, its
 * platform client reads the membership of each of its selected (sync_enabled) channels (PlatformClient.listMembers),
 * and one ChannelMembershipObserved (`source: 'refresh'`) per channel read is appended to atlas.access, per connection
 * in one append. A channel that cannot be read is reported with its code and keeps its last observation (which fails
 * closed once older than two refresh periods); a connection whose credentials cannot be read reports each of its
 * channels with that error. Throws only what the log's append throws.
 */
export const refreshChannelMemberships = async (deps: AclRefreshDeps): Promise<AclRefreshOutcome> => {
  const started = deps.now?.() ?? new Date();
  const out: AclRefreshChannel[] = [];
  let appended = 0;
  for (const conn of await deps.connections.list()) {
    if (conn.status !== 'connected') continue;
    const selected = (await deps.connections.channels(conn.id)).filter((c) => c.sync_enabled);
    if (selected.length === 0) continue;
    const report = (channel_id: string, is_private: boolean | null, code: string | null) =>
      out.push({ channel_id, connection_id: conn.id, platform: conn.platform, is_private, code });
    let client: PlatformClient;
    try {
      const found = await deps.connections.credentials(conn.id);
      if (!found) continue; // deleted meanwhile
      client = deps.platformClient({ platform: found.platform, ...found.credentials } as PlatformCredentials);
    } catch (err) {
      for (const c of selected) report(c.id, null, codeOf(err));
      deps.log?.warn(`acl refresh: connection ${conn.id} skipped: ${(err as Error).message}`);
      continue;
    }
    const events: NewEvent<'ChannelMembershipObserved'>[] = [];
    for (const c of selected) {
      try {
        const m = await client.listMembers(c.id);
        events.push(membershipEvent(client.platform, conn.id, m, 'refresh', deps.now?.() ?? new Date()));
        report(c.id, m.is_private, null);
      } catch (err) {
        report(c.id, null, codeOf(err));
        deps.log?.warn(`acl refresh: channel ${c.id} of connection ${conn.id}: ${(err as Error).message}`);
      }
    }
    if (events.length > 0) await deps.eventLog.append(TOPICS.access, events);
    appended += events.length;
  }
  return { refreshed_at: started.toISOString(), channels: out, appended };
};

/** A running ACL refresher. */
export interface AclRefresher {
  /** Runs one pass now (after any pass in progress); resolves with its outcome (null when it failed). */
  tick(): Promise<AclRefreshOutcome | null>;
  stop(): void;
}

/**
 * Runs refreshChannelMemberships once at start and then every `intervalMs` (ACL_REFRESH_INTERVAL_MS, default 1 h),
 * never two passes at once; a failed pass is logged and the next one tries again. Started beside the sync scheduler
 * (`atlas start`, `atlas run sync-worker`, `atlas run scheduler`); passes of several processes only append the same
 * observations twice (the read model keeps the latest).
 */
export const startAclRefresher = (deps: AclRefreshDeps, opts: { intervalMs: number }): AclRefresher => {
  let running: Promise<AclRefreshOutcome | null> = Promise.resolve(null);
  const pass = (): Promise<AclRefreshOutcome | null> => {
    running = running.then(
      async () => {
        try {
          const outcome = await refreshChannelMemberships(deps);
          const failed = outcome.channels.filter((c) => c.code !== null).length;
          deps.log?.info(
            `acl refresh: ${outcome.channels.length} channels checked, ${outcome.appended} observed, ${failed} failed`,
          );
          return outcome;
        } catch (err) {
          deps.log?.warn(`acl refresh pass failed: ${err instanceof Error ? err.message : String(err)}`);
          return null;
        }
      },
      () => null,
    );
    return running;
  };
  const first = setTimeout(() => void pass(), 0);
  first.unref();
  const timer = setInterval(() => void pass(), opts.intervalMs);
  timer.unref();
  return {
    tick: pass,
    stop: () => {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
};
