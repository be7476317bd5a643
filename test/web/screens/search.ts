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

/** POST /api/search as the UI sends it for a query and filters. */
const apiSearch = (ctx: WebContext, query: string, filters?: object) =>
  adminCall<SearchAnswer>(ctx.atlas.url, 'POST', '/api/search', {
    query,
    channel_id: null,
    limit: 20,
    include_citations: true,
    facets: ['fact_type', 'importance', 'topics'],
    ...(filters ? { filters } : {}),
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
};
