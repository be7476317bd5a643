import { readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import {
  adminCall,
  DATA,
  openPage,
  screenshot,
  seriousA11yViolations,
  type WebContext,
  WIDTHS,
} from '../harness.test-support.js';

const ETH_DIR = path.join(DATA, 'discord-ethglobal');

/**
 * Import from the browser (issue 26 point 1): a bad file is refused with the error and nothing is written; the
 * DiscordChatExporter export is uploaded, its progress shown live, and it adds its channel and messages. Registered
 * last: it adds a channel to the shared server.
 */
export const importScreen = (ctx: WebContext) => {
  it('import: a malformed export is refused naming the file, and nothing is written', async () => {
    const bad = path.join(os.tmpdir(), `atlas-bad-export-${process.pid}.json`);
    writeFileSync(bad, '{"guild": {"id": "1"}, "channel": {"id": "2", "na');
    const before = (await adminCall<unknown[]>(ctx.atlas.url, 'GET', '/api/channels')).body.length;
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, WIDTHS[1]);
    try {
      await page.goto('/import');
      await page.getByLabel('Export file').waitFor();
      await screenshot(page, 'import');
      await page.getByLabel('Export file').setInputFiles(bad);
      await page.getByRole('button', { name: 'Import' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/IMPORT_FAILED/);
      expect((await adminCall<unknown[]>(ctx.atlas.url, 'GET', '/api/channels')).body.length).toBe(before);
      const listed = page.getByRole('row').filter({ hasText: path.basename(bad) });
      await expect.poll(() => listed.textContent()).toMatch(/failed/); // the refused upload is in the recent list
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'import-refused');
    } finally {
      await context.close();
    }
  });

  it('import: a DiscordChatExporter JSON uploaded from the browser adds its channel and 518 messages', async () => {
    const file = path.join(ETH_DIR, readdirSync(ETH_DIR).find((f) => f.endsWith('.json'))!);
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, WIDTHS[0]);
    try {
      await page.goto('/import');
      await screenshot(page, 'import');
      await page.getByLabel('Export file').setInputFiles(file);
      await page.getByRole('button', { name: 'Import' }).click();
      const job = page.getByTestId('import-job');
      await job.waitFor({ timeout: 120_000 });
      await expect.poll(() => job.textContent(), { timeout: 600_000, interval: 1000 }).toMatch(/completed|failed/);
      const result = await page.getByTestId('import-result').textContent();
      expect(result).toMatch(/\b1 channel\b/);
      expect(result).toMatch(/\b518 messages\b/);
      const jobs = (
        await adminCall<{ imports: { status: string; result: { messages: number } | null }[] }>(
          ctx.atlas.url,
          'GET',
          '/api/imports',
        )
      ).body;
      expect(jobs.imports[0]?.status).toBe('completed');
      expect(jobs.imports[0]?.result?.messages).toBe(518);
      const channels = (
        await adminCall<{ platform: string; message_count: number }[]>(ctx.atlas.url, 'GET', '/api/channels')
      ).body;
      expect(channels.find((c) => c.platform === 'platform_b')?.message_count).toBe(518);
      const row = page
        .getByRole('row')
        .filter({ hasText: path.basename(file) })
        .first();
      await expect.poll(() => row.textContent()).toMatch(/completed/);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'import-done');
    } finally {
      await context.close();
    }
  }, 900_000); // 518 messages through every projector beside the other suites
};
