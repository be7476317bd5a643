import { randomUUID } from 'node:crypto';
import type { CredentialCipher } from '@atlas/core';
import { type Kysely, sql } from 'kysely';

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
  channel_count: string | number;
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

const SELECT = sql`select c.id, c.name, c.platform, c.status, c.created_at, c.updated_at, c.last_sync,
  c.validated_at, c.settings, (select count(*) from connection_channels cc
    where cc.connection_id = c.id and cc.sync_enabled) as channel_count
  from connections c`;

/**
 * The connection store (spec "Connection", "Connection channel"): connections with their settings, status and
 * credentials encrypted under the master key (AES-256-GCM envelope, the connection id as authenticated context, so
 * an envelope copied to another row does not decrypt), and each connection's saved channel list. No method but
 * `credentials` ever returns credentials, and that one is for internal use (validation, sync), never for responses.
 * Needs migrateConnections.
 */
export class ConnectionStore {
  constructor(
    private readonly db: Kysely<unknown>,
    private readonly cipher: CredentialCipher,
  ) {}

  /** Saves a new connection (status default `connected`) and returns it (channel_count 0, last_sync null). */
  async create(c: NewConnection, now: Date = new Date()): Promise<Connection> {
    const id = c.id ?? randomUUID();
    const at = now.toISOString();
    const settings = { ...DEFAULT_CONNECTION_SETTINGS, ...c.settings };
    await sql`insert into connections (id, name, platform, status, created_at, updated_at, last_sync, validated_at,
        settings, credentials)
      values (${id}, ${c.name}, ${c.platform}, ${c.status ?? 'connected'}, ${at}::timestamptz, ${at}::timestamptz,
        null, ${c.validated_at ?? null}::timestamptz, ${JSON.stringify(settings)}::jsonb,
        ${this.cipher.encryptJson(c.credentials, id)})`.execute(this.db);
    return (await this.get(id))!;
  }

  /** The connection, or null when unknown. */
  async get(id: string): Promise<Connection | null> {
    const r = await sql<Row>`${SELECT} where c.id = ${id}`.execute(this.db);
    return r.rows[0] ? toConnection(r.rows[0]) : null;
  }

  /** Every connection, oldest first (created_at, then id). */
  async list(): Promise<Connection[]> {
    const r = await sql<Row>`${SELECT} order by c.created_at, c.id`.execute(this.db);
    return r.rows.map(toConnection);
  }

  /**
   * Applies `patch` (new credentials are re-encrypted; settings merged) and sets updated_at = now; returns the
   * connection, or null when unknown.
   */
  async update(id: string, patch: ConnectionPatch, now: Date = new Date()): Promise<Connection | null> {
    const cur = await this.get(id);
    if (!cur) return null;
    const settings = { ...cur.settings, ...patch.settings };
    const set = [
      sql`updated_at = ${now.toISOString()}::timestamptz`,
      sql`settings = ${JSON.stringify(settings)}::jsonb`,
      ...(patch.name === undefined ? [] : [sql`name = ${patch.name}`]),
      ...(patch.status === undefined ? [] : [sql`status = ${patch.status}`]),
      ...(patch.validated_at === undefined ? [] : [sql`validated_at = ${patch.validated_at}::timestamptz`]),
      ...(patch.last_sync === undefined ? [] : [sql`last_sync = ${patch.last_sync}::timestamptz`]),
      ...(patch.credentials === undefined
        ? []
        : [sql`credentials = ${this.cipher.encryptJson(patch.credentials, id)}`]),
    ];
    await sql`update connections set ${sql.join(set)} where id = ${id}`.execute(this.db);
    return this.get(id);
  }

  /** Deletes the connection and its channel list; false when unknown. */
  async delete(id: string): Promise<boolean> {
    const r = await sql`delete from connections where id = ${id}`.execute(this.db);
    return Number(r.numAffectedRows ?? 0) > 0;
  }

  /**
   * INTERNAL USE ONLY (platform validation, sync): the decrypted credentials of a connection and its platform, or
   * null when unknown. Never put the result in a response or a log line. Throws CredentialDecryptionError (500) when
   * the stored envelope was written under another CREDENTIAL_MASTER_KEY or has been altered.
   */
  async credentials(id: string): Promise<{ platform: ConnectionPlatform; credentials: StoredCredentials } | null> {
    const r = await sql<{ platform: ConnectionPlatform; credentials: string }>`select platform, credentials
      from connections where id = ${id}`.execute(this.db);
    const row = r.rows[0];
    return row ? { platform: row.platform, credentials: this.cipher.decryptJson(row.credentials, id) } : null;
  }

  /** The connection's saved channel list, by name then id (empty when none is saved or the connection is unknown). */
  async channels(id: string): Promise<ConnectionChannel[]> {
    const r = await sql<ConnectionChannel & { member_count: number | string }>`select channel_id as id, name,
        is_private, member_count, sync_enabled
      from connection_channels where connection_id = ${id} order by name, channel_id`.execute(this.db);
    return r.rows.map((x) => ({ ...x, member_count: Number(x.member_count) }));
  }

  /**
   * The connections whose saved channel list holds `channelId` (platform channel id), those with it sync_enabled
   * first, then oldest connection first; [] when the channel is in no connection (sync needs one: POST /api/sync).
   */
  async connectionsOfChannel(
    channelId: string,
  ): Promise<{ connection_id: string; platform: ConnectionPlatform; channel: ConnectionChannel }[]> {
    const r = await sql<
      ConnectionChannel & { connection_id: string; platform: ConnectionPlatform; member_count: number | string }
    >`
      select cc.connection_id, c.platform, cc.channel_id as id, cc.name, cc.is_private, cc.member_count,
        cc.sync_enabled
      from connection_channels cc join connections c on c.id = cc.connection_id
      where cc.channel_id = ${channelId} order by cc.sync_enabled desc, c.created_at, c.id`.execute(this.db);
    return r.rows.map(({ connection_id, platform, ...c }) => ({
      connection_id,
      platform,
      channel: { ...c, member_count: Number(c.member_count) },
    }));
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
      const r = await sql`update connections set updated_at = ${at}::timestamptz where id = ${id}`.execute(trx);
      if (Number(r.numAffectedRows ?? 0) === 0) return null;
      await sql`delete from connection_channels where connection_id = ${id}`.execute(trx);
      if (channels.length > 0)
        await sql`insert into connection_channels (connection_id, channel_id, name, is_private, member_count,
            sync_enabled, updated_at)
          values ${sql.join(
            channels.map(
              (c) =>
                sql`(${id}, ${c.id}, ${c.name}, ${c.is_private}, ${Math.max(0, Math.round(c.member_count))},
                  ${c.sync_enabled}, ${at}::timestamptz)`,
            ),
          )}`.execute(trx);
      return channels.filter((c) => c.sync_enabled).length;
    });
  }
}
