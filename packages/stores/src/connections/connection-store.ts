import { randomUUID } from 'node:crypto';
import type { CredentialCipher } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import type { Kysely, Updateable } from 'kysely';
import type { ConnectionTables } from './tables.js';

/** Spec "Connection": the two platforms a connection links to. */
export type ConnectionPlatform = 'platform_a' | 'platform_b';
/** Spec "Connection status": connected (active), disconnected (can reconnect), error (needs attention). */
export type ConnectionStatus = 'connected' | 'disconnected' | 'error';

/** Spec "Connection" settings (detail only). sync_interval_minutes in minutes. */
export interface ConnectionSettings {
  sync_interval_minutes: number;
  wiki_enabled: boolean;
  graph_enabled: boolean;
}

/** Settings of a connection created without them: sync every hour, wiki and graph on. */
export const DEFAULT_CONNECTION_SETTINGS: ConnectionSettings = {
  sync_interval_minutes: 60,
  wiki_enabled: true,
  graph_enabled: true,
};

/**
 * A connection as the store shows it (spec "Connection"), never with its credentials. Times ISO 8601 UTC;
 * last_sync and validated_at null until they happen; channel_count = saved channels with sync_enabled.
 */
export interface Connection {
  id: string;
  name: string;
  platform: ConnectionPlatform;
  status: ConnectionStatus;
  created_at: string;
  updated_at: string;
  last_sync: string | null;
  validated_at: string | null;
  channel_count: number;
  settings: ConnectionSettings;
}

/** Spec "Connection channel": one channel of a connection's saved list. */
export interface ConnectionChannel {
  /** The platform's channel id. */
  id: string;
  name: string;
  is_private: boolean;
  member_count: number;
  sync_enabled: boolean;
}

/** Platform credentials as given on create/update (spec "Connection" credentials): a flat object of strings. */
export type StoredCredentials = Record<string, string>;

/** Fields a connection is created with; `credentials` is encrypted before it reaches the database. */
export interface NewConnection {
  /** Default: a random UUID. */
  id?: string;
  name: string;
  platform: ConnectionPlatform;
  credentials: StoredCredentials;
  settings?: Partial<ConnectionSettings>;
  /** Default `connected` (spec "Connection status": create accepted → connected). */
  status?: ConnectionStatus;
  /** ISO 8601; when the credentials were validated before saving. */
  validated_at?: string | null;
}

/** What update may change; absent fields stay. `settings` is merged into the stored settings. */
export interface ConnectionPatch {
  name?: string;
  settings?: Partial<ConnectionSettings>;
  credentials?: StoredCredentials;
  status?: ConnectionStatus;
  /** ISO 8601. */
  validated_at?: string | null;
  /** ISO 8601. */
  last_sync?: string | null;
}

type Row = {
  id: string;
  name: string;
  platform: ConnectionPlatform;
  status: ConnectionStatus;
  created_at: unknown;
  updated_at: unknown;
  last_sync: unknown;
  validated_at: unknown;
  settings: unknown;
  /** A scalar subquery's count: never null in practice. */
  channel_count: string | number | null;
};

const iso = (v: unknown): string => new Date(v as string | Date).toISOString();
const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v));
const parsed = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

const toConnection = (r: Row): Connection => ({
  id: r.id,
  name: r.name,
  platform: r.platform,
  status: r.status,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  last_sync: isoOrNull(r.last_sync),
  validated_at: isoOrNull(r.validated_at),
  channel_count: Number(r.channel_count),
  settings: { ...DEFAULT_CONNECTION_SETTINGS, ...parsed<Partial<ConnectionSettings>>(r.settings) },
});

/**
 * The connection store (spec "Connection", "Connection channel"): connections with their settings, status and
 * credentials encrypted under the master key (AES-256-GCM envelope, the connection id as authenticated context, so
 * an envelope copied to another row does not decrypt), and each connection's saved channel list. No method but
 * `credentials` ever returns credentials, and that one is for internal use (validation, sync), never for responses.
 * Needs migrateConnections.
 */
export class ConnectionStore {
  private readonly db: Kysely<ConnectionTables>;

  constructor(
    db: DatabaseHandle['db'],
    private readonly cipher: CredentialCipher,
  ) {
    this.db = db.withTables<ConnectionTables>();
  }

  /** Connections with their channel_count (channels with sync_enabled). */
  private selectConnections() {
    return this.db.selectFrom('connections as c').select((eb) => [
      'c.id',
      'c.name',
      'c.platform',
      'c.status',
      'c.created_at',
      'c.updated_at',
      'c.last_sync',
      'c.validated_at',
      'c.settings',
      eb
        .selectFrom('connection_channels as cc')
        .select((cc) => cc.fn.countAll<number>().as('n'))
        .whereRef('cc.connection_id', '=', 'c.id')
        .where('cc.sync_enabled', '=', true)
        .as('channel_count'),
    ]);
  }

  /** Saves a new connection (status default `connected`) and returns it (channel_count 0, last_sync null). */
  async create(c: NewConnection, now: Date = new Date()): Promise<Connection> {
    const id = c.id ?? randomUUID();
    const at = now.toISOString();
    const settings = { ...DEFAULT_CONNECTION_SETTINGS, ...c.settings };
    await this.db
      .insertInto('connections')
      .values({
        id,
        name: c.name,
        platform: c.platform,
        status: c.status ?? 'connected',
        created_at: at,
        updated_at: at,
        last_sync: null,
        validated_at: c.validated_at ?? null,
        settings: JSON.stringify(settings),
        credentials: this.cipher.encryptJson(c.credentials, id),
      })
      .execute();
    return (await this.get(id))!;
  }

  /** The connection, or null when unknown. */
  async get(id: string): Promise<Connection | null> {
    const row = await this.selectConnections().where('c.id', '=', id).executeTakeFirst();
    return row ? toConnection(row) : null;
  }

  /** Every connection, oldest first (created_at, then id). */
  async list(): Promise<Connection[]> {
    const rows = await this.selectConnections().orderBy('c.created_at').orderBy('c.id').execute();
    return rows.map(toConnection);
  }

  /**
   * Applies `patch` (new credentials are re-encrypted; settings merged) and sets updated_at = now; returns the
   * connection, or null when unknown.
   */
  async update(id: string, patch: ConnectionPatch, now: Date = new Date()): Promise<Connection | null> {
    const cur = await this.get(id);
    if (!cur) return null;
    const settings = { ...cur.settings, ...patch.settings };
    const set: Updateable<ConnectionTables['connections']> = {
      updated_at: now.toISOString(),
      settings: JSON.stringify(settings),
      ...(patch.name === undefined ? {} : { name: patch.name }),
      ...(patch.status === undefined ? {} : { status: patch.status }),
      ...(patch.validated_at === undefined ? {} : { validated_at: patch.validated_at }),
      ...(patch.last_sync === undefined ? {} : { last_sync: patch.last_sync }),
      ...(patch.credentials === undefined ? {} : { credentials: this.cipher.encryptJson(patch.credentials, id) }),
    };
    await this.db.updateTable('connections').set(set).where('id', '=', id).execute();
    return this.get(id);
  }

  /** Deletes the connection and its channel list; false when unknown. */
  async delete(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('connections').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * INTERNAL USE ONLY (platform validation, sync): the decrypted credentials of a connection and its platform, or
   * null when unknown. Never put the result in a response or a log line. Throws CredentialDecryptionError (500) when
   * the stored envelope was written under another CREDENTIAL_MASTER_KEY or has been altered.
   */
  async credentials(id: string): Promise<{ platform: ConnectionPlatform; credentials: StoredCredentials } | null> {
    const row = await this.db
      .selectFrom('connections')
      .select(['platform', 'credentials'])
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? { platform: row.platform, credentials: this.cipher.decryptJson(row.credentials, id) } : null;
  }

  /** The connection's saved channel list, by name then id (empty when none is saved or the connection is unknown). */
  async channels(id: string): Promise<ConnectionChannel[]> {
    const rows = await this.db
      .selectFrom('connection_channels')
      .select(['channel_id as id', 'name', 'is_private', 'member_count', 'sync_enabled'])
      .where('connection_id', '=', id)
      .orderBy('name')
      .orderBy('channel_id')
      .execute();
    return rows.map((x) => ({ ...x, member_count: Number(x.member_count) }));
  }

  /**
   * The connections whose saved channel list holds `channelId` (platform channel id), those with it sync_enabled
   * first, then oldest connection first; [] when the channel is in no connection (sync needs one: POST /api/sync).
   */
  async connectionsOfChannel(
    channelId: string,
  ): Promise<{ connection_id: string; platform: ConnectionPlatform; channel: ConnectionChannel }[]> {
    const rows = await this.db
      .selectFrom('connection_channels as cc')
      .innerJoin('connections as c', 'c.id', 'cc.connection_id')
      .select([
        'cc.connection_id',
        'c.platform',
        'cc.channel_id as id',
        'cc.name',
        'cc.is_private',
        'cc.member_count',
        'cc.sync_enabled',
      ])
      .where('cc.channel_id', '=', channelId)
      .orderBy('cc.sync_enabled', 'desc')
      .orderBy('c.created_at')
      .orderBy('c.id')
      .execute();
    return rows.map(({ connection_id, platform, ...c }) => ({
      connection_id,
      platform,
      channel: { ...c, member_count: Number(c.member_count) },
    }));
  }

  /**
   * The channels (platform channel ids) that are selected for sync (sync_enabled) in at least one connection whose
   * status is `connected`: spec "Channel" `connected` (docs/conventions.md "connected"). A channel only imported from
   * an export, deselected, or whose connection was deleted, disconnected or is in error is not among them. With
   * `channelIds`, only those are looked at.
   */
  async connectedChannels(channelIds?: readonly string[]): Promise<Set<string>> {
    if (channelIds && channelIds.length === 0) return new Set();
    let q = this.db
      .selectFrom('connection_channels as cc')
      .innerJoin('connections as c', 'c.id', 'cc.connection_id')
      .select('cc.channel_id')
      .distinct()
      .where('cc.sync_enabled', '=', true)
      .where('c.status', '=', 'connected');
    if (channelIds) q = q.where('cc.channel_id', 'in', [...new Set(channelIds)]);
    return new Set((await q.execute()).map((x) => x.channel_id));
  }

  /** Which of `channelIds` are in the saved channel list of some connection (selected or not). */
  async listedChannels(channelIds: readonly string[]): Promise<Set<string>> {
    if (channelIds.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('connection_channels')
      .select('channel_id')
      .distinct()
      .where('channel_id', 'in', [...new Set(channelIds)])
      .execute();
    return new Set(rows.map((x) => x.channel_id));
  }

  /**
   * Replaces the connection's saved channel list with `given` (one transaction; a repeated id keeps its last entry)
   * and touches updated_at; returns the new channel_count (channels with sync_enabled), or null when the connection
   * is unknown.
   */
  async saveChannels(id: string, given: readonly ConnectionChannel[], now: Date = new Date()): Promise<number | null> {
    const at = now.toISOString();
    const channels = [...new Map(given.map((c) => [c.id, c])).values()];
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.updateTable('connections').set({ updated_at: at }).where('id', '=', id).executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return null;
      await trx.deleteFrom('connection_channels').where('connection_id', '=', id).execute();
      if (channels.length > 0)
        await trx
          .insertInto('connection_channels')
          .values(
            channels.map((c) => ({
              connection_id: id,
              channel_id: c.id,
              name: c.name,
              is_private: c.is_private,
              member_count: Math.max(0, Math.round(c.member_count)),
              sync_enabled: c.sync_enabled,
              updated_at: at,
            })),
          )
          .execute();
      return channels.filter((c) => c.sync_enabled).length;
    });
  }
}
