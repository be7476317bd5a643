import { expect, it } from 'vitest';
import {
  adminCall,
  openPage,
  screenshot,
  seriousA11yViolations,
  type WebContext,
  WIDTHS,
} from '../harness.test-support.js';

/**
 * The contradiction desk (issue 27, point 5; docs/contradictions.md): the olake export's flagged facts are listed with
 * both sides and their source links; an admin resolves one with the keyboard (Tab to "Both stand", Enter, confirm), it
 * leaves the open list and shows under Resolved. Not yet registered in ui.e2e.test.ts (written, never run): it
 * resolves one contradiction of the shared server, so register it after the screens that read memories.
 */
export const contradictionsScreen = (ctx: WebContext) => {
  it('contradictions: both sides with sources; resolve one with the keyboard after confirming', async () => {
    type Page = { total: number; contradictions: { id: string; later: { memory_text: string } }[] };
    const before = (await adminCall<Page>(ctx.atlas.url, 'GET', '/api/contradictions?status=open&limit=100')).body;
    expect(before.total).toBeGreaterThan(0);
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, WIDTHS[0]);
    try {
      await page.goto('/contradictions');
      const list = page.getByRole('list', { name: 'Contradictions' });
      await list.waitFor();
      await screenshot(page, 'contradictions');
      const first = list.getByRole('listitem').first();
      expect(await first.getByRole('region', { name: 'Earlier fact' }).count()).toBe(1);
      expect(await first.getByRole('link', { name: 'source message' }).count()).toBe(2);
      await first.getByRole('button', { name: 'Both stand' }).focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('alertdialog');
      await dialog.waitFor();
      await dialog.getByLabel('Note (optional)').fill('both hold: different releases');
      await dialog.getByRole('button', { name: 'Confirm: both stand' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await expect
        .poll(async () => (await adminCall<Page>(ctx.atlas.url, 'GET', '/api/contradictions?status=open')).body.total)
        .toBe(before.total - 1);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await page.getByRole('radio', { name: 'Resolved' }).click();
      await expect.poll(() => page.getByText('both hold: different releases').count()).toBe(1);
      await screenshot(page, 'contradictions-resolved');
    } finally {
      await context.close();
    }
  });

  it('contradictions: at 390 px the sides stack and the page holds no horizontal scroll', async () => {
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, WIDTHS[1]);
    try {
      await page.goto('/contradictions');
      await page.getByRole('heading', { name: 'Contradictions' }).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
    } finally {
      await context.close();
    }
  });
};
