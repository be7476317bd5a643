import type { DocumentStore, WikiStore } from '@atlas/stores';
import type { WikiCitation, WikiNode, WikiPage, WikiStructure } from '@atlas/wiki';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import MarkdownIt, { type Token } from 'markdown-it';
import { esc, sendHtml } from '../html.js';

/** A citation marker `[n]` in a text run (the wiki's Markdown cites with them: packages/wiki/src/render.ts). */
const MARKER = /\[(\d+)\]/g;
const HAS_MARKER = /\[\d+\]/;

/** Only these schemes are linked from a citation (a permalink is the platform's https address). */
const linkable = (url: string): boolean => {
  try {
    return ['http:', 'https:'].includes(new URL(url).protocol);
  } catch {
    return false;
  }
};

/** A relative link's target as a page reference (`./topic/foo/` → `topic/foo`, percent-decoded when valid). */
const pageRef = (href: string): string => {
  const ref = href.replace(/^\.\//, '').replace(/\/+$/, '');
  try {
    return decodeURIComponent(ref);
  } catch {
    return ref;
  }
};

/** Every node of a structure, depth first. */
const flatten = (nodes: readonly WikiNode[]): WikiNode[] => nodes.flatMap((n) => [n, ...flatten(n.children)]);

/** The address of a page of a channel's readable wiki. */
export const wikiPageUrl = (channelId: string, pageId: string): string =>
  `/wiki/${encodeURIComponent(channelId)}/${encodeURIComponent(pageId)}`;

/** What renderWikiMarkdown needs besides the Markdown: the page's citations and where page links point. */
type RenderEnv = {
  citations: ReadonlyMap<string, WikiCitation>;
  /** A stored link target (a page's slug `topic/foo` or id) → the readable address of that page. */
  pages: ReadonlyMap<string, string>;
};

/**
 * The wiki's Markdown renderer (markdown-it, CommonMark with tables): raw HTML is off (`html: false`: any tag in a
 * fact or an excerpt is shown as text, escaped), links with other schemes than http(s), mailto and relative are
 * refused by markdown-it's validateLink. Two rules of its own:
 * - a link whose target is a page of the wiki (the stored Markdown links pages by slug, relative: `topic/foo`) points
 *   to that page's readable address (`/wiki/{channel_id}/{page_id}`); other links open with rel=noopener;
 * - a citation marker `[n]` of the page's citations becomes a link to its source message's permalink, titled with its
 *   author, date and excerpt (markers in code are left as they are).
 */
const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
md.core.ruler.before('text_join', 'atlas_wiki_links', (state) => {
  const env = state.env as unknown as RenderEnv;
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    const out: Token[] = [];
    for (const t of block.children) {
      if (t.type === 'link_open') {
        const href = String(t.attrGet('href') ?? '');
        const target = env.pages.get(pageRef(href));
        if (target) t.attrSet('href', target);
        else t.attrSet('rel', 'noopener noreferrer');
        out.push(t);
        continue;
      }
      if (t.type !== 'text' || !HAS_MARKER.test(t.content)) {
        out.push(t);
        continue;
      }
      let last = 0;
      for (const m of t.content.matchAll(MARKER)) {
        const c = env.citations.get(m[0]);
        if (!c || !linkable(c.permalink)) continue;
        const text = new state.Token('text', '', 0);
        text.content = t.content.slice(last, m.index);
        const open = new state.Token('link_open', 'a', 1);
        open.attrs = [
          ['href', c.permalink],
          ['class', 'cite'],
          ['title', `${c.author}, ${c.timestamp.slice(0, 10)}: ${c.text_excerpt}`],
          ['rel', 'noopener noreferrer'],
        ];
        const label = new state.Token('text', '', 0);
        label.content = m[0];
        out.push(text, open, label, new state.Token('link_close', 'a', -1));
        last = m.index + m[0].length;
      }
      const rest = new state.Token('text', '', 0);
      rest.content = t.content.slice(last);
      out.push(rest);
    }
    block.children = out;
  }
});

/** A stored wiki page's Markdown as HTML (see `md`): escaped, page links resolved, citations linked. */
export const renderWikiMarkdown = (content: string, env: RenderEnv): string => md.render(content, env);

/** The navigation: the structure's tree, each node a link, the current page marked. */
const navHtml = (channelId: string, nodes: readonly WikiNode[], current: string): string =>
  `<ul>${nodes
    .map(
      (n) =>
        `<li${n.id === current ? ' class="current"' : ''}><a href="${esc(wikiPageUrl(channelId, n.id))}">${esc(
          `${n.section_number} ${n.title}`,
        )}</a>${n.children.length > 0 ? navHtml(channelId, n.children, current) : ''}</li>`,
    )
    .join('')}</ul>`;

/** The page's sources: each citation with its author, channel, date, excerpt and a link to the message. */
const sourcesHtml = (citations: readonly WikiCitation[]): string =>
  citations.length === 0
    ? ''
    : `<h2>Sources</h2><ol class="sources">${citations
        .map((c) => {
          const head = `${esc(c.id)} ${esc(c.author)}, #${esc(c.channel)}, ${esc(c.timestamp.slice(0, 16).replace('T', ' '))}`;
          return `<li>${linkable(c.permalink) ? `<a href="${esc(c.permalink)}" rel="noopener noreferrer">${head}</a>` : head}: ${esc(c.text_excerpt)}</li>`;
        })
        .join('')}</ol>`;

const notFoundPage = (reply: FastifyReply, title: string, body: string) =>
  sendHtml(reply, 404, title, `<main class="wrap" style="display:block"><h1>${esc(title)}</h1>${body}</main>`);

/** What the readable wiki reads: the channel and its stored wiki structure and pages. */
export interface WikiHtmlRoutesOptions {
  documents: Pick<DocumentStore, 'getChannel'>;
  wiki: Pick<WikiStore<WikiPage, WikiStructure>, 'structure' | 'page'>;
}

/**
 * The readable wiki (docs/http.md "HTML wiki"), until a web UI exists; the bot's `/atlas wiki` links here:
 * - `GET /wiki/{channel_id}`: the channel's Overview page;
 * - `GET /wiki/{channel_id}/{page}`: a page by id (`topic-foo`) or by slug (`topic/foo/sub`), rendered from the stored
 *   Markdown (renderWikiMarkdown) beside the structure's tree, with its sources;
 * - `GET /wiki`: redirects to `/`, which lists the channels' wikis.
 * An unknown channel, a channel without a generated wiki or an unknown page is a 404 HTML page saying so (and how to
 * generate a wiki). Reads only what is stored (never generates). The JSON forms stay under /api/wiki.
 */
export const wikiHtmlRoutes: FastifyPluginAsync<WikiHtmlRoutesOptions> = async (app, ports) => {
  const show = async (reply: FastifyReply, channelId: string, ref: string) => {
    const structure: WikiStructure | null = await ports.wiki.structure(channelId);
    if (!structure) {
      const channel = await ports.documents.getChannel(channelId);
      if (!channel)
        return notFoundPage(
          reply,
          'No such channel',
          `<p>Atlas has no channel <code>${esc(channelId)}</code>. The channels are listed on <a href="/">the home page</a>.</p>`,
        );
      return notFoundPage(
        reply,
        `#${channel.name} has no wiki yet`,
        `<p>The wiki of #${esc(channel.name)} has not been generated yet. It is generated once the channel has facts;
<code>POST /api/wiki/refresh</code> with <code>{"channel_id": "${esc(channelId)}"}</code> starts it now.</p>`,
      );
    }
    const nodes = flatten(structure.pages);
    const node = nodes.find((n) => n.id === ref) ?? nodes.find((n) => n.slug === ref);
    const page: WikiPage | null = node ? await ports.wiki.page(channelId, node.id) : null;
    if (!node || !page)
      return notFoundPage(
        reply,
        'No such wiki page',
        `<p>The wiki of #${esc(structure.channel_name)} has no page <code>${esc(ref)}</code>. Start at its
<a href="${esc(wikiPageUrl(channelId, 'overview'))}">overview</a>.</p>`,
      );
    const targets = new Map<string, string>();
    for (const n of nodes) {
      targets.set(n.slug, wikiPageUrl(channelId, n.id));
      targets.set(n.id, wikiPageUrl(channelId, n.id));
    }
    const content = renderWikiMarkdown(page.content, {
      citations: new Map(page.citations.map((c) => [c.id, c])),
      pages: targets,
    });
    const title = `${page.title} · #${structure.channel_name} wiki`;
    const body = `<div class="wrap">
<nav><p><strong>#${esc(structure.channel_name)}</strong> <span class="muted">${esc(structure.platform)}</span></p>
${navHtml(channelId, structure.pages, page.id)}</nav>
<main>
${content}
${sourcesHtml(page.citations)}
<p class="muted">Generated ${esc(structure.generated_at)}. As JSON:
<a href="/api/wiki/pages/${esc(encodeURIComponent(page.id))}?channel_id=${esc(encodeURIComponent(channelId))}">/api/wiki/pages/${esc(page.id)}</a>.</p>
</main>
</div>`;
    return sendHtml(reply, 200, title, body);
  };

  app.get('/wiki', async (_request, reply) => reply.redirect('/', 302));
  app.get<{ Params: { channel_id: string } }>('/wiki/:channel_id', async (request, reply) =>
    show(reply, request.params.channel_id, 'overview'),
  );
  app.get<{ Params: { channel_id: string; '*': string } }>('/wiki/:channel_id/*', async (request, reply) =>
    show(reply, request.params.channel_id, request.params['*'].replace(/\/+$/, '')),
  );
};
