import { expect, it } from 'vitest';
import {
  adminCall,
  openPage,
  screenshot,
  seriousA11yViolations,
  type WebContext,
  WIDTHS,
} from '../harness.test-support.js';

/** Ask (issue 26 point 2): a streamed answer with citations, hover cards, follow-ups in one session, nothing found. */
export const askScreen = (ctx: WebContext) => {
  it('streams an answer with [n] markers whose hover card shows the source; a follow-up continues the session', async () => {
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto('/ask');
      await page.getByLabel('Question').fill('Why did the team move to an external NFS?');
      await page.getByRole('button', { name: 'Ask', exact: true }).click();
      const answer = page.getByTestId('answer').first();
      await answer.waitFor({ timeout: 60_000 });
      await page.waitForURL(/\/ask\/[^/?]+/, { timeout: 60_000 }); // done: the session's address
      const marker = page.locator('a.cite').first();
      await marker.waitFor();
      const label = await marker.textContent();
      expect(label).toMatch(/^\[\d+\]$/);
      await marker.hover();
      const card = page.getByTestId('citation-card');
      await card.waitFor();
      expect(await card.textContent()).toMatch(/Open the message/);
      await page.getByText(/^Sources \(\d+\)$/).click();
      await screenshot(page, 'ask');
      expect(await seriousA11yViolations(page)).toEqual([]);
      const session = page.url();
      await page.getByLabel('Question').fill('Who set it up?');
      await page.getByRole('button', { name: 'Ask', exact: true }).click();
      await expect.poll(() => page.getByTestId('answer').count(), { timeout: 60_000 }).toBe(2);
      await expect.poll(() => page.getByRole('button', { name: 'Retry' }).count(), { timeout: 60_000 }).toBe(2);
      expect(page.url()).toBe(session);
      await page.reload();
      await expect.poll(() => page.getByTestId('answer').count(), { timeout: 30_000 }).toBe(2);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);

  it("asks at once from the home page's question box (/ask?q=)", async () => {
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 390);
    try {
      await page.goto('/');
      await page.getByLabel('Question', { exact: true }).fill('Why did the team move to an external NFS?');
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/ask\/[^/?]+/, { timeout: 60_000 }); // done: the session's address
      await page
        .getByTestId('answer')
        .first()
        .waitFor({ timeout: 30_000 })
        .catch(async (err) => {
          await screenshot(page, 'ask-from-home-failed');
          throw new Error(`${err}: the page said ${((await page.locator('main').textContent()) ?? '').slice(0, 600)}`);
        });
      expect(await page.locator('article').getByText('Why did the team move to an external NFS?').count()).toBe(1);
      expect(page.url()).not.toContain('q=');
      // Nothing wider than the screen (a long session title is cut, not pushed past the edge).
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('says honestly when nothing relevant is found (the weather in Paris)', async () => {
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, 390);
    try {
      await page.goto('/ask');
      await page.getByLabel('Question').fill("What's the weather in Paris today?");
      await page.getByRole('button', { name: 'Ask', exact: true }).click();
      await page
        .getByTestId('nothing-found')
        .waitFor({ timeout: 60_000 })
        .catch(async (err) => {
          await screenshot(page, 'ask-failed');
          throw new Error(`${err}: the page said ${((await page.locator('main').textContent()) ?? '').slice(0, 600)}`);
        });
      expect(await page.locator('a.cite').count()).toBe(0);
      await screenshot(page, 'ask');
      expect(await seriousA11yViolations(page)).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('lists sessions by day; a session is deleted from the list', async () => {
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, WIDTHS[0]);
    try {
      await page.goto('/ask');
      const sessions = page.getByRole('complementary', { name: 'Sessions' });
      await sessions.getByText('Today', { exact: true }).waitFor();
      const before = await sessions.getByRole('button', { name: /Delete the session/ }).count();
      expect(before).toBeGreaterThanOrEqual(2);
      // Each session is titled by its first question, as GET /api/ask/sessions answers it; opening one shows its turns.
      const list = (
        await adminCall<{ session_id: string; title: string | null }[]>(ctx.atlas.url, 'GET', '/api/ask/sessions')
      ).body;
      const nfs = list.find((s) => s.title === 'Why did the team move to an external NFS?');
      expect(nfs).toBeDefined();
      await sessions
        .getByRole('link', { name: /Why did the team move to an external NFS\?/ })
        .first()
        .click();
      await page.waitForURL(/\/ask\/[^/?]+$/);
      await page.getByTestId('answer').first().waitFor({ timeout: 30_000 });
      expect(await page.locator('article').first().textContent()).toContain(
        'Why did the team move to an external NFS?',
      );
      await sessions
        .getByRole('button', { name: /Delete the session/ })
        .first()
        .click();
      await expect.poll(() => sessions.getByRole('button', { name: /Delete the session/ }).count()).toBe(before - 1);
    } finally {
      await context.close();
    }
  });

  it('asks as of a date (?as_of=): the answer cites what the API answers as of that day, not what came later', async () => {
    const channel = ctx.channels.help!;
    const question = 'Which version of OLake was released?';
    /** The citations of an ask of the API (its SSE stream's citation events), as of `asOf` when set. */
    const citationsOf = async (asOf?: string) => {
      const res = await adminCall<string>(ctx.atlas.url, 'POST', `/api/channels/${channel}/ask`, {
        question,
        mode: 'deep',
        include_citations: true,
        ...(asOf ? { as_of: asOf } : {}),
      });
      expect(res.status).toBe(200);
      return String(res.body)
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => JSON.parse(l.slice(5)) as { type: string; citation?: { timestamp: string; text_excerpt: string } })
        .flatMap((e) => (e.type === 'citation' && e.citation ? [e.citation] : []));
    };
    // The day before the newest source of today's answer: as of its end, that source was not said yet.
    const today = await citationsOf();
    expect(today.length).toBeGreaterThan(0);
    const newest = today
      .map((c) => c.timestamp)
      .sort()
      .at(-1)!;
    const day = new Date(Date.parse(newest) - 86_400_000).toISOString().slice(0, 10);
    const then = await citationsOf(`${day}T23:59:59.999Z`);
    expect(then.length, `the API answers as of ${day} with sources`).toBeGreaterThan(0);
    const later = today.filter((c) => c.timestamp > `${day}T23:59:59.999Z`);
    expect(later.length).toBeGreaterThan(0);
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, WIDTHS[0]);
    try {
      await page.goto(`/ask?channel=${encodeURIComponent(channel)}&as_of=${day}`);
      expect(await page.getByLabel('As of').inputValue()).toBe(day);
      await page.getByLabel('Question').fill(question);
      await page.getByRole('button', { name: 'Ask', exact: true }).click();
      await page.waitForURL(/\/ask\/[^/?]+\?/, { timeout: 60_000 }); // done: the session's address
      expect(new URL(page.url()).searchParams.get('as_of')).toBe(day);
      expect(await page.getByTestId('answer-as-of').textContent()).toMatch(/^As of the end of /);
      await page.getByText(/^Sources \(\d+\)$/).click();
      const sources = (await page.locator('article details').textContent()) ?? '';
      expect(await page.getByText(/^Sources \(\d+\)$/).textContent()).toBe(`Sources (${then.length})`);
      for (const c of then) expect(sources).toContain(c.text_excerpt.slice(0, 60));
      for (const c of later) expect(sources).not.toContain(c.text_excerpt.slice(0, 60));
      // "Back to now": the next question is asked as of today, and says nothing of a date.
      await page.getByRole('button', { name: 'Back to now' }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get('as_of')).toBeNull();
      await screenshot(page, 'ask-as-of');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);
};
