import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';

/** Where the web UI's build lives (web/dist: index.html and assets/), or null: no UI, `GET /` is the home page. */
export interface WebRoutesOptions {
  webRoot?: string | null;
}

/** Paths that are never the UI's: an unknown one under them is the API's 404, not the UI's page. */
const NOT_UI = /^\/(api|mcp|metrics)(\/|$)/;

/**
 * The web UI (docs/web.md; issue 26), when `webRoot` holds a build (`index.html`): a single-page app, so
 * - `GET /assets/*`: its hashed scripts, styles and fonts (cached for a year, immutable);
 * - `GET /` and any other GET path outside /api, /mcp and /metrics (`/ask`, `/search`, `/channels/...`, and
 *   `/wiki/{channel_id}`, the bot's wiki link, which opens the channel's wiki screen): `index.html` (never cached),
 *   whose router shows the page; an unknown path under those three prefixes is the shared 404 body.
 * These routes are public (`config.access`, auth.ts): the app's shell holds no data; every call it makes is checked as
 * the caller's key. They are left out of the OpenAPI document (not under /api).
 * Returns whether the UI is served (false: no build at `webRoot`; routes/home.ts then serves `GET /`).
 */
export const webUiAvailable = (webRoot: string | null | undefined): webRoot is string =>
  !!webRoot && existsSync(path.join(webRoot, 'index.html'));

/** The UI's routes (see webUiAvailable); registers nothing without a build. */
export const webRoutes: FastifyPluginAsync<WebRoutesOptions> = async (app, opts) => {
  const root = opts.webRoot;
  if (!webUiAvailable(root)) return;
  await app.register(fastifyStatic, { root, serve: false });
  const config = { access: 'public' as const };
  const shell = (request: FastifyRequest, reply: FastifyReply) => {
    if (NOT_UI.test(request.url)) return reply.callNotFound(); // the shared 404 (405 when another method serves it)
    return reply
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .sendFile('index.html', root, { cacheControl: false });
  };
  app.get('/assets/*', { config }, (request, reply) => {
    const file = (request.params as { '*': string })['*'];
    return reply.sendFile(file, path.join(root, 'assets'), { immutable: true, maxAge: '365d' });
  });
  app.get('/', { config }, shell);
  app.get('/*', { config }, shell);
};
