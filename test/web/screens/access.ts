import { expect, it } from 'vitest';
import {
  adminCall,
  openPage,
  screenshot,
  seriousA11yViolations,
  startWebAtlas,
  type WebContext,
  WIDTHS,
} from '../harness.test-support.js';

/** A new key of `role` (and `scope`), made by the admin through POST /api/admin/keys; its secret. */
const newKey = async (ctx: WebContext, name: string, role: string, scope?: unknown): Promise<string> => {
  const created = await adminCall<{ secret: string }>(ctx.atlas.url, 'POST', '/api/admin/keys', {
    name,
    role,
    ...(scope ? { scope } : {}),
  });
  expect(created.status).toBe(201);
  return created.body.secret;
};

/**
 * What a key may see, and what a new instance shows (issue 26 points 1, 2 and 9): a channel-scoped key's browser never
 * receives another channel; a key over the ask rate limit sees the countdown; an empty instance shows how to start.
 */
export const accessScreens = (ctx: WebContext) => {
  it('a key scoped to OLake #help: the UI lists that channel alone, and no other channel ever reaches the browser', async () => {
    const help = ctx.channels.help!;
    const key = await newKey(ctx, 'help-only-reader', 'reader', { channels: [help] });
    const others = Object.values(ctx.channels).filter((id) => id !== help);
    expect(others.length).toBeGreaterThan(80);
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280, key);
    const bodies: { url: string; text: string }[] = [];
    page.on('response', async (r) => {
      if (new URL(r.url()).pathname.startsWith('/api/'))
        bodies.push({ url: r.url(), text: await r.text().catch(() => '') });
    });
    try {
      await page.goto('/');
      await page.getByRole('link', { name: '#help', exact: true }).first().waitFor();
      expect(await page.getByRole('table').getByRole('row').count()).toBe(2); // the header and #help
      await page.goto('/search?q=kafka');
      await page.getByTestId('search-result').first().waitFor({ timeout: 30_000 });
      await page.goto('/graph');
      await page.getByRole('heading', { name: 'Graph explorer' }).waitFor();
      await page.goto('/stats');
      await page.getByRole('tab', { name: 'Overview' }).waitFor();
      await page.waitForLoadState('networkidle');
      // Another channel's address answers as an unknown channel would.
      await page.goto(`/channels/${encodeURIComponent(others[0]!)}/messages`);
      await page.getByText('There is no such channel.').waitFor({ timeout: 30_000 });
      await page.waitForLoadState('networkidle');
      expect(bodies.length).toBeGreaterThan(10);
      const leaks = bodies.flatMap((b) =>
        others
          .filter((id) => b.text.includes(id) && !b.url.includes(encodeURIComponent(id)))
          .map((id) => `${id} in ${b.url}`),
      );
      expect(leaks).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it('a member over the ask rate limit sees the error with a countdown, and Retry waits for it', async () => {
    const key = await newKey(ctx, 'busy-member', 'member');
    // 60 asks a minute per key (spec "Rate limits"): spend them with invalid asks, which count as asks.
    for (let i = 0; i < 60; i++) {
      const r = await fetch(`${ctx.atlas.url}/api/ask`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(r.status).toBe(400);
      await r.text();
    }
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, 390, key);
    try {
      await page.goto('/ask');
      await page.getByLabel('Question').fill('Why did the team move to an external NFS?');
      await page.getByRole('button', { name: 'Ask', exact: true }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor({ timeout: 30_000 });
      // The server's own words from the 429 stream's error event, its code, and the countdown from its retry_after.
      expect(await alert.textContent()).toMatch(
        /Too many requests\. too many questions: retry in \d+ s.*RATE_LIMIT_EXCEEDED/,
      );
      const seconds = async () => Number((/Try again in (\d+) s/.exec((await alert.textContent()) ?? '') ?? [])[1]);
      const first = await seconds();
      expect(first).toBeGreaterThan(0);
      expect(first).toBeLessThanOrEqual(60);
      expect(await alert.getByRole('button', { name: 'Retry' }).isDisabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Retry' }).count()).toBe(1); // no other way round the wait
      await expect.poll(seconds, { timeout: 5_000 }).toBeLessThan(first); // it counts down
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'ask-rate-limited');
    } finally {
      await context.close();
    }
  }, 120_000);

  it('an empty instance: the home page shows how to start (import an export, or connect a platform)', async () => {
    const empty = await startWebAtlas({ empty: true, webDir: ctx.atlas.webDir });
    try {
      expect((await adminCall<unknown[]>(empty.url, 'GET', '/api/channels')).body).toEqual([]);
      for (const width of WIDTHS) {
        const { context, page, errors } = await openPage(ctx.browser, empty.url, width);
        try {
          await page.goto('/');
          await page.getByRole('heading', { name: 'Nothing here yet' }).waitFor({ timeout: 30_000 });
          await page.getByRole('link', { name: 'Import an export' }).waitFor();
          expect(await page.getByRole('link', { name: 'Connect a platform' }).count()).toBe(1);
          expect(await seriousA11yViolations(page)).toEqual([]);
          await screenshot(page, 'home-empty');
          await page.getByRole('link', { name: 'Import an export' }).click();
          await page.waitForURL(/\/import$/);
          expect(errors).toEqual([]);
        } finally {
          await context.close();
        }
      }
    } finally {
      await empty.close();
    }
  }, 300_000);
};
