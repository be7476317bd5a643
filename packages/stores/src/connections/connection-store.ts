import { randomUUID } from 'node:crypto';
import {
  CREDENTIAL_ENVELOPE_VERSION,
  CredentialCipher,
  CredentialDecryptionError,
  DATA_KEY_ENVELOPE_VERSION,
  envelopeKeyId,
  envelopeVersion,
} from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { type Kysely, sql, type Updateable } from 'kysely';
import { CredentialKeyring } from './keyring.js';
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

/** What migrateEnvelopes did: legacy envelopes moved to data keys, unreadable ones left, orphan data keys dropped. */
export interface EnvelopeMigration {
  migrated: number;
  unreadable: number;
  droppedKeys: number;
}

/** A data key not referenced by any row is dropped by migrateEnvelopes once it is this old (ms): not one in flight. */
const ORPHAN_KEY_AGE_MS = 10 * 60_000;

/**
 * The connection store (spec "Connection", "Connection channel"): connections with their settings, status and
 * credentials, and each connection's saved channel list. Credentials are encrypted under the connection's own data
 * key (AES-256-GCM `v2` envelope, the connection id as authenticated context, so an envelope copied to another row
 * does not decrypt); the data keys live wrapped in the keyring (keyring.ts), never in
 * the database. Replacing credentials makes a new data key and drops the old one; deleting a connection drops its
 * keys; both then rewrite the table (VACUUM FULL) so no dead row keeps the old envelope: a copy left anywhere (write-
 * ahead log, a page the engine did not reuse, a backup of the database) is unreadable once its key is gone. Legacy
 * `v1` envelopes (directly under the master key) are read, and moved to a data key by migrateEnvelopes or on first
 * read. No method but `credentials` ever returns credentials, and that one is for internal use (validation, sync),
 * never for responses. Needs migrateConnections.
 */
export class ConnectionStore {
  private readonly db: Kysely<ConnectionTables>;
  /** The keyring of data keys; a store given a bare master cipher keeps one in memory. */
  readonly keyring: CredentialKeyring;
  readonly #master: CredentialCipher | null;

  /**
   * `keys`: the data dir's keyring (the runtime's), or a master-key cipher (then the data keys live in this
   * process's memory only: tests, tools).
   */
  constructor(db: DatabaseHandle['db'], keys: CredentialKeyring | CredentialCipher, master?: CredentialCipher) {
    this.db = db.withTables<ConnectionTables>();
    this.keyring = keys instanceof CredentialCipher ? CredentialKeyring.open(null, keys) : keys;
    this.#master = keys instanceof CredentialCipher ? keys : (master ?? null);
  }

  /** Encrypts `credentials` for connection `id` under a new data key; returns the envelope and the key's id. */
  #seal(id: string, credentials: StoredCredentials): { envelope: string; dekId: string } {
    const dek = this.keyring.create(id);
    return { envelope: dek.encryptJson(credentials, id), dekId: dek.keyId };
  }

  /** The plaintext of a stored envelope of connection `id` (v2 under its data key, legacy v1 under the master key). */
  #open(id: string, envelope: string): StoredCredentials {
    const version = envelopeVersion(envelope);
    if (version === CREDENTIAL_ENVELOPE_VERSION) {
      if (!this.#master)
        throw new CredentialDecryptionError(
          'wrong_key',
          'stored credentials use the legacy envelope and no master key',
        );
      return this.#master.decryptJson(envelope, id);
    }
    if (version !== DATA_KEY_ENVELOPE_VERSION)
      throw version && envelope.split(':').length === 5
        ? new CredentialDecryptionError(
            'unsupported_version',
            `stored credentials use envelope version '${version.slice(0, 8)}'`,
          )
        : new CredentialDecryptionError('malformed', 'stored credentials are not an envelope');
    const dekId = envelopeKeyId(envelope);
    const dek = this.keyring.cipher(dekId, id);
    if (!dek)
      throw new CredentialDecryptionError(
        'wrong_key',
        `the data key of these credentials (key id ${dekId}) is not in the credential keyring: restore the data dir's credential-keyring.json with its master key (file or CREDENTIAL_MASTER_KEY), or re-enter the credentials`,
        { stored_key_id: dekId },
      );
    return dek.decryptJson(envelope, id);
  }

  /**
   * Rewrites the connections table so the engine keeps no dead row (an old envelope) in its files: VACUUM FULL on
   * PGlite and PostgreSQL. Best effort (a concurrent lock or a driver that refuses it leaves the dead rows; their
   * data keys are gone anyway).
   */
  async #compact(): Promise<void> {
    await sql`vacuum full connections`.execute(this.db).catch(() => undefined);
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
    const sealed = this.#seal(id, c.credentials);
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
        credentials: sealed.envelope,
      })
      .execute()
      .catch((err: unknown) => {
        this.keyring.drop([sealed.dekId]);
        throw err;
      });
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
   * Applies `patch` (settings merged) and sets updated_at = now; returns the connection, or null when unknown. New
   * credentials are encrypted under a new data key; once the row holds them, the connection's other data keys are
   * dropped from the keyring and the table is rewritten (the old envelope is unreadable from then on).
   */
  async update(id: string, patch: ConnectionPatch, now: Date = new Date()): Promise<Connection | null> {
    const cur = await this.get(id);
    if (!cur) return null;
    const settings = { ...cur.settings, ...patch.settings };
    const sealed = patch.credentials === undefined ? null : this.#seal(id, patch.credentials);
    const set: Updateable<ConnectionTables['connections']> = {
      updated_at: now.toISOString(),
      settings: JSON.stringify(settings),
      ...(patch.name === undefined ? {} : { name: patch.name }),
      ...(patch.status === undefined ? {} : { status: patch.status }),
      ...(patch.validated_at === undefined ? {} : { validated_at: patch.validated_at }),
      ...(patch.last_sync === undefined ? {} : { last_sync: patch.last_sync }),
      ...(sealed ? { credentials: sealed.envelope } : {}),
    };
    try {
      await this.db.updateTable('connections').set(set).where('id', '=', id).execute();
    } catch (err) {
      if (sealed) this.keyring.drop([sealed.dekId]);
      throw err;
    }
    if (sealed) {
      this.keyring.dropConnection(id, sealed.dekId);
      await this.#compact();
    }
    return this.get(id);
  }

  /**
   * Deletes the connection and its channel list, drops its data keys from the keyring and rewrites the table; false
   * when unknown.
   */
  async delete(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('connections').where('id', '=', id).executeTakeFirst();
    const dropped = this.keyring.dropConnection(id);
    if (Number(r.numDeletedRows) > 0 || dropped > 0) await this.#compact();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * INTERNAL USE ONLY (platform validation, sync): the decrypted credentials of a connection and its platform, or
   * null when unknown. Never put the result in a response or a log line. A legacy `v1` envelope is moved to a data
   * key on this first read. Throws CredentialDecryptionError (500) when the data key is not in the keyring (or is
   * wrapped under another master key), or the envelope has been altered.
   */
  async credentials(id: string): Promise<{ platform: ConnectionPlatform; credentials: StoredCredentials } | null> {
    const row = await this.db
      .selectFrom('connections')
      .select(['platform', 'credentials'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return null;
    const credentials = this.#open(id, row.credentials);
    if (envelopeVersion(row.credentials) === CREDENTIAL_ENVELOPE_VERSION)
      await this.#migrate(id, row.credentials, credentials);
    return { platform: row.platform, credentials };
  }

  /** Moves connection `id` from its legacy envelope `old` to a data key (only if the row still holds `old`). */
  async #migrate(id: string, old: string, credentials: StoredCredentials): Promise<void> {
    const sealed = this.#seal(id, credentials);
    const r = await this.db
      .updateTable('connections')
      .set({ credentials: sealed.envelope })
      .where('id', '=', id)
      .where('credentials', '=', old)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) this.keyring.drop([sealed.dekId]);
    else this.keyring.dropConnection(id, sealed.dekId);
  }

  /**
   * Run at start (the runtime does): moves every legacy `v1` envelope readable under the master key to a data key,
   * counts the unreadable ones (written under another key, e.g. the former public development key: re-enter those
   * credentials), drops data keys no row references (older than ten minutes: not one being written now), and
   * rewrites the table when anything moved.
   */
  async migrateEnvelopes(now: Date = new Date()): Promise<EnvelopeMigration> {
    const rows = await this.db.selectFrom('connections').select(['id', 'credentials']).execute();
    let migrated = 0;
    let unreadable = 0;
    const used = new Set<string>();
    for (const row of rows) {
      if (envelopeVersion(row.credentials) !== CREDENTIAL_ENVELOPE_VERSION) {
        used.add(envelopeKeyId(row.credentials));
        continue;
      }
      let plain: StoredCredentials;
      try {
        plain = this.#open(row.id, row.credentials);
      } catch {
        unreadable++;
        continue;
      }
      await this.#migrate(row.id, row.credentials, plain);
      migrated++;
    }
    const stale = this.keyring
      .entries()
      .filter((e) => !used.has(e.dekId) && now.getTime() - Date.parse(e.createdAt) > ORPHAN_KEY_AGE_MS)
      .map((e) => e.dekId);
    const droppedKeys = stale.length > 0 && this.keyring.drop(stale) ? stale.length : 0;
    if (migrated > 0 || droppedKeys > 0) await this.#compact();
    return { migrated, unreadable, droppedKeys };
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
