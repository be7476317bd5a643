import type { AnyStoredEvent, ChannelAccessView, ChannelMembershipObserved, PlatformIdentity } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { type Kysely, sql } from 'kysely';
import type { AccessTables } from './tables.js';

/** A channel's latest membership observation as the store keeps it (ChannelMembershipObserved, snake_case). */
export interface ChannelMembershipRecord {
  channel_id: string;
  platform: 'platform_a' | 'platform_b';
  /** The connection it was read through; null for an import. */
  connection_id: string | null;
  is_private: boolean;
  /** Member user ids, sorted; null = public to the workspace (no member list). */
  members: string[] | null;
  source: 'sync' | 'refresh' | 'import';
  /** When the membership was read (ISO 8601 UTC). */
  observed_at: string;
}

/** Options of ChannelAccessStore: ACL_REFRESH_INTERVAL_MS (private data older than twice this fails closed). */
export interface ChannelAccessOptions {
  refreshIntervalMs: number;
}

/** Member rows inserted per statement (two parameters a row, well under the driver's 65,535). */
const MEMBER_CHUNK = 2000;

const iso = (v: unknown): string => new Date(v as string | Date).toISOString();

/**
 * The channel-access read model (docs/access.md "Channel access"), on PGlite or PostgreSQL through Kysely: per channel
 * the latest ChannelMembershipObserved (by observedAt; an older observation arriving later is ignored, an equal one
 * rewrites the same rows, so redelivery and replay end equal; an `import` observation never replaces a `sync` or
 * `refresh` one, read from the platform itself). Written only by the channel-access projector; read by
 * the API's filters (ChannelAccessView) and the ACL refresh. A private channel is visible to an identity of its
 * platform listed as a member, while its observation is younger than 2 × `refreshIntervalMs`; anything else private is
 * hidden (fail closed). Needs migrateAccess. Errors: the database's (the runner retries).
 */
export class ChannelAccessStore implements ChannelAccessView {
  private readonly db: Kysely<AccessTables>;
  /** Private channel data older than this (ms) is hidden from every identity: 2 × ACL_REFRESH_INTERVAL_MS. */
  readonly staleAfterMs: number;

  constructor(db: DatabaseHandle['db'], opts: ChannelAccessOptions) {
    this.db = db.withTables<AccessTables>();
    this.staleAfterMs = 2 * opts.refreshIntervalMs;
  }

  /** Folds ChannelMembershipObserved events (other types are ignored), each in one transaction. */
  async apply(events: readonly AnyStoredEvent[]): Promise<void> {
    for (const e of events) if (e.type === 'ChannelMembershipObserved') await this.applyOne(e.data);
  }

  private async applyOne(d: ChannelMembershipObserved): Promise<void> {
    const observed = new Date(d.observedAt);
    if (Number.isNaN(observed.getTime())) return; // a recorded fact is never rejected; an unreadable time is skipped
    await this.db.transaction().execute(async (trx) => {
      const cur = await trx
        .selectFrom('channel_access')
        .select(['observed_at', 'source'])
        .where('channel_id', '=', d.channelId)
        .forUpdate()
        .executeTakeFirst();
      if (cur && new Date(cur.observed_at).getTime() > observed.getTime()) return;
      // The platform is the authority: an export's view never replaces what a connection read from the platform.
      if (cur && cur.source !== 'import' && d.source === 'import') return;
      const members = d.isPrivate && d.members ? [...new Set(d.members)].sort() : null;
      const row = {
        channel_id: d.channelId,
        platform: d.platform,
        connection_id: d.connectionId,
        is_private: d.isPrivate,
        members_known: members !== null,
        source: d.source,
        observed_at: observed.toISOString(),
        updated_at: new Date().toISOString(),
      };
      await trx
        .insertInto('channel_access')
        .values(row)
        .onConflict((oc) =>
          oc.column('channel_id').doUpdateSet(({ ref }) => ({
            platform: ref('excluded.platform'),
            connection_id: ref('excluded.connection_id'),
            is_private: ref('excluded.is_private'),
            members_known: ref('excluded.members_known'),
            source: ref('excluded.source'),
            observed_at: ref('excluded.observed_at'),
            updated_at: ref('excluded.updated_at'),
          })),
        )
        .execute();
      await trx.deleteFrom('channel_access_members').where('channel_id', '=', d.channelId).execute();
      for (let i = 0; members && i < members.length; i += MEMBER_CHUNK) {
        await trx
          .insertInto('channel_access_members')
          .values(members.slice(i, i + MEMBER_CHUNK).map((user_id) => ({ channel_id: d.channelId, user_id })))
          .execute();
      }
    });
  }

  /** The channel's latest observation, or null when none was recorded. */
  async get(channelId: string): Promise<ChannelMembershipRecord | null> {
    const row = await this.db
      .selectFrom('channel_access')
      .selectAll()
      .where('channel_id', '=', channelId)
      .executeTakeFirst();
    if (!row) return null;
    const members = row.members_known
      ? (
          await this.db
            .selectFrom('channel_access_members')
            .select('user_id')
            .where('channel_id', '=', channelId)
            .orderBy('user_id')
            .execute()
        ).map((m) => m.user_id)
      : null;
    return {
      channel_id: row.channel_id,
      platform: row.platform,
      connection_id: row.connection_id,
      is_private: row.is_private,
      members,
      source: row.source,
      observed_at: iso(row.observed_at),
    };
  }

  /** The oldest time (ISO 8601) a private channel's observation may have and still be trusted at `now`. */
  freshSince(now: Date = new Date()): string {
    return new Date(now.getTime() - this.staleAfterMs).toISOString();
  }

  /**
   * See ChannelAccessView.hiddenChannels: every private channel except those whose fresh observation (younger than
   * staleAfterMs at `now`) lists `identity` on its platform; every private channel for a null identity.
   */
  async hiddenChannels(identity: PlatformIdentity | null, now: Date = new Date()): Promise<Set<string>> {
    let q = this.db.selectFrom('channel_access as ca').select('ca.channel_id').where('ca.is_private', '=', true);
    if (identity) {
      const since = this.freshSince(now);
      q = q.where((eb) =>
        eb.not(
          eb.and([
            eb('ca.observed_at', '>=', since),
            eb('ca.platform', '=', identity.platform),
            eb.exists(
              eb
                .selectFrom('channel_access_members as m')
                .select('m.user_id')
                .whereRef('m.channel_id', '=', 'ca.channel_id')
                .where('m.user_id', '=', identity.user_id),
            ),
          ]),
        ),
      );
    }
    return new Set((await q.execute()).map((r) => r.channel_id));
  }

  /** The private channels `identity` may see at `now` (the complement of hiddenChannels among private ones), by id. */
  async visiblePrivateChannels(identity: PlatformIdentity, now: Date = new Date()): Promise<string[]> {
    const rows = await this.db
      .selectFrom('channel_access as ca')
      .innerJoin('channel_access_members as m', 'm.channel_id', 'ca.channel_id')
      .select('ca.channel_id')
      .where('ca.is_private', '=', true)
      .where('ca.observed_at', '>=', this.freshSince(now))
      .where('ca.platform', '=', identity.platform)
      .where('m.user_id', '=', identity.user_id)
      .orderBy('ca.channel_id')
      .execute();
    return rows.map((r) => r.channel_id);
  }

  /** Empties the store (before a replay rebuilds it). */
  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table channel_access_members, channel_access`.execute(this.db);
  }
}
