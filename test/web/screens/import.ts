import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { diffLines } from 'diff';
import { expect, it } from 'vitest';
import {
  ADMIN_KEY,
  adminCall,
  DATA,
  openPage,
  screenshot,
  seriousA11yViolations,
  type WebContext,
  WIDTHS,
} from '../harness.test-support.js';

const ETH_DIR = path.join(DATA, 'discord-ethglobal');
const ethFile = () => path.join(ETH_DIR, readdirSync(ETH_DIR).find((f) => f.endsWith('.json'))!);
/** How many of the Discord export's messages the partial export holds (its first ones, as an earlier export would). */
const PARTIAL = 200;

interface WikiStatus {
  current_version: number | null;
  is_generating: boolean;
  is_stale: boolean;
  job_id: string | null;
}

/**
 * The channel's wiki once it shows everything projected: a forced generation is asked for (POST /api/wiki/refresh);
 * beside it the server's scheduler regenerates a stale wiki by itself once its projectors catch up. Waits for a version
 * above `after` that is neither stale nor being generated, and answers its number.
 */
const settledWiki = async (url: string, channelId: string, after: number): Promise<number> => {
  const started = await adminCall(url, 'POST', '/api/wiki/refresh', { channel_id: channelId, force: true });
  expect([202, 409]).toContain(started.status);
  let version = 0;
  await expect
    .poll(
      async () => {
        const st = (await adminCall<WikiStatus>(url, 'GET', `/api/wiki/status?channel_id=${channelId}`)).body;
        version = st.current_version ?? 0;
        return version > after && !st.is_generating && !st.is_stale && st.job_id === null;
      },
      { timeout: 480_000, interval: 2_000 },
    )
    .toBe(true);
  return version;
};

/** The Discord channel's id (platform_b: the only one on the shared server), or undefined before it is imported. */
const discordChannel = async (url: string) =>
  (await adminCall<{ id: string; platform: string }[]>(url, 'GET', '/api/channels')).body.find(
    (c) => c.platform === 'platform_b',
  )?.id;

/**
 * Import from the browser (issue 26 point 1): a bad file is refused with the error and nothing is written; the
 * DiscordChatExporter export is uploaded, its progress shown live, and it adds its channel and messages. Registered
 * last: it adds a channel to the shared server.
 */
export const importScreen = (ctx: WebContext) => {
  let partialVersion = 0; // the Discord channel's wiki version of its first PARTIAL messages
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

  it(`import (API): a partial Discord export, its first ${PARTIAL} messages, and the wiki version that shows them`, async () => {
    const full = JSON.parse(readFileSync(ethFile(), 'utf8')) as { messages: unknown[]; messageCount: number };
    const partial = { ...full, messages: full.messages.slice(0, PARTIAL), messageCount: PARTIAL };
    const form = new FormData();
    form.append('file', new Blob([JSON.stringify(partial)], { type: 'application/json' }), 'ethglobal-partial.json');
    const res = await fetch(`${ctx.atlas.url}/api/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      body: form,
    });
    expect(res.status).toBe(202);
    const { import_id: id } = (await res.json()) as { import_id: string };
    await expect
      .poll(async () => (await adminCall<{ status: string }>(ctx.atlas.url, 'GET', `/api/imports/${id}`)).body.status, {
        timeout: 600_000,
        interval: 1_000,
      })
      .toBe('completed');
    const channelId = await discordChannel(ctx.atlas.url);
    expect(channelId).toBeDefined();
    partialVersion = await settledWiki(ctx.atlas.url, channelId!, 0);
  }, 900_000);

  it('import: a DiscordChatExporter JSON uploaded from the browser adds its channel and 518 messages', async () => {
    const file = ethFile();
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
  it('wiki versions: the Discord channel before and after the full export; the diff shows the lines that changed', async () => {
    const channelId = (await discordChannel(ctx.atlas.url))!;
    expect(partialVersion).toBeGreaterThan(0);
    const fullVersion = await settledWiki(ctx.atlas.url, channelId, partialVersion);
    const pages = await Promise.all(
      [partialVersion, fullVersion].map(
        async (n) =>
          (
            await adminCall<{ pages: { id: string; content: string }[] }>(
              ctx.atlas.url,
              'GET',
              `/api/wiki/versions/${n}?channel_id=${channelId}`,
            )
          ).body.pages,
      ),
    );
    // The page the 318 later messages changed most; its diff as jsdiff counts it from the two snapshots.
    const lines = (s: string) => s.split('\n').length - (s.endsWith('\n') ? 1 : 0);
    const counts = pages[1]!.map((p) => {
      const parts = diffLines(pages[0]!.find((q) => q.id === p.id)?.content ?? '', p.content);
      const added = parts.filter((x) => x.added).reduce((n, x) => n + lines(x.value), 0);
      const removed = parts.filter((x) => x.removed).reduce((n, x) => n + lines(x.value), 0);
      return { id: p.id, added, removed };
    });
    const changed = counts
      .filter((c) => pages[0]!.some((q) => q.id === c.id))
      .sort((a, b) => b.added + b.removed - (a.added + a.removed))[0]!;
    expect(changed.added + changed.removed).toBeGreaterThan(0);
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 390);
    try {
      await page.goto(
        `/channels/${channelId}/wiki/${changed.id}?view=versions&from=${partialVersion}&to=${fullVersion}`,
      );
      const summary = page.getByTestId('wiki-diff-summary');
      await summary.waitFor({ timeout: 30_000 });
      const s = (n: number) => (n === 1 ? '' : 's');
      expect(await summary.textContent()).toContain(
        `Version ${partialVersion} → ${fullVersion}: ${changed.added} line${s(changed.added)} added, ${changed.removed} line${s(changed.removed)} removed.`,
      );
      expect(await page.locator('ins.diff-add, del.diff-del').count()).toBeGreaterThan(0);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'wiki-diff');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 600_000);
};
