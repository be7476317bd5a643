import { AtlasError } from '@atlas/core';
import type { DatabaseHandle } from '@atlas/db';
import type { Kysely } from 'kysely';
import type { AskTables } from './tables.js';

/** Spec "Ask session and messages": an ask citation. */
export interface AskCitation {
  /** `[n]`, as referenced in the answer text. */
  id: string;
  author: string;
  channel: string;
  /** ISO 8601 UTC. */
  timestamp: string;
  /** The first 100 characters of the source. */
  text_excerpt: string;
  permalink: string;
  source_message_id: string | null;
  media_type: 'link' | 'pdf' | 'image' | null;
  media_name: string | null;
}

/** Spec "Ask session and messages": a message of a session. Times ISO 8601 UTC. */
export interface AskMessage {
  message_id: string;
  role: 'user' | 'assistant';
  content: string;
  citations: AskCitation[];
  timestamp: string;
}

/**
 * Spec session summary, plus `title` (a documented addition, docs/ask.md "Sessions"): the session's first question,
 * at most 120 characters; null for a session with no question stored.
 */
export interface AskSessionSummary {
  session_id: string;
  created_at: string;
  message_count: number;
  last_activity: string;
  title: string | null;
}

/** Spec session detail (plus the channel a channel-scoped session belongs to, null for POST /api/ask sessions). */
export interface AskSessionDetail {
  session_id: string;
  channel_id: string | null;
  created_at: string;
  last_activity: string;
  messages: AskMessage[];
}

/** A message of a channel's ask history (GET /api/channels/{channel_id}/ask/history): the message and its session. */
export interface AskHistoryEntry extends AskMessage {
  session_id: string;
}

/** A stored rating of an answer (POST /api/ask/feedback). */
export interface AskFeedback {
  session_id: string;
  message_id: string;
  rating: 'up' | 'down';
  comment: string | null;
  created_at: string;
  updated_at: string;
}

/** One completed ask: the question and its answer, appended to a session together. */
export interface AskTurn {
  sessionId: string;
  /** The scope of a new session (null: POST /api/ask); an existing session must have the same scope. */
  channelId: string | null;
  /** Who asks (AskScope.owner; undefined or null: the open local default or the bootstrap key); an existing session must be theirs. */
  owner?: string | null | undefined;
  question: { message_id: string; content: string; timestamp: string };
  answer: {
    message_id: string;
    content: string;
    citations: AskCitation[];
    timestamp: string;
    /** Kept with the answer (mode, tokens_used, route, model, duration_ms). */
    metadata?: Record<string, unknown>;
  };
}

/** Where a session lookup may look: `channelId` undefined = every session; a string = that channel's sessions only. */
export interface AskScope {
  channelId?: string | undefined;
  /**
   * Whose sessions (docs/access.md "Ask sessions"): a key's id or the bridge user (`bridge:<platform>:<user>`) sees
   * only the sessions it made; undefined sees every session (the open local default, the bootstrap key).
   */
  owner?: string | undefined;
}

/** The spec's session inactivity limit (Limits: 30 minutes), ms. */
export const ASK_SESSION_IDLE_MS = 30 * 60_000;

const iso = (v: unknown): string => new Date(v as string | Date).toISOString();

/** A session's title from its first question: whitespace collapsed, cut at 120 characters with an ellipsis. */
const titleOf = (question: string): string => {
  const t = question.replace(/\s+/g, ' ').trim();
  return t.length > 120 ? `${t.slice(0, 119)}…` : t;
};
const parsed = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

type MessageRow = {
  message_id: string;
  session_id: string;
  role: 'user' | 'assistant';
  content: string;
  citations: unknown;
  created_at: unknown;
};
const toMessage = (r: MessageRow): AskMessage => ({
  message_id: r.message_id,
  role: r.role,
  content: r.content,
  citations: parsed<AskCitation[]>(r.citations) ?? [],
  timestamp: iso(r.created_at),
});

/**
 * A session of another scope, or one that does not exist, when a turn is appended: AtlasError CONFLICT (never
 * retriable); the caller answers 4xx. `sessionId` is the session asked for.
 */
export class AskScopeError extends AtlasError {
  constructor(
    readonly sessionId: string,
    message: string,
  ) {
    super('CONFLICT', message, { details: { session_id: sessionId } });
    this.name = 'AskScopeError';
  }
}

/**
 * The ask store (spec "Ask session" states): sessions exist once their first stream completed (recordTurn creates
 * them), keep every message with its citations, and lose their context for follow-ups after 30 minutes of
 * inactivity (context); deleting a session deletes its messages and feedback. Channel-scoped sessions
 * (channel_id set) are visible to their channel's routes only; the global routes see every session. Needs migrateAsk.
 */
export class AskStore {
  private readonly db: Kysely<AskTables>;

  constructor(db: DatabaseHandle['db']) {
    this.db = db.withTables<AskTables>();
  }

  /**
   * Appends a completed question and answer to `turn.sessionId`, creating the session (created_at = the question's
   * timestamp) when it does not exist, and sets last_activity to the answer's timestamp. One transaction. Throws
   * AskScopeError when the session exists with another channel scope.
   */
  async recordTurn(turn: AskTurn): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('ask_sessions')
        .values({
          session_id: turn.sessionId,
          channel_id: turn.channelId,
          owner: turn.owner ?? null,
          created_at: turn.question.timestamp,
          last_activity: turn.answer.timestamp,
        })
        .onConflict((oc) => oc.column('session_id').doNothing())
        .execute();
      const s = await trx
        .selectFrom('ask_sessions')
        .select(['channel_id', 'owner'])
        .where('session_id', '=', turn.sessionId)
        .forUpdate()
        .executeTakeFirst();
      if ((s?.channel_id ?? null) !== turn.channelId)
        throw new AskScopeError(turn.sessionId, `session ${turn.sessionId} belongs to another scope`);
      if (turn.owner != null && (s?.owner ?? null) !== turn.owner)
        throw new AskScopeError(turn.sessionId, `session ${turn.sessionId} belongs to another scope`);
      const last = await trx
        .selectFrom('ask_messages')
        .select((eb) => eb.fn.max('seq').as('n'))
        .where('session_id', '=', turn.sessionId)
        .executeTakeFirst();
      const seq = Number(last?.n ?? 0);
      await trx
        .insertInto('ask_messages')
        .values([
          {
            message_id: turn.question.message_id,
            session_id: turn.sessionId,
            seq: seq + 1,
            role: 'user',
            content: turn.question.content,
            citations: '[]',
            created_at: turn.question.timestamp,
            metadata: '{}',
          },
          {
            message_id: turn.answer.message_id,
            session_id: turn.sessionId,
            seq: seq + 2,
            role: 'assistant',
            content: turn.answer.content,
            citations: JSON.stringify(turn.answer.citations),
            created_at: turn.answer.timestamp,
            metadata: JSON.stringify(turn.answer.metadata ?? {}),
          },
        ])
        .execute();
      await trx
        .updateTable('ask_sessions')
        .set((eb) => ({
          last_activity: eb.fn('greatest', [
            eb.ref('last_activity'),
            eb.cast(eb.val(turn.answer.timestamp), 'timestamptz'),
          ]),
        }))
        .where('session_id', '=', turn.sessionId)
        .execute();
    });
  }

  /**
   * What a follow-up in `sessionId` may use: null when the session does not exist in `scope`; else its channel and
   * its last `maxMessages` messages (oldest first), or none when the session has been inactive for `idleMs`
   * (default 30 minutes, spec) before `now` (`expired` true).
   */
  async context(
    sessionId: string,
    scope: AskScope,
    now: Date,
    opts: { idleMs?: number; maxMessages?: number } = {},
  ): Promise<{ channelId: string | null; expired: boolean; messages: AskMessage[] } | null> {
    const s = await this.sessionRow(sessionId, scope);
    if (!s) return null;
    const expired = now.getTime() - new Date(iso(s.last_activity)).getTime() > (opts.idleMs ?? ASK_SESSION_IDLE_MS);
    if (expired) return { channelId: s.channel_id, expired, messages: [] };
    const rows = await this.db
      .selectFrom((qb) =>
        qb
          .selectFrom('ask_messages')
          .select(['message_id', 'session_id', 'role', 'content', 'citations', 'created_at', 'seq'])
          .where('session_id', '=', sessionId)
          .orderBy('seq', 'desc')
          .limit(opts.maxMessages ?? 10)
          .as('m'),
      )
      .selectAll()
      .orderBy('seq')
      .execute();
    return { channelId: s.channel_id, expired, messages: rows.map(toMessage) };
  }

  /** The session with all its messages in order, or null (unknown, or not in `scope`). */
  async session(sessionId: string, scope: AskScope = {}): Promise<AskSessionDetail | null> {
    const s = await this.sessionRow(sessionId, scope);
    if (!s) return null;
    const rows = await this.db
      .selectFrom('ask_messages')
      .select(['message_id', 'session_id', 'role', 'content', 'citations', 'created_at'])
      .where('session_id', '=', sessionId)
      .orderBy('seq')
      .execute();
    return {
      session_id: s.session_id,
      channel_id: s.channel_id,
      created_at: iso(s.created_at),
      last_activity: iso(s.last_activity),
      messages: rows.map(toMessage),
    };
  }

  /** Session summaries in `scope`, most recently active first, at most `limit` (default 50). */
  async sessions(scope: AskScope = {}, limit = 50): Promise<AskSessionSummary[]> {
    let q = this.db
      .selectFrom('ask_sessions as s')
      .select((eb) => [
        's.session_id',
        's.created_at',
        's.last_activity',
        eb
          .selectFrom('ask_messages as m')
          .select((m) => m.fn.countAll<number>().as('n'))
          .whereRef('m.session_id', '=', 's.session_id')
          .as('message_count'),
        eb
          .selectFrom('ask_messages as f')
          .select('f.content')
          .whereRef('f.session_id', '=', 's.session_id')
          .where('f.role', '=', 'user')
          .orderBy('f.seq')
          .limit(1)
          .as('title'),
      ])
      .orderBy('s.last_activity', 'desc')
      .orderBy('s.session_id')
      .limit(limit);
    if (scope.channelId !== undefined) q = q.where('s.channel_id', '=', scope.channelId);
    if (scope.owner !== undefined) q = q.where('s.owner', '=', scope.owner);
    const rows = await q.execute();
    return rows.map((x) => ({
      session_id: x.session_id,
      created_at: iso(x.created_at),
      message_count: Number(x.message_count),
      last_activity: iso(x.last_activity),
      title: x.title === null ? null : titleOf(x.title),
    }));
  }

  /** Deletes the session, its messages and their feedback; false when it does not exist in `scope`. */
  async deleteSession(sessionId: string, scope: AskScope = {}): Promise<boolean> {
    let q = this.db.deleteFrom('ask_sessions').where('session_id', '=', sessionId);
    if (scope.channelId !== undefined) q = q.where('channel_id', '=', scope.channelId);
    if (scope.owner !== undefined) q = q.where('owner', '=', scope.owner);
    const r = await q.executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * Rates an answer of a session (a second rating replaces the first). null when the session is not in `scope` or
   * `messageId` is not an assistant message of that session.
   */
  async recordFeedback(
    f: { sessionId: string; messageId: string; rating: 'up' | 'down'; comment?: string | null },
    scope: AskScope,
    now: Date,
  ): Promise<AskFeedback | null> {
    const s = await this.sessionRow(f.sessionId, scope);
    if (!s) return null;
    const at = now.toISOString();
    const x = await this.db
      .insertInto('ask_feedback')
      .columns(['message_id', 'session_id', 'rating', 'comment', 'created_at', 'updated_at'])
      .expression((eb) =>
        eb
          .selectFrom('ask_messages as m')
          .select((m) => [
            'm.message_id',
            'm.session_id',
            m.val(f.rating).as('rating'),
            m.val(f.comment ?? null).as('comment'),
            m.cast<string>(m.val(at), 'timestamptz').as('created_at'),
            m.cast<string>(m.val(at), 'timestamptz').as('updated_at'),
          ])
          .where('m.message_id', '=', f.messageId)
          .where('m.session_id', '=', f.sessionId)
          .where('m.role', '=', 'assistant'),
      )
      .onConflict((oc) =>
        oc.column('message_id').doUpdateSet((eb) => ({
          rating: eb.ref('excluded.rating'),
          comment: eb.ref('excluded.comment'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .returning(['session_id', 'message_id', 'rating', 'comment', 'created_at', 'updated_at'])
      .executeTakeFirst();
    return x
      ? {
          session_id: x.session_id,
          message_id: x.message_id,
          rating: x.rating,
          comment: x.comment,
          created_at: iso(x.created_at),
          updated_at: iso(x.updated_at),
        }
      : null;
  }

  /**
   * The messages of a channel's sessions, newest first (questions and answers), at most `limit`, before `before`
   * (ISO 8601, exclusive) when given: GET /api/channels/{channel_id}/ask/history.
   */
  async history(channelId: string, opts: { limit: number; before?: string | undefined }): Promise<AskHistoryEntry[]> {
    let q = this.db
      .selectFrom('ask_messages as m')
      .innerJoin('ask_sessions as s', 's.session_id', 'm.session_id')
      .select(['m.message_id', 'm.session_id', 'm.role', 'm.content', 'm.citations', 'm.created_at'])
      .where('s.channel_id', '=', channelId)
      .orderBy('m.created_at', 'desc')
      .orderBy('m.seq', 'desc')
      .limit(opts.limit);
    if (opts.before) q = q.where('m.created_at', '<', opts.before);
    const rows = await q.execute();
    return rows.map((x) => ({ ...toMessage(x), session_id: x.session_id }));
  }

  /** Deletes every session scoped to the channel (and their messages and feedback); returns how many sessions. */
  async deleteChannel(channelId: string): Promise<number> {
    const r = await this.db.deleteFrom('ask_sessions').where('channel_id', '=', channelId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  private async sessionRow(sessionId: string, scope: AskScope) {
    let q = this.db
      .selectFrom('ask_sessions')
      .select(['session_id', 'channel_id', 'created_at', 'last_activity'])
      .where('session_id', '=', sessionId);
    if (scope.channelId !== undefined) q = q.where('channel_id', '=', scope.channelId);
    if (scope.owner !== undefined) q = q.where('owner', '=', scope.owner);
    return (await q.executeTakeFirst()) ?? null;
  }
}
