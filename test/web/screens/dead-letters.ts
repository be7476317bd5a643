import { type FakeOpenAiServer, startFakeOpenAiServer } from '@atlas/providers/testing';
import { expect, it } from 'vitest';
import {
  adminCall,
  openPage,
  screenshot,
  seriousA11yViolations,
  startWebAtlas,
  type WebAtlas,
  type WebContext,
} from '../harness.test-support.js';

interface DeadLetters {
  total: number;
  counts: { pending: number; redriven: number };
  dead_letters: { id: string; status: string; error_code: string | null; event_type: string }[];
}

/**
 * Dead letters with re-drive (issue 26 point 8), on a second real `atlas start` whose model is down: OLake imported
 * with LLM_BASE_URL on a small OpenAI-compatible server that answers 500, so fact extraction dead-letters every
 * message (spec "Degraded behaviour"); the admin re-drives one from the browser.
 */
export const deadLetterScreen = (ctx: WebContext) => {
  it('stats dead letters while the model is down: the API list and counts; re-drive one, and the server records it', async () => {
    let llm: FakeOpenAiServer | undefined;
    let down: WebAtlas | undefined;
    try {
      llm = await startFakeOpenAiServer(); // no script: every call answers 500
      down = await startWebAtlas({
        imports: ['slack-olake/export'],
        env: { LLM_BASE_URL: llm.baseURL, LLM_TIMEOUT_MS: '2000' },
        webDir: ctx.atlas.webDir,
      });
      const url = down.url;
      const before = (await adminCall<DeadLetters>(url, 'GET', '/api/admin/dead-letters?status=pending&limit=100'))
        .body;
      expect(before.counts.pending).toBeGreaterThan(0);
      expect(new Set(before.dead_letters.map((d) => d.error_code))).toEqual(new Set(['PROVIDER_UNAVAILABLE']));
      const { context, page, errors } = await openPage(ctx.browser, url, 1280);
      try {
        await page.goto('/stats?tab=dead-letters');
        const pending = page.getByRole('group', { name: 'Pending', exact: true });
        await expect
          .poll(() => pending.textContent())
          .toBe(`Pending${await page.evaluate((x) => x.toLocaleString(), before.counts.pending)}`);
        const rows = page.getByRole('table', { name: 'Dead letters' }).getByRole('row');
        await expect.poll(() => rows.count()).toBe(Math.min(before.total, 100) + 1);
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'stats-dead-letters-pending');
        // Details: the whole failure and the original event, as GET /api/admin/dead-letters/{id} answers them.
        await rows.nth(1).getByRole('button', { name: 'Details' }).click();
        const details = page.getByRole('dialog');
        await details.getByText(/"event_data"/).waitFor();
        expect(await details.textContent()).toContain('fact extraction unavailable (LLM provider)');
        await details.getByRole('button', { name: 'Close' }).click();
        // Re-drive the first row, through its confirmation.
        await rows.nth(1).getByRole('button', { name: 'Re-drive' }).click();
        const dialog = page.getByRole('alertdialog');
        await dialog.waitFor();
        await dialog.getByRole('button', { name: 'Re-drive' }).click();
        const done = page.getByRole('status').filter({ hasText: /^Re-drove / });
        await done.waitFor({ timeout: 30_000 });
        const id = /^Re-drove (\S+) \(MessageIngested\) to atlas\.messages partition \d+, offset \d+\.$/.exec(
          (await done.textContent()) ?? '',
        )?.[1];
        expect(id).toBeDefined();
        expect(before.dead_letters.map((d) => d.id)).toContain(id);
        const item = await adminCall<{ status: string }>(url, 'GET', `/api/admin/dead-letters/${id}`);
        expect(item.body.status).toBe('redriven');
        const after = (await adminCall<DeadLetters>(url, 'GET', '/api/admin/dead-letters')).body;
        expect(after.counts.redriven).toBe(before.counts.redriven + 1);
        // The list shows it re-driven.
        await page.getByLabel('Show').click();
        await page.getByRole('option', { name: 'Re-driven' }).click();
        await expect.poll(() => rows.count()).toBe(after.counts.redriven + 1);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    } finally {
      await down?.close();
      await llm?.close();
    }
  }, 600_000);
};
