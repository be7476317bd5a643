import { expect, it } from 'vitest';
import {
  ADMIN_KEY,
  openPage,
  screenshot,
  seriousA11yViolations,
  type WebContext,
  WIDTHS,
} from '../harness.test-support.js';

/** Sign-in, the home page and the navigation (issue 26 point 1 and 9). */
export const shellScreens = (ctx: WebContext) => {
  it('a browser without a key is sent to sign-in; a wrong key is refused, the admin key signs in', async () => {
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, 1280, null);
    try {
      await page.goto('/ask');
      await page.waitForURL(/\/sign-in\?next=%2Fask/);
      await page.getByLabel('API key').fill('atlas_wrong_key');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/key/i);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'sign-in');
      await page.getByLabel('API key').fill(ADMIN_KEY);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/ask$/);
    } finally {
      await context.close();
    }
  });

  for (const width of WIDTHS)
    it(`home at ${width} px: totals and every channel with its counts, from the API`, async () => {
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto('/');
        const help = page.getByRole('link', { name: '#help', exact: true }).first();
        await help.waitFor();
        const rows = page.getByRole('table').getByRole('row');
        expect(await rows.count()).toBe(Object.keys(ctx.channels).length + 1);
        await expect.poll(() => page.getByText('Messages', { exact: true }).count()).toBeGreaterThan(0);
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'home');
        if (width < 760) {
          await page.getByRole('button', { name: 'Menu' }).click();
          await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Search' }).click();
          await page.waitForURL(/\/search$/);
        }
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });
};
