import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

interface WikiDiff {
  changed: boolean;
  added_lines: number;
  removed_lines: number;
}
interface WikiPage {
  title: string;
  memory_count: number;
  citations: unknown[];
}
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
  /** GET /api/wiki/pages/{page_id}/diff as the admin. */
  const diffOf = async (channelId: string, pageId: string, query: string) =>
    (await adminCall<WikiDiff>(ctx.atlas.url, 'GET', `/api/wiki/pages/${pageId}/diff?channel_id=${channelId}&${query}`))
      .body;
  /** The Discord wiki's page the later messages changed most (present in both versions), by the diff route's counts. */
  let changed: { id: string; added: number; removed: number } | undefined;
  let fullVersion = 0;

  for (const width of WIDTHS)
    it(`wiki changes at ${width} px: the Discord channel before and after the full export; the diff's lines and counts are the diff route's`, async () => {
      const channelId = (await discordChannel(ctx.atlas.url))!;
      expect(partialVersion).toBeGreaterThan(0);
      if (!changed) {
        fullVersion = await settledWiki(ctx.atlas.url, channelId, partialVersion);
        const [before, after] = await Promise.all(
          [partialVersion, fullVersion].map(
            async (n) =>
              (
                await adminCall<{ pages: { id: string }[] }>(
                  ctx.atlas.url,
                  'GET',
                  `/api/wiki/versions/${n}?channel_id=${channelId}`,
                )
              ).body.pages,
          ),
        );
        const counts = [];
        for (const p of after!.filter((p) => before!.some((q) => q.id === p.id))) {
          const d = await diffOf(channelId, p.id, `from=${partialVersion}&to=${fullVersion}`);
          counts.push({ id: p.id, added: d.added_lines, removed: d.removed_lines });
        }
        changed = counts.sort((a, b) => b.added + b.removed - (a.added + a.removed))[0]!;
      }
      expect(changed.added + changed.removed).toBeGreaterThan(0);
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto(
          `/channels/${channelId}/wiki/${changed.id}?view=changes&from=${partialVersion}&to=${fullVersion}`,
        );
        const summary = page.getByTestId('wiki-diff-summary');
        await summary.waitFor({ timeout: 30_000 });
        const s = (n: number) => (n === 1 ? '' : 's');
        expect(await summary.textContent()).toContain(
          `Version ${partialVersion} → ${fullVersion}: ${changed.added} line${s(changed.added)} added, ${changed.removed} line${s(changed.removed)} removed.`,
        );
        // Every added and removed line of the route's diff, each with its +/− marker (not colour alone).
        expect(await page.locator('ins.diff-add').count()).toBe(changed.added);
        expect(await page.locator('del.diff-del').count()).toBe(changed.removed);
        expect(await page.getByTestId('wiki-diff-added').textContent()).toBe(`+${changed.added}`);
        expect(await page.getByTestId('wiki-diff-removed').textContent()).toBe(`−${changed.removed}`);
        const markers = await page.locator('ins.diff-add .diff-marker, del.diff-del .diff-marker').allTextContents();
        expect(new Set(markers)).toEqual(new Set([...(changed.added ? ['+'] : []), ...(changed.removed ? ['−'] : [])]));
        expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'wiki-changes');
        if (width === WIDTHS[0]) {
          // Without from and to: the current version against the one before it, as the route counts it.
          const versions = (
            await adminCall<{ versions: { version_number: number }[] }>(
              ctx.atlas.url,
              'GET',
              `/api/wiki/versions?channel_id=${channelId}`,
            )
          ).body.versions;
          const [current, previous] = versions.map((v) => v.version_number);
          const d = await diffOf(channelId, changed.id, `from=${previous}&to=${current}`);
          await page.goto(`/channels/${channelId}/wiki/${changed.id}?view=changes`);
          await summary.waitFor({ timeout: 30_000 });
          expect(await summary.textContent()).toContain(
            d.changed
              ? `Version ${previous} → ${current}: ${d.added_lines} line${s(d.added_lines)} added`
              : `No changes to this page between version ${previous} and version ${current}.`,
          );
        }
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }, 600_000);

  for (const width of WIDTHS)
    it(`wiki as of at ${width} px: a time between the Discord channel's two versions shows the earlier overview; back to now`, async () => {
      const channelId = (await discordChannel(ctx.atlas.url))!;
      expect(fullVersion, 'the wiki changes test made the second version').toBeGreaterThan(partialVersion);
      const versions = (
        await adminCall<{ versions: { version_number: number; generated_at: string }[] }>(
          ctx.atlas.url,
          'GET',
          `/api/wiki/versions?channel_id=${channelId}`,
        )
      ).body.versions;
      const at = (n: number) => versions.find((v) => v.version_number === n)!.generated_at;
      const next = versions.filter((v) => v.version_number > partialVersion).at(-1)!; // the version after it
      const mid = new Date((Date.parse(at(partialVersion)) + Date.parse(next.generated_at)) / 2).toISOString();
      const pageAt = async (query: string) =>
        (await adminCall<WikiPage>(ctx.atlas.url, 'GET', `/api/wiki/pages/overview?channel_id=${channelId}${query}`))
          .body;
      // The overview: its counts are the channel's, 200 messages' then and 518 messages' now.
      const [then, now] = [await pageAt(`&as_of=${mid}`), await pageAt('')];
      expect(`${then.memory_count}/${then.citations.length}`).not.toBe(`${now.memory_count}/${now.citations.length}`);
      const meta = (p: WikiPage) =>
        `${p.memory_count.toLocaleString('en-US')} memories · ${p.citations.length} sources`;
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto(`/channels/${channelId}/wiki/overview?as_of=${encodeURIComponent(mid)}`);
        const notice = page.getByTestId('wiki-as-of');
        await notice.waitFor({ timeout: 30_000 });
        await expect.poll(() => notice.textContent(), { timeout: 30_000 }).toContain(`version ${partialVersion},`);
        expect(await notice.textContent()).toContain('an older version');
        // The page as the API answers it as of then: its title, counts and sources, not today's.
        await expect
          .poll(() => page.getByTestId('wiki-page-meta').textContent(), { timeout: 30_000 })
          .toContain(meta(then));
        expect(await page.getByTestId('wiki-page-title').textContent()).toContain(then.title);
        expect(await page.getByTestId('wiki-sources').getByRole('listitem').count()).toBe(then.citations.length);
        expect(await page.getByLabel('As of', { exact: true }).inputValue()).toBe(mid.slice(0, 10));
        expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'wiki-as-of');
        if (width === WIDTHS[0]) {
          // The tree's links keep the as-of time.
          const hrefs = await page
            .getByRole('navigation', { name: 'Wiki pages' })
            .getByRole('link')
            .evaluateAll((els) => els.map((e) => e.getAttribute('href') ?? ''));
          expect(hrefs.length).toBeGreaterThan(0);
          for (const h of hrefs) expect(h).toContain(`as_of=${encodeURIComponent(mid)}`);
          // A day before any version: said in words, with the first version's time and a way to it.
          await page.getByLabel('As of', { exact: true }).fill('2020-01-01');
          await page.waitForURL(/as_of=2020-01-01/);
          const none = page.getByTestId('wiki-as-of-none');
          await none.waitFor({ timeout: 30_000 });
          expect(await none.textContent()).toContain('No version of this wiki had been generated by the end of');
          expect(await none.textContent()).toContain('Its first version was generated');
          await screenshot(page, 'wiki-as-of-none');
          await page.getByRole('button', { name: 'Show the first version' }).click();
          const first = versions.at(-1)!;
          await expect
            .poll(() => notice.textContent(), { timeout: 30_000 })
            .toContain(`version ${first.version_number},`);
          // Back to now: the address loses as_of, the notice goes, the page is today's.
          await page.getByRole('button', { name: 'Back to the current wiki' }).click();
          await page.waitForURL((u) => !u.searchParams.has('as_of'));
          await expect.poll(() => notice.count()).toBe(0);
          await expect
            .poll(() => page.getByTestId('wiki-page-meta').textContent(), { timeout: 30_000 })
            .toContain(meta(now));
        }
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }, 300_000);
};
