import type { DocumentStore, WikiStore } from '@atlas/stores';
import type { WikiPage, WikiStructure } from '@atlas/wiki';
import type { FastifyPluginAsync } from 'fastify';
import pkg from '../../package.json' with { type: 'json' };
import { esc, sendHtml, wantsJson } from '../html.js';

/**
 * Atlas's version: services/api's package.json `version`, which is the root package's (test/versions.test.ts keeps every
 * workspace's version equal to the root's).
 */
export const ATLAS_VERSION: string = pkg.version;

/** The routes the home page points to first: method, path and what they answer (README / docs list them all). */
export const KEY_ROUTES = [
  { method: 'GET', path: '/api/health', what: 'health of the service and of each dependency' },
  { method: 'GET', path: '/api/channels', what: 'the channels Atlas holds, with message and fact counts' },
  { method: 'GET', path: '/api/memories?channel_id={id}', what: "a channel's facts (memories), paged" },
  { method: 'POST', path: '/api/search', what: 'hybrid search over facts: {"query": "...", "limit": 10}' },
  { method: 'POST', path: '/api/ask', what: 'a question answered from the facts, as a Server-Sent Events stream' },
  {
    method: 'GET',
    path: '/api/graph/entities?channel_id={id}',
    what: "a channel's knowledge graph: people, projects, decisions, ...",
  },
  { method: 'GET', path: '/api/wiki/structure?channel_id={id}', what: "a channel's wiki as JSON" },
  { method: 'GET', path: '/api/stats', what: 'counts and query latency' },
  { method: 'GET', path: '/metrics', what: 'Prometheus metrics' },
] as const;

/** A channel on the home page: its wiki's address when one was generated. */
interface HomeChannel {
  id: string;
  name: string;
  platform: string;
  message_count: number;
  fact_count: number;
  /** `/wiki/{channel_id}` (the readable wiki), or null before the channel's first wiki generation. */
  wiki_url: string | null;
  wiki_pages: number;
  /** ISO 8601 UTC, or null. */
  wiki_generated_at: string | null;
}

/** What the home page reads: the channels and their current wiki versions. */
export interface HomeRoutesOptions {
  documents: Pick<DocumentStore, 'listChannels'>;
  wiki: Pick<WikiStore<WikiPage, WikiStructure>, 'currentVersions'>;
}

/**
 * `GET /` (docs/http.md "Home page"): what this server is and where to go: name, version, the key API routes
 * (KEY_ROUTES), health, and every channel with the address of its readable wiki (`/wiki/{channel_id}`, or none yet).
 * HTML by default; JSON (`{name, version, description, health, routes, channels}`) when the client's Accept prefers
 * application/json. A store that fails leaves the channel list out (`channels: null`, logged) rather than failing
 * the page.
 */
export const homeRoutes: FastifyPluginAsync<HomeRoutesOptions> = async (app, ports) => {
  const channelsOf = async (): Promise<HomeChannel[]> => {
    const channels = await ports.documents.listChannels();
    const versions = await ports.wiki.currentVersions(channels.map((c) => c.id));
    return channels.map((c) => {
      const v = versions.get(c.id);
      return {
        id: c.id,
        name: c.name,
        platform: c.platform,
        message_count: c.message_count,
        fact_count: c.fact_count,
        wiki_url: v ? `/wiki/${encodeURIComponent(c.id)}` : null,
        wiki_pages: v?.page_count ?? 0,
        wiki_generated_at: v?.generated_at ?? null,
      };
    });
  };

  app.get('/', async (request, reply) => {
    let channels: HomeChannel[] | null = null;
    try {
      channels = await channelsOf();
    } catch (err) {
      request.log.warn({ err }, 'home page: the channel list could not be read');
    }
    if (wantsJson(request.headers.accept))
      return {
        name: 'Atlas',
        version: ATLAS_VERSION,
        description:
          'Atlas turns chat history into a knowledge base: facts, search, a knowledge graph, ask and a wiki.',
        health: '/api/health',
        routes: KEY_ROUTES,
        channels,
      };
    return sendHtml(reply, 200, `Atlas ${ATLAS_VERSION}`, homeHtml(channels));
  });
};

const homeHtml = (channels: HomeChannel[] | null): string => {
  const routes = KEY_ROUTES.map(
    (r) =>
      `<tr><td><code>${r.method}</code></td><td>${r.method === 'GET' && !r.path.includes('{') ? `<a href="${esc(r.path)}"><code>${esc(r.path)}</code></a>` : `<code>${esc(r.path)}</code>`}</td><td>${esc(r.what)}</td></tr>`,
  ).join('\n');
  const list =
    channels === null
      ? '<p class="muted">The channel list cannot be read right now (see <a href="/api/health">/api/health</a>).</p>'
      : channels.length === 0
        ? '<p class="muted">No channels yet: import an export (<code>atlas import &lt;path&gt;</code>) or connect a workspace.</p>'
        : `<table><tr><th>channel</th><th>platform</th><th>messages</th><th>facts</th><th>wiki</th></tr>\n${channels
            .map(
              (c) =>
                `<tr><td>#${esc(c.name)}</td><td>${esc(c.platform)}</td><td>${c.message_count}</td><td>${c.fact_count}</td><td>${
                  c.wiki_url
                    ? `<a href="${esc(c.wiki_url)}">wiki</a> <span class="muted">(${c.wiki_pages} pages)</span>`
                    : '<span class="muted">none yet</span>'
                }</td></tr>`,
            )
            .join('\n')}</table>`;
  return `<main class="wrap" style="display:block">
<h1>Atlas <span class="muted">${esc(ATLAS_VERSION)}</span></h1>
<p>Atlas turns chat history into a knowledge base: facts with their sources, search, a knowledge graph, answers to
questions and a wiki per channel. This server answers its JSON API under <code>/api</code>.</p>
<p>Health: <a href="/api/health"><code>/api/health</code></a></p>
<h2>Channels and their wikis</h2>
${list}
<p class="muted">A wiki is generated once a channel has facts; <code>POST /api/wiki/refresh</code> with
<code>{"channel_id": "..."}</code> starts one now.</p>
<h2>Key API routes</h2>
<table><tr><th>method</th><th>path</th><th>answers</th></tr>
${routes}
</table>
<p class="muted">Every error answers <code>{"error": {"code", "message", "details"}}</code>. Ask for
<code>application/json</code> to get this page as JSON.</p>
</main>`;
};
