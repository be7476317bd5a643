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

interface Entity {
  id: string;
  name: string;
  type: string;
}
interface Graph {
  nodes: { id: string; name: string; type: string }[];
  edges: { id: string; type: string; source: string; target: string }[];
  length?: number | null;
}
interface Card {
  entity_name: string;
  entity_type: string;
  key_facts: string[];
}
interface LifecycleItem {
  id: string;
  channel_id: string;
  state: string;
  owner: string | null;
  due_date: string | null;
  superseded_by: string | null;
  history: { from: string | null; to: string; evidence: { message_id: string } }[];
}
interface Decision {
  name: string;
  status: string;
  superseded_by: string | null;
}

/** The server shares two cores with the browser: answers may take a few seconds. */
const SLOW = { timeout: 20_000 };
const DEPTH = 2;
const CAP = 25;

/** The API's answers for OLake #help: its most mentioned entity and that entity's depth-2 neighbourhood (cap 25). */
const apiOf = async (ctx: WebContext) => {
  const channel = ctx.channels.help!;
  // GET /api/graph/entities lists a channel's entities most mentioned first.
  const entities = (
    await adminCall<Entity[]>(ctx.atlas.url, 'GET', `/api/graph/entities?channel_id=${channel}&limit=200`)
  ).body;
  const top = entities[0]!;
  const sub = (
    await adminCall<Graph>(
      ctx.atlas.url,
      'GET',
      `/api/graph/subgraph?entities=${encodeURIComponent(top.name)}&depth=${DEPTH}&limit=${CAP}&channel_id=${channel}`,
    )
  ).body;
  return { channel, entities, top, sub };
};

/** Chooses `name` in the entity combobox labelled `label` by typing it and picking its suggestion. */
const pick = async (page: Page, label: string, name: string, type: string) => {
  const box = page.getByRole('combobox', { name: label, exact: true });
  await box.fill(name);
  await page.getByRole('option', { name: `${name} (${type})`, exact: true }).click();
};

/** The names the page draws (SVG nodes) and lists (table rows). */
const drawn = (page: Page) =>
  page.getByTestId('graph-node').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')!).sort());
const listed = (page: Page) =>
  page.getByTestId('graph-list-node').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')!).sort());

/** Graph explorer (issue 26 point 6): search, neighbourhood, type filters, entity card, path, decisions, keyboard. */
export const graphScreen = (ctx: WebContext) => {
  for (const width of WIDTHS)
    it(`graph at ${width} px: the searched entity's depth-2 neighbourhood is the subgraph the API answers`, async () => {
      const { channel, top, sub } = await apiOf(ctx);
      expect(sub.nodes.length, 'a neighbourhood with neighbours').toBeGreaterThan(1);
      expect(sub.nodes.length).toBeLessThanOrEqual(CAP + sub.nodes.filter((n) => n.name === top.name).length);
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto(`/graph?channel=${channel}&cap=${CAP}`);
        // Search as you type: a name that matches nothing says so; the top entity is offered.
        await page.getByRole('combobox', { name: 'Entity', exact: true }).fill('zzzz-no-such-entity');
        await expect.poll(() => page.getByTestId('no-entity-match').textContent(), SLOW).toMatch(/^No entity matches/);
        await pick(page, 'Entity', top.name, top.type);
        await page.waitForURL((u) => u.searchParams.get('entity') === top.name);
        await page.getByRole('radio', { name: `Depth ${DEPTH}` }).click();
        await page.waitForURL((u) => u.searchParams.get('depth') === String(DEPTH));
        const want = sub.nodes.map((n) => n.name).sort();
        await expect.poll(() => drawn(page), SLOW).toEqual(want);
        expect(await listed(page)).toEqual(want);
        await expect.poll(() => page.getByTestId('entity-card-name').textContent(), SLOW).toBe(top.name);
        await page.getByTestId('decision-list').waitFor();
        expect(await seriousA11yViolations(page)).toEqual([]);
        await screenshot(page, 'graph');
        if (width < 760) {
          // No horizontal scrolling of the page at 390 px.
          expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
        }
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

  it('graph type filter: unticking a type removes its nodes (the centre stays), and the URL keeps it', async () => {
    const { channel, top, sub } = await apiOf(ctx);
    const counts = new Map<string, number>();
    for (const n of sub.nodes) if (n.type !== top.type) counts.set(n.type, (counts.get(n.type) ?? 0) + 1);
    const [type, n] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [];
    expect(type, 'a second entity type in the neighbourhood').toBeTruthy();
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto(`/graph?channel=${channel}&entity=${encodeURIComponent(top.name)}&depth=${DEPTH}&cap=${CAP}`);
      await expect.poll(() => page.getByTestId('graph-node').count(), SLOW).toBe(sub.nodes.length);
      await page.getByRole('checkbox', { name: type, exact: true }).click();
      await page.waitForURL((u) => !!u.searchParams.get('types') && !u.searchParams.get('types')!.includes(type!));
      const rest = sub.nodes
        .filter((x) => x.type !== type)
        .map((x) => x.name)
        .sort();
      await expect.poll(() => drawn(page), SLOW).toEqual(rest);
      expect(rest.length).toBe(sub.nodes.length - n!);
      expect(await listed(page)).toEqual(rest);
      await page.reload();
      await expect.poll(() => drawn(page), SLOW).toEqual(rest);
      await page.getByRole('checkbox', { name: type, exact: true }).click();
      await expect.poll(() => page.getByTestId('graph-node').count(), SLOW).toBe(sub.nodes.length);
    } finally {
      await context.close();
    }
  });

  it('graph entity card: the name and key facts the card API answers, with sources; a related entity re-centres', async () => {
    const { channel, top, sub } = await apiOf(ctx);
    const card = (
      await adminCall<Card>(ctx.atlas.url, 'GET', `/api/graph/entities/${encodeURIComponent(top.name)}/card`)
    ).body;
    expect(card.key_facts.length).toBeGreaterThan(0);
    const other = sub.nodes.find((x) => x.name !== top.name)!;
    const otherCard = (
      await adminCall<Card>(ctx.atlas.url, 'GET', `/api/graph/entities/${encodeURIComponent(other.name)}/card`)
    ).body;
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto(`/graph?channel=${channel}&entity=${encodeURIComponent(top.name)}&depth=${DEPTH}&cap=${CAP}`);
      await expect.poll(() => page.getByTestId('entity-card-name').textContent(), SLOW).toBe(card.entity_name);
      expect(await page.getByTestId('entity-card-fact').allTextContents()).toEqual(card.key_facts);
      // Facts found among the entity's facts of its channels carry a citation with the permalink.
      await expect.poll(() => page.getByTestId('entity-card').locator('a.cite').count(), SLOW).toBeGreaterThan(0);
      // Selecting another entity in the list shows its card.
      await page
        .getByTestId('graph-list-node')
        .filter({ has: page.getByRole('button', { name: other.name, exact: true }) })
        .getByRole('button', { name: other.name, exact: true })
        .click();
      await page.waitForURL((u) => u.searchParams.get('node') === other.name);
      await expect.poll(() => page.getByTestId('entity-card-name').textContent(), SLOW).toBe(otherCard.entity_name);
      expect(await page.getByTestId('entity-card-fact').allTextContents()).toEqual(otherCard.key_facts);
      // A related entity's link re-centres the graph on it.
      await page.getByRole('link', { name: `Centre the graph on ${otherCard.entity_name}` }).click();
      await page.waitForURL(
        (u) => u.searchParams.get('entity') === otherCard.entity_name && !u.searchParams.get('node'),
      );
    } finally {
      await context.close();
    }
  });

  it('graph path: two connected entities show the chain the path API answers', async () => {
    const { channel, entities, top, sub } = await apiOf(ctx);
    const typeOf = new Map(entities.map((e) => [e.name, e.type]));
    // Two ends of the neighbourhood's edges, neither the centre, so the path runs through it or another entity.
    const ends = [...new Set(sub.edges.flatMap((e) => [e.source, e.target]))].filter(
      (x) => x !== top.name && typeOf.has(x),
    );
    let pair: [string, string] | null = null;
    let path: Graph | null = null;
    for (const a of ends.slice(0, 4)) {
      for (const b of ends.slice(-4)) {
        if (a === b) continue;
        const p = (
          await adminCall<Graph>(
            ctx.atlas.url,
            'GET',
            `/api/graph/path?source=${encodeURIComponent(a)}&target=${encodeURIComponent(b)}&max_depth=3&channel_id=${channel}`,
          )
        ).body;
        if (p.nodes.length >= 2) {
          pair = [a, b];
          path = p;
          break;
        }
      }
      if (pair) break;
    }
    expect(pair, 'two connected entities').toBeTruthy();
    const [a, b] = pair!;
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto(`/graph?channel=${channel}`);
      await pick(page, 'From', a, typeOf.get(a)!);
      await pick(page, 'To', b, typeOf.get(b)!);
      await page.waitForURL((u) => u.searchParams.get('from') === a && u.searchParams.get('to') === b);
      await expect
        .poll(
          () =>
            page
              .getByTestId('path-chain')
              .getByTestId('path-node')
              .evaluateAll((els) => els.map((e) => e.getAttribute('data-name'))),
          SLOW,
        )
        .toEqual(path!.nodes.map((n) => n.name));
      expect(await page.getByTestId('path-chain').getByTestId('path-edge').allTextContents()).toEqual(
        path!.edges.map((e, i) => (e.source === path!.nodes[i]!.name ? `${e.type} →` : `← ${e.type}`)),
      );
    } finally {
      await context.close();
    }
  });

  it('graph decisions: the statuses the decisions API answers, and each supersession chain', async () => {
    const { channel } = await apiOf(ctx);
    const decisions = (await adminCall<Decision[]>(ctx.atlas.url, 'GET', `/api/graph/decisions?channel_id=${channel}`))
      .body;
    expect(decisions.length).toBeGreaterThan(0);
    // The chains, followed here from each superseded decision that nothing supersedes into.
    const byName = new Map(decisions.map((d) => [d.name, d]));
    const targets = new Set(decisions.map((d) => d.superseded_by));
    const chains = decisions
      .filter((d) => d.superseded_by && !targets.has(d.name))
      .map((d) => {
        const chain = [d.name];
        for (let next = d.superseded_by; next && !chain.includes(next); next = byName.get(next)?.superseded_by ?? null)
          chain.push(next);
        return chain;
      });
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto(`/graph?channel=${channel}`);
      await page.getByTestId('decision-list').waitFor();
      const rows = page.getByTestId('decision-row');
      expect(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-name')))).toEqual(
        decisions.map((d) => d.name),
      );
      expect(await page.getByTestId('decision-status').allTextContents()).toEqual(decisions.map((d) => d.status));
      if (chains.length === 0) {
        await page.getByTestId('no-supersession').waitFor();
        expect(await page.getByTestId('decision-chain').count()).toBe(0);
      } else {
        const shown = await page
          .getByTestId('decision-chain')
          .evaluateAll((els) =>
            els.map((c) =>
              [...c.querySelectorAll('[data-testid="decision-chain-item"]')].map((i) => i.getAttribute('data-name')),
            ),
          );
        expect(shown.map((c) => c.join(' > ')).sort()).toEqual(chains.map((c) => c.join(' > ')).sort());
        // A decision of a chain opens as the centre, and its card shows the same chain.
        const chain = chains.sort((x, y) => y.length - x.length)[0]!;
        await page.getByTestId('decision-chain').first().getByRole('link', { name: chain[0], exact: true }).click();
        await page.waitForURL((u) => u.searchParams.get('entity') === chain[0]);
        await expect
          .poll(
            () =>
              page
                .getByTestId('entity-card')
                .getByTestId('decision-chain-item')
                .evaluateAll((els) => els.map((e) => e.getAttribute('data-name'))),
            SLOW,
          )
          .toEqual(chain);
      }
    } finally {
      await context.close();
    }
  });

  for (const width of WIDTHS)
    it(`graph entity card at ${width} px: a superseded Decision shows its lifecycle state and history as the card API answers`, async () => {
      // An OLake decision superseded for certain, and the Decision entity its fact made (an item's id is its fact's id).
      const found = async () => {
        const items = (
          await adminCall<{ items: { id: string; channel_id: string }[] }>(
            ctx.atlas.url,
            'GET',
            '/api/decisions?kind=decision&state=superseded&limit=100',
          )
        ).body.items;
        for (const channel of [...new Set(items.map((i) => i.channel_id))]) {
          const decisions = (
            await adminCall<(Entity & { source_fact_ids: string[] })[]>(
              ctx.atlas.url,
              'GET',
              `/api/graph/entities?channel_id=${channel}&type=Decision&limit=200`,
            )
          ).body;
          for (const item of items.filter((i) => i.channel_id === channel)) {
            const e = decisions.find((d) => d.source_fact_ids.includes(item.id));
            if (e) return { channel, item, entity: e };
          }
        }
        return null;
      };
      // The lifecycle projector may still be reading a data dir imported before it existed (ATLAS_TEST_WEB_DATA_DIR).
      await expect.poll(found, { timeout: 180_000, interval: 2_000 }).not.toBeNull();
      const { channel, item, entity } = (await found())!;
      const card = (
        await adminCall<{ lifecycle: LifecycleItem[] }>(
          ctx.atlas.url,
          'GET',
          `/api/graph/entities/${encodeURIComponent(entity.name)}/card`,
        )
      ).body;
      const api = card.lifecycle.find((i) => i.id === item.id)!;
      expect(api.state).toBe('superseded');
      const by = (await adminCall<{ title: string }>(ctx.atlas.url, 'GET', `/api/decisions/${api.superseded_by}`)).body;
      const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, width);
      try {
        await page.goto(`/graph?channel=${channel}&entity=${encodeURIComponent(entity.name)}`);
        const box = page.getByTestId('entity-card-lifecycle');
        await box.waitFor(SLOW);
        // The card's items in its order (the first five), each in the state the API gives.
        const shown = box.getByTestId('lifecycle-item');
        expect(await shown.evaluateAll((els) => els.map((e) => e.getAttribute('data-item-id')))).toEqual(
          card.lifecycle.slice(0, 5).map((i) => i.id),
        );
        expect(
          await box.getByTestId('lifecycle-state').evaluateAll((els) => els.map((e) => e.getAttribute('data-state'))),
        ).toEqual(card.lifecycle.slice(0, 5).map((i) => i.state));
        const mine = box.locator(`[data-item-id="${api.id}"]`);
        // The badge names the decision that superseded it, as GET /api/decisions/{superseded_by} titles it.
        await expect
          .poll(() => mine.getByTestId('lifecycle-state').textContent(), SLOW)
          .toContain(`superseded by “${by.title.slice(0, 20)}`);
        if (api.owner) expect(await mine.textContent()).toContain(`Owner ${api.owner}`);
        if (api.due_date) expect(await mine.textContent()).toContain(`due ${api.due_date}`);
        // The history, oldest first: each move and a link to the message that made it, in its channel.
        const steps = mine.getByTestId('lifecycle-history').getByRole('listitem');
        expect(await steps.count()).toBe(api.history.length);
        for (const [i, t] of api.history.entries()) {
          expect(await steps.nth(i).textContent()).toContain(t.from ? `${t.from} → ${t.to}` : t.to);
          expect(await steps.nth(i).getByRole('link', { name: 'message', exact: true }).getAttribute('href')).toBe(
            `/channels/${encodeURIComponent(api.channel_id)}/messages?message=${encodeURIComponent(t.evidence.message_id)}`,
          );
        }
        expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
        expect(await seriousA11yViolations(page)).toEqual([]);
        await mine.scrollIntoViewIfNeeded();
        await screenshot(page, 'graph-card-lifecycle');
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

  it('graph as of a day: the neighbourhood, cards and decisions the API answers as of then, not today; Back to now', async () => {
    const { channel, top, sub } = await apiOf(ctx);
    // The UI reads `?as_of=<day>` as the end of that day in UTC (a bare date is its first instant to the API).
    const endOf = (day: string) => `${day}T23:59:59.999Z`;
    const subAt = async (day: string) =>
      (
        await adminCall<Graph>(
          ctx.atlas.url,
          'GET',
          `/api/graph/subgraph?entities=${encodeURIComponent(top.name)}&depth=${DEPTH}&limit=${CAP}&channel_id=${channel}&as_of=${endOf(day)}`,
        )
      ).body;
    const names = (g: Graph) => g.nodes.map((n) => n.name).sort();
    // The days the top entity's facts were stated on (the data's own dates), latest first but the last (as of it, now):
    // the first whose neighbourhood as of its end differs from today's.
    const facts = (
      await adminCall<{ memories: { message_ts: string }[] }>(
        ctx.atlas.url,
        'GET',
        `/api/memories?channel_id=${channel}&entity=${encodeURIComponent(top.name)}&limit=100`,
      )
    ).body.memories;
    const days = [...new Set(facts.map((f) => f.message_ts.slice(0, 10)))].sort().reverse().slice(1);
    let day: string | null = null;
    let then: Graph | null = null;
    for (const d of days) {
      const g = await subAt(d);
      if (g.nodes.length > 1 && names(g).join('\n') !== names(sub).join('\n')) {
        day = d;
        then = g;
        break;
      }
    }
    expect(day, `a day among ${days.join(', ')} whose neighbourhood of ${top.name} differs from today's`).toBeTruthy();
    const card = async (name: string, asOf?: string) =>
      (
        await adminCall<Card & { fact_count: number }>(
          ctx.atlas.url,
          'GET',
          `/api/graph/entities/${encodeURIComponent(name)}/card${asOf ? `?as_of=${endOf(asOf)}` : ''}`,
        )
      ).body;
    const decisionsAt = async (asOf?: string) =>
      (
        await adminCall<Decision[]>(
          ctx.atlas.url,
          'GET',
          `/api/graph/decisions?channel_id=${channel}${asOf ? `&as_of=${endOf(asOf)}` : ''}`,
        )
      ).body;
    const [topThen, topNow, decisionsThen] = await Promise.all([
      card(top.name, day!),
      card(top.name),
      decisionsAt(day!),
    ]);
    expect(topThen.fact_count, 'fewer facts about the centre then').toBeLessThan(topNow.fact_count);
    const factCount = (page: Page) =>
      page
        .getByTestId('entity-card')
        .getByText(/^[\d,]+ facts$/)
        .textContent();
    const { context, page, errors } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto(
        `/graph?channel=${channel}&entity=${encodeURIComponent(top.name)}&depth=${DEPTH}&cap=${CAP}&as_of=${day}`,
      );
      // The notice says the view is as of then, and the date control shows the day.
      await expect.poll(() => page.getByTestId('graph-as-of').textContent(), SLOW).toContain('Showing the graph as of');
      expect(await page.getByLabel('As of', { exact: true }).inputValue()).toBe(day);
      // The neighbourhood, the centre's card and the channel's decisions as the API answers them as of that day.
      await expect.poll(() => drawn(page), SLOW).toEqual(names(then!));
      expect(await listed(page)).toEqual(names(then!));
      await expect.poll(() => factCount(page), SLOW).toBe(`${topThen.fact_count} facts`);
      expect(await page.getByTestId('entity-card-fact').allTextContents()).toEqual(topThen.key_facts);
      if (decisionsThen.length) {
        await page.getByTestId('decision-list').waitFor(SLOW);
        expect(
          await page.getByTestId('decision-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-name'))),
        ).toEqual(decisionsThen.map((d) => d.name));
        expect(await page.getByTestId('decision-status').allTextContents()).toEqual(decisionsThen.map((d) => d.status));
      } else await expect.poll(() => page.getByText(/^No decisions recorded in/).count(), SLOW).toBe(1);
      expect(await seriousA11yViolations(page)).toEqual([]);
      await screenshot(page, 'graph-as-of');
      // Selecting another entity keeps the as-of day: its card as it stood then.
      const other = then!.nodes.find((n) => n.name !== top.name)!;
      const otherThen = await card(other.name, day!);
      await page.getByTestId('graph-list-node').getByRole('button', { name: other.name, exact: true }).click();
      await page.waitForURL((u) => u.searchParams.get('node') === other.name && u.searchParams.get('as_of') === day);
      await expect.poll(() => page.getByTestId('entity-card-name').textContent(), SLOW).toBe(otherThen.entity_name);
      await expect.poll(() => factCount(page), SLOW).toBe(`${otherThen.fact_count} facts`);
      expect(await page.getByTestId('entity-card-fact').allTextContents()).toEqual(otherThen.key_facts);
      await page.getByTestId('graph-list-node').getByRole('button', { name: top.name, exact: true }).click();
      await page.waitForURL((u) => u.searchParams.get('node') === top.name && u.searchParams.get('as_of') === day);
      // Back to now: the address drops as_of, the notice goes, and the view is today's again.
      await page.getByRole('button', { name: 'Back to now', exact: true }).click();
      await page.waitForURL((u) => !u.searchParams.has('as_of') && u.searchParams.get('entity') === top.name);
      await expect.poll(() => page.getByTestId('graph-as-of').count(), SLOW).toBe(0);
      await expect.poll(() => drawn(page), SLOW).toEqual(names(sub));
      await expect.poll(() => factCount(page), SLOW).toBe(`${topNow.fact_count} facts`);
      expect(await page.getByLabel('As of', { exact: true }).inputValue()).toBe('');
      // Leaving by the card's channel link keeps the day: the channel's facts about the centre as the API lists them
      // as of then.
      await page.goto(
        `/graph?channel=${channel}&entity=${encodeURIComponent(top.name)}&depth=${DEPTH}&cap=${CAP}&as_of=${day}`,
      );
      const toFacts = page.getByTestId('entity-card').locator(`a[href^="/channels/${channel}/facts?entity="]`);
      await toFacts.waitFor(SLOW);
      expect(await toFacts.getAttribute('href')).toBe(
        `/channels/${channel}/facts?entity=${encodeURIComponent(topThen.entity_name)}&as_of=${day}`,
      );
      const factsThen = (
        await adminCall<{ memories: { id: string }[] }>(
          ctx.atlas.url,
          'GET',
          `/api/memories?channel_id=${channel}&entity=${encodeURIComponent(topThen.entity_name)}&page=1&limit=20&as_of=${endOf(day!)}`,
        )
      ).body.memories;
      expect(factsThen.length).toBeGreaterThan(0);
      await toFacts.click();
      await page.waitForURL((u) => u.pathname === `/channels/${channel}/facts` && u.searchParams.get('as_of') === day);
      await expect.poll(() => page.getByTestId('facts-as-of').count(), SLOW).toBe(1);
      await expect
        .poll(
          () =>
            page
              .getByRole('list', { name: 'Facts', exact: true })
              .locator(':scope > li > article')
              .evaluateAll((els) => els.map((e) => e.getAttribute('data-memory-id'))),
          SLOW,
        )
        .toEqual(factsThen.map((m) => m.id));
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('graph keyboard: Tab reaches a node, Enter selects it; Enter on a list row selects too', async () => {
    const { channel, top, sub } = await apiOf(ctx);
    const { context, page } = await openPage(ctx.browser, ctx.atlas.url, 1280);
    try {
      await page.goto(`/graph?channel=${channel}&entity=${encodeURIComponent(top.name)}&depth=${DEPTH}&cap=${CAP}`);
      await expect.poll(() => page.getByTestId('graph-node').count(), SLOW).toBe(sub.nodes.length);
      // From the last type filter, Tab goes into the diagram: the centre first, then its neighbours.
      await page.getByRole('checkbox', { name: 'Meeting', exact: true }).focus();
      await page.keyboard.press('Tab');
      expect(await page.evaluate<string | null>("document.activeElement?.getAttribute('data-name') ?? null")).toBe(
        top.name,
      );
      await page.keyboard.press('Tab');
      const name = await page.evaluate<string | null>(
        "document.activeElement?.getAttribute('data-testid') === 'graph-node' ? document.activeElement.getAttribute('data-name') : null",
      );
      expect(name).toBeTruthy();
      expect(name).not.toBe(top.name);
      await page.keyboard.press('Enter');
      await page.waitForURL((u) => u.searchParams.get('node') === name);
      await expect.poll(() => page.getByTestId('entity-card-name').textContent(), SLOW).toBe(name);
      // The list: a row's button, reached by keyboard focus, selects with Enter.
      const last = sub.nodes.at(-1)!.name;
      await page.getByTestId('graph-list-node').getByRole('button', { name: last, exact: true }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL((u) => u.searchParams.get('node') === last);
      await expect.poll(() => page.getByTestId('entity-card-name').textContent(), SLOW).toBe(last);
    } finally {
      await context.close();
    }
  });
};
