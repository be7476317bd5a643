import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabases } from '../testing.js';
import { type AskCitation, AskScopeError, AskStore, type AskTurn } from './ask-store.js';
import { migrateAsk } from './migrations.js';

const citation: AskCitation = {
  id: '[1]',
  author: 'alice',
  channel: 'general',
  timestamp: '2026-01-01T10:00:00.000Z',
  text_excerpt: 'we moved the cluster to eu-west-1',
  permalink: 'https://example.test/p1',
  source_message_id: 'm1',
  media_type: null,
  media_name: null,
};

const turn = (sessionId: string, channelId: string | null, at: string, q = 'where is the cluster?'): AskTurn => ({
  sessionId,
  channelId,
  question: { message_id: randomUUID(), content: q, timestamp: at },
  answer: {
    message_id: randomUUID(),
    content: 'In eu-west-1 [1].',
    citations: [citation],
    timestamp: new Date(Date.parse(at) + 1000).toISOString(),
    metadata: { mode: 'deep', tokens_used: 12 },
  },
});

for (const { name, open } of testDatabases()) {
  describe(`${name}: AskStore`, () => {
    let h: TestDatabase;
    let store: AskStore;
    beforeAll(async () => {
      h = await open();
      await migrateAsk(h.db);
      await migrateAsk(h.db); // idempotent
      store = new AskStore(h.db);
    });
    afterAll(async () => {
      await h?.close();
    });

    it('a session exists after its first turn, with both messages in order and the citations as given', async () => {
      const id = randomUUID();
      expect(await store.session(id)).toBeNull();
      const t = turn(id, null, '2026-01-01T10:00:00.000Z');
      await store.recordTurn(t);
      const s = (await store.session(id))!;
      expect(s).toMatchObject({ session_id: id, channel_id: null, created_at: '2026-01-01T10:00:00.000Z' });
      expect(s.last_activity).toBe(t.answer.timestamp);
      expect(s.messages.map((m) => [m.message_id, m.role, m.content])).toEqual([
        [t.question.message_id, 'user', t.question.content],
        [t.answer.message_id, 'assistant', t.answer.content],
      ]);
      expect(s.messages[1]!.citations).toEqual([citation]);
      expect(s.messages[0]!.citations).toEqual([]);
    });

    it('context: the last messages while active, none after 30 minutes idle; null for an unknown session', async () => {
      const id = randomUUID();
      await store.recordTurn(turn(id, null, '2026-01-02T10:00:00.000Z', 'first?'));
      await store.recordTurn(turn(id, null, '2026-01-02T10:05:00.000Z', 'second?'));
      const active = (await store.context(id, {}, new Date('2026-01-02T10:20:00.000Z')))!;
      expect(active.expired).toBe(false);
      expect(active.messages.map((m) => m.content)).toEqual([
        'first?',
        'In eu-west-1 [1].',
        'second?',
        'In eu-west-1 [1].',
      ]);
      const limited = (await store.context(id, {}, new Date('2026-01-02T10:20:00.000Z'), { maxMessages: 2 }))!;
      expect(limited.messages.map((m) => m.content)).toEqual(['second?', 'In eu-west-1 [1].']);
      const idle = (await store.context(id, {}, new Date('2026-01-02T10:35:02.000Z')))!;
      expect(idle).toEqual({ channelId: null, expired: true, messages: [] });
      expect(await store.context(randomUUID(), {}, new Date())).toBeNull();
      // The session itself stays (only its context is dropped).
      expect((await store.session(id))!.messages).toHaveLength(4);
    });

    it('channel scope: a channel session is seen by its channel and globally, not by another channel', async () => {
      const ch = `C${randomUUID().slice(0, 8)}`;
      const id = randomUUID();
      await store.recordTurn(turn(id, ch, '2026-01-03T10:00:00.000Z'));
      expect(await store.session(id, { channelId: ch })).not.toBeNull();
      expect(await store.session(id, { channelId: 'other' })).toBeNull();
      expect(await store.session(id)).not.toBeNull();
      expect((await store.sessions({ channelId: ch })).map((s) => [s.session_id, s.message_count])).toEqual([[id, 2]]);
      expect(await store.context(id, { channelId: 'other' }, new Date())).toBeNull();
      // A turn in another scope is refused and changes nothing.
      await expect(store.recordTurn(turn(id, null, '2026-01-03T10:01:00.000Z'))).rejects.toBeInstanceOf(AskScopeError);
      expect((await store.session(id))!.messages).toHaveLength(2);
      const hist = await store.history(ch, { limit: 10 });
      expect(hist.map((m) => [m.session_id, m.role])).toEqual([
        [id, 'assistant'],
        [id, 'user'],
      ]);
      expect(await store.history(ch, { limit: 10, before: hist[0]!.timestamp })).toHaveLength(1);
    });

    it('sessions: most recently active first with message counts, titled by their first question', async () => {
      const ch = `C${randomUUID().slice(0, 8)}`;
      const a = randomUUID();
      const b = randomUUID();
      const long = `Why   did we\nmove ${'the cluster '.repeat(20)}?`;
      await store.recordTurn(turn(a, ch, '2026-01-04T10:00:00.000Z', 'Who owns the NFS?'));
      await store.recordTurn(turn(b, ch, '2026-01-04T11:00:00.000Z', long));
      await store.recordTurn(turn(a, ch, '2026-01-04T12:00:00.000Z', 'And since when?'));
      const list = await store.sessions({ channelId: ch });
      expect(list.map((s) => [s.session_id, s.message_count, s.title?.slice(0, 30)])).toEqual([
        [a, 4, 'Who owns the NFS?'],
        [b, 2, 'Why did we move the cluster th'],
      ]);
      expect(list[1]!.title).toHaveLength(120);
      expect(list[1]!.title!.endsWith('…')).toBe(true);
      expect((await store.sessions()).length).toBeGreaterThanOrEqual(2);
    });

    it('feedback: on an answer of the session only; a second rating replaces the first', async () => {
      const id = randomUUID();
      const t = turn(id, null, '2026-01-05T10:00:00.000Z');
      await store.recordTurn(t);
      const now = new Date('2026-01-05T10:01:00.000Z');
      const up = await store.recordFeedback({ sessionId: id, messageId: t.answer.message_id, rating: 'up' }, {}, now);
      expect(up).toMatchObject({ session_id: id, message_id: t.answer.message_id, rating: 'up', comment: null });
      const later = new Date('2026-01-05T10:02:00.000Z');
      const down = await store.recordFeedback(
        { sessionId: id, messageId: t.answer.message_id, rating: 'down', comment: 'wrong region' },
        {},
        later,
      );
      expect(down).toMatchObject({ rating: 'down', comment: 'wrong region', created_at: now.toISOString() });
      expect(down!.updated_at).toBe(later.toISOString());
      // The question is not an answer; another session's message is not this session's.
      expect(
        await store.recordFeedback({ sessionId: id, messageId: t.question.message_id, rating: 'up' }, {}, now),
      ).toBeNull();
      expect(
        await store.recordFeedback({ sessionId: randomUUID(), messageId: t.answer.message_id, rating: 'up' }, {}, now),
      ).toBeNull();
      expect(
        await store.recordFeedback(
          { sessionId: id, messageId: t.answer.message_id, rating: 'up' },
          { channelId: 'C1' },
          now,
        ),
      ).toBeNull();
    });

    it('deleteSession removes the session, its messages and feedback; scoped delete of another channel is false', async () => {
      const ch = `C${randomUUID().slice(0, 8)}`;
      const id = randomUUID();
      const t = turn(id, ch, '2026-01-06T10:00:00.000Z');
      await store.recordTurn(t);
      await store.recordFeedback({ sessionId: id, messageId: t.answer.message_id, rating: 'up' }, {}, new Date());
      expect(await store.deleteSession(id, { channelId: 'other' })).toBe(false);
      expect(await store.deleteSession(id, { channelId: ch })).toBe(true);
      expect(await store.session(id)).toBeNull();
      expect(await store.deleteSession(id)).toBe(false);
      expect(await store.history(ch, { limit: 10 })).toEqual([]);
      // The same message ids can be used again (nothing left behind).
      await store.recordTurn({ ...t, sessionId: randomUUID() });
      expect(await store.deleteChannel(ch)).toBe(1);
    });

    it('keeps a session to the key that made it (owner): another owner neither lists, reads, continues nor deletes it', async () => {
      const t = turn(randomUUID(), null, '2026-03-01T10:00:00.000Z');
      await store.recordTurn({ ...t, owner: 'key_a' });
      const mine = await store.sessions({ owner: 'key_a' });
      expect(mine.map((x) => x.session_id)).toContain(t.sessionId);
      expect((await store.sessions({ owner: 'key_b' })).map((x) => x.session_id)).not.toContain(t.sessionId);
      expect(await store.session(t.sessionId, { owner: 'key_b' })).toBeNull();
      expect(await store.context(t.sessionId, { owner: 'key_b' }, new Date('2026-03-01T10:01:00Z'))).toBeNull();
      await expect(
        store.recordTurn({ ...turn(t.sessionId, null, '2026-03-01T10:02:00.000Z'), owner: 'key_b' }),
      ).rejects.toBeInstanceOf(AskScopeError);
      expect(await store.deleteSession(t.sessionId, { owner: 'key_b' })).toBe(false);
      expect((await store.session(t.sessionId))?.messages).toHaveLength(2); // the unscoped view (bootstrap) sees it
      expect(await store.deleteSession(t.sessionId, { owner: 'key_a' })).toBe(true);
    });
  });
}
