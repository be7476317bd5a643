import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import {
  ADMIN_KEY,
  adminCall,
  openPage,
  screenshot,
  seriousA11yViolations,
  type WebContext,
  WIDTHS,
} from '../harness.test-support.js';

interface ConnectionRow {
  id: string;
  name: string;
  platform: string;
  status: string;
  channel_count: number;
}
interface ConnectionChannel {
  id: string;
  name: string;
  sync_enabled: boolean;
}
interface HistoryEntry {
  job_id: string;
  status: string;
  messages_synced: number;
  facts_extracted: number;
  entities_created: number;
}
interface Schedule {
  channel_id: string;
  schedule: string;
  enabled: boolean;
  next_sync: string | null;
}

/** A count as the page shows it (the browser's locale formatting, as formatCount does). */
const inPage = (page: Page, n: number) => page.evaluate((v) => v.toLocaleString(), n);

/** No horizontal scrolling of the page (issue 26 point 9). */
const noHorizontalScroll = async (page: Page) =>
  expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
    page.viewportSize()!.width,
  );

/**
 * Connections and sync (issue 26 point 7) against the mock platform (ADAPTER_MOCK=true, docs/mock-platform.md: any
 * credentials validate except bot_token `invalid`; platform_a lists #engineering, #product, #support).
 */
export const connectionsScreen = (ctx: WebContext) => {
  const name = `Web suite workspace ${randomBytes(3).toString('hex')}`;
  const token = `xoxb-web-${randomBytes(12).toString('hex')}`;
  const signing = `sign-${randomBytes(12).toString('hex')}`;
  let connectionId = '';
  let channelId = '';

  /** The connection the first test created through the form, or one made through the API if that test failed. */
  const connection = async () => {
    if (!connectionId) {
      const c = await adminCall<ConnectionRow>(ctx.atlas.url, 'POST', '/api/connections', {
        platform: 'platform_a',
        name: `${name} (api)`,
        credentials: { bot_token: token, signing_secret: signing },
      });
      connectionId = c.body.id;
    }
    if (!channelId) {
      const list = await adminCall<ConnectionChannel[]>(
        ctx.atlas.url,
        'GET',
        `/api/connections/${connectionId}/channels`,
      );
      channelId = list.body.find((c) => c.name === '#engineering')!.id;
      await adminCall(ctx.atlas.url, 'PUT', `/api/connections/${connectionId}/channels`, { channel_ids: [channelId] });
    }
    return { connectionId, channelId };
  };

  it('connections: the form shows the scopes to grant, refuses a bad token with INVALID_CREDENTIALS and saves nothing, then connects; the secret never reaches the page; channels picked with the search filter', async () => {
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      const before = (await adminCall<ConnectionRow[]>(ctx.atlas.url, 'GET', '/api/connections')).body;
      await page.goto(before.length ? '/connections?new' : '/connections');
      const form = page.getByRole('form', { name: 'New connection' });
      await form.waitFor();
      // The exact scopes of the chosen platform (spec "Connections", docs/connections.md).
      const checked = form.getByRole('list', { name: 'Bot token scopes (checked on validation)' });
      expect((await checked.getByRole('listitem').allTextContents()).sort()).toEqual(
        ['channels:history', 'channels:read', 'groups:history', 'groups:read', 'users:read'].sort(),
      );
      expect(await form.getByRole('list', { name: 'Required bot scopes in the spec' }).textContent()).toContain(
        'links:read:write',
      );
      await form.getByRole('radio', { name: /Discord-like guild/ }).click();
      expect(
        await form.getByRole('list', { name: 'Bot permissions in the guild (checked on validation)' }).textContent(),
      ).toContain('READ_MESSAGE_HISTORY');
      expect(await form.getByLabel('Guild id', { exact: true }).count()).toBe(1);
      await form.getByRole('radio', { name: /Slack-like workspace/ }).click();
      expect(await form.getByLabel('Guild id', { exact: true }).count()).toBe(0);

      await form.getByLabel('Name', { exact: true }).fill(name);
      const tokenInput = form.getByLabel('Bot token', { exact: true });
      expect(await tokenInput.getAttribute('type')).toBe('password');
      expect(await form.getByLabel('Signing secret', { exact: true }).getAttribute('type')).toBe('password');
      await tokenInput.fill('invalid');
      await form.getByLabel('Signing secret', { exact: true }).fill(signing);
      await form.getByRole('button', { name: 'Validate and connect' }).click();
      const refusal = form.getByRole('alert');
      await expect.poll(() => refusal.textContent()).toContain('INVALID_CREDENTIALS');
      // The API's refusal says the same; nothing was saved.
      const refused = await adminCall<{ error: { details: { validation_error: { code: string; message: string } } } }>(
        ctx.atlas.url,
        'POST',
        '/api/connections',
        { platform: 'platform_a', name, credentials: { bot_token: 'invalid', signing_secret: signing } },
      );
      expect(refused.status).toBe(400);
      expect(await refusal.textContent()).toContain(refused.body.error.details.validation_error.message);
      const unchanged = (await adminCall<ConnectionRow[]>(ctx.atlas.url, 'GET', '/api/connections')).body;
      expect(unchanged.filter((c) => c.name === name)).toEqual([]);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'connections-refused');

      await tokenInput.fill(token);
      await form.getByRole('button', { name: 'Validate and connect' }).click();
      await page.waitForURL(/\/connections\/[^/?]+\?tab=channels$/);
      const saved = (await adminCall<ConnectionRow[]>(ctx.atlas.url, 'GET', '/api/connections')).body.find(
        (c) => c.name === name,
      );
      expect(saved).toMatchObject({ platform: 'platform_a', status: 'connected' });
      connectionId = saved!.id;
      expect(new URL(page.url()).pathname).toBe(`/connections/${connectionId}`);
      await page.getByRole('heading', { level: 1, name }).waitFor();
      // Stored secrets show the mask, never their value.
      expect(await page.getByText('stored encrypted, never shown').count()).toBe(1);
      for (const field of ['Bot token', 'Signing secret'])
        expect(await page.getByText(`${field}: ••••••••`, { exact: true }).count()).toBe(1);

      // The picker lists what the platform lists; the search box filters by name.
      const listed = (
        await adminCall<ConnectionChannel[]>(ctx.atlas.url, 'GET', `/api/connections/${connectionId}/channels`)
      ).body;
      const channels = page.getByRole('list', { name: 'Channels' });
      await expect.poll(() => channels.getByRole('checkbox').count(), { timeout: 10_000 }).toBe(listed.length);
      await page.getByLabel('Search channels').fill('ENG');
      await expect
        .poll(() => channels.getByRole('listitem').count())
        .toBe(listed.filter((c) => c.name.toLowerCase().includes('eng')).length);
      expect(page.url()).toContain('q=ENG');
      await channels.getByRole('checkbox', { name: '#engineering' }).click();
      await page.getByLabel('Search channels').fill('nothing-like-this');
      await page.getByText('No channel matches').waitFor();
      await page.getByLabel('Search channels').fill('');
      await expect.poll(() => channels.getByRole('listitem').count()).toBe(listed.length);
      expect(await channels.getByRole('checkbox', { checked: true }).count()).toBe(1);
      await page.getByRole('button', { name: 'Save selection' }).click();
      await page.getByText(/Saved: 1 channel syncs/).waitFor();
      const after = (
        await adminCall<ConnectionChannel[]>(ctx.atlas.url, 'GET', `/api/connections/${connectionId}/channels`)
      ).body;
      expect(after.filter((c) => c.sync_enabled).map((c) => c.name)).toEqual(['#engineering']);
      channelId = after.find((c) => c.name === '#engineering')!.id;

      // The secret is nowhere in the page, not even after a reload of the connection.
      for (const secret of [token, signing]) expect(await page.content()).not.toContain(secret);
      await page.reload();
      await page.getByRole('heading', { level: 1, name }).waitFor();
      await channels.getByRole('checkbox').first().waitFor();
      for (const secret of [token, signing]) expect(await page.content()).not.toContain(secret);
      expect(await seriousA11yViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('connections: a picked channel syncs with live stage and progress to completed; the run is in the history with the API’s counts; cancel sends the running job; a schedule shows its next run', async () => {
    const { connectionId: cid, channelId: ch } = await connection();
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto(`/connections/${cid}?tab=sync`);
      const syncNow = page.getByRole('button', { name: 'Sync now' });
      await syncNow.waitFor();
      const started = page.waitForResponse((r) => r.url().endsWith(`/api/channels/${ch}/sync`));
      await syncNow.click();
      const job = (await (await started).json()) as { status: string; job_id: string };
      expect(job.status).toBe('started');
      // Watch the stage and progress the page shows while the job runs (polled every second).
      const stages = new Set<string>();
      const percents: number[] = [];
      const latest = page.getByLabel('Latest sync');
      const deadline = Date.now() + 120_000;
      for (;;) {
        const text = (await latest.textContent().catch(() => '')) ?? '';
        const now = await page
          .getByRole('list', { name: 'Sync stages' })
          .locator('[aria-current="step"]')
          .textContent({ timeout: 200 })
          .catch(() => null);
        if (now) stages.add(now.replace(/\s*\(now\)$/, ''));
        const v = await page
          .getByRole('progressbar', { name: 'Sync progress' })
          .getAttribute('aria-valuenow', { timeout: 200 })
          .catch(() => null);
        if (v !== null) percents.push(Number(v));
        if (/completed|failed|cancelled/.test(text)) break;
        if (Date.now() > deadline) throw new Error(`sync did not end; page says ${text}`);
        await page.waitForTimeout(150);
      }
      const status = (
        await adminCall<{ status: string; progress: { processed_messages: number; total_messages: number } }>(
          ctx.atlas.url,
          'GET',
          `/api/sync/status?channel_id=${ch}&job_id=${job.job_id}`,
        )
      ).body;
      expect(status.status).toBe('completed');
      expect(await latest.textContent()).toContain(
        `100% · ${await inPage(page, status.progress.processed_messages)} of ${await inPage(page, status.progress.total_messages)} messages processed`,
      );
      expect(percents.at(-1)).toBe(100);
      expect([...percents].sort((a, b) => a - b)).toEqual(percents); // progress never goes back
      expect(stages.size).toBeGreaterThan(0); // at least one stage was seen running
      expect(await page.getByRole('list', { name: 'Sync stages' }).getByText('(done)').count()).toBe(4);

      // The run history shows the API's counts for this job.
      const history = (
        await adminCall<{ history: HistoryEntry[] }>(ctx.atlas.url, 'GET', `/api/sync/history?channel_id=${ch}`)
      ).body.history;
      const run = history.find((h) => h.job_id === job.job_id)!;
      expect(run).toMatchObject({ status: 'completed' });
      expect(run.messages_synced).toBeGreaterThan(0);
      const row = page.locator(`[data-job-id="${job.job_id}"]`);
      await row.waitFor();
      const cells = await row.getByRole('cell').allTextContents();
      expect(cells[0]).toBe('completed');
      expect(cells.slice(2, 5)).toEqual([
        await inPage(page, run.messages_synced),
        await inPage(page, run.facts_extracted),
        await inPage(page, run.entities_created),
      ]);
      expect(await page.getByRole('region', { name: 'Run history' }).getByRole('row').count()).toBe(history.length + 1);
      expect(await seriousA11yViolations(page)).toEqual([]);

      // Cancel: a forced full re-sync, cancelled at once; the request names the running job.
      await page.getByLabel('Full re-sync').click();
      const second = page.waitForResponse((r) => r.url().endsWith(`/api/channels/${ch}/sync`));
      await syncNow.click();
      const job2 = (await (await second).json()) as { job_id: string };
      const cancelRequest = page.waitForRequest((r) => r.url().endsWith('/api/sync/cancel'));
      const cancelAnswer = page.waitForResponse((r) => r.url().endsWith('/api/sync/cancel'));
      await page.getByRole('button', { name: 'Cancel sync' }).click();
      expect((await cancelRequest).postDataJSON()).toEqual({ job_id: job2.job_id });
      const answered = await cancelAnswer;
      const ended = (
        await adminCall<{ status: string }>(
          ctx.atlas.url,
          'GET',
          `/api/sync/status?channel_id=${ch}&job_id=${job2.job_id}`,
        )
      ).body;
      if (answered.status() === 200) {
        // Cancelled while it ran: the page and the API agree.
        await page.getByText(/Cancel requested for job/).waitFor();
        await expect.poll(() => latest.textContent(), { timeout: 20_000 }).toContain('cancelled');
        expect(ended.status).toBe('cancelled');
        await expect
          .poll(() => row.page().locator(`[data-job-id="${job2.job_id}"]`).getByRole('cell').first().textContent())
          .toBe('cancelled');
      } else {
        // It finished first: the API's 409 is shown.
        expect(answered.status()).toBe(409);
        await expect
          .poll(() => page.getByRole('alert').allTextContents())
          .toContainEqual(expect.stringContaining('CONFLICT'));
      }

      // A schedule: saved through the editor, its next run as the API answers it.
      await page.getByLabel('Schedule (cron, five fields, UTC)').fill('*/30 * * * *');
      const put = page.waitForResponse(
        (r) => r.url().endsWith('/api/sync/schedules') && r.request().method() === 'PUT',
      );
      await page.getByRole('button', { name: 'Save schedule' }).click();
      const savedSchedule = (await (await put).json()) as Schedule;
      expect(savedSchedule.next_sync).not.toBeNull();
      const saved = page.getByRole('status', { name: 'Saved schedule' });
      await expect.poll(() => saved.textContent()).toContain(savedSchedule.next_sync!.replace('.000Z', 'Z'));
      const listedSchedules = (await adminCall<{ schedules: Schedule[] }>(ctx.atlas.url, 'GET', '/api/sync/schedules'))
        .body.schedules;
      expect(listedSchedules.find((s) => s.channel_id === ch)).toMatchObject({
        schedule: '*/30 * * * *',
        enabled: true,
      });
      expect(await saved.textContent()).toContain('*/30 * * * *');
      // A bad expression: the API's 400 is shown.
      await page.getByLabel('Schedule (cron, five fields, UTC)').fill('every hour');
      await page.getByRole('button', { name: 'Save schedule' }).click();
      await expect
        .poll(() => page.getByRole('alert').allTextContents())
        .toContainEqual(expect.stringContaining('INVALID_REQUEST'));
      await page.getByRole('button', { name: 'Every hour' }).click();
      expect(await page.getByLabel('Schedule (cron, five fields, UTC)').inputValue()).toBe('0 * * * *');
      expect(await seriousA11yViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);

  for (const width of WIDTHS)
    it(`connections at ${width} px: list, channels and sync tabs fit the width, no serious axe violation; screenshots`, async () => {
      const { connectionId: cid } = await connection();
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto('/connections');
        const table = page.getByRole('region', { name: 'Connections' });
        await table.waitFor();
        const rows = (await adminCall<ConnectionRow[]>(ctx.atlas.url, 'GET', '/api/connections')).body;
        expect(await table.getByRole('row').count()).toBe(rows.length + 1);
        await noHorizontalScroll(page);
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'connections-list');

        await page.goto(`/connections/${cid}`);
        await page.getByRole('list', { name: 'Channels' }).getByRole('checkbox').first().waitFor();
        await noHorizontalScroll(page);
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'connections');

        await page.getByRole('tab', { name: 'Sync and schedule' }).click();
        await page.getByLabel('Run history').waitFor();
        await page.getByRole('status', { name: 'Saved schedule' }).waitFor();
        expect(page.url()).toContain('tab=sync');
        await noHorizontalScroll(page);
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'connections-sync');

        await page.goto('/connections?new');
        await page.getByRole('form', { name: 'New connection' }).waitFor();
        await noHorizontalScroll(page);
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'connections-new');
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }, 90_000);

  it('connections: delete asks for confirmation first; a reader sees "admins only" and no Connections link', async () => {
    const other = await adminCall<ConnectionRow>(ctx.atlas.url, 'POST', '/api/connections', {
      platform: 'platform_b',
      name: 'Web suite guild to delete',
      credentials: { bot_token: `guild-${randomBytes(8).toString('hex')}`, guild_id: '123456789012345678' },
    });
    expect(other.status).toBe(201);
    const admin = await openPage(ctx.browser, ctx.atlas.url, 390, ADMIN_KEY);
    try {
      const { page } = admin;
      await page.goto(`/connections/${other.body.id}`);
      await page.getByRole('heading', { level: 1, name: 'Web suite guild to delete' }).waitFor();
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      const dialog = page.getByRole('alertdialog');
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Keep it' }).click();
      expect((await adminCall(ctx.atlas.url, 'GET', `/api/connections/${other.body.id}`)).status).toBe(200);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await dialog.getByRole('button', { name: 'Delete connection' }).waitFor();
      await screenshot(page, 'connections-delete');
      await dialog.getByRole('button', { name: 'Delete connection' }).click();
      await page.waitForURL(/\/connections$/);
      expect((await adminCall(ctx.atlas.url, 'GET', `/api/connections/${other.body.id}`)).status).toBe(404);
      expect(admin.errors).toEqual([]);
    } finally {
      await admin.context.close();
    }

    const created = await adminCall<{ secret: string }>(ctx.atlas.url, 'POST', '/api/admin/keys', {
      name: 'connections-reader',
      role: 'reader',
    });
    expect(created.status).toBe(201);
    const refused = await fetch(`${ctx.atlas.url}/api/connections`, {
      headers: { authorization: `Bearer ${created.body.secret}` },
    });
    expect(refused.status).toBe(403);
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280, created.body.secret);
    try {
      await page.goto('/connections');
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('Admins only');
      expect(
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Connections' }).count(),
      ).toBe(0);
      expect(await page.getByRole('form', { name: 'New connection' }).count()).toBe(0);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'connections-reader');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
};
