import { AtlasError, type FreshnessPort } from '@atlas/core';
import { type AskAttachment, AskBody, type AskEvent, type AskPorts, answerAsk, type SearchPorts } from '@atlas/query';
import type { DocumentStore } from '@atlas/stores';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { z } from 'zod';
import { failureOf } from '../errors.js';
import { assertNoNul } from '../input-guard.js';
import { channelCheck } from './known-channel.js';

const ChannelParams = z.object({ channel_id: z.string().min(1) });
const SessionParams = z.object({ session_id: z.string().min(1).max(200) });
const ChannelSessionParams = ChannelParams.merge(SessionParams);
/** Body of POST /api/ask/feedback (spec "Ask"). */
export const FeedbackBody = z.object({
  session_id: z.string().min(1).max(200),
  message_id: z.string().min(1).max(200),
  rating: z.enum(['up', 'down']),
  comment: z.string().max(2000).optional(),
});
const HistoryQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z
    .string()
    .refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 timestamp')
    .optional(),
});

/** The spec's upload limit (Limits: 10 MB), bytes. */
export const UPLOAD_LIMIT_BYTES = 10 * 1024 * 1024;

/** Asks a client may start per minute (per client address) before RATE_LIMIT_EXCEEDED. */
export const ASK_RATE_LIMIT_PER_MINUTE = 60;

/**
 * Writes the events as a Server-Sent Events response (spec "Events → Ask stream"): status, Content-Type
 * text/event-stream, one `data: <json>` line and a blank line per event; the response ends after the last event.
 * A client that disconnects aborts `abort` (the engine stops; nothing is saved). `closeConnection`: the request body
 * was not read to its end (an upload refused midway), so the connection is closed after the response.
 */
async function writeSse(
  reply: FastifyReply,
  status: number,
  events: AsyncIterable<AskEvent> | Iterable<AskEvent>,
  abort?: AbortController,
  opts: { closeConnection?: boolean } = {},
): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(status, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: opts.closeConnection ? 'close' : 'keep-alive',
    'x-accel-buffering': 'no',
  });
  let closed = false;
  const onClose = () => {
    if (!res.writableFinished) {
      closed = true;
      abort?.abort();
    }
  };
  // The response's close (not the request's: that fires once its body has been read) tells a client went away.
  res.on('close', onClose);
  try {
    for await (const e of events) {
      if (closed) break;
      res.write(`data: ${JSON.stringify(e)}\n\n`);
    }
  } finally {
    res.off('close', onClose);
    if (!closed) res.end();
  }
}

const errorEvent = (code: 'INVALID_REQUEST' | 'INTERNAL_ERROR', error: string): AskEvent => ({
  type: 'error',
  code,
  error,
});

/**
 * What the ask routes read (spec "Ask"): the stores search reads, the cached wiki (answers when the vector and graph
 * stores are both down), the ask services and the attachment reader.
 */
export interface AskRoutesOptions {
  documents: DocumentStore;
  keyword: SearchPorts['keyword'];
  vectors: SearchPorts['vectors'];
  wiki: NonNullable<AskPorts['wiki']>;
  /**
   * The sessions store, the LLM tiers (null offline: extractive answers and regex routing), the graph retrieval of
   * `graph` / `both` routes (null: semantic only), the per-client rate limit (asks per minute; default
   * ASK_RATE_LIMIT_PER_MINUTE) and web search for external sub-queries (WEB_SEARCH_URL, 5 s breaker; absent or
   * null: none configured). Absent: the ask routes are not registered.
   */
  ask?: {
    store: AskPorts['store'];
    llm: AskPorts['llm'];
    graphRetrieval: AskPorts['graphRetrieval'];
    rateLimitPerMinute?: number;
    webSearch?: AskPorts['webSearch'];
  };
  /**
   * Text (or an image) from an uploaded file or a base64 attachment (spec "POST /api/ask/upload": PDF, PNG, JPEG,
   * DOCX, TXT, CSV, 10 MB); throws an error with `status` 400, 413 or 415. Absent: attachments are refused.
   */
  extractAttachment?: (file: { name: string; contentType: string; data: Buffer }) => Promise<AskAttachment>;
  /** Freshness marks for the done event (docs/ask.md "Freshness"); absent: none. */
  freshness?: FreshnessPort | null;
}

/**
 * The ask routes (spec "Ask"): POST /api/ask and its channel-scoped variant stream answers over SSE (answerAsk); an
 * invalid body is a 400 stream with one INVALID_REQUEST error event, a client over ASK_RATE_LIMIT_PER_MINUTE asks a
 * 429 stream with one RATE_LIMIT_EXCEEDED event carrying retry_after (seconds). Sessions: list, detail and delete
 * (global routes see every session, channel routes their channel's); feedback on an answer; a channel's ask history.
 * Uploads (POST /api/ask/upload and its channel variant) answer like an ask with the file as context; a file over
 * 10 MB is a 413 stream, an unsupported or mismatched type a 415 stream, each with one INVALID_REQUEST event.
 * Not registered without `ports.ask`.
 */
/**
 * Whose sessions a request sees and makes (docs/access.md "Ask sessions"): a key's id, the bridge user
 * (`bridge:<platform>:<user>`, or `bridge` without one); undefined for the open local default and the bootstrap key,
 * which see every session.
 */
export const sessionOwner = (request: FastifyRequest): string | undefined => {
  const p = request.principal;
  if (!p || p.kind === 'local' || p.kind === 'bootstrap') return undefined;
  return p.key_id ?? p.name;
};

export const askRoutes: FastifyPluginAsync<AskRoutesOptions> = async (root, ports) => {
  const ask = ports.ask;
  if (!ask) return;
  const app = root.withTypeProvider<ZodTypeProvider>();
  // An unknown channel of a channel-scoped route is 404 NOT_FOUND with the shared JSON body, before any stream.
  const known = channelCheck(ports);
  const limiter = new RateLimiterMemory({ points: ask.rateLimitPerMinute ?? ASK_RATE_LIMIT_PER_MINUTE, duration: 60 });
  const askPorts = {
    search: { documents: ports.documents, keyword: ports.keyword, vectors: ports.vectors },
    documents: ports.documents,
    graphRetrieval: ask.graphRetrieval,
    store: ask.store,
    llm: ask.llm,
    webSearch: ask.webSearch ?? null,
    wiki: ports.wiki, // the cached wiki, when the vector and graph stores are both down
    freshness: ports.freshness ?? null, // the done event's freshness mark (issue 27 point 3)
  };

  const streamAnswer = async (
    request: FastifyRequest,
    reply: FastifyReply,
    channelId: string | null,
    upload?: { body: unknown; files: { name: string; contentType: string; data: Buffer }[] },
  ) => {
    await known(channelId);
    try {
      await limiter.consume(
        request.principal && request.principal.kind !== 'local'
          ? (request.principal.key_id ?? request.principal.name)
          : request.ip,
      );
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const retryAfter = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      reply.header('retry-after', String(retryAfter));
      return writeSse(reply, 429, [
        {
          type: 'error',
          code: 'RATE_LIMIT_EXCEEDED',
          error: `too many questions: retry in ${retryAfter} s`,
          retry_after: retryAfter,
        },
      ]);
    }
    const parsed = AskBody.safeParse(upload ? upload.body : (request.body ?? {}));
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
      return writeSse(reply, 400, [errorEvent('INVALID_REQUEST', `invalid ask body: ${issues}`)]);
    }
    let attachments: AskAttachment[] = [];
    const files = [
      ...(upload?.files ?? []),
      ...parsed.data.attachments.map((a) => ({
        name: a.name,
        contentType: a.content_type,
        data: Buffer.from(a.data, 'base64'),
      })),
    ];
    if (files.length > 0) {
      if (!ports.extractAttachment)
        return writeSse(reply, 415, [errorEvent('INVALID_REQUEST', 'attachments are not supported here')]);
      try {
        attachments = await Promise.all(files.map((f) => ports.extractAttachment!(f)));
      } catch (err) {
        const status = (err as { status?: number }).status ?? 400;
        return writeSse(reply, status, [
          errorEvent('INVALID_REQUEST', err instanceof Error ? err.message : String(err)),
        ]);
      }
    }
    const abort = new AbortController();
    return writeSse(
      reply,
      200,
      answerAsk(askPorts, {
        body: parsed.data,
        channelId,
        channels: request.visibleChannels ?? undefined, // a restricted caller's visible channels (visibility.ts)
        owner: sessionOwner(request),
        attachments,
        signal: abort.signal,
        requestId: request.id,
        // A failure mid-stream: the event says only INTERNAL_ERROR and the request id; the error goes to the log.
        onError: (err) => request.log.error({ err, code: 'INTERNAL_ERROR' }, 'ask failed: INTERNAL_ERROR'),
      }),
      abort,
    );
  };

  // Base64 attachments of up to 10 MB decoded grow by a third in JSON.
  // askStream: errors before the stream (body parsing, NUL characters) are a stream of one error event (errors.ts).
  const bodyLimit = 15 * 1024 * 1024;
  const config = { askStream: true };
  app.post('/api/ask', { bodyLimit, config }, (request, reply) => streamAnswer(request, reply, null));
  app.post(
    '/api/channels/:channel_id/ask',
    { bodyLimit, config, schema: { params: ChannelParams } },
    (request, reply) => streamAnswer(request, reply, request.params.channel_id),
  );

  // POST /api/ask/upload: multipart with the fields of an ask body (question required; mode, max_results,
  // include_citations, session_id optional) and one file (spec: PDF, PNG, JPEG, DOCX, TXT, CSV; 10 MB).
  const FIELD_LIMIT_BYTES = 16_384;
  await app.register(multipart, {
    limits: { fileSize: UPLOAD_LIMIT_BYTES, files: 1, fields: 10, fieldSize: FIELD_LIMIT_BYTES },
  });
  const upload = async (request: FastifyRequest, reply: FastifyReply, channelId: string | null) => {
    // A refusal before the body was read to its end closes the connection (the rest of the upload is not read).
    const fail = (status: number, message: string) =>
      writeSse(reply, status, [errorEvent('INVALID_REQUEST', message)], undefined, { closeConnection: true });
    try {
      await known(channelId);
    } catch (err) {
      reply.header('connection', 'close'); // refused before the upload was read: the rest of it is not read
      throw err;
    }
    if (!request.isMultipart())
      return fail(415, 'POST /api/ask/upload takes multipart/form-data with a question and a file');
    const fields: Record<string, string> = {};
    let file: { name: string; contentType: string; data: Buffer } | null = null;
    try {
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          const data = await part.toBuffer();
          if (part.file.truncated)
            return fail(413, `${part.filename} is over the upload limit of 10 MB (${UPLOAD_LIMIT_BYTES} bytes)`);
          file = { name: part.filename || 'upload', contentType: part.mimetype, data };
        } else if (part.valueTruncated)
          // busboy cuts a field at the limit without an error: refuse it rather than read a cut value
          return fail(413, `the field ${part.fieldname} is over the limit of ${FIELD_LIMIT_BYTES} bytes`);
        else fields[part.fieldname] = String(part.value);
      }
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'FST_REQ_FILE_TOO_LARGE')
        return fail(413, `the file is over the upload limit of 10 MB (${UPLOAD_LIMIT_BYTES} bytes)`);
      const f = failureOf(err, request); // multipart limits (413), a broken body (400): errors.ts
      if (f.internal) request.log.error({ err }, 'upload failed');
      return fail(f.status, `invalid multipart body: ${f.message}`);
    }
    if (!file) return fail(400, 'the upload has no file (field "file")');
    // NUL characters are refused at the edge (input-guard.ts); multipart fields are read here, so checked here.
    try {
      assertNoNul({ ...fields, filename: file.name }, 'body');
    } catch (err) {
      return fail(400, (err as Error).message);
    }
    const body = {
      question: fields.question,
      ...(fields.mode ? { mode: fields.mode } : {}),
      ...(fields.session_id ? { session_id: fields.session_id } : {}),
      ...(fields.max_results ? { max_results: Number(fields.max_results) } : {}),
      ...(fields.include_citations ? { include_citations: fields.include_citations !== 'false' } : {}),
    };
    return streamAnswer(request, reply, channelId, { body, files: [file] });
  };
  app.post('/api/ask/upload', { config }, (request, reply) => upload(request, reply, null));
  app.post('/api/channels/:channel_id/ask/upload', { config, schema: { params: ChannelParams } }, (request, reply) =>
    upload(request, reply, request.params.channel_id),
  );

  const sessions = async (channelId: string | undefined, owner: string | undefined) => {
    await known(channelId);
    return ask.store.sessions({ channelId, owner });
  };
  app.get('/api/ask/sessions', async (request) => sessions(undefined, sessionOwner(request)));
  app.get('/api/channels/:channel_id/ask/sessions', { schema: { params: ChannelParams } }, async (request) =>
    sessions(request.params.channel_id, sessionOwner(request)),
  );

  const detail = async (sessionId: string, channelId: string | undefined, owner: string | undefined) => {
    await known(channelId);
    const s = await ask.store.session(sessionId, { channelId, owner });
    if (!s) throw new AtlasError('NOT_FOUND', `session ${sessionId} does not exist`);
    return { session_id: s.session_id, created_at: s.created_at, messages: s.messages };
  };
  app.get('/api/ask/sessions/:session_id', { schema: { params: SessionParams } }, async (request) =>
    detail(request.params.session_id, undefined, sessionOwner(request)),
  );
  app.get(
    '/api/channels/:channel_id/ask/sessions/:session_id',
    { schema: { params: ChannelSessionParams } },
    async (request) => detail(request.params.session_id, request.params.channel_id, sessionOwner(request)),
  );

  const remove = async (sessionId: string, channelId: string | undefined, reply: FastifyReply) => {
    await known(channelId);
    if (!(await ask.store.deleteSession(sessionId, { channelId, owner: sessionOwner(reply.request) })))
      throw new AtlasError('NOT_FOUND', `session ${sessionId} does not exist`);
    return reply.status(204).send();
  };
  app.delete('/api/ask/sessions/:session_id', { schema: { params: SessionParams } }, async ({ params }, reply) =>
    remove(params.session_id, undefined, reply),
  );
  app.delete(
    '/api/channels/:channel_id/ask/sessions/:session_id',
    { schema: { params: ChannelSessionParams } },
    async ({ params }, reply) => remove(params.session_id, params.channel_id, reply),
  );

  const feedback = async (
    body: z.infer<typeof FeedbackBody>,
    channelId: string | undefined,
    owner: string | undefined,
  ) => {
    await known(channelId);
    const saved = await ask.store.recordFeedback(
      { sessionId: body.session_id, messageId: body.message_id, rating: body.rating, comment: body.comment ?? null },
      { channelId, owner },
      new Date(),
    );
    if (!saved)
      throw new AtlasError(
        'NOT_FOUND',
        `message ${body.message_id} is not an answer of session ${body.session_id}${channelId ? ` in channel ${channelId}` : ''}`,
      );
    return { status: 'recorded', ...saved };
  };
  app.post('/api/ask/feedback', { schema: { body: FeedbackBody } }, async (request) =>
    feedback(request.body, undefined, sessionOwner(request)),
  );
  app.post(
    '/api/channels/:channel_id/ask/feedback',
    { schema: { params: ChannelParams, body: FeedbackBody } },
    async (request) => feedback(request.body, request.params.channel_id, sessionOwner(request)),
  );

  app.get(
    '/api/channels/:channel_id/ask/history',
    { schema: { params: ChannelParams, querystring: HistoryQuery } },
    async ({ params, query }) => {
      await known(params.channel_id);
      const messages = await ask.store.history(params.channel_id, { limit: query.limit, before: query.before });
      return { channel_id: params.channel_id, messages, has_more: messages.length === query.limit };
    },
  );
};
