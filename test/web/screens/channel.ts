import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import {
  adminCall,
  openPage,
  screenshot,
  seriousA11yViolations,
  type WebContext,
  WIDTHS,
} from '../harness.test-support.js';

interface ChannelListed {
  id: string;
  name: string;
  message_count: number;
  fact_count: number;
}
interface ChannelDetail extends ChannelListed {
  entity_count: number;
  wiki_page_count: number;
  platform: string;
}
interface Message {
  id: string;
  timestamp: string;
  thread_ts: string | null;
}
interface MessagePage {
  messages: Message[];
  has_more: boolean;
  next_cursor: string | null;
}
interface Memory {
  id: string;
  fact_type: string;
  source_message_id: string;
}
interface MemoryPage {
  memories: Memory[];
  total: number;
  pages: number;
}
interface Settings {
  sync_enabled: boolean;
  wiki_enabled: boolean;
  graph_enabled: boolean;
  fact_extraction_enabled: boolean;
  retention_days: number | null;
  digest_enabled: boolean;
  digest_days: number;
}

const SLOW = { timeout: 20_000 };

const get = async <T>(ctx: WebContext, route: string): Promise<T> => {
  const r = await adminCall<T>(ctx.atlas.url, 'GET', route);
  expect(r.status, route).toBe(200);
  return r.body;
};

/** A count as the browser formats it (formatCount: toLocaleString in the page's locale). */
const inPage = (page: Page, n: number) => page.evaluate((x) => x.toLocaleString(), n);

const isReply = (m: Message) => m.thread_ts !== null && m.thread_ts !== m.id;

/** The API's first page of messages (the tab's page size, 50). */
const firstPage = (ctx: WebContext, id: string) =>
  get<MessagePage>(ctx, `/api/channels/${encodeURIComponent(id)}/messages?limit=50`);

/**
 * The Clojurians channel with the most messages whose first page holds a whole thread (its first message and at least
 * two replies): the workspace's subject.
 */
const pickChannel = async (ctx: WebContext) => {
  const list = await get<ChannelListed[]>(ctx, '/api/channels');
  const sorted = list.filter((c) => c.name !== 'help').sort((a, b) => b.message_count - a.message_count);
  for (const c of sorted.slice(0, 8)) {
    const page = await firstPage(ctx, c.id);
    const ids = new Set(page.messages.map((m) => m.id));
    const thread = page.messages.find(
      (m) => !isReply(m) && page.messages.filter((r) => r.thread_ts === m.id && r.id !== m.id).length >= 2,
    );
    if (thread && ids.size === page.messages.length) return { channel: c, page, thread };
  }
  throw new Error('no channel with a thread on its first page');
};

/** The ids of the messages the tab shows at its top level, in order (threads' first messages and lone messages). */
const topLevelIds = (page: Page) =>
  page
    .getByRole('list', { name: 'Messages', exact: true })
    .locator(':scope > li > article')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-message-id')));

/** The ids of the facts the tab lists, in order. */
const factIds = (page: Page) =>
  page
    .getByRole('list', { name: 'Facts', exact: true })
    .locator(':scope > li > article')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-memory-id')));

/** The ids of the highlighted fact cards (`?memory=`: the linked card on top, and its place in the list), in order. */
const highlightedFactIds = (page: Page) =>
  page.locator('article[aria-current="true"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-memory-id')));

/**
 * Channel workspace (issue 26 point 5): tabs with the API's counts, the tab in the URL, messages with threads
 * expanded, facts with filters, `?message=` and `?memory=` links, settings (admins save; the API's validation), ask
 * about the channel, keyboard use of the tabs, and deleting a channel's data.
 */
export const channelScreen = (ctx: WebContext) => {
  for (const width of WIDTHS)
    it(`channel: workspace at ${width} px: tab counts equal the API's; messages in the API's order with threads expanded`, async () => {
      const { channel, page: api, thread } = await pickChannel(ctx);
      const detail = await get<ChannelDetail>(ctx, `/api/channels/${channel.id}`);
      const stats = await get<{ message_count: number; fact_count: number; entity_count: number }>(
        ctx,
        `/api/channels/${channel.id}/stats`,
      );
      expect(stats.message_count).toBe(detail.message_count);
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto(`/channels/${channel.id}`);
        await page.waitForURL(`**/channels/${channel.id}/wiki`);
        await page.getByRole('heading', { level: 1, name: `#${channel.name}` }).waitFor();
        const counts: [string, number][] = [
          ['Wiki', detail.wiki_page_count],
          ['Messages', detail.message_count],
          ['Facts', detail.fact_count],
          ['Graph', detail.entity_count],
        ];
        // Each tab's accessible name carries its count (the API's figure as the page formats it).
        for (const [label, n] of counts)
          expect(
            await page.getByRole('tab', { name: `${label} ${await inPage(page, n)}`, exact: true }).count(),
            label,
          ).toBe(1);
        expect(stats.entity_count).toBe(detail.entity_count);
        expect(await page.getByRole('link', { name: 'Ask about this channel' }).getAttribute('href')).toBe(
          `/ask?channel=${channel.id}`,
        );

        await page.getByRole('tab', { name: /^Messages/ }).click();
        await page.waitForURL(`**/channels/${channel.id}/messages`);
        await expect
          .poll(() => page.getByRole('tab', { name: /^Messages/ }).getAttribute('aria-selected'), { timeout: 5_000 })
          .toBe('true');
        // Top level: the page's messages that are not replies, in the API's order (newest first).
        const roots = api.messages.filter((m) => !isReply(m)).map((m) => m.id);
        await expect
          .poll(() => topLevelIds(page).then((ids) => ids.slice(0, roots.length)), { timeout: 10_000 })
          .toEqual(roots);
        // Every reply of the page whose thread starts on the page is under its first message, in written order.
        const onPage = new Set(api.messages.map((m) => m.id));
        for (const root of roots) {
          const replies = api.messages
            .filter((m) => isReply(m) && m.thread_ts === root && onPage.has(root))
            .sort((a, b) => a.timestamp.localeCompare(b.timestamp) || a.id.localeCompare(b.id))
            .map((m) => m.id);
          const item = page.locator(`ol[aria-label="Messages"] > li:has(> article[data-message-id="${root}"])`);
          const shown = await item
            .locator('ol > li > article')
            .evaluateAll((els) => els.map((e) => e.getAttribute('data-message-id')));
          expect(shown, `replies of ${root}`).toEqual(replies);
        }
        // The chosen thread's reply count.
        const replyCount = api.messages.filter((m) => m.thread_ts === thread.id && m.id !== thread.id).length;
        const threadItem = page.locator(
          `ol[aria-label="Messages"] > li:has(> article[data-message-id="${thread.id}"])`,
        );
        expect(await threadItem.locator(':scope > article').textContent()).toContain(`${replyCount} replies`);
        await screenshot(page, 'channel-messages'); // the first page (the full page is long enough)
        // Load older messages appends the API's next page.
        if (api.has_more) {
          const next = await get<MessagePage>(
            ctx,
            `/api/channels/${channel.id}/messages?limit=50&before=${encodeURIComponent(api.next_cursor!)}`,
          );
          await page.getByRole('button', { name: 'Load older messages' }).click();
          const firstOlder = next.messages.find((m) => !isReply(m))!;
          await page.locator(`article[data-message-id="${firstOlder.id}"]`).waitFor();
        }
        expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(width);
        expect(await seriousA11yViolations(page)).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

  it('channel: messages, ?message= opens an older reply in context, scrolled to and highlighted, under its thread', async () => {
    const { channel } = await pickChannel(ctx);
    // A reply from the API's third page or later (the tab reads older pages to find it).
    let cursor: string | null = null;
    let target: Message | undefined;
    for (let i = 0; i < 6 && !target; i++) {
      const p: MessagePage = await get<MessagePage>(
        ctx,
        `/api/channels/${channel.id}/messages?limit=50${cursor ? `&before=${encodeURIComponent(cursor)}` : ''}`,
      );
      if (i >= 2) target = p.messages.find(isReply);
      cursor = p.next_cursor;
      if (!p.has_more) break;
    }
    expect(target).toBeDefined();
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto(`/channels/${channel.id}/messages?message=${encodeURIComponent(target!.id)}`);
      const marked = page.locator('article[aria-current="true"]');
      await marked.waitFor({ timeout: 30_000 });
      expect(await marked.getAttribute('data-message-id')).toBe(target!.id);
      expect(await page.locator('article[aria-current="true"]').count()).toBe(1);
      expect(await marked.textContent()).toContain('linked message');
      // In view, and under its thread's first message when that message exists.
      await expect
        .poll(
          () =>
            marked.evaluate((e) => {
              const r = e.getBoundingClientRect();
              return r.top >= 0 && r.bottom <= (globalThis as unknown as { innerHeight: number }).innerHeight;
            }),
          { timeout: 10_000 },
        )
        .toBe(true);
      const parent = page.locator(
        `ol[aria-label="Messages"] > li:has(> article[data-message-id="${target!.thread_ts}"])`,
      );
      if (await parent.count())
        expect(await parent.locator(`article[data-message-id="${target!.id}"]`).count()).toBe(1);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  for (const width of WIDTHS)
    it(`channel: facts at ${width} px: the API's first page; a fact-type filter in the URL lists what the API does; ?memory= highlights`, async () => {
      const { channel } = await pickChannel(ctx);
      const all = await get<MemoryPage>(ctx, `/api/memories?channel_id=${channel.id}&page=1&limit=20`);
      expect(all.memories.length).toBeGreaterThan(0);
      // A fact type that narrows the list: present, but not every fact.
      let type = '';
      let filtered: MemoryPage | null = null;
      for (const t of ['decision', 'question', 'action_item', 'opinion', 'observation']) {
        const r = await get<MemoryPage>(ctx, `/api/memories?channel_id=${channel.id}&page=1&limit=20&fact_type=${t}`);
        if (r.total > 0 && r.total < all.total) {
          type = t;
          filtered = r;
          break;
        }
      }
      expect(filtered).not.toBeNull();
      const label = {
        decision: 'Decision',
        question: 'Question',
        action_item: 'Action item',
        opinion: 'Opinion',
        observation: 'Observation',
      }[type]!;
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto(`/channels/${channel.id}/facts`);
        await expect.poll(() => factIds(page), { timeout: 10_000 }).toEqual(all.memories.map((m) => m.id));
        expect(await page.getByRole('status').filter({ hasText: 'facts' }).first().textContent()).toContain(
          `${await inPage(page, all.total)} facts`,
        );
        await page.getByRole('combobox', { name: 'Fact type' }).click();
        await page.getByRole('option', { name: label, exact: true }).click();
        await page.waitForURL(new RegExp(`/channels/${channel.id}/facts\\?type=${type}$`));
        await expect.poll(() => factIds(page), { timeout: 10_000 }).toEqual(filtered!.memories.map((m) => m.id));
        for (const item of await page.getByRole('list', { name: 'Facts' }).locator(':scope > li > article').all())
          expect(await item.textContent()).toContain(label);
        // The URL alone restores the filter.
        await page.reload();
        await expect.poll(() => factIds(page), { timeout: 10_000 }).toEqual(filtered!.memories.map((m) => m.id));
        // A fact's source message link opens the messages tab at that message.
        const first = filtered!.memories[0]!;
        const source = page
          .locator(`article[data-memory-id="${first.id}"]`)
          .getByRole('link', { name: 'Source message in context' });
        expect(await source.getAttribute('href')).toBe(
          `/channels/${channel.id}/messages?message=${encodeURIComponent(first.source_message_id)}`,
        );
        expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(width);
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'channel-facts');
        // ?memory= shows the fact on top, highlighted.
        const linked = all.memories[3] ?? all.memories[0]!;
        await page.goto(`/channels/${channel.id}/facts?memory=${linked.id}`);
        await expect.poll(() => highlightedFactIds(page), { timeout: 10_000 }).toEqual([linked.id, linked.id]); // the linked card on top, and its place in the list
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

  it('channel: messages as of a day (?as_of=): the messages the API lists as of its end (UTC); Back to now; the day goes along to the facts tab', async () => {
    const { channel, page: now } = await pickChannel(ctx);
    const roots = (p: MessagePage) => p.messages.filter((m) => !isReply(m)).map((m) => m.id);
    // The newest day of the last 200 messages as of whose end (UTC) the tab's top level differs from now's (the
    // newest day's messages may all be replies).
    const recent = await get<MessagePage>(ctx, `/api/channels/${channel.id}/messages?limit=200`);
    const days = [...new Set(recent.messages.map((m) => m.timestamp.slice(0, 10)))].sort().reverse();
    let day = '';
    let then: MessagePage | null = null;
    for (const d of days.slice(1)) {
      then = await get<MessagePage>(ctx, `/api/channels/${channel.id}/messages?limit=50&as_of=${d}T23:59:59.999Z`);
      day = d;
      if (then.messages.length > 0 && roots(then).join() !== roots(now).join()) break;
    }
    expect(then!.messages.length, `a day among ${days.join(', ')}`).toBeGreaterThan(0);
    expect(roots(then!)).not.toEqual(roots(now));
    for (const m of then!.messages) expect(m.timestamp.slice(0, 10) <= day).toBe(true);
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto(`/channels/${channel.id}/messages?as_of=${day}`);
      await expect
        .poll(() => page.getByTestId('messages-as-of').textContent(), SLOW)
        .toContain('Showing the messages as of');
      expect(await page.getByLabel('As of', { exact: true }).inputValue()).toBe(day);
      await expect.poll(() => topLevelIds(page), SLOW).toEqual(roots(then!));
      const times = await page
        .getByRole('list', { name: 'Messages', exact: true })
        .locator('time')
        .evaluateAll((els) => els.map((e) => e.getAttribute('datetime') ?? ''));
      expect(times.length).toBe(then!.messages.length);
      for (const t of times) expect(t.slice(0, 10) <= day, t).toBe(true);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'channel-messages-as-of');
      // The day goes along to the facts tab.
      await page.getByRole('tab', { name: /^Facts/ }).click();
      await page.waitForURL((u) => u.pathname.endsWith('/facts') && u.searchParams.get('as_of') === day);
      await expect.poll(() => page.getByTestId('facts-as-of').count(), SLOW).toBe(1);
      // Back on the messages, Back to now drops it: the newest messages again.
      await page.getByRole('tab', { name: /^Messages/ }).click();
      await page.waitForURL((u) => u.pathname.endsWith('/messages') && u.searchParams.get('as_of') === day);
      await page.getByRole('button', { name: 'Back to now', exact: true }).click();
      await page.waitForURL((u) => u.pathname.endsWith('/messages') && !u.searchParams.has('as_of'));
      await expect.poll(() => page.getByTestId('messages-as-of').count(), SLOW).toBe(0);
      await expect.poll(() => topLevelIds(page), SLOW).toEqual(roots(now));
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('channel: facts as of a day (?as_of=, the date control): the facts the API lists as of its end (UTC); Back to now', async () => {
    const { channel } = await pickChannel(ctx);
    const route = `/api/memories?channel_id=${channel.id}&page=1&limit=20`;
    const now = await get<MemoryPage & { memories: (Memory & { message_ts: string })[] }>(ctx, route);
    // The UI reads `?as_of=<day>` as the end of that day in UTC. The days facts were stated on (the data's own dates),
    // from the middle out: the first day as of whose end the channel held some of its facts but not all.
    const stated = await get<{ memories: { message_ts: string }[] }>(
      ctx,
      `/api/memories?channel_id=${channel.id}&page=1&limit=100`,
    );
    const days = [...new Set(stated.memories.map((m) => m.message_ts.slice(0, 10)))].sort();
    const order = days.map((_, i) => days[(Math.floor(days.length / 2) + i) % days.length]!);
    let day: string | null = null;
    let then: MemoryPage | null = null;
    for (const d of order) {
      const r = await get<MemoryPage>(ctx, `${route}&as_of=${d}T23:59:59.999Z`);
      if (r.total > 0 && r.total < now.total) {
        day = d;
        then = r;
        break;
      }
    }
    expect(
      day,
      `a day among ${days.join(', ')} with some of the channel's ${now.total} facts but not all`,
    ).toBeTruthy();
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto(`/channels/${channel.id}/facts?as_of=${day}`);
      await expect.poll(() => page.getByTestId('facts-as-of').textContent(), SLOW).toContain('Showing the facts as of');
      expect(await page.getByLabel('As of', { exact: true }).inputValue()).toBe(day);
      await expect.poll(() => factIds(page), SLOW).toEqual(then!.memories.map((m) => m.id));
      expect(await page.getByRole('status').filter({ hasText: 'facts ·' }).first().textContent()).toContain(
        `${await inPage(page, then!.total)} facts`,
      );
      // A linked fact keeps the day: the detail as of then, on top.
      const linked = then!.memories[0]!;
      await page.goto(`/channels/${channel.id}/facts?memory=${linked.id}&as_of=${day}`);
      await expect.poll(() => highlightedFactIds(page), SLOW).toEqual([linked.id, linked.id]);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'channel-facts-as-of');
      // Back to now: the address drops as_of, the notice goes, and the list is today's.
      await page.goto(`/channels/${channel.id}/facts?as_of=${day}`);
      await page.getByRole('button', { name: 'Back to now', exact: true }).click();
      await page.waitForURL((u) => u.pathname.endsWith('/facts') && !u.searchParams.has('as_of'));
      await expect.poll(() => page.getByTestId('facts-as-of').count(), SLOW).toBe(0);
      await expect.poll(() => factIds(page), SLOW).toEqual(now.memories.map((m) => m.id));
      // The date control sets the day in the address, and the list follows.
      await page.getByLabel('As of', { exact: true }).fill(day!);
      await page.waitForURL((u) => u.searchParams.get('as_of') === day);
      await expect.poll(() => factIds(page), SLOW).toEqual(then!.memories.map((m) => m.id));
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  for (const width of WIDTHS)
    it(`channel: settings at ${width} px: the API's values; an admin saves a change (restored after); the API's validation error shows`, async () => {
      const { channel } = await pickChannel(ctx);
      const route = `/api/channels/${channel.id}/settings`;
      const before = await get<Settings>(ctx, route);
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto(`/channels/${channel.id}/settings`);
        const form = page.getByRole('form', { name: 'Channel settings' });
        await form.waitFor();
        const switches: [string, keyof Settings][] = [
          ['Sync', 'sync_enabled'],
          ['Fact extraction', 'fact_extraction_enabled'],
          ['Knowledge graph', 'graph_enabled'],
          ['Wiki', 'wiki_enabled'],
        ];
        for (const [name, key] of switches)
          expect(
            await form.getByRole('switch', { name: new RegExp(`^${name}`) }).getAttribute('aria-checked'),
            key,
          ).toBe(String(before[key]));
        const retention = form.getByLabel('Retention (days)');
        expect(await retention.inputValue()).toBe(before.retention_days === null ? '' : String(before.retention_days));
        expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(width);
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'channel-settings');

        // Save one change: the wiki switch.
        const wiki = form.getByRole('switch', { name: /^Wiki/ });
        await wiki.click();
        await form.getByRole('button', { name: 'Save settings' }).click();
        await form.getByText('Settings saved.').waitFor();
        expect((await get<Settings>(ctx, route)).wiki_enabled).toBe(!before.wiki_enabled);
        expect(await wiki.getAttribute('aria-checked')).toBe(String(!before.wiki_enabled));
        // A value the API refuses: its message, nothing saved.
        await retention.fill('0');
        await form.getByRole('button', { name: 'Save settings' }).click();
        const alert = form.getByRole('alert');
        await alert.waitFor();
        expect(await alert.textContent()).toContain('INVALID_REQUEST');
        expect(await form.getByRole('list', { name: 'What the API refused' }).textContent()).toContain(
          'retention_days',
        );
        expect((await get<Settings>(ctx, route)).retention_days).toBe(before.retention_days);
        // The posted digest needs a connection: opting an imported channel in is refused (409) with the API's reason.
        await retention.fill(before.retention_days === null ? '' : String(before.retention_days));
        expect(await form.getByLabel('Digest period (days)').inputValue()).toBe(String(before.digest_days));
        const digest = form.getByRole('switch', { name: /^Posted digest/ });
        expect(await digest.getAttribute('aria-checked')).toBe('false');
        await digest.click();
        await form.getByRole('button', { name: 'Save settings' }).click();
        await form.getByRole('alert').filter({ hasText: 'CONFLICT' }).waitFor();
        expect(await form.getByRole('alert').textContent()).toContain('no connection');
        expect((await get<Settings>(ctx, route)).digest_enabled).toBe(false);
        await digest.click();
        // Restore through the form.
        await wiki.click();
        await form.getByRole('button', { name: 'Save settings' }).click();
        await form.getByText('Settings saved.').waitFor();
        expect(await get<Settings>(ctx, route)).toEqual(before);
        expect(errors).toEqual([]);
      } finally {
        // Whatever happened above, the shared data keeps its settings.
        await adminCall(ctx.atlas.url, 'PUT', route, before);
        await context.close();
      }
    });

  it('channel: keyboard, arrow keys move between the tabs and open them (URL follows); Ask about this channel opens /ask?channel=', async () => {
    const { channel } = await pickChannel(ctx);
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto(`/channels/${channel.id}/messages`);
      const messages = page.getByRole('tab', { name: /^Messages/ });
      await messages.focus();
      await page.keyboard.press('ArrowRight');
      await page.waitForURL(`**/channels/${channel.id}/facts`);
      await expect
        .poll(() => page.getByRole('tab', { name: /^Facts/ }).getAttribute('aria-selected'), { timeout: 5_000 })
        .toBe('true');
      expect(await page.evaluate("document.activeElement?.getAttribute('aria-selected')")).toBe('true');
      expect(String(await page.evaluate('document.activeElement?.textContent'))).toMatch(/^Facts/);
      await page.keyboard.press('ArrowRight');
      await page.waitForURL(`**/channels/${channel.id}/graph`);
      await page.keyboard.press('ArrowRight');
      await page.waitForURL(`**/channels/${channel.id}/digest`);
      await page.keyboard.press('ArrowRight');
      await page.waitForURL(`**/channels/${channel.id}/sync`);
      await page.keyboard.press('End');
      await page.waitForURL(`**/channels/${channel.id}/settings`);
      await page.keyboard.press('Home');
      await page.waitForURL(`**/channels/${channel.id}/wiki`);
      await page.keyboard.press('ArrowLeft'); // wraps to the last tab
      await page.waitForURL(`**/channels/${channel.id}/settings`);
      // Tab leaves the tab list for the panel; the Ask link is reached by keyboard and opens with Enter.
      const ask = page.getByRole('link', { name: 'Ask about this channel' });
      await ask.focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(`**/ask?channel=${channel.id}`);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("channel: delete data, an admin types the channel's name to confirm; its messages and facts are gone", async () => {
    // The smallest channel with messages that no other screen's test names (its data is not used elsewhere).
    const list = await get<ChannelListed[]>(ctx, '/api/channels');
    const victim = list
      .filter(
        (c) => c.message_count > 0 && !['help', 'general', 'beginners', 'reagent', 'clojurescript'].includes(c.name),
      )
      .sort((a, b) => a.message_count - b.message_count || a.name.localeCompare(b.name))[0]!;
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 390);
    try {
      await page.goto(`/channels/${victim.id}/settings`);
      await page.getByRole('button', { name: 'Delete channel data…' }).click();
      const dialog = page.getByRole('alertdialog');
      const confirm = dialog.getByRole('button', { name: 'Delete data' });
      expect(await confirm.isDisabled()).toBe(true);
      await dialog.getByLabel('Channel name').fill(`${victim.name}x`);
      expect(await confirm.isDisabled()).toBe(true);
      await dialog.getByLabel('Channel name').fill(victim.name);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await confirm.click();
      await dialog.getByText(`Deleted ${victim.message_count} messages, ${victim.fact_count} facts`).waitFor();
      const after = await get<ChannelDetail>(ctx, `/api/channels/${victim.id}`);
      expect([after.message_count, after.fact_count]).toEqual([0, 0]);
      expect((await get<MessagePage>(ctx, `/api/channels/${victim.id}/messages`)).messages).toEqual([]);
      await dialog.getByRole('button', { name: 'Close' }).click();
      await expect
        .poll(() => page.getByRole('tab', { name: 'Messages 0', exact: true }).count(), { timeout: 10_000 })
        .toBe(1);
      await page.getByRole('tab', { name: /^Messages/ }).click();
      await page.getByText('No messages yet.').waitFor();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
};
