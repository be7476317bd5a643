import { expect, it } from 'vitest';
import {
  adminCall,
  openPage,
  screenshot,
  seriousA11yViolations,
  type WebContext,
  WIDTHS,
} from '../harness.test-support.js';

interface SearchAnswer {
  results: { memory: { id: string; memory_text: string }; highlights: string[] }[];
  total: number;
  facets?: Record<string, Record<string, number>>;
}

/** The server shares two cores with the browser: a search may take a few seconds. */
const SLOW = { timeout: 20_000 };

/** POST /api/search as the UI sends it for a query, filters and an as-of instant. */
const apiSearch = (ctx: WebContext, query: string, filters?: object, asOf?: string) =>
  adminCall<SearchAnswer>(ctx.atlas.url, 'POST', '/api/search', {
    query,
    channel_id: null,
    limit: 20,
    include_citations: true,
    facets: ['fact_type', 'importance', 'topics'],
    ...(filters ? { filters } : {}),
    ...(asOf ? { as_of: asOf } : {}),
  }).then((r) => r.body);

/** Search (issue 26 point 4): one box, facets mapped to POST /api/search, highlights as text, state in the URL. */
export const searchScreen = (ctx: WebContext) => {
  for (const width of WIDTHS)
    it(`search at ${width} px: the API's results, totals and highlights, with no HTML from chat text`, async () => {
      const q = 'core.async channel';
      const api = await apiSearch(ctx, q);
      expect(api.results.length).toBeGreaterThan(0);
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto('/search');
        await page
          .getByRole('searchbox', { name: 'Search' })
          .or(page.getByLabel('Search', { exact: true }))
          .first()
          .fill(q);
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        await page.waitForURL(/\?q=core\.async\+channel/);
        await expect
          .poll(() => page.getByTestId('search-summary').textContent())
          .toMatch(new RegExp(`^${api.total} results`));
        const shown = page.getByTestId('search-result');
        expect(await shown.count()).toBe(api.results.length);
        // Each result shows its first highlight as text: the tags stripped, `<mark>` only for the marked words.
        for (const [i, r] of api.results.slice(0, 5).entries()) {
          const p = shown.nth(i).locator('p').first();
          const h = r.highlights[0];
          expect(await p.textContent()).toBe(h ? h.replace(/<\/?mark>/g, '') : r.memory.memory_text);
          expect(await p.locator('mark').count()).toBe(h ? (h.match(/<mark>/g) ?? []).length : 0);
          expect(await p.locator('*:not(mark)').count()).toBe(0); // nothing else became an element
        }
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'search');
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

  it('search facets filter as the API does, live in the URL, and a result opens its message in context', async () => {
    const q = 'release';
    const all = await apiSearch(ctx, q);
    const [type, count] = Object.entries(all.facets?.fact_type ?? {}).sort((a, b) => b[1] - a[1])[0] ?? [];
    expect(type, 'a fact type with hits').toBeTruthy();
    const filtered = await apiSearch(ctx, q, { fact_types: [type] });
    expect(filtered.total).toBe(count);
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto(`/search?q=${q}`);
      await expect
        .poll(() => page.getByTestId('search-summary').textContent())
        .toMatch(new RegExp(`^${all.total} results`));
      expect(await page.getByTestId(`facet-Fact type-${type}`).textContent()).toBe(String(count));
      await page.getByRole('checkbox', { name: type!.replace('_', ' ') }).click();
      await page.waitForURL(new RegExp(`type=${type}`));
      await expect
        .poll(() => page.getByTestId('search-summary').textContent())
        .toMatch(new RegExp(`^${filtered.total} results`));
      expect(await page.getByTestId('search-result').first().locator('p').textContent()).toBe(
        filtered.results[0]!.highlights[0]?.replace(/<\/?mark>/g, '') ?? filtered.results[0]!.memory.memory_text,
      );
      await page.reload(); // the state is the URL's
      await expect
        .poll(() => page.getByTestId('search-summary').textContent())
        .toMatch(new RegExp(`^${filtered.total} results`));
      const first = filtered.results[0]!.memory.id;
      const detail = (
        await adminCall<{ channel_id: string; source_message_id: string }>(
          ctx.atlas.url,
          'GET',
          `/api/memories/${first}`,
        )
      ).body;
      await page.getByTestId('search-result').first().getByRole('link', { name: 'Message in context' }).click();
      await page.waitForURL(
        (u) =>
          u.pathname === `/channels/${encodeURIComponent(detail.channel_id)}/messages` &&
          u.searchParams.get('message') === detail.source_message_id,
      );
    } finally {
      await context.close();
    }
  });

  for (const width of WIDTHS)
    it(`search as of at ${width} px: a day gives the API's results as of its end (UTC), kept in the URL; back to now`, async () => {
      const q = 'release';
      const day = '2026-06-15';
      const now = await apiSearch(ctx, q);
      const then = await apiSearch(ctx, q, undefined, `${day}T23:59:59.999Z`);
      expect(then.total).toBeGreaterThan(0);
      expect(then.total).toBeLessThan(now.total);
      const text = (r: SearchAnswer['results'][number]) =>
        r.highlights[0]?.replace(/<\/?mark>/g, '') ?? r.memory.memory_text;
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      const summary = page.getByTestId('search-summary');
      try {
        if (width === WIDTHS[0]) {
          await page.goto(`/search?q=${q}`);
          await expect.poll(() => summary.textContent(), SLOW).toMatch(new RegExp(`^${now.total} results`));
          await page.getByLabel('As of', { exact: true }).fill(day);
          await page.waitForURL(new RegExp(`as_of=${day}`));
        } else await page.goto(`/search?q=${q}&as_of=${day}`);
        await expect
          .poll(() => summary.textContent(), SLOW)
          .toMatch(new RegExp(`^${then.total} results(?!.*updating)`));
        expect(await summary.textContent()).toContain('as of the end of');
        expect(await page.getByTestId('search-result').first().locator('p').textContent()).toBe(text(then.results[0]!));
        expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'search-as-of');
        // The active filter's chip returns to now.
        await page.getByRole('button', { name: /^as of: / }).click();
        await page.waitForURL((u) => !u.searchParams.has('as_of'));
        await expect.poll(() => summary.textContent(), SLOW).toMatch(new RegExp(`^${now.total} results(?!.*updating)`));
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });
};
