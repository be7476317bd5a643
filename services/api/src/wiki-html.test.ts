import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { apiPorts, appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import type { WikiPage } from '@atlas/wiki';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');
/** A Slack message's text with a script tag in it (the export escapes `<` and `>` as entities, as Slack does). */
const SCRIPT_IN_SLACK = '&lt;script&gt;alert(1)&lt;/script&gt;';

/** Every `href` of an HTML text, entities decoded. */
const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));

/**
 * Issue 21 point 3 ("GET / and the address the start banner prints answer something useful instead of a 404 ... the
 * bot's /atlas wiki link opens something a person can read, not raw JSON"): the home page and the HTML wiki, on the
 * real OLake export with the #help wiki generated; one message of it carries a script tag.
 */
describe('issue 21: GET / and the readable wiki (slack-olake)', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let help: string;
  let other: string;
  const get = (url: string, accept?: string) =>
    app.inject({ method: 'GET', url, ...(accept ? { headers: { accept } } : {}) });

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://' }));
    const plan = await planImport(OLAKE);
    const msg = plan.messages.find((m) => m.text.includes('moved to an external Filestore-backed NFS'))!;
    msg.text = msg.text.replace('external Filestore-backed NFS', `external ${SCRIPT_IN_SLACK} Filestore-backed NFS`);
    await appendPlan(rt, plan);
    await drainProjectors(rt, 0, false);
    const ports = apiPorts(rt);
    app = await buildApp(ports);
    const channels = await rt.documents.listChannels();
    help = channels.find((c) => c.name === 'help')!.id;
    other = channels.find((c) => c.id !== help && c.fact_count > 0)!.id;
    await rt.wikiGenerator!.generate(help, 'full');
  }, 300_000);
  afterAll(async () => {
    await app?.close();
    await rt?.close();
  });

  it('GET / is an HTML page naming Atlas and its version, pointing to the API, health and each wiki', async () => {
    const res = await get('/', 'text/html,application/xhtml+xml,*/*;q=0.8');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<h1>Atlas <span class="muted">\d+\.\d+\.\d+<\/span><\/h1>/);
    const links = hrefs(res.body);
    expect(links).toContain('/api/health');
    expect(links).toContain('/api/channels');
    expect(links).toContain(`/wiki/${help}`);
    expect(links).not.toContain(`/wiki/${other}`); // no wiki generated: "none yet"
    expect(res.body).not.toContain('/api/docs');
    for (const link of links.filter((l) => l.startsWith('/'))) expect((await get(link)).statusCode, link).toBe(200);
    // Without Accept (curl) also HTML.
    expect((await get('/')).headers['content-type']).toMatch(/^text\/html/);
  });

  it('GET / with Accept: application/json answers the same as JSON', async () => {
    const res = await get('/', 'application/json');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(body).toMatchObject({
      name: 'Atlas',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      health: '/api/health',
    });
    expect(body.routes).toContainEqual(expect.objectContaining({ method: 'POST', path: '/api/search' }));
    const channels = body.channels as { id: string; wiki_url: string | null; wiki_pages: number }[];
    expect(channels).toHaveLength((await rt.documents.listChannels()).length);
    expect(channels.find((c) => c.id === help)).toMatchObject({ wiki_url: `/wiki/${help}` });
    expect(channels.find((c) => c.id === help)!.wiki_pages).toBeGreaterThan(7);
    expect(channels.find((c) => c.id === other)).toMatchObject({ wiki_url: null, wiki_pages: 0 });
  });

  it('GET /wiki/{channel_id} renders the overview from the stored Markdown, with the tree of every page', async () => {
    const res = await get(`/wiki/${help}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.body).toContain('<h1>help</h1>'); // the overview's own heading: the channel's name
    expect(res.body).toContain(`<li class="current"><a href="/wiki/${help}/overview">1 Overview</a>`);
    const structure = (await get(`/api/wiki/structure?channel_id=${help}`)).json();
    const ids: string[] = [];
    const walk = (nodes: { id: string; children: [] }[]) => {
      for (const n of nodes) {
        ids.push(n.id);
        walk(n.children);
      }
    };
    walk(structure.pages);
    expect(ids.length).toBeGreaterThan(7);
    const links = hrefs(res.body);
    for (const id of ids) expect(links).toContain(`/wiki/${help}/${encodeURIComponent(id)}`);
  });

  it('links between pages resolve: every /wiki link of the Topics page and of a topic page answers 200', async () => {
    const topics = await get(`/wiki/${help}/topics`);
    expect(topics.statusCode).toBe(200);
    const stored: WikiPage = (await get(`/api/wiki/pages/topics?channel_id=${help}`)).json();
    expect(stored.content).toMatch(/\]\(topic\/[a-z0-9-]+\)/); // the stored Markdown links pages by relative slug
    const links = hrefs(topics.body).filter((l) => l.startsWith('/wiki/'));
    const inContent = links.filter((l) => l.includes('/topic-'));
    expect(inContent.length).toBeGreaterThan(0);
    for (const link of new Set(links)) {
      const page = await get(link);
      expect(page.statusCode, link).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
    }
    // A page by its slug answers the same page as by its id.
    const slug = stored.content.match(/\]\((topic\/[a-z0-9-]+)\)/)![1]!;
    const bySlug = await get(`/wiki/${help}/${slug}`);
    expect(bySlug.statusCode).toBe(200);
    expect(bySlug.body).toContain('class="current"');
  });

  it('citations link to their source messages (permalinks) and are listed as sources', async () => {
    const stored: WikiPage = (await get(`/api/wiki/pages/decisions?channel_id=${help}`)).json();
    expect(stored.citations.length).toBeGreaterThan(0);
    const res = await get(`/wiki/${help}/decisions`);
    const links = hrefs(res.body);
    for (const c of stored.citations) expect(links).toContain(c.permalink);
    expect(res.body).toMatch(/<a href="https:\/\/getolake\.slack\.com\/archives\/[^"]+" class="cite"[^>]*>\[1\]<\/a>/);
    expect(res.body).toContain('<h2>Sources</h2>');
  });

  it('a script tag in a message is shown as text, never as markup, on every page', async () => {
    const pages: WikiPage[] = await apiPorts(rt).wiki.pages(help);
    const carrying = pages.filter(
      (p) => p.content.includes('alert(1)') || p.citations.some((c) => c.text_excerpt.includes('alert(1)')),
    );
    expect(carrying.length).toBeGreaterThan(0); // the message made it into the wiki
    for (const p of pages) {
      const html = (await get(`/wiki/${help}/${encodeURIComponent(p.id)}`)).body;
      expect(html).not.toMatch(/<script/i);
      if (carrying.includes(p)) expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    }
  });

  it('an unknown page, an unknown channel and a channel without a wiki are 404 HTML pages saying so', async () => {
    const page = await get(`/wiki/${help}/no-such-page`);
    expect(page.statusCode).toBe(404);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('has no page <code>no-such-page</code>');
    const channel = await get('/wiki/NO-SUCH-CHANNEL');
    expect(channel.statusCode).toBe(404);
    expect(channel.body).toContain('Atlas has no channel <code>NO-SUCH-CHANNEL</code>');
    const none = await get(`/wiki/${other}`);
    expect(none.statusCode).toBe(404);
    expect(none.body).toContain('POST /api/wiki/refresh');
  });
});
