import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { LlmChain, OpenAiLlmProvider } from '@atlas/providers';
import {
  drop,
  type FakeOpenAiServer,
  hang,
  malformed,
  ok,
  okJson,
  rateLimited,
  serverError,
  startFakeOpenAiServer,
} from '@atlas/providers/testing';
import {
  ABSTENTION_LEAD,
  type AskEvent,
  askLlmOf,
  askStreamViolations,
  EXTRACTIVE_NOTE,
  FALLBACK_NOTE,
  parseAskStream,
  readAskStream,
  retrievalQuery,
} from '@atlas/query';
import { apiPorts, appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import { renderMarkup } from '@atlas/wiki';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');
const CITATION_KEYS = [
  'author',
  'channel',
  'id',
  'media_name',
  'media_type',
  'permalink',
  'source_message_id',
  'text_excerpt',
  'timestamp',
];

/** The ask routes over HTTP (a listening server, read with a real SSE parser) on the real olake export, offline. */
describe('ask over SSE on real data (slack-olake, no LLM: extractive answers)', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let base: string;
  let channelId: string;
  const ask = async (body: unknown, url = '/api/ask') => {
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { res, ...(await readAskStream(res)) };
  };
  const json = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) => {
    const res = await app.inject({ method, url, ...(payload === undefined ? {} : { payload }) });
    return { status: res.statusCode, body: res.body ? res.json() : null };
  };
  const doneOf = (events: AskEvent[]) => events.find((e) => e.type === 'done') as Extract<AskEvent, { type: 'done' }>;
  const textOf = (events: AskEvent[]) => events.flatMap((e) => (e.type === 'token' ? [e.content] : [])).join('');

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'local' }));
    const plan = await planImport(OLAKE);
    await appendPlan(rt, plan);
    await drainProjectors(rt, 0, false);
    channelId = plan.channels.find((c) => c.name === 'help')!.channelId;
    const ports = apiPorts(rt);
    app = await buildApp({ ...ports, ask: { ...ports.ask!, rateLimitPerMinute: 1000 } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    await rt?.close();
  });

  let sessionId = '';
  let answerId = '';

  it('POST /api/ask streams tokens, citations and done that satisfy the four rules; the answer says it is extractive', async () => {
    const { res, events, firstTokenMs } = await ask({ question: 'How do I configure the Kafka source in OLake?' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(firstTokenMs).not.toBeNull();
    const done = doneOf(events);
    expect(done).toMatchObject({ type: 'done' });
    expect(Object.keys(done).sort()).toEqual([
      'citations_count',
      'duration_ms',
      'freshness',
      'message_id',
      'session_id',
      'tokens_used',
      'type',
    ]);
    // Issue 27 point 3: the channels the answer drew on, every projector caught up (the import was drained).
    const fresh = done.freshness!;
    expect(fresh).toMatchObject({ behind: false, pending_messages: 0 });
    expect(fresh.channels.length).toBeGreaterThan(0);
    const newest = fresh.channels.map((c) => Date.parse(c.newest_message_at!));
    expect(Date.parse(fresh.current_to!)).toBe(Math.max(...newest));
    expect(fresh.summary).toMatch(/^current to .+ UTC$/);
    const session = await json('GET', `/api/ask/sessions/${done.session_id}`);
    expect(session.status).toBe(200);
    const stored = session.body.messages.at(-1);
    expect(askStreamViolations(events, stored.content)).toEqual([]);
    expect(done.citations_count).toBeGreaterThan(0);
    const text = textOf(events);
    expect(text).toContain(EXTRACTIVE_NOTE);
    expect(text.toLowerCase()).toContain('kafka');
    const citations = events.flatMap((e) => (e.type === 'citation' ? [e.citation] : []));
    for (const c of citations) {
      expect(Object.keys(c).sort()).toEqual(CITATION_KEYS);
      expect([...c.text_excerpt].length).toBeLessThanOrEqual(100);
      expect(c.channel).not.toMatch(/^C[A-Z0-9]+$/); // a channel name, not an id
    }
    // text_excerpt is the first 100 characters of the source message.
    const first = citations[0]!;
    const channel = (await rt.documents.listChannels()).find((c) => c.name === first.channel)!;
    const [msg] = await rt.documents.getMessages(channel.id, [first.source_message_id!]);
    expect(renderMarkup(msg!.text).replace(/\s+/g, ' ').trim().startsWith(first.text_excerpt)).toBe(true);
    expect(stored.citations).toEqual(citations);
    sessionId = done.session_id;
    answerId = done.message_id;
  });

  it('a follow-up with the session_id continues the session; an unknown session is an INVALID_REQUEST event', async () => {
    const { events } = await ask({ question: 'and what about its batch size?', session_id: sessionId, mode: 'quick' });
    expect(askStreamViolations(events)).toEqual([]);
    expect(doneOf(events).session_id).toBe(sessionId);
    const s = await json('GET', `/api/ask/sessions/${sessionId}`);
    expect(s.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(Object.keys(s.body).sort()).toEqual(['created_at', 'messages', 'session_id']);
    const unknown = await ask({ question: 'anything?', session_id: 'no-such-session' });
    expect(unknown.events).toEqual([
      expect.objectContaining({
        type: 'error',
        code: 'INVALID_REQUEST',
        error: expect.stringContaining('no-such-session'),
      }),
    ]);
    const list = await json('GET', '/api/ask/sessions');
    const summary = list.body.find((x: { session_id: string }) => x.session_id === sessionId);
    expect(summary).toMatchObject({ message_count: 4, title: 'How do I configure the Kafka source in OLake?' });
    expect(Object.keys(summary).sort()).toEqual([
      'created_at',
      'last_activity',
      'message_count',
      'session_id',
      'title',
    ]);
  });

  it('an invalid body is a 400 stream with one INVALID_REQUEST error event; include_citations false sends none', async () => {
    for (const body of [{}, { question: '' }, { question: 'x', max_results: 51 }, { question: 'x', mode: 'long' }]) {
      const { res, events } = await ask(body);
      expect(res.status).toBe(400);
      expect(events).toEqual([expect.objectContaining({ type: 'error', code: 'INVALID_REQUEST' })]);
    }
    const { events } = await ask({ question: 'What is OLake?', include_citations: false, max_results: 3 });
    expect(askStreamViolations(events)).toEqual([]);
    expect(events.filter((e) => e.type === 'citation')).toHaveLength(0);
    expect(textOf(events)).not.toMatch(/\[\d+\]/);
  });

  it('channel-scoped ask: every citation comes from that channel; its sessions and history are its own', async () => {
    const url = `/api/channels/${channelId}/ask`;
    const { events } = await ask({ question: 'How do I set up the Postgres source?', mode: 'summarize' }, url);
    expect(askStreamViolations(events)).toEqual([]);
    const citations = events.flatMap((e) => (e.type === 'citation' ? [e.citation] : []));
    expect(citations.length).toBeGreaterThan(0);
    expect(new Set(citations.map((c) => c.channel))).toEqual(new Set(['help']));
    const sid = doneOf(events).session_id;
    expect((await json('GET', `/api/channels/${channelId}/ask/sessions/${sid}`)).status).toBe(200);
    expect((await json('GET', `/api/channels/${channelId}/ask/sessions/${sessionId}`)).status).toBe(404);
    const listed = await json('GET', `/api/channels/${channelId}/ask/sessions`);
    expect(listed.body.map((s: { session_id: string }) => s.session_id)).toEqual([sid]);
    const history = await json('GET', `/api/channels/${channelId}/ask/history?limit=10`);
    expect(history.status).toBe(200);
    expect(history.body.messages.map((m: { role: string; session_id: string }) => [m.role, m.session_id])).toEqual([
      ['assistant', sid],
      ['user', sid],
    ]);
    // A global session cannot be continued in a channel.
    const cross = await ask({ question: 'more?', session_id: sessionId }, url);
    expect(cross.events[0]).toMatchObject({ type: 'error', code: 'INVALID_REQUEST' });
    const missing = await ask({ question: 'x' }, '/api/channels/CNOPE/ask');
    expect(missing.res.status).toBe(404);
  });

  it('an off-topic question (the weather in Paris) abstains: nothing relevant, what was searched, no citation', async () => {
    const question = "What's the weather like in Paris today?";
    const channels = await rt.documents.listChannels();
    const facts = channels.reduce((n, c) => n + c.fact_count, 0);
    const { res, events } = await ask({ question });
    expect(res.status).toBe(200);
    const done = doneOf(events);
    const stored = (await json('GET', `/api/ask/sessions/${done.session_id}`)).body.messages.at(-1);
    expect(askStreamViolations(events, stored.content)).toEqual([]);
    const text = textOf(events);
    expect(text.startsWith(ABSTENTION_LEAD)).toBe(true);
    expect(channels.length).toBeGreaterThan(3); // a global ask over more than three channels names their count
    const where = `every channel (${channels.length})`;
    expect(text).toContain(`I searched ${facts.toLocaleString('en-US')} memories in ${where}`);
    expect(text).toContain(`for "${retrievalQuery(question)}".`);
    expect(text).toMatch(/The closest memory had a similarity of 0\.\d\d to the question, below the 0\.\d\d/);
    expect(text).not.toContain(EXTRACTIVE_NOTE);
    expect(events.filter((e) => e.type === 'citation')).toEqual([]);
    expect(done.citations_count).toBe(0);
    expect(stored.citations).toEqual([]);
    // Channel-scoped: the channel is named.
    const scoped = await ask({ question }, `/api/channels/${channelId}/ask`);
    expect(askStreamViolations(scoped.events)).toEqual([]);
    const help = channels.find((c) => c.id === channelId)!;
    expect(textOf(scoped.events)).toContain(`I searched ${help.fact_count.toLocaleString('en-US')} memories in #help`);
    expect(scoped.events.filter((e) => e.type === 'citation')).toEqual([]);
    // The same export answers an on-topic question with cited facts.
    const onTopic = await ask({ question: 'How do I set up the Postgres source?' });
    expect(textOf(onTopic.events).startsWith(ABSTENTION_LEAD)).toBe(false);
    expect(doneOf(onTopic.events).citations_count).toBeGreaterThan(0);
  });

  it('feedback on an answer; a 404 for a message not in the session; delete removes the session', async () => {
    const ok = await json('POST', '/api/ask/feedback', {
      session_id: sessionId,
      message_id: answerId,
      rating: 'down',
      comment: 'too long',
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'recorded', rating: 'down', comment: 'too long', message_id: answerId });
    expect(
      (await json('POST', '/api/ask/feedback', { session_id: sessionId, message_id: 'nope', rating: 'up' })).status,
    ).toBe(404);
    expect(
      (await json('POST', '/api/ask/feedback', { session_id: sessionId, message_id: answerId, rating: 'meh' })).status,
    ).toBe(400);
    expect((await json('DELETE', `/api/ask/sessions/${sessionId}`)).status).toBe(204);
    expect((await json('GET', `/api/ask/sessions/${sessionId}`)).status).toBe(404);
    expect((await json('DELETE', `/api/ask/sessions/${sessionId}`)).status).toBe(404);
  });

  it('over the rate limit: a 429 stream with RATE_LIMIT_EXCEEDED and retry_after', async () => {
    const ports = apiPorts(rt);
    const limited = await buildApp({ ...ports, ask: { ...ports.ask!, rateLimitPerMinute: 1 } });
    await limited.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(limited.server.address() as AddressInfo).port}/api/ask`;
      const post = () =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ question: 'What is OLake?' }),
        });
      const first = await readAskStream(await post());
      expect(askStreamViolations(first.events)).toEqual([]);
      const res = await post();
      expect(res.status).toBe(429);
      const { events } = await readAskStream(res);
      expect(events).toEqual([
        expect.objectContaining({ type: 'error', code: 'RATE_LIMIT_EXCEEDED', retry_after: expect.any(Number) }),
      ]);
      expect((events[0] as { retry_after: number }).retry_after).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });

  const uploadForm = (fields: Record<string, string>, file?: { name: string; type: string; data: Buffer }) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    if (file) form.append('file', new Blob([file.data], { type: file.type }), file.name);
    return form;
  };
  const upload = async (form: FormData, url = '/api/ask/upload') => {
    const res = await fetch(`${base}${url}`, { method: 'POST', body: form });
    return { res, ...(await readAskStream(res)) };
  };

  it('POST /api/ask/upload: a TXT file is read and used as context; the stream keeps the rules', async () => {
    const notes = 'Meeting notes.\nThe Kafka connector retries every 30 seconds.\nWe ship on Friday.';
    const { res, events } = await upload(
      uploadForm(
        { question: 'How often does the Kafka connector retry?', mode: 'quick' },
        {
          name: 'notes.txt',
          type: 'text/plain',
          data: Buffer.from(notes),
        },
      ),
    );
    expect(res.status).toBe(200);
    expect(askStreamViolations(events)).toEqual([]);
    expect(textOf(events)).toContain('From notes.txt: The Kafka connector retries every 30 seconds.');
    // The channel variant, and the same file as a base64 attachment of a JSON ask.
    const scoped = await upload(
      uploadForm(
        { question: 'How often does the Kafka connector retry?' },
        {
          name: 'notes.txt',
          type: 'text/plain',
          data: Buffer.from(notes),
        },
      ),
      `/api/channels/${channelId}/ask/upload`,
    );
    expect(askStreamViolations(scoped.events)).toEqual([]);
    const json = await ask({
      question: 'When do we ship?',
      attachments: [{ name: 'notes.txt', content_type: 'text/plain', data: Buffer.from(notes).toString('base64') }],
    });
    expect(askStreamViolations(json.events)).toEqual([]);
    expect(textOf(json.events)).toContain('From notes.txt: We ship on Friday.');
  });

  it('uploads: over 10 MB → 413, an unsupported or mismatched type → 415, no file or not multipart → 4xx', async () => {
    const big = await upload(
      uploadForm(
        { question: 'x' },
        { name: 'big.txt', type: 'text/plain', data: Buffer.alloc(10 * 1024 * 1024 + 1, 97) },
      ),
    );
    expect(big.res.status).toBe(413);
    expect(big.events).toEqual([expect.objectContaining({ type: 'error', code: 'INVALID_REQUEST' })]);
    const gif = await upload(
      uploadForm({ question: 'x' }, { name: 'a.gif', type: 'image/gif', data: Buffer.from('GIF89a....') }),
    );
    expect(gif.res.status).toBe(415);
    const fake = await upload(
      uploadForm({ question: 'x' }, { name: 'a.pdf', type: 'application/pdf', data: Buffer.from('MZ not a pdf') }),
    );
    expect(fake.res.status).toBe(415);
    expect(fake.events[0]).toMatchObject({ type: 'error', code: 'INVALID_REQUEST' });
    const none = await upload(uploadForm({ question: 'x' }));
    expect(none.res.status).toBe(400);
    const noQuestion = await upload(uploadForm({}, { name: 'n.txt', type: 'text/plain', data: Buffer.from('hello') }));
    expect(noQuestion.res.status).toBe(400);
    const plain = await fetch(`${base}/api/ask/upload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'x' }),
    });
    expect(plain.status).toBe(415);
    await readAskStream(plain);
  });

  describe('with an LLM (OpenAI-compatible servers inside the suite: quality primary and secondary, fast tier)', () => {
    let primary: FakeOpenAiServer;
    let secondary: FakeOpenAiServer;
    let fastServer: FakeOpenAiServer;
    let llmApp: FastifyInstance;
    let llmBase: string;
    const chainOf = (tier: string, servers: FakeOpenAiServer[]) =>
      new LlmChain({
        tier,
        providers: servers.map(
          (s, i) => new OpenAiLlmProvider({ baseURL: s.baseURL, model: `model-${tier}-${i}`, timeoutMs: 1_000 }),
        ),
        breaker: { failureThreshold: 3, streakMs: 60_000, resetMs: 60_000 },
      });
    const askLlm = async (body: unknown) => {
      const res = await fetch(`${llmBase}/api/ask`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { res, ...(await readAskStream(res)) };
    };
    const stored = async (events: AskEvent[]) =>
      (await app.inject({ method: 'GET', url: `/api/ask/sessions/${doneOf(events).session_id}` }))
        .json()
        .messages.at(-1);

    beforeAll(async () => {
      [primary, secondary, fastServer] = await Promise.all([
        startFakeOpenAiServer(),
        startFakeOpenAiServer(),
        startFakeOpenAiServer(),
      ]);
      const ports = apiPorts(rt);
      llmApp = await buildApp({
        ...ports,
        ask: {
          ...ports.ask!,
          rateLimitPerMinute: 1000,
          llm: {
            quality: askLlmOf(chainOf('quality', [primary, secondary])),
            fast: askLlmOf(chainOf('fast', [fastServer])),
          },
        },
      });
      await llmApp.listen({ port: 0, host: '127.0.0.1' });
      llmBase = `http://127.0.0.1:${(llmApp.server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await llmApp?.close();
      await Promise.all([primary, secondary, fastServer].map((s) => s?.close()));
    });

    it('streams the model answer: tokens as the model sent them, citations for real sources only, usage as tokens_used', async () => {
      fastServer.reply(okJson({ route: 'semantic' }));
      primary.reply(
        ok('Set it in the source config [1]. Retries are logged [2][9].', {
          usage: { prompt_tokens: 300, completion_tokens: 14 },
        }),
      );
      const { events } = await askLlm({ question: 'How do I configure the Kafka source in OLake?' });
      const answer = await stored(events);
      expect(askStreamViolations(events, answer.content)).toEqual([]);
      expect(answer.content).toBe('Set it in the source config [1]. Retries are logged [2].');
      expect(
        events.filter((e) => e.type === 'citation').map((e) => (e as { citation: { id: string } }).citation.id),
      ).toEqual(['[1]', '[2]']);
      expect(doneOf(events).tokens_used).toBe(314);
      // What the model was sent: the numbered sources and the question, after the system instructions.
      const sent = primary.chatRequests().at(-1)!.body;
      expect(sent.stream).toBe(true);
      expect(sent.messages[0].role).toBe('system');
      expect(sent.messages.at(-1).content).toMatch(/^Sources:\n\[1\] /);
      expect(sent.messages.at(-1).content).toContain('Question: How do I configure the Kafka source in OLake?');
      expect(fastServer.chatRequests()).toHaveLength(1);
    });

    it('an off-topic question abstains without calling the model', async () => {
      fastServer.reply(okJson({ route: 'semantic' }));
      const before = primary.chatRequests().length + secondary.chatRequests().length;
      const { res, events } = await askLlm({ question: "What's the weather like in Paris today?" });
      expect(res.status).toBe(200);
      const answer = await stored(events);
      expect(askStreamViolations(events, answer.content)).toEqual([]);
      expect(answer.content.startsWith(ABSTENTION_LEAD)).toBe(true);
      expect(doneOf(events).citations_count).toBe(0);
      expect(primary.chatRequests().length + secondary.chatRequests().length).toBe(before);
    });

    it('a follow-up sends the earlier turns to the model', async () => {
      fastServer.reply(okJson({ route: 'semantic' }));
      primary.reply(ok('First answer [1].'));
      const first = await askLlm({ question: 'What is OLake?' });
      fastServer.reply(okJson({ route: 'semantic' }));
      primary.reply(ok('Second answer [1].'));
      const second = await askLlm({ question: 'Who maintains it?', session_id: doneOf(first.events).session_id });
      expect(askStreamViolations(second.events)).toEqual([]);
      const sent = primary.chatRequests().at(-1)!.body.messages;
      expect(sent.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
      expect(sent[1].content).toBe('What is OLake?');
      expect(sent[2].content).toBe('First answer [1].');
    });

    it('fallback chain: primary failing (500, 429, timeout) → the secondary answers; both failing → extractive with a note', async () => {
      for (const failure of [serverError(500), rateLimited(3), hang()]) {
        fastServer.reply(okJson({ route: 'semantic' }));
        primary.reply(failure);
        secondary.reply(ok('From the secondary [1].'));
        const { res, events } = await askLlm({ question: 'What is OLake?' });
        expect(res.status).toBe(200);
        expect(askStreamViolations(events)).toEqual([]);
        expect(textOf(events)).toBe('From the secondary [1].');
      }
      // Three consecutive failures opened the primary's breaker: the next ask goes straight to the secondary.
      const calls = primary.chatRequests().length;
      fastServer.reply(okJson({ route: 'semantic' }));
      secondary.reply(ok('Still the secondary [1].'));
      const skipped = await askLlm({ question: 'What is OLake?' });
      expect(textOf(skipped.events)).toBe('Still the secondary [1].');
      expect(primary.chatRequests()).toHaveLength(calls);
      // Secondary failing too: raw retrieved results, said so; no failed request.
      fastServer.reply(okJson({ route: 'semantic' }));
      secondary.reply(serverError(503));
      const down = await askLlm({ question: 'What is OLake?' });
      expect(down.res.status).toBe(200);
      expect(askStreamViolations(down.events)).toEqual([]);
      expect(textOf(down.events)).toContain(FALLBACK_NOTE);
      expect(doneOf(down.events).citations_count).toBeGreaterThan(0);
    });

    it('the model dropping mid-stream: what it said stands, the sources finish the answer', async () => {
      fastServer.reply(okJson({ route: 'semantic' }));
      secondary.reply(drop('Partial ', 'answer [1] ', 'and then'));
      const { res, events } = await askLlm({ question: 'How do I configure the Kafka source in OLake?' });
      expect(res.status).toBe(200);
      const answer = await stored(events);
      expect(askStreamViolations(events, answer.content)).toEqual([]);
      expect(answer.content.startsWith('Partial answer [1] ')).toBe(true);
      expect(answer.content).toContain('The language model stopped answering');
    });

    it('the router: the fast tier decides when it answers; malformed JSON twice → the regex classifier', async () => {
      secondary.script = () => ok('An answer [1].');
      fastServer.reply(okJson({ route: 'graph' }));
      const routed = await askLlm({ question: 'What is OLake?' });
      expect(askStreamViolations(routed.events)).toEqual([]);
      const meta = async (events: AskEvent[]) =>
        (
          await sql<{ metadata: { route: string } }>`select metadata from ask_messages
            where message_id = ${doneOf(events).message_id}`.execute(rt.database.db)
        ).rows[0]!.metadata;
      expect((await meta(routed.events)).route).toBe('graph');
      fastServer.reply(malformed(), malformed());
      const regex = await askLlm({ question: 'who decided to use Iceberg?' });
      expect(askStreamViolations(regex.events)).toEqual([]);
      expect((await meta(regex.events)).route).toBe('graph');
      fastServer.reply(malformed(), malformed());
      const semantic = await askLlm({ question: 'What is OLake?' });
      expect((await meta(semantic.events)).route).toBe('semantic');
      secondary.script = null;
    });

    it('the graph store failing: a graph question is answered semantically (spec degraded mode), no failed request', async () => {
      const ports = apiPorts(rt);
      const down = await buildApp({
        ...ports,
        ask: {
          ...ports.ask!,
          graphRetrieval: async () => {
            throw new Error('graph store unavailable');
          },
        },
      });
      try {
        const res = await down.inject({
          method: 'POST',
          url: '/api/ask',
          payload: { question: 'who decided to use Iceberg?' },
        });
        expect(res.statusCode).toBe(200);
        const events = parseAskStream([res.body]);
        expect(askStreamViolations(events)).toEqual([]);
        const meta = (
          await sql<{ metadata: { route: string } }>`select metadata from ask_messages
            where message_id = ${doneOf(events).message_id}`.execute(rt.database.db)
        ).rows[0]!.metadata;
        expect(meta.route).toBe('semantic');
      } finally {
        await down.close();
      }
    });
  });
});
