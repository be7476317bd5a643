import { type Kysely, sql } from 'kysely';

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

/** Spec session summary. */
export interface AskSessionSummary {
  session_id: string;
  created_at: string;
  message_count: number;
  last_activity: string;
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
}

/** The spec's session inactivity limit (Limits: 30 minutes), ms. */
export const ASK_SESSION_IDLE_MS = 30 * 60_000;

const iso = (v: unknown): string => new Date(v as string | Date).toISOString();
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

/** A session of another scope, or one that does not exist, when a turn is appended: the caller answers 4xx. */
export class AskScopeError extends Error {
  constructor(
    readonly sessionId: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The ask store (spec "Ask session" states): sessions exist once their first stream completed (recordTurn creates
 * them), keep every message with its citations, and lose their context for follow-ups after 30 minutes of
 * inactivity (context); deleting a session deletes its messages and feedback. Channel-scoped sessions
 * (channel_id set) are visible to their channel's routes only; the global routes see every session. Needs migrateAsk.
 */
export class AskStore {
  constructor(private readonly db: Kysely<unknown>) {}

  /**
   * Appends a completed question and answer to `turn.sessionId`, creating the session (created_at = the question's
   * timestamp) when it does not exist, and sets last_activity to the answer's timestamp. One transaction. Throws
   * AskScopeError when the session exists with another channel scope.
   */
  async recordTurn(turn: AskTurn): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await sql`insert into ask_sessions (session_id, channel_id, created_at, last_activity)
        values (${turn.sessionId}, ${turn.channelId}, ${turn.question.timestamp}::timestamptz,
          ${turn.answer.timestamp}::timestamptz)
        on conflict (session_id) do nothing`.execute(trx);
      const s = await sql<{ channel_id: string | null }>`select channel_id from ask_sessions
        where session_id = ${turn.sessionId} for update`.execute(trx);
      if ((s.rows[0]?.channel_id ?? null) !== turn.channelId)
        throw new AskScopeError(turn.sessionId, `session ${turn.sessionId} belongs to another scope`);
      const last = await sql<{ n: number | null }>`select max(seq) as n from ask_messages
        where session_id = ${turn.sessionId}`.execute(trx);
      const seq = Number(last.rows[0]?.n ?? 0);
      await sql`insert into ask_messages (message_id, session_id, seq, role, content, citations, created_at, metadata)
        values (${turn.question.message_id}, ${turn.sessionId}, ${seq + 1}, 'user', ${turn.question.content}, '[]'::jsonb,
          ${turn.question.timestamp}::timestamptz, '{}'::jsonb),
        (${turn.answer.message_id}, ${turn.sessionId}, ${seq + 2}, 'assistant', ${turn.answer.content},
          ${JSON.stringify(turn.answer.citations)}::jsonb, ${turn.answer.timestamp}::timestamptz,
          ${JSON.stringify(turn.answer.metadata ?? {})}::jsonb)`.execute(trx);
      await sql`update ask_sessions set last_activity = greatest(last_activity, ${turn.answer.timestamp}::timestamptz)
        where session_id = ${turn.sessionId}`.execute(trx);
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
    const r =
      await sql<MessageRow>`select * from (select message_id, session_id, role, content, citations, created_at, seq
      from ask_messages where session_id = ${sessionId} order by seq desc limit ${opts.maxMessages ?? 10}) m
      order by seq`.execute(this.db);
    return { channelId: s.channel_id, expired, messages: r.rows.map(toMessage) };
  }

  /** The session with all its messages in order, or null (unknown, or not in `scope`). */
  async session(sessionId: string, scope: AskScope = {}): Promise<AskSessionDetail | null> {
    const s = await this.sessionRow(sessionId, scope);
    if (!s) return null;
    const r =
      await sql<MessageRow>`select message_id, session_id, role, content, citations, created_at from ask_messages
      where session_id = ${sessionId} order by seq`.execute(this.db);
    return {
      session_id: s.session_id,
      channel_id: s.channel_id,
      created_at: iso(s.created_at),
      last_activity: iso(s.last_activity),
      messages: r.rows.map(toMessage),
    };
  }

  /** Session summaries in `scope`, most recently active first, at most `limit` (default 50). */
  async sessions(scope: AskScope = {}, limit = 50): Promise<AskSessionSummary[]> {
    const r = await sql<{
      session_id: string;
      created_at: unknown;
      last_activity: unknown;
      message_count: string | number;
    }>`select s.session_id, s.created_at, s.last_activity,
        (select count(*) from ask_messages m where m.session_id = s.session_id) as message_count
      from ask_sessions s ${scope.channelId === undefined ? sql`` : sql`where s.channel_id = ${scope.channelId}`}
      order by s.last_activity desc, s.session_id limit ${limit}`.execute(this.db);
    return r.rows.map((x) => ({
      session_id: x.session_id,
      created_at: iso(x.created_at),
      message_count: Number(x.message_count),
      last_activity: iso(x.last_activity),
    }));
  }

  /** Deletes the session, its messages and their feedback; false when it does not exist in `scope`. */
  async deleteSession(sessionId: string, scope: AskScope = {}): Promise<boolean> {
    const r = await sql`delete from ask_sessions where session_id = ${sessionId}
      ${scope.channelId === undefined ? sql`` : sql`and channel_id = ${scope.channelId}`}`.execute(this.db);
    return Number(r.numAffectedRows ?? 0) > 0;
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
    const r = await sql<{
      session_id: string;
      message_id: string;
      rating: 'up' | 'down';
      comment: string | null;
      created_at: unknown;
      updated_at: unknown;
    }>`insert into ask_feedback (message_id, session_id, rating, comment, created_at, updated_at)
      select m.message_id, m.session_id, ${f.rating}, ${f.comment ?? null}, ${now.toISOString()}::timestamptz,
        ${now.toISOString()}::timestamptz
      from ask_messages m where m.message_id = ${f.messageId} and m.session_id = ${f.sessionId} and m.role = 'assistant'
      on conflict (message_id) do update set rating = excluded.rating, comment = excluded.comment,
        updated_at = excluded.updated_at
      returning session_id, message_id, rating, comment, created_at, updated_at`.execute(this.db);
    const x = r.rows[0];
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
    const r = await sql<MessageRow>`select m.message_id, m.session_id, m.role, m.content, m.citations, m.created_at
      from ask_messages m join ask_sessions s on s.session_id = m.session_id
      where s.channel_id = ${channelId}
        ${opts.before ? sql`and m.created_at < ${opts.before}::timestamptz` : sql``}
      order by m.created_at desc, m.seq desc limit ${opts.limit}`.execute(this.db);
    return r.rows.map((x) => ({ ...toMessage(x), session_id: x.session_id }));
  }

  /** Deletes every session scoped to the channel (and their messages and feedback); returns how many sessions. */
  async deleteChannel(channelId: string): Promise<number> {
    const r = await sql`delete from ask_sessions where channel_id = ${channelId}`.execute(this.db);
    return Number(r.numAffectedRows ?? 0);
  }

  private async sessionRow(sessionId: string, scope: AskScope) {
    const r = await sql<{
      session_id: string;
      channel_id: string | null;
      created_at: unknown;
      last_activity: unknown;
    }>`select session_id, channel_id, created_at, last_activity from ask_sessions where session_id = ${sessionId}
      ${scope.channelId === undefined ? sql`` : sql`and channel_id = ${scope.channelId}`}`.execute(this.db);
    return r.rows[0] ?? null;
  }
}
