import { expect, it } from 'vitest';
import {
  adminCall,
  openPage,
  screenshot,
  seriousA11yViolations,
  type WebContext,
  WIDTHS,
} from '../harness.test-support.js';

interface DigestBody {
  decisions: { changed: { item_id: string; title: string; citation: number }[] };
  citations: { id: number; permalink: string }[];
  has_activity: boolean;
}

/** The channel's Digest tab (issue 27 point 4): OLake #help's week of the 0.7.4 release, as the API answers it. */
export const digestScreen = (ctx: WebContext) => {
  it('digest tab: the week 0.7.4 superseded 0.7.3 on #help, each line with its source, the period in the URL', async () => {
    const help = ctx.channels.help!;
    const read = async () =>
      (
        await adminCall<DigestBody>(
          ctx.atlas.url,
          'GET',
          `/api/channels/${help}/digest?end=2026-06-01T00:00:00.000Z&days=7`,
        )
      ).body;
    // The lifecycle projector may still be reading a data dir imported before it existed (ATLAS_TEST_WEB_DATA_DIR).
    await expect.poll(async () => (await read()).decisions.changed.length, { timeout: 180_000 }).toBeGreaterThan(0);
    const api = await read();
    const changed = api.decisions.changed[0]!;
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, WIDTHS[1]);
    try {
      await page.goto(`/channels/${help}/digest?digest_end=2026-05-31&digest_days=7`);
      const digest = page.getByTestId('digest');
      await digest.waitFor({ timeout: 30_000 });
      expect(await digest.getByRole('heading', { level: 2 }).textContent()).toBe('2026-05-25 to 2026-05-31');
      const section = digest.getByRole('region', { name: 'Decisions changed' });
      const line = section.getByRole('listitem').filter({ hasText: changed.title });
      expect(await line.textContent()).toContain('decided → superseded');
      const cite = line.getByRole('link', { name: `[${changed.citation}]` });
      expect(await cite.getAttribute('href')).toBe(api.citations.find((c) => c.id === changed.citation)!.permalink);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'channel-digest');
      // A quiet week says so.
      await page.getByLabel('Last day').fill('2020-01-07');
      await page.getByText('A quiet period.').waitFor({ timeout: 30_000 });
      expect(page.url()).toContain('digest_end=2020-01-07');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 300_000);
};
