import { createHash } from 'node:crypto';
import type { EntitiesExtracted, FactsExtracted } from '@atlas/core';
import { normalizeEntityName } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import { type MigrationDb, runMigrations } from '@atlas/db';
import { type Kysely, type Selectable, sql } from 'kysely';
import { channelFlagsMigration, disabledChannels, setChannelEnabled } from '../channel-flags.js';
import type { EntityStateTables } from './tables.js';

/** A person a channel has seen (an author or a mentioned user). Structurally the pipeline's KnownPerson. */
export interface ChannelPerson {
  name: string;
  aliases: string[];
}

/** A decision a channel took. Structurally the pipeline's KnownDecision. */
export interface ChannelDecision {
  entityId: string;
  name: string;
  factId: string;
  /** ISO 8601 UTC. */
  messageTs: string;
  decidedBy: string;
  topicKeys: string[];
  /** The message it came from (state only; absent on decisions an extractor returns). */
  messageId?: string;
}

/** An ownership a channel was told. Structurally the pipeline's KnownOwner. */
export interface ChannelOwner {
  subjectKey: string;
  subject: string;
  owner: string;
  factId: string;
  /** ISO 8601 UTC. */
  messageTs: string;
}

/** What the entity backlog holds: a fact set still to extract, or an extraction still to write to the graph. */
export type EntityBacklogItem =
  | { stage: 'extract'; messageId: string; channelId: string; payload: FactsExtracted; reason: string }
  | { stage: 'write'; messageId: string; channelId: string; payload: EntitiesExtracted; reason: string };

/** Tables of the entities projector's state and of the entity backlog (spec: "queued for entity backfill"). */
export const migrateEntityState = (db: MigrationDb) =>
  runMigrations(db, 'entity_state', {
    '0001_entity_state': {
      async up(db: MigrationDb) {
        await sql`create table if not exists entity_people (channel_id text not null, norm text not null,
          name text not null, aliases text[] not null default '{}', primary key (channel_id, norm))`.execute(db);
        await sql`create table if not exists entity_decisions (channel_id text not null, entity_id uuid not null,
          message_uuid uuid not null, name text not null, fact_id uuid not null, message_ts text not null,
          decided_by text not null, topic_keys text[] not null default '{}', superseded boolean not null default false,
          primary key (channel_id, entity_id, message_uuid))`.execute(db);
        await sql`create table if not exists entity_messages (message_uuid uuid primary key, channel_id text not null)`.execute(
          db,
        );
        await sql`create table if not exists entity_backlog (message_uuid uuid not null, stage text not null,
          channel_id text not null, payload jsonb not null, reason text not null default '',
          queued_at timestamptz not null default now(), primary key (message_uuid, stage))`.execute(db);
      },
    },
    '0002_entity_owners': {
      async up(db: MigrationDb) {
        await sql`create table if not exists entity_owners (channel_id text not null, subject_key text not null,
          message_uuid uuid not null, subject text not null, owner text not null, fact_id uuid not null,
          message_ts text not null, primary key (channel_id, subject_key, message_uuid))`.execute(db);
        await sql`create index if not exists entity_owners_message on entity_owners (message_uuid)`.execute(db);
      },
    },
    '0003_graph_flags': channelFlagsMigration(GRAPH_FLAGS),
    '0004_entity_extractions': {
      async up(db: MigrationDb) {
        await sql`create table if not exists entity_extractions (message_uuid uuid primary key, channel_id text not null,
          input_digest text not null, output jsonb)`.execute(db);
        await sql`create index if not exists entity_extractions_channel on entity_extractions (channel_id)`.execute(db);
      },
    },
  });

/** What one extraction of a fact set yielded (EntitiesExtracted's graph part). */
export type EntityOutput = Pick<EntitiesExtracted, 'entities' | 'relationships' | 'supersessions'>;

/** The recorded extraction of a message: the digest of the fact set it read, and its output (null: no event). */
export interface EntityExtractionRecord {
  digest: string;
  output: EntityOutput | null;
}

/**
 * Digest of what entity extraction reads of a fact set (the facts and the source text) and of the extractor's id:
 * a redelivered set (the facts projector ran a batch again after a crash) has the same digest. Hex SHA-256. Pure.
 */
export const factSetDigest = (set: Pick<FactsExtracted, 'facts' | 'sourceText'>, extractorId: string): string =>
  createHash('sha256')
    .update(JSON.stringify([extractorId, set.sourceText ?? '', set.facts]))
    .digest('hex');

/** The entities projector's copy of graph_enabled per channel. */
const GRAPH_FLAGS = 'entity_channel_graph';

/** Decisions a channel keeps in state for the same-topic test: the newest this many. */
const MAX_DECISIONS = 500;

/**
 * The entities projector's own state: the people and decisions each channel has seen (the input of
 * alias resolution and supersession), and which messages have a graph contribution (so a message that
 * loses its facts gets an empty, retracting EntitiesExtracted, and one that never had any gets none).
 * Writes are idempotent upserts; truncate() clears it before a replay.
 */
export class EntityStateStore {
  private readonly db: Kysely<EntityStateTables>;

  /** `db`: the database, or (from transaction()) a transaction on these tables. */
  constructor(db: DatabaseHandle['db'] | Kysely<EntityStateTables>) {
    this.db = db as Kysely<EntityStateTables>;
  }

  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table entity_people, entity_decisions, entity_messages, entity_owners, entity_extractions,
      entity_channel_graph`.execute(this.db);
  }

  /**
   * Runs `fn` with a store whose writes are one transaction: all of them or none (a process killed mid-batch leaves
   * the state as it was before the batch, so the redelivered batch reads the same state again). Not nestable.
   */
  transaction<T>(fn: (state: EntityStateStore) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new EntityStateStore(trx)));
  }

  /** The recorded extractions of these messages (message id → record); messages never extracted are absent. */
  async extractions(messageIds: readonly string[]): Promise<Map<string, EntityExtractionRecord>> {
    if (messageIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('entity_extractions')
      .select(['message_uuid', 'input_digest', 'output'])
      .where('message_uuid', 'in', [...new Set(messageIds)])
      .execute();
    return new Map(
      rows.map((r) => [
        r.message_uuid,
        {
          digest: r.input_digest,
          output: (typeof r.output === 'string' ? JSON.parse(r.output) : r.output) as EntityOutput | null,
        },
      ]),
    );
  }

  /** Records (upserts) the extraction of a message; `record` null forgets it (the message's facts are gone). */
  async recordExtraction(channelId: string, messageId: string, record: EntityExtractionRecord | null): Promise<void> {
    if (!record) {
      await this.db.deleteFrom('entity_extractions').where('message_uuid', '=', messageId).execute();
      return;
    }
    const output = record.output === null ? null : JSON.stringify(record.output);
    await this.db
      .insertInto('entity_extractions')
      .values({ message_uuid: messageId, channel_id: channelId, input_digest: record.digest, output })
      .onConflict((oc) =>
        oc.column('message_uuid').doUpdateSet((eb) => ({
          channel_id: eb.ref('excluded.channel_id'),
          input_digest: eb.ref('excluded.input_digest'),
          output: eb.ref('excluded.output'),
        })),
      )
      .execute();
  }

  /** Forgets a channel's people, decisions, owners and contributing messages (ChannelDataDeleted); graph_enabled stays. */
  async deleteChannel(channelId: string): Promise<void> {
    for (const table of [
      'entity_people',
      'entity_decisions',
      'entity_messages',
      'entity_owners',
      'entity_extractions',
    ] as const)
      await this.db.deleteFrom(table).where('channel_id', '=', channelId).execute();
  }

  /** Which of these channels have graph extraction off (ChannelSettingsUpdated.graphEnabled). */
  graphDisabled(channelIds: readonly string[]): Promise<Set<string>> {
    return disabledChannels(this.db, GRAPH_FLAGS, channelIds);
  }

  /** Records a channel's graph_enabled as the entities projector read it. */
  setGraphEnabled(channelId: string, enabled: boolean): Promise<void> {
    return setChannelEnabled(this.db, GRAPH_FLAGS, channelId, enabled);
  }

  /** The people of a channel, by name. */
  async people(channelId: string): Promise<ChannelPerson[]> {
    const rows = await this.db
      .selectFrom('entity_people')
      .select(['name', 'aliases'])
      .where('channel_id', '=', channelId)
      .orderBy('norm')
      .execute();
    return rows.map((r) => ({ name: r.name, aliases: r.aliases ?? [] }));
  }

  /** Adds people (aliases are merged into an existing person of the same normalised name). */
  async addPeople(channelId: string, people: readonly ChannelPerson[]): Promise<void> {
    const rows = new Map<string, { channel_id: string; norm: string; name: string; aliases: string[] }>();
    for (const p of people) {
      const norm = normalizeEntityName(p.name);
      if (!norm) continue;
      const prev = rows.get(norm);
      rows.set(norm, {
        channel_id: channelId,
        norm,
        name: prev?.name ?? p.name,
        aliases: [...new Set([...(prev?.aliases ?? []), ...p.aliases])].sort(),
      });
    }
    if (rows.size === 0) return;
    await this.db
      .insertInto('entity_people')
      .values([...rows.values()])
      .onConflict((oc) =>
        oc.columns(['channel_id', 'norm']).doUpdateSet({
          // Raw: the builder has no unnest or ordered array_agg.
          aliases: sql`(select coalesce(array_agg(distinct a order by a), '{}') from unnest(entity_people.aliases || excluded.aliases) a)`,
        }),
      )
      .execute();
  }

  /** A channel's newest decisions still in force (at most 500), oldest first. */
  async decisions(channelId: string): Promise<ChannelDecision[]> {
    const rows = await this.db
      .selectFrom('entity_decisions')
      .selectAll()
      .where('channel_id', '=', channelId)
      .where('superseded', '=', false)
      .orderBy('message_ts', 'desc')
      .limit(MAX_DECISIONS)
      .execute();
    return rows.reverse().map((r) => ({
      entityId: r.entity_id,
      name: r.name,
      factId: r.fact_id,
      messageTs: r.message_ts,
      decidedBy: r.decided_by,
      topicKeys: r.topic_keys ?? [],
      messageId: r.message_uuid,
    }));
  }

  /** Replaces the decisions a message contributed. */
  async replaceDecisions(channelId: string, messageId: string, decisions: readonly ChannelDecision[]): Promise<void> {
    await this.db.deleteFrom('entity_decisions').where('message_uuid', '=', messageId).execute();
    if (decisions.length === 0) return;
    const rows = new Map(
      decisions.map((d) => [
        d.entityId,
        {
          channel_id: channelId,
          entity_id: d.entityId,
          message_uuid: messageId,
          name: d.name,
          fact_id: d.factId,
          message_ts: d.messageTs,
          decided_by: d.decidedBy,
          topic_keys: d.topicKeys,
        },
      ]),
    );
    await this.db
      .insertInto('entity_decisions')
      .values([...rows.values()])
      .execute();
  }

  /**
   * Marks decisions as replaced by a later one (a certain supersession), so the next decision on the topic
   * supersedes the newest, not the first again. Replacing the superseding message's decisions does not
   * undo it; a replay rebuilds the state.
   */
  async markSuperseded(channelId: string, entityIds: readonly string[]): Promise<void> {
    if (entityIds.length === 0) return;
    await this.db
      .updateTable('entity_decisions')
      .set({ superseded: true })
      .where('channel_id', '=', channelId)
      .where('entity_id', 'in', [...new Set(entityIds)])
      .execute();
  }

  /** The latest stated owner of each thing in a channel (one row per subject). */
  async owners(channelId: string): Promise<ChannelOwner[]> {
    const rows = await this.db
      .selectFrom('entity_owners')
      .select(['subject_key', 'subject', 'owner', 'fact_id', 'message_ts'])
      .distinctOn('subject_key')
      .where('channel_id', '=', channelId)
      .orderBy('subject_key')
      .orderBy('message_ts', 'desc')
      .execute();
    return rows.map((x) => ({
      subjectKey: x.subject_key,
      subject: x.subject,
      owner: x.owner,
      factId: x.fact_id,
      messageTs: x.message_ts,
    }));
  }

  /** Replaces the ownerships a message stated. */
  async replaceOwners(channelId: string, messageId: string, owners: readonly ChannelOwner[]): Promise<void> {
    await this.db.deleteFrom('entity_owners').where('message_uuid', '=', messageId).execute();
    const rows = new Map(
      owners.map((o) => [
        o.subjectKey,
        {
          channel_id: channelId,
          subject_key: o.subjectKey,
          message_uuid: messageId,
          subject: o.subject,
          owner: o.owner,
          fact_id: o.factId,
          message_ts: o.messageTs,
        },
      ]),
    );
    if (rows.size > 0)
      await this.db
        .insertInto('entity_owners')
        .values([...rows.values()])
        .execute();
  }

  /** Which of these messages have a graph contribution. */
  async contributed(messageIds: readonly string[]): Promise<Set<string>> {
    if (messageIds.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('entity_messages')
      .select('message_uuid')
      .where('message_uuid', 'in', [...new Set(messageIds)])
      .execute();
    return new Set(rows.map((r) => r.message_uuid));
  }

  /** Records which messages now have a contribution (`has`) and which no longer do. */
  async markContributed(channelId: string, has: readonly string[], hasNot: readonly string[]): Promise<void> {
    if (hasNot.length > 0)
      await this.db
        .deleteFrom('entity_messages')
        .where('message_uuid', 'in', [...hasNot])
        .execute();
    if (has.length === 0) return;
    await this.db
      .insertInto('entity_messages')
      .values([...new Set(has)].map((m) => ({ message_uuid: m, channel_id: channelId })))
      .onConflict((oc) => oc.column('message_uuid').doNothing())
      .execute();
  }
}

const backlogItemOf = (r: Selectable<EntityStateTables['entity_backlog']>): EntityBacklogItem =>
  ({
    stage: r.stage,
    messageId: r.message_uuid,
    channelId: r.channel_id,
    payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
    reason: r.reason,
  }) as EntityBacklogItem;

/**
 * Messages whose entity extraction or graph write was skipped because the LLM or the graph store was
 * down (spec "Ingestion pipeline": entity extraction skipped, message queued for entity backfill;
 * drained by POST /api/admin/backfill/entities). One row per (message, stage); a newer item replaces it.
 */
export class EntityBacklog {
  private readonly db: Kysely<EntityStateTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<EntityStateTables>();
  }

  async add(items: readonly EntityBacklogItem[]): Promise<void> {
    for (const it of items) {
      await this.db
        .insertInto('entity_backlog')
        .values({
          message_uuid: it.messageId,
          stage: it.stage,
          channel_id: it.channelId,
          payload: JSON.stringify(it.payload),
          reason: it.reason,
        })
        .onConflict((oc) =>
          oc.columns(['message_uuid', 'stage']).doUpdateSet((eb) => ({
            payload: eb.ref('excluded.payload'),
            reason: eb.ref('excluded.reason'),
            queued_at: eb.fn<string>('now'),
          })),
        )
        .execute();
    }
  }

  /** The oldest `limit` items, oldest first. */
  async take(limit: number): Promise<EntityBacklogItem[]> {
    const rows = await this.db
      .selectFrom('entity_backlog')
      .selectAll()
      .orderBy('queued_at')
      .orderBy('message_uuid')
      .limit(limit)
      .execute();
    return rows.map(backlogItemOf);
  }

  /** The queued items of these messages, every stage. */
  async get(messageIds: readonly string[]): Promise<EntityBacklogItem[]> {
    if (messageIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('entity_backlog')
      .selectAll()
      .where('message_uuid', 'in', [...new Set(messageIds)])
      .orderBy('queued_at')
      .execute();
    return rows.map(backlogItemOf);
  }

  /** Removes the items of these messages at this stage (done, or replaced by a newer event). */
  async remove(stage: EntityBacklogItem['stage'], messageIds: readonly string[]): Promise<void> {
    if (messageIds.length === 0) return;
    await this.db
      .deleteFrom('entity_backlog')
      .where('stage', '=', stage)
      .where('message_uuid', 'in', [...new Set(messageIds)])
      .execute();
  }

  /** Drops a channel's queued items (ChannelDataDeleted). */
  async deleteChannel(channelId: string): Promise<void> {
    await this.db.deleteFrom('entity_backlog').where('channel_id', '=', channelId).execute();
  }

  async count(): Promise<number> {
    const r = await this.db
      .selectFrom('entity_backlog')
      .select((eb) => eb.cast<number>(eb.fn.countAll(), 'integer').as('n'))
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table entity_backlog`.execute(this.db);
  }
}
