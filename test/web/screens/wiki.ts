import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import {
  adminCall,
  openPage,
  screenshot,
  seriousA11yViolations,
  type WebContext,
  WIDTHS,
} from '../harness.test-support.js';

interface Node {
  id: string;
  title: string;
  slug: string;
  section_number: string;
  children: Node[];
}
interface Citation {
  id: string;
  author: string;
  permalink: string;
}
interface WikiPageBody {
  id: string;
  title: string;
  section_number: string;
  content: string;
  citations: Citation[];
}
interface Status {
  is_generating: boolean;
  is_stale: boolean;
  current_version: number | null;
  job_id: string | null;
}

const flatten = (nodes: Node[]): Node[] => nodes.flatMap((n) => [n, ...flatten(n.children)]);

/** The level-2 and -3 headings of a page's Markdown, as its table of contents shows them. */
const tocOf = (content: string): string[] =>
  content
    .split('\n')
    .flatMap((l) => {
      const m = /^(#{2,3})\s+(.*?)\s*$/.exec(l);
      return m ? [m[2]!.replace(/[*_`]+/g, '')] : [];
    })
    .filter(Boolean);

/**
 * Waits for the channel's wiki: when the import generated none, POST /api/wiki/refresh starts it and GET
 * /api/wiki/status is polled until the run ends (the same live status the screen shows).
 */
const ensureWiki = async (url: string, channelId: string): Promise<Node[]> => {
  let s = await adminCall<{ pages: Node[] }>(url, 'GET', `/api/wiki/structure?channel_id=${channelId}`);
  if (s.status === 404) {
    const started = await adminCall(url, 'POST', '/api/wiki/refresh', { channel_id: channelId });
    expect([202, 409]).toContain(started.status);
    await expect
      .poll(
        async () => {
          const st = (await adminCall<Status>(url, 'GET', `/api/wiki/status?channel_id=${channelId}`)).body;
          return st.current_version !== null && !st.is_generating && st.job_id === null;
        },
        { timeout: 120_000, interval: 1_000 },
      )
      .toBe(true);
    s = await adminCall<{ pages: Node[] }>(url, 'GET', `/api/wiki/structure?channel_id=${channelId}`);
  }
  expect(s.status).toBe(200);
  return s.body.pages;
};

const pageOf = async (url: string, channelId: string, pageId: string) =>
  (await adminCall<WikiPageBody>(url, 'GET', `/api/wiki/pages/${pageId}?channel_id=${channelId}`)).body;

/** The tree's links as `section title` (the disclosure opened first at 390 px). */
const treeLinks = async (page: Page): Promise<string[]> => {
  const nav = page.getByRole('navigation', { name: 'Wiki pages' });
  if (!(await nav.isVisible())) await page.getByText('Pages', { exact: true }).click();
  await nav.waitFor();
  return (await nav.getByRole('link').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
};

/** Wiki (issue 26 point 3) of OLake #help: tree, pages, citations, links, contents, versions, download, safety. */
export const wikiScreen = (ctx: WebContext) => {
  for (const width of WIDTHS)
    it(`wiki at ${width} px: the tree numbers sections as the structure does; a link opens a topic page whose [n] cards and TOC match its API page`, async () => {
      const help = ctx.channels.help!;
      const tree = await ensureWiki(ctx.atlas.url, help);
      const status = (await adminCall<Status>(ctx.atlas.url, 'GET', `/api/wiki/status?channel_id=${help}`)).body;
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto(`/channels/${help}/wiki/topics`);
        await page.getByTestId('wiki-content').waitFor({ timeout: 30_000 });
        const nodes = flatten(tree);
        expect(nodes.slice(0, 7).map((n) => `${n.section_number} ${n.title}`)).toEqual([
          '1 Overview',
          '2 People',
          '3 Decisions',
          '4 FAQ',
          '5 Glossary',
          '6 Activity',
          '7 Topics',
        ]);
        const topics = nodes.filter((n) => n.section_number.startsWith('7.'));
        expect(topics.length).toBeGreaterThan(0);
        expect(await treeLinks(page)).toEqual(nodes.map((n) => `${n.section_number} ${n.title}`));
        // The stale badge follows GET /api/wiki/status.
        const bar = page.getByTestId('wiki-status');
        expect(await bar.getByText('Stale', { exact: true }).count()).toBe(status.is_stale ? 1 : 0);
        expect(await bar.textContent()).toContain(`Version ${status.current_version}`);

        // A link between pages: the Topics page links each topic by its slug; following one opens that page.
        const bodies = await Promise.all(topics.map((t) => pageOf(ctx.atlas.url, help, t.id)));
        const target = bodies.find((b) => b.citations.length > 0 && tocOf(b.content).length > 0)!;
        expect(target).toBeTruthy();
        await page
          .getByTestId('wiki-content')
          .getByRole('link', { name: `${target.section_number} ${target.title}`, exact: true })
          .click();
        await page.waitForURL(`**/channels/${help}/wiki/${target.id}`);
        await expect
          .poll(async () => (await page.getByTestId('wiki-page-title').textContent())?.replace(/\s+/g, ' ').trim())
          .toBe(`${target.section_number} ${target.title}`);

        // A citation marker: hover card with the author, link to the permalink (new tab).
        const marker = page.getByTestId('wiki-content').locator('a.cite').first();
        await marker.waitFor();
        const label = (await marker.textContent())!;
        const cited = target.citations.find((c) => c.id === label)!;
        expect(cited).toBeTruthy();
        expect(await marker.getAttribute('href')).toBe(cited.permalink);
        expect(await marker.getAttribute('target')).toBe('_blank');
        await marker.hover();
        const card = page.getByTestId('citation-card');
        await card.waitFor();
        expect(await card.textContent()).toContain(cited.author);
        await page.mouse.move(0, 0);
        await card.waitFor({ state: 'hidden' });

        // The table of contents lists the page's headings, each linking to its heading's id.
        const toc = page.getByRole('navigation', { name: 'On this page' });
        if (!(await toc.isVisible())) await page.getByText('On this page', { exact: true }).click();
        const entries = toc.getByRole('link');
        await expect.poll(() => entries.allTextContents()).toEqual(tocOf(target.content));
        const href = (await entries.first().getAttribute('href'))!;
        expect(await page.locator(`[id="${href.slice(1)}"]`).textContent()).toBe(tocOf(target.content)[0]);

        await page.goto(`/channels/${help}/wiki/topic-${'x'.repeat(8)}`);
        await page.getByText('This wiki has no such page.').waitFor();
        await page.goto(`/channels/${help}/wiki/${target.id}`);
        await page.getByTestId('wiki-content').waitFor();
        await screenshot(page, 'wiki');
        expect(await seriousA11yViolations(page)).toEqual([]);
        expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

  it('wiki download gives a Markdown file whose text is the page content', async () => {
    const help = ctx.channels.help!;
    await ensureWiki(ctx.atlas.url, help);
    const overview = await pageOf(ctx.atlas.url, help, 'overview');
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, WIDTHS[0]);
    try {
      await page.goto(`/channels/${help}/wiki`);
      await page.getByTestId('wiki-content').waitFor({ timeout: 30_000 });
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download as Markdown' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe(`${overview.title}.md`);
      expect(readFileSync((await download.path())!, 'utf8')).toBe(overview.content);
    } finally {
      await context.close();
    }
  });

  it('wiki shows HTML in chat text literally (a page whose content has <script> or <tag>): nothing is injected', async () => {
    // Find real pages whose stored Markdown holds HTML-looking text (Clojurians: `<script>`, `<MyObject>`, `<!`).
    const found: { channel: string; page: WikiPageBody; tag: string }[] = [];
    for (const name of ['reagent', 'beginners', 'clojurescript', 'help']) {
      const channel = ctx.channels[name];
      if (!channel) continue;
      const v = (
        await adminCall<{ versions: { version_number: number }[] }>(
          ctx.atlas.url,
          'GET',
          `/api/wiki/versions?channel_id=${channel}`,
        )
      ).body;
      if (!v.versions?.length) continue;
      const snap = (
        await adminCall<{ pages: WikiPageBody[] }>(
          ctx.atlas.url,
          'GET',
          `/api/wiki/versions/${v.versions[0]!.version_number}?channel_id=${channel}`,
        )
      ).body;
      for (const p of snap.pages) {
        const tag = /<[A-Za-z][A-Za-z0-9-]*>/.exec(p.content)?.[0];
        if (tag) found.push({ channel, page: p, tag });
      }
      if (found.length) break;
    }
    expect(found.length).toBeGreaterThan(0);
    const { channel, page: target, tag } = found[0]!;
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, WIDTHS[0]);
    try {
      const dialogs: string[] = [];
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      await page.goto(`/channels/${channel}/wiki/${target.id}`);
      const content = page.getByTestId('wiki-content');
      await content.waitFor({ timeout: 30_000 });
      expect(await content.textContent()).toContain(tag); // shown as text
      const element = tag.slice(1, -1).toLowerCase();
      expect(await content.locator(`${element}, script, iframe, img[onerror]`).count()).toBe(0);
      expect(dialogs).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('wiki regenerate (admin) shows the new version live; its changes diff two versions; a reader sees no controls', async () => {
    const help = ctx.channels.help!;
    await ensureWiki(ctx.atlas.url, help);
    const before = (
      await adminCall<{ versions: { version_number: number }[] }>(
        ctx.atlas.url,
        'GET',
        `/api/wiki/versions?channel_id=${help}`,
      )
    ).body.versions;
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, WIDTHS[0]);
    try {
      await page.goto(`/channels/${help}/wiki/overview`);
      await page.getByTestId('wiki-content').waitFor({ timeout: 30_000 });
      await page.getByRole('button', { name: 'Regenerate' }).click();
      // The status is polled until the job ends; the new version then shows in the bar and the notice.
      const newest = before[0]!.version_number + 1;
      await expect
        .poll(async () => (await page.getByTestId('wiki-status').textContent()) ?? '', { timeout: 120_000 })
        .toContain(`Version ${newest}`);
      await page.getByText(`Version ${newest} generated`).waitFor({ timeout: 30_000 });
      const versions = (
        await adminCall<{ versions: { version_number: number; page_count: number }[] }>(
          ctx.atlas.url,
          'GET',
          `/api/wiki/versions?channel_id=${help}`,
        )
      ).body.versions;
      expect(versions[0]!.version_number).toBe(newest);

      await page.getByRole('tab', { name: 'Changes' }).click();
      await page.waitForURL(/view=changes/);
      const rows = page.getByRole('table').getByRole('row');
      await expect.poll(() => rows.count()).toBe(versions.length + 1);
      // The diff of this page between the previous and the current version, as the diff route answers it.
      const d = (
        await adminCall<{ changed: boolean; added_lines: number; removed_lines: number }>(
          ctx.atlas.url,
          'GET',
          `/api/wiki/pages/overview/diff?channel_id=${help}&from=${versions[1]!.version_number}&to=${newest}`,
        )
      ).body;
      const summary = page.getByTestId('wiki-diff-summary');
      await summary.waitFor();
      if (!d.changed) expect(await summary.textContent()).toContain('No changes to this page');
      else {
        expect(await summary.textContent()).toMatch(/lines? added/);
        expect(await page.locator('.diff-add').count()).toBe(d.added_lines);
        expect(await page.locator('.diff-del').count()).toBe(d.removed_lines);
      }
      // Pick the oldest and the newest: the choice is kept in the URL.
      if (versions.length > 2) {
        await page.getByRole('combobox', { name: 'From version' }).click();
        await page.getByRole('option', { name: new RegExp(`^v${versions.at(-1)!.version_number} `) }).click();
        await page.waitForURL(new RegExp(`from=${versions.at(-1)!.version_number}`));
      }
      await screenshot(page, 'wiki-versions');
      expect(await seriousA11yViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
    // A reader reads the wiki but has neither Update nor Regenerate.
    const key = await adminCall<{ secret: string }>(ctx.atlas.url, 'POST', '/api/admin/keys', {
      name: 'wiki reader',
      role: 'reader',
    });
    expect(key.status).toBe(201);
    const reader = await openPage(ctx.browser, ctx.atlas.url, WIDTHS[1], key.body.secret);
    try {
      await reader.page.goto(`/channels/${help}/wiki/overview`);
      await reader.page.getByTestId('wiki-content').waitFor({ timeout: 30_000 });
      expect(await reader.page.getByRole('button', { name: /Regenerate|Update/ }).count()).toBe(0);
      expect(await reader.page.getByRole('button', { name: 'Download as Markdown' }).count()).toBe(1);
    } finally {
      await reader.context.close();
    }
  });
};
