import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import apiPackage from '../package.json' with { type: 'json' };
import { parseSse, type RawEvent } from './contract/index.js';

/**
 * One call of the REST API on behalf of the MCP caller: `method`, `url` (path and query) and a JSON body. Answers the
 * status and the raw body. Over Streamable HTTP it is the app itself (Fastify's inject with the caller's credentials,
 * so every route's validation, roles, channel visibility and key scope apply); over stdio a fetch of a running Atlas
 * with ATLAS_API_KEY. Tools are thin adapters: each is one or two of these calls.
 */
export type ApiCall = (
  method: 'GET' | 'POST',
  url: string,
  body?: object,
) => Promise<{ status: number; contentType: string; raw: string }>;

/** Per-tool admission (rate limits): throws an AtlasError-shaped `{code, message}` to refuse. */
export type ToolGate = (tool: string) => Promise<void>;

// Spec limits the tools clamp to (spec "Limits"; the routes validate the same).
const SEARCH_MAX = 50;
const LIST_MAX = 100;
const GRAPH_MAX = 200;

const clamp = (n: number | undefined, fallback: number, max: number) => Math.min(Math.max(1, n ?? fallback), max);
const qs = (params: Record<string, string | number | undefined | null>) => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
};
const text = (value: unknown): CallToolResult => ({
  content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) }],
});

/** A REST answer as a tool result: the JSON body (through `pick`), or the error body as an error result. */
const answer = async (
  call: Promise<{ status: number; contentType: string; raw: string }>,
  pick: (body: ReturnType<typeof JSON.parse>) => unknown = (b) => b,
): Promise<CallToolResult> => {
  const r = await call;
  let body: ReturnType<typeof JSON.parse>;
  try {
    body = JSON.parse(r.raw);
  } catch {
    body = r.raw;
  }
  if (r.status >= 400) {
    const e = body?.error ?? { code: 'INTERNAL_ERROR', message: String(r.raw).slice(0, 300) };
    return { isError: true, content: [{ type: 'text', text: `${r.status} ${e.code}: ${e.message}` }] };
  }
  return text(pick(body));
};

/** A fact as tools show it: its words, who said it when, and the permalink to cite. */
const fact = (m: Record<string, unknown>, permalink?: unknown) => ({
  id: m.id,
  text: m.memory_text,
  type: m.fact_type,
  importance: m.importance,
  author: m.author_name,
  at: m.message_ts,
  ...(permalink ? { permalink } : m.permalink ? { permalink: m.permalink } : {}),
});

/** The ask stream (SSE) read to its end: the answer text, its citations (with permalinks) and the done event. */
export const readAskStream = (
  raw: string,
): { answer: string; citations: unknown[]; done?: RawEvent; error?: RawEvent } => {
  const { events } = parseSse(raw);
  const answerText = events
    .filter((e) => e.type === 'token')
    .map((e) => String((e as { content?: unknown }).content ?? ''))
    .join('');
  return {
    answer: answerText,
    citations: events.filter((e) => e.type === 'citation').map((e) => (e as { citation?: unknown }).citation),
    done: events.find((e) => e.type === 'done'),
    error: events.find((e) => e.type === 'error'),
  };
};

/**
 * The Atlas MCP server (issue 25 point 3; docs/mcp.md): tools over the REST API through `call`, each validated by its
 * zod input schema and clamped to the spec's limits, answering compact JSON that cites permalinks:
 * ask, search_facts, list_facts, get_fact, list_channels, list_entities, entity_card, relationships, decisions, wiki_structure,
 * wiki_page, wiki_page_diff, channel_stats, sync_status, start_sync. Every tool whose route takes `as_of` (issue 27
 * point 2: ask, the fact, graph and wiki reads) takes it too and passes it on; the route validates it (400 as the
 * tool's error). Resources: `atlas://stats` and `atlas://wiki/{channel_id}/{page_id}`.
 * Prompts: recent_decisions, who_owns, briefing. `gate` runs before every tool (per-tool rate limits); its throw
 * becomes the tool's error result.
 */
export const createAtlasMcpServer = (call: ApiCall, gate: ToolGate = async () => undefined): McpServer => {
  const server = new McpServer(
    { name: 'atlas', version: apiPackage.version },
    {
      instructions:
        "Atlas is a knowledge base built from a team's chat history: facts with authors and permalinks, a knowledge graph (people, decisions, projects, technologies), a wiki per channel, and answers with citations. Start with list_channels; cite permalinks.",
    },
  );
  const tool = <S extends z.ZodRawShape>(
    name: string,
    description: string,
    inputSchema: S,
    run: (args: z.infer<z.ZodObject<S>>) => Promise<CallToolResult>,
    readOnly = true,
  ) =>
    server.registerTool(
      name,
      { description, inputSchema, annotations: { readOnlyHint: readOnly, openWorldHint: false } },
      // biome-ignore lint/suspicious/noExplicitAny: the SDK's callback type is generic over the shape
      (async (args: any) => {
        try {
          await gate(name);
        } catch (err) {
          const e = err as { code?: string; message?: string };
          return {
            isError: true,
            content: [{ type: 'text', text: `${e.code ?? 'RATE_LIMIT_EXCEEDED'}: ${e.message}` }],
          };
        }
        return run(args);
      }) as never,
    );

  const channelId = z.string().min(1).describe('a channel id (list_channels)');
  /** `as_of` of the routes that take it (issue 27 point 2; docs/routes.md "As of a date"), passed on as given. */
  const asOf = (what: string) =>
    z
      .string()
      .min(1)
      .optional()
      .describe(
        `ISO 8601 date or date-time (2026-06-03, 2026-06-03T10:00:00Z): answer as of that instant instead of now (a future one is now): ${what}`,
      );
  const factsAsOf = asOf('the facts stated by then, with their validity then');
  const graphAsOf = asOf('the graph as it stood then');
  const wikiAsOf = asOf('the wiki version current then');
  /** A version of the page diff: a version number or an ISO 8601 date (the version current then). */
  const versionRef = z
    .union([z.number().int().min(1), z.string().min(1)])
    .describe('a wiki version number (3) or an ISO 8601 date or date-time (the version current then)');

  tool(
    'ask',
    'Ask a question of the knowledge base; the answer cites the facts it used (with permalinks). Scoped to one channel with channel_id, else every channel the key sees. Needs the member role.',
    {
      question: z.string().min(1).max(2000),
      channel_id: channelId.optional(),
      session_id: z.string().min(1).optional().describe('continue an earlier answer'),
      as_of: asOf('retrieve only the facts stated by then, with their validity then'),
    },
    async ({ question, channel_id, session_id, as_of }) => {
      const url = channel_id ? `/api/channels/${encodeURIComponent(channel_id)}/ask` : '/api/ask';
      const r = await call('POST', url, {
        question,
        ...(session_id ? { session_id } : {}),
        ...(as_of ? { as_of } : {}),
      });
      if (r.status >= 400 && !r.contentType.includes('event-stream')) return answer(Promise.resolve(r));
      const s = readAskStream(r.raw);
      if (s.error) {
        const e = s.error as { code?: string; error?: string };
        return { isError: true, content: [{ type: 'text', text: `${e.code ?? 'ERROR'}: ${e.error}` }] };
      }
      const done = (s.done ?? {}) as { session_id?: string };
      return text({ answer: s.answer, citations: s.citations, session_id: done.session_id });
    },
  );

  tool(
    'search_facts',
    'Hybrid (vector + keyword) search of the facts, with filters; each result cites its permalink.',
    {
      query: z.string().min(1).max(2000),
      channel_id: channelId.optional(),
      limit: z.number().int().min(1).optional().describe(`default 10, at most ${SEARCH_MAX}`),
      mode: z.enum(['hybrid', 'vector', 'keyword']).optional(),
      fact_types: z.array(z.string()).optional(),
      importance: z.array(z.enum(['low', 'medium', 'high', 'critical'])).optional(),
      authors: z.array(z.string()).optional(),
      topics: z.array(z.string()).optional(),
      since: z.string().optional().describe('ISO time'),
      until: z.string().optional().describe('ISO time'),
      as_of: factsAsOf,
    },
    ({ query, channel_id, limit, mode, fact_types, importance, authors, topics, since, until, as_of }) =>
      answer(
        call('POST', '/api/search', {
          query,
          ...(as_of ? { as_of } : {}),
          channel_id: channel_id ?? null,
          limit: clamp(limit, 10, SEARCH_MAX),
          search_mode: mode ?? 'hybrid',
          include_citations: true,
          filters: {
            ...(fact_types ? { fact_types } : {}),
            ...(importance ? { importance } : {}),
            ...(authors ? { authors } : {}),
            ...(topics ? { topics } : {}),
            ...(since || until
              ? { date_range: { ...(since ? { start: since } : {}), ...(until ? { end: until } : {}) } }
              : {}),
          },
        }),
        (b) => ({
          total: b.total,
          results: b.results.map(
            (r: { memory: Record<string, unknown>; score: number; citation?: { permalink?: string } }) => ({
              ...fact(r.memory, r.citation?.permalink),
              score: r.score,
            }),
          ),
        }),
      ),
  );

  tool(
    'list_facts',
    "A channel's facts, newest first, a page at a time, with optional filters.",
    {
      channel_id: channelId,
      page: z.number().int().min(1).optional(),
      limit: z.number().int().min(1).optional().describe(`default 20, at most ${LIST_MAX}`),
      fact_type: z.string().optional(),
      topic: z.string().optional(),
      entity: z.string().optional(),
      importance: z.enum(['low', 'medium', 'high', 'critical']).optional(),
      as_of: factsAsOf,
    },
    ({ channel_id, page, limit, ...filters }) =>
      answer(
        call(
          'GET',
          `/api/memories${qs({ channel_id, page: page ?? 1, limit: clamp(limit, 20, LIST_MAX), ...filters })}`,
        ),
        (b) => ({
          total: b.total,
          page: b.page,
          pages: b.pages,
          facts: b.memories.map((m: Record<string, unknown>) => fact(m)),
        }),
      ),
  );

  tool(
    'get_fact',
    'One fact with its source message, entities and permalink.',
    { memory_id: z.string().min(1), as_of: factsAsOf },
    ({ memory_id, as_of }) => answer(call('GET', `/api/memories/${encodeURIComponent(memory_id)}${qs({ as_of })}`)),
  );

  tool('list_channels', 'The channels this key sees, with their platform, counts and last sync.', {}, () =>
    answer(call('GET', '/api/channels'), (b) =>
      b.map((c: Record<string, unknown>) => ({
        id: c.id,
        name: c.name,
        platform: c.platform,
        message_count: c.message_count,
        fact_count: c.fact_count,
        last_sync: c.last_sync,
      })),
    ),
  );

  tool(
    'list_entities',
    "A channel's knowledge-graph entities (people, decisions, projects, technologies, teams, meetings).",
    {
      channel_id: channelId,
      type: z.enum(['Person', 'Decision', 'Project', 'Technology', 'Team', 'Meeting']).optional(),
      limit: z.number().int().min(1).optional().describe(`default 50, at most ${GRAPH_MAX}`),
      as_of: graphAsOf,
    },
    ({ channel_id, type, limit, as_of }) =>
      answer(call('GET', `/api/graph/entities${qs({ channel_id, type, limit: clamp(limit, 50, GRAPH_MAX), as_of })}`)),
  );

  tool(
    'entity_card',
    'Everything known about one entity by name: what it is, its relationships, the facts that mention it, across the channels this key sees.',
    { name: z.string().min(1).max(200), as_of: graphAsOf },
    ({ name, as_of }) => answer(call('GET', `/api/graph/entities/${encodeURIComponent(name)}/card${qs({ as_of })}`)),
  );

  tool(
    'relationships',
    "A channel's relationships (who owns, decided, works on, uses what), optionally from or to one entity.",
    {
      channel_id: channelId,
      type: z.string().optional(),
      source: z.string().optional().describe('an entity id'),
      target: z.string().optional().describe('an entity id'),
      limit: z.number().int().min(1).optional().describe(`default 50, at most ${GRAPH_MAX}`),
      as_of: graphAsOf,
    },
    ({ channel_id, type, source, target, limit, as_of }) =>
      answer(
        call(
          'GET',
          `/api/graph/relationships${qs({ channel_id, type, source, target, limit: clamp(limit, 50, GRAPH_MAX), as_of })}`,
        ),
      ),
  );

  tool(
    'decisions',
    "A channel's decisions with their status and supersession history (which decision replaced which).",
    { channel_id: channelId, status: z.string().optional(), as_of: graphAsOf },
    ({ channel_id, status, as_of }) => answer(call('GET', `/api/graph/decisions${qs({ channel_id, status, as_of })}`)),
  );

  tool(
    'wiki_structure',
    "A channel's wiki: its pages and topics as a tree (ids for wiki_page).",
    { channel_id: channelId, as_of: wikiAsOf },
    ({ channel_id, as_of }) => answer(call('GET', `/api/wiki/structure${qs({ channel_id, as_of })}`)),
  );

  tool(
    'wiki_page',
    'One wiki page of a channel: its Markdown content with citations.',
    { channel_id: channelId, page_id: z.string().min(1), as_of: wikiAsOf },
    ({ channel_id, page_id, as_of }) =>
      answer(call('GET', `/api/wiki/pages/${encodeURIComponent(page_id)}${qs({ channel_id, as_of })}`), (b) => ({
        id: b.id,
        title: b.title,
        content: b.content,
        citations: (b.citations ?? []).map((c: Record<string, unknown>) => ({
          id: c.id,
          author: c.author,
          permalink: c.permalink,
        })),
      })),
  );

  tool(
    'wiki_page_diff',
    "How one wiki page changed between two versions of a channel's wiki: the unified line diff of its title and Markdown content (empty when unchanged), the counts of added and removed lines, and each side's version number, generation time and whether the page existed then. `from` and `to` are each a version number or an ISO 8601 date (the version current then); `to` defaults to the current version. A page absent from one side diffs against nothing.",
    {
      channel_id: channelId,
      page_id: z.string().min(1).describe('a page id (wiki_structure)'),
      from: versionRef,
      to: versionRef.optional(),
    },
    ({ channel_id, page_id, from, to }) =>
      answer(call('GET', `/api/wiki/pages/${encodeURIComponent(page_id)}/diff${qs({ channel_id, from, to })}`)),
  );

  tool(
    'channel_stats',
    "A channel's statistics: messages, facts, entities, activity.",
    { channel_id: channelId },
    ({ channel_id }) => answer(call('GET', `/api/channels/${encodeURIComponent(channel_id)}/stats`)),
  );

  tool(
    'sync_status',
    "The state of a channel's sync: the running or last job, its stage and progress.",
    { channel_id: channelId, job_id: z.string().optional() },
    ({ channel_id, job_id }) => answer(call('GET', `/api/sync/status${qs({ channel_id, job_id })}`)),
  );

  tool(
    'start_sync',
    'Start syncing a channel from its platform (incremental unless force). Needs the member role.',
    { channel_id: channelId, force: z.boolean().optional() },
    ({ channel_id, force }) => answer(call('POST', '/api/sync', { channel_id, ...(force ? { force } : {}) })),
    false,
  );

  server.registerResource(
    'stats',
    'atlas://stats',
    { title: 'Atlas statistics', description: 'Totals over the channels this key sees', mimeType: 'application/json' },
    async (uri) => {
      const r = await call('GET', '/api/stats');
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: r.raw }] };
    },
  );

  server.registerResource(
    'wiki-page',
    new ResourceTemplate('atlas://wiki/{channel_id}/{page_id}', {
      list: async () => {
        const channels = await call('GET', '/api/channels');
        if (channels.status >= 400) return { resources: [] };
        const resources: { uri: string; name: string; mimeType: string }[] = [];
        for (const c of JSON.parse(channels.raw) as { id: string; name: string }[]) {
          const s = await call('GET', `/api/wiki/structure${qs({ channel_id: c.id })}`);
          if (s.status >= 400) continue;
          const walk = (nodes: { id: string; title: string; children: unknown[] }[]): void => {
            for (const n of nodes) {
              resources.push({
                uri: `atlas://wiki/${c.id}/${n.id}`,
                name: `#${c.name}: ${n.title}`,
                mimeType: 'text/markdown',
              });
              walk(n.children as typeof nodes);
            }
          };
          walk((JSON.parse(s.raw) as { pages: { id: string; title: string; children: unknown[] }[] }).pages);
        }
        return { resources };
      },
    }),
    { title: 'Wiki page', description: "A page of a channel's wiki, as Markdown", mimeType: 'text/markdown' },
    async (uri, { channel_id, page_id }) => {
      const r = await call(
        'GET',
        `/api/wiki/pages/${encodeURIComponent(String(page_id))}${qs({ channel_id: String(channel_id) })}`,
      );
      if (r.status >= 400) throw new Error(`wiki page ${page_id}: ${r.status} ${r.raw.slice(0, 200)}`);
      return {
        contents: [
          { uri: uri.href, mimeType: 'text/markdown', text: (JSON.parse(r.raw) as { content: string }).content },
        ],
      };
    },
  );

  const prompt = (
    name: string,
    description: string,
    argsSchema: z.ZodRawShape,
    body: (a: Record<string, string>) => string,
  ) =>
    server.registerPrompt(name, { description, argsSchema }, (args: Record<string, unknown>) => ({
      messages: [{ role: 'user', content: { type: 'text', text: body(args as Record<string, string>) } }],
    }));
  prompt(
    'recent_decisions',
    "Summarise a channel's recent decisions, with what each superseded",
    { channel_id: z.string() },
    ({ channel_id }) =>
      `Use the decisions tool on channel ${channel_id}, then summarise the decisions of the last weeks: what was decided, by whom, what each replaced. Cite the permalinks of the facts behind each (search_facts).`,
  );
  prompt(
    'who_owns',
    'What does a person or team own?',
    { name: z.string() },
    ({ name }) =>
      `Use entity_card on "${name}", then relationships, to list what ${name} owns, decided or works on. Cite permalinks; say so when nothing is known.`,
  );
  prompt(
    'briefing',
    'Prepare a briefing on a topic',
    { topic: z.string() },
    ({ topic }) =>
      `Prepare a briefing on "${topic}": search_facts for it, read the wiki pages it appears on, and ask one question to fill gaps. Give the current state, the decisions and open questions, each with permalinks.`,
  );
  return server;
};

/**
 * `atlas mcp`: the MCP server over stdio for a desktop client (docs/mcp.md), whose tools call a running Atlas at
 * `baseUrl` (ATLAS_URL, default http://127.0.0.1:8000) with `apiKey` (ATLAS_API_KEY) as `Authorization: Bearer`, so the
 * key's role and channel scope bound what it sees, as over HTTP. Resolves when stdin closes.
 */
export const serveMcpStdio = async (opts: { baseUrl: string; apiKey?: string | undefined }): Promise<void> => {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const base = opts.baseUrl.replace(/\/+$/, '');
  const call: ApiCall = async (method, url, body) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: {
        ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    }).catch((err: unknown) => {
      const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      const raw = JSON.stringify({
        error: { code: 'STORE_UNAVAILABLE', message: `Atlas at ${base} does not answer: ${why}` },
      });
      return new Response(raw, { status: 503, headers: { 'content-type': 'application/json' } });
    });
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', raw: await res.text() };
  };
  const server = createAtlasMcpServer(call);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
};
