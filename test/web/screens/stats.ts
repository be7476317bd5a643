import { readFileSync } from 'node:fs';
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

interface SystemStats {
  total_facts: number;
  total_entities: number;
  total_channels: number;
  total_decisions: number;
  wiki_pages: number;
  total_messages: number;
  total_authors: number;
}
interface ExportJson {
  totals: {
    channels: number;
    messages: number;
    facts: number;
    decisions: number;
    entities: number;
    wiki_pages: number;
  };
  channels: { channel_id: string; channel_name: string; message_count: number }[];
}
interface ChannelStats {
  activity: {
    messages_last_7d: number;
    messages_last_30d: number;
    facts_added_last_7d: number;
    facts_added_last_30d: number;
  };
}

/** How the UI labels each activity type (web/src/pages/stats/overview.tsx). */
const ACTIVITY_LABEL: Record<string, string> = {
  sync_completed: 'Sync completed',
  wiki_generated: 'Wiki generated',
  connection_established: 'Connection established',
  connection_failed: 'Connection failed',
  fact_extracted: 'Facts extracted',
  entity_created: 'Entities created',
};

/** A count as the browser formats it (formatCount: toLocaleString in the page's locale). */
const inPage = (page: Page, n: number) => page.evaluate((x) => x.toLocaleString(), n);

const get = async <T>(ctx: WebContext, route: string) => {
  const r = await adminCall<T>(ctx.atlas.url, 'GET', route);
  expect(r.status).toBe(200);
  return r.body;
};

/**
 * Stats and operations (issue 26 point 8): totals, the activity feed, top authors and topics, 7- and 30-day activity,
 * dependency health and consumer lag, dead letters (admins only), export; every figure compared with the API.
 */
export const statsScreen = (ctx: WebContext) => {
  for (const width of WIDTHS)
    it(`stats at ${width} px: totals equal GET /api/stats, quality bands and the activity feed from the API`, async () => {
      const stats = await get<SystemStats>(ctx, '/api/stats');
      const metrics = await get<{ bands: Record<string, string | null> }>(ctx, '/api/stats/metrics');
      const feed = await get<{ activities: { type: string; channel_id?: string }[] }>(ctx, '/api/stats/activity');
      expect(stats.total_messages).toBeGreaterThan(0);
      expect(feed.activities.length).toBeGreaterThan(0);
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto('/stats');
        await page.getByRole('heading', { name: 'Stats and operations' }).waitFor();
        const totals: [string, number][] = [
          ['Channels', stats.total_channels],
          ['Messages', stats.total_messages],
          ['Authors', stats.total_authors],
          ['Facts', stats.total_facts],
          ['Decisions', stats.total_decisions],
          ['Entities', stats.total_entities],
          ['Wiki pages', stats.wiki_pages],
        ];
        for (const [label, n] of totals) {
          const card = page.getByRole('group', { name: label, exact: true });
          await expect.poll(() => card.textContent()).toBe(`${label}${await inPage(page, n)}`);
        }
        // The band words of GET /api/stats/metrics (spec "Metric quality bands").
        const fq = page.getByRole('group', { name: 'Fact quality', exact: true });
        await expect.poll(() => fq.textContent()).toContain(metrics.bands.fact_quality ?? 'not rated yet');
        // The feed: one entry per activity, in the API's order, with its type and channel.
        const names = Object.fromEntries(Object.entries(ctx.channels).map(([n, id]) => [id, n]));
        const items = page.getByRole('list', { name: 'Activity feed' }).getByRole('listitem');
        await expect.poll(() => items.count()).toBe(feed.activities.length);
        for (const [i, a] of feed.activities.slice(0, 5).entries()) {
          const text = await items.nth(i).textContent();
          expect(text).toContain(ACTIVITY_LABEL[a.type]);
          if (a.channel_id && names[a.channel_id]) expect(text).toContain(`#${names[a.channel_id]}`);
        }
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'stats');
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

  for (const width of WIDTHS)
    it(`stats top at ${width} px: top authors and top topics in the API's order, as charts and as tables`, async () => {
      const authors = await get<{ author_name: string; message_count: number }[]>(ctx, '/api/stats/top-authors');
      const topics = await get<{ topic: string; fact_count: number; trend: string }[]>(ctx, '/api/stats/top-topics');
      expect(authors.length).toBeGreaterThan(2);
      expect(topics.length).toBeGreaterThan(2);
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto('/stats?tab=top');
        expect(await page.getByRole('tab', { name: 'Top', exact: true }).getAttribute('aria-selected')).toBe('true');
        const authorBars = page.getByRole('list', { name: 'Top authors by messages' }).getByRole('listitem');
        await expect.poll(() => authorBars.count()).toBe(authors.length);
        for (const [i, a] of authors.slice(0, 3).entries())
          expect(await authorBars.nth(i).textContent()).toContain(
            `${a.author_name}${await inPage(page, a.message_count)} messages`,
          );
        const topicBars = page.getByRole('list', { name: 'Top topics by facts' }).getByRole('listitem');
        await expect.poll(() => topicBars.count()).toBe(topics.length);
        for (const [i, t] of topics.slice(0, 3).entries()) {
          const text = await topicBars.nth(i).textContent();
          expect(text).toContain(`${t.topic}${await inPage(page, t.fact_count)} facts`);
          expect(text).toContain(t.trend);
        }
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'stats-top');
        // The table alternative carries the same rows.
        await page.getByRole('radio', { name: 'Table' }).first().click();
        const rows = page.getByRole('table', { name: 'Top authors' }).getByRole('row');
        await expect.poll(() => rows.count()).toBe(authors.length + 1);
        expect(await rows.nth(1).getByRole('rowheader').textContent()).toBe(authors[0]!.author_name);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

  it('stats activity: the 7- and 30-day charts rank channels as the exports with since do, with the channel stats', async () => {
    const now = Date.now();
    const since = new Date(now - 30 * 86_400_000).toISOString();
    const recent = await get<ExportJson>(ctx, `/api/stats/export?format=json&since=${encodeURIComponent(since)}`);
    const all = await get<ExportJson>(ctx, '/api/stats/export?format=json');
    const last30 = new Map(recent.channels.map((c) => [c.channel_id, c.message_count]));
    const ranked = all.channels
      .map((c) => ({ ...c, last30: last30.get(c.channel_id) ?? 0 }))
      .sort((a, b) => b.last30 - a.last30 || b.message_count - a.message_count);
    const top = await Promise.all(
      ranked.slice(0, 10).map(async (c) => ({
        ...c,
        stats: await get<ChannelStats>(ctx, `/api/stats/channel/${encodeURIComponent(c.channel_id)}`),
      })),
    );
    const anyRecent = ranked.some((c) => c.last30 > 0);
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto('/stats?tab=activity');
      const d30 = page.getByRole('group', { name: 'Messages, last 30 days', exact: true });
      await expect.poll(() => d30.textContent()).toContain(await inPage(page, recent.totals.messages));
      const facts = page
        .getByRole('list', { name: 'Facts added in the last 30 days per channel' })
        .getByRole('listitem');
      await expect.poll(() => facts.count()).toBe(top.length);
      // Each chart lists the 10 channels largest value first; the messages chart only when a message is that recent.
      const byFacts = [...top].sort(
        (a, b) => b.stats.activity.facts_added_last_30d - a.stats.activity.facts_added_last_30d,
      );
      const f = byFacts[0]!;
      expect(await facts.first().textContent()).toContain(
        `#${f.channel_name}${await inPage(page, f.stats.activity.facts_added_last_30d)} in 30 d`,
      );
      expect(await facts.first().textContent()).toContain(
        `${await inPage(page, f.stats.activity.facts_added_last_7d)} in 7 d`,
      );
      const messages = page
        .getByRole('list', { name: 'Messages of the last 30 days per channel' })
        .getByRole('listitem');
      if (anyRecent) {
        const m = [...top].sort((a, b) => b.stats.activity.messages_last_30d - a.stats.activity.messages_last_30d)[0]!;
        expect(await messages.first().textContent()).toContain(
          `#${m.channel_name}${await inPage(page, m.stats.activity.messages_last_30d)} in 30 d`,
        );
      } else {
        expect(await messages.count()).toBe(0);
        await page.getByText('No message in the last 30 days.').waitFor();
      }
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'stats-activity');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  for (const width of WIDTHS)
    it(`stats health at ${width} px: each dependency's status and the consumer groups the API reports`, async () => {
      const health = await get<{ dependencies: Record<string, string> }>(ctx, '/api/health');
      const metrics = await get<{ event_log: { consumer_groups: { group: string }[] } }>(ctx, '/api/stats/metrics');
      const groups = [...new Set(metrics.event_log.consumer_groups.map((g) => g.group))];
      expect(groups.length).toBeGreaterThan(3);
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto('/stats?tab=health');
        const deps = page.getByRole('table', { name: 'Dependency health' });
        await deps.waitFor();
        for (const [name, status] of Object.entries(health.dependencies)) {
          const row = deps.locator(`tr[data-dependency="${name}"]`);
          await expect.poll(() => row.getByRole('cell').first().textContent()).toBe(status);
        }
        expect(await deps.getByRole('row').count()).toBe(Object.keys(health.dependencies).length + 1);
        const lag = page.getByRole('table', { name: 'Consumer lag per projector' });
        await lag.waitFor();
        expect(await lag.getByRole('row').count()).toBe(groups.length + 1);
        for (const g of groups) expect(await lag.getByText(g, { exact: true }).count()).toBe(1);
        // The breakers (GET /metrics) are for admins: this admin sees the section.
        await page.getByRole('heading', { name: 'Circuit breakers' }).waitFor();
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'stats-health');
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

  it('stats export: the JSON download parses and its totals match GET /api/stats; the CSV has a row per channel', async () => {
    const stats = await get<SystemStats>(ctx, '/api/stats');
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto('/stats');
      await page.getByRole('heading', { name: 'Stats and operations' }).waitFor();
      const [json] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export JSON' }).click(),
      ]);
      expect(json.suggestedFilename()).toMatch(/^atlas-stats-all-\d{8}T\d{6}Z\.json$/);
      const body = JSON.parse(readFileSync((await json.path())!, 'utf8')) as ExportJson;
      expect(body.totals).toEqual({
        channels: stats.total_channels,
        messages: stats.total_messages,
        facts: stats.total_facts,
        decisions: stats.total_decisions,
        entities: stats.total_entities,
        wiki_pages: stats.wiki_pages,
      });
      const [csv] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export CSV' }).click(),
      ]);
      expect(csv.suggestedFilename()).toMatch(/\.csv$/);
      const lines = readFileSync((await csv.path())!, 'utf8')
        .trim()
        .split('\n');
      expect(lines[0]).toMatch(/^channel_id,channel_name,platform,message_count/);
      expect(lines.length).toBe(stats.total_channels + 1);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('stats dead letters (admin): the API list, or its empty state, and re-drive disabled with nothing pending', async () => {
    const dl = await get<{ total: number; counts: { pending: number; redriven: number } }>(
      ctx,
      '/api/admin/dead-letters?status=pending',
    );
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto('/stats');
      await page.getByRole('tab', { name: 'Dead letters' }).click();
      await page.waitForURL(/tab=dead-letters/);
      const pending = page.getByRole('group', { name: 'Pending', exact: true });
      await expect.poll(() => pending.textContent()).toBe(`Pending${await inPage(page, dl.counts.pending)}`);
      const redriveAll = page.getByRole('button', { name: 'Re-drive all pending' });
      if (dl.total === 0) {
        await page.getByText('No dead letters.').waitFor();
        expect(await redriveAll.isDisabled()).toBe(true);
      } else {
        const rows = page.getByRole('table', { name: 'Dead letters' }).getByRole('row');
        await expect.poll(() => rows.count()).toBe(Math.min(dl.total, 100) + 1);
        expect(await redriveAll.isDisabled()).toBe(false);
      }
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'stats-dead-letters');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('stats as a reader: totals shown, no dead-letter tab nor breakers, and the server refuses the admin routes', async () => {
    const created = await adminCall<{ secret: string }>(ctx.atlas.url, 'POST', '/api/admin/keys', {
      name: 'stats-reader',
      role: 'reader',
    });
    expect(created.status).toBe(201);
    const reader = created.body.secret;
    expect(reader).not.toBe(ADMIN_KEY);
    const refused = await fetch(`${ctx.atlas.url}/api/admin/dead-letters`, {
      headers: { authorization: `Bearer ${reader}` },
    });
    expect(refused.status).toBe(403);
    const stats = await get<SystemStats>(ctx, '/api/stats');
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 390, reader);
    try {
      await page.goto('/stats?tab=dead-letters');
      // The admin tab does not exist for a reader: the address falls back to the overview.
      const overview = page.getByRole('tab', { name: 'Overview' });
      await overview.waitFor();
      expect(await overview.getAttribute('aria-selected')).toBe('true');
      expect(await page.getByRole('tab', { name: 'Dead letters' }).count()).toBe(0);
      const messages = page.getByRole('group', { name: 'Messages', exact: true });
      await expect.poll(() => messages.textContent()).toBe(`Messages${await inPage(page, stats.total_messages)}`);
      await page.getByRole('tab', { name: 'Health', exact: true }).click();
      await page.getByRole('table', { name: 'Consumer lag per projector' }).waitFor();
      expect(await page.getByRole('heading', { name: 'Circuit breakers' }).count()).toBe(0);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'stats-reader');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
};
