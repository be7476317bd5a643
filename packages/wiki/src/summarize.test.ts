import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AtlasError } from '@atlas/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clusterOf, sourceMessage, wikiFact } from './fixtures.test-support.js';
import { checkWikiCitations, citationMarkers, type RenderInput, renderChannelWiki, type WikiPage } from './index.js';
import {
  citedSummary,
  completionSummarizer,
  openAiSummarizer,
  summarizeTopicPages,
  type TopicSummaryInput,
  type WikiSummarizer,
  withSummary,
} from './summarize.js';
import type { SourceMessage } from './types.js';

// ---------------------------------------------------------------------------------------------------------------
// A small hand-made channel: a Postgres topic (with a sub-topic) and a Kafka topic.

const msg = (id: string, day: number, text: string, author: string) => sourceMessage(id, day, text, author);
const fact = (id: string, m: SourceMessage, text: string, tags: string[]) => wikiFact(id, m, text, tags);
const messages = [
  msg('m1', 1, 'We store all events in Postgres since March.', 'Ann'),
  msg('m2', 2, 'Postgres replication lag stays under one second on the primary.', 'Bob'),
  msg('m3', 3, 'The Postgres backups run nightly at 02:00 UTC.', 'Cid'),
  msg('m4', 4, 'Postgres vacuum runs weekly on the events table.', 'Ann'),
  msg('m5', 5, 'Kafka carries the change stream to the sink.', 'Bob'),
  msg('m6', 6, 'Kafka topics keep seven days of retention.', 'Cid'),
];
const [m1, m2, m3, m4, m5, m6] = messages as [SourceMessage, ...SourceMessage[]];
const facts = [
  fact('f1', m1!, 'Events are stored in Postgres since March.', ['postgres', 'storage']),
  fact('f2', m2!, 'Postgres replication lag stays under one second.', ['postgres', 'replication']),
  fact('f3', m3!, 'Postgres backups run nightly at 02:00 UTC.', ['postgres', 'backups']),
  fact('f4', m4!, 'Postgres vacuum runs weekly on the events table.', ['postgres', 'maintenance']),
  fact('f5', m5!, 'Kafka carries the change stream to the sink.', ['kafka']),
  fact('f6', m6!, 'Kafka topics keep seven days of retention.', ['kafka']),
];
const cluster = clusterOf;
const input: RenderInput = {
  channel: { id: 'C1', name: 'dev', platform: 'platform_a' },
  clusters: [
    cluster('pg', facts.slice(0, 4)),
    cluster('pg-ops', [facts[2]!, facts[3]!], 'pg'),
    cluster('kafka', facts.slice(4)),
  ],
  facts,
  messages: new Map(messages.map((m) => [m.id, m])),
  people: null,
  decisions: null,
  now: new Date('2026-02-01T00:00:00Z'),
};
const rendered = () => renderChannelWiki(input).pages;
const topicPages = (pages: WikiPage[]) => pages.filter((p) => p.page_type !== 'fixed');

// ---------------------------------------------------------------------------------------------------------------
// A real OpenAI-compatible server (non-streaming chat completions), answering per topic title.

interface ChatBody {
  model: string;
  temperature?: number;
  messages: { role: string; content: string }[];
}
interface Mode {
  /** Answer content by the `Topic: <title>` line of the user message; `default` otherwise. */
  answers: Record<string, string>;
  status?: number | undefined;
  hang?: boolean;
  bodies: ChatBody[];
}

const startServer = async (mode: Mode) => {
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => {
      raw += d;
    });
    req.on('end', () => {
      if (req.url !== '/v1/chat/completions' || req.method !== 'POST') {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'not found' } }));
      }
      const body = JSON.parse(raw) as ChatBody;
      mode.bodies.push(body);
      if (mode.hang) return; // never answers
      if (mode.status) {
        res.writeHead(mode.status, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'boom', type: 'server_error' } }));
      }
      const title = /^Topic: (.*)$/m.exec(body.messages.at(-1)?.content ?? '')?.[1] ?? '';
      const content = mode.answers[title] ?? mode.answers.default ?? '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl-${mode.bodies.length}`,
          object: 'chat.completion',
          created: 1_700_000_000,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
};

describe('summarizeTopicPages over openAiSummarizer (real HTTP server)', () => {
  let srv: Awaited<ReturnType<typeof startServer>>;
  const mode: Mode = { answers: {}, bodies: [] };
  beforeAll(async () => {
    srv = await startServer(mode);
  });
  beforeEach(() => {
    mode.answers = {};
    mode.status = undefined;
    mode.hang = false;
    mode.bodies = [];
  });
  afterAll(() => {
    srv.server.closeAllConnections();
    srv.server.close();
  });
  const summarizer = (timeoutMs = 2000) => openAiSummarizer({ baseURL: srv.url, model: 'sum-model', timeoutMs });

  it('renders the fixture as expected (two topics, one sub-topic, cited key facts)', () => {
    const pages = topicPages(rendered());
    expect(pages.map((p) => [p.id, p.page_type])).toEqual([
      ['topic-postgres', 'topic'],
      ['topic-postgres--backups', 'sub-topic'],
      ['topic-kafka', 'topic'],
    ]);
    const pg = pages[0]!;
    expect(pg.citations.map((c) => c.id)).toEqual(['[1]', '[2]', '[3]', '[4]']);
    expect(pg.content.split('\n')[2]).toBe(pg.summary);
  });

  it('applies a good answer: summary replaced, markers resolvable, only the summary paragraph changed', async () => {
    mode.answers = {
      Postgres:
        '## Summary\n\nThe channel keeps its events in Postgres [1]. Replication lag stays under a second [2], and backups run nightly [3][4].',
      default: 'This topic is about the items discussed [1].',
    };
    const before = rendered();
    const out = await summarizeTopicPages(before, summarizer(), { channel: 'dev' });
    expect(out).toMatchObject({ summarized: 3, failed: 0, dropped: 0 });
    expect(out.pages.map((p) => p.id)).toEqual(before.map((p) => p.id));
    expect(mode.bodies).toHaveLength(3);

    const pg = out.pages.find((p) => p.id === 'topic-postgres')!;
    const old = before.find((p) => p.id === 'topic-postgres')!;
    expect(pg.summary).toBe(
      'The channel keeps its events in Postgres [1]. Replication lag stays under a second [2], and backups run nightly [3][4].',
    );
    expect(pg.summary).not.toBe(old.summary);
    // only line 2 (the summary paragraph) differs
    const a = old.content.split('\n');
    const b = pg.content.split('\n');
    expect(b).toHaveLength(a.length);
    expect(b[2]).toBe(pg.summary);
    expect(b.filter((l, i) => l !== a[i])).toEqual([pg.summary]);
    expect(pg.citations).toEqual(old.citations);
    const ids = new Set(pg.citations.map((c) => c.id));
    for (const m of citationMarkers(pg.summary)) expect(ids.has(m)).toBe(true);
    // every marker of every page still verifies against its source message
    const check = checkWikiCitations(out.pages, input.messages);
    expect(check.verified).toBe(check.total);
    expect(check.total).toBeGreaterThan(0);
    // fixed pages untouched (same objects)
    for (const p of out.pages.filter((p) => p.page_type === 'fixed')) expect(p).toBe(before.find((q) => q.id === p.id));
  });

  it('sends the model name and the page key facts (markers, text, author, date) in the request', async () => {
    mode.answers = { default: 'Kafka carries the change stream [1].' };
    const pages = rendered();
    await summarizeTopicPages(
      pages.filter((p) => p.id === 'topic-kafka'),
      summarizer(),
      { channel: 'dev' },
    );
    expect(mode.bodies).toHaveLength(1);
    const body = mode.bodies[0]!;
    expect(body.model).toBe('sum-model');
    expect(body.temperature).toBe(0);
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(body.messages[0]!.content).toMatch(/1 to 3 sentences/);
    const user = body.messages[1]!.content;
    expect(user).toContain('Channel: #dev');
    expect(user).toContain('Topic: Kafka');
    const kafka = pages.find((p) => p.id === 'topic-kafka')!;
    const lines = kafka.citations.map((c) => {
      const f = c.author === 'Bob' ? facts[4]! : facts[5]!;
      return `${c.id} (${c.author}, ${c.timestamp.slice(0, 10)}) ${f.memory_text}`;
    });
    expect(lines).toHaveLength(2);
    for (const l of lines) expect(user).toContain(l);
    expect(user).toContain('(Bob, 2026-01-05) Kafka carries the change stream to the sink.');
  });

  it('drops an uncited sentence and a sentence citing a marker the page does not have', async () => {
    mode.answers = {
      default:
        'Postgres is the best database ever. Events are stored in Postgres since March [1]. The cluster has 99 nodes [99]. Lag stays low, e.g. under one second [2].',
    };
    const out = await summarizeTopicPages(
      rendered().filter((p) => p.id === 'topic-postgres'),
      summarizer(),
      { channel: 'dev' },
    );
    expect(out).toMatchObject({ summarized: 1, failed: 0, dropped: 0 });
    expect(out.pages[0]!.summary).toBe(
      'Events are stored in Postgres since March [1]. Lag stays low, e.g. under one second [2].',
    );
    expect(out.pages[0]!.content).not.toContain('[99]');
    expect(out.pages[0]!.content).not.toContain('best database');
  });

  it('keeps the extractive page and counts dropped when nothing in the answer is citable', async () => {
    mode.answers = { default: 'This topic covers Postgres. It is important [99].' };
    const before = rendered();
    const out = await summarizeTopicPages(before, summarizer(), { channel: 'dev' });
    expect(out).toMatchObject({ summarized: 0, failed: 0, dropped: 3 });
    expect(out.pages).toEqual(before);
  });

  it('keeps the pages and counts failed on HTTP 500, without throwing', async () => {
    mode.status = 500;
    const before = rendered();
    const out = await summarizeTopicPages(before, summarizer(), { channel: 'dev', concurrency: 3 });
    expect(out).toMatchObject({ summarized: 0, failed: 3, dropped: 0 });
    expect(out.pages).toEqual(before);
    expect(mode.bodies).toHaveLength(3); // maxRetries 0: one request per page
  });

  it('keeps the pages and counts failed on a timeout, without throwing', async () => {
    mode.hang = true;
    const before = rendered();
    const started = Date.now();
    const out = await summarizeTopicPages(before, summarizer(300), { channel: 'dev', concurrency: 1 });
    expect(out).toMatchObject({ summarized: 0, failed: 3, dropped: 0 });
    expect(out.pages).toEqual(before);
    expect(mode.bodies).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(5000);
    srv.server.closeAllConnections();
  });

  it('openAiSummarizer throws AtlasError PROVIDER_UNAVAILABLE (retriable) on a 500', async () => {
    mode.status = 500;
    const input: TopicSummaryInput = {
      channel: 'dev',
      title: 'Kafka',
      keyFacts: [{ marker: '[1]', text: 'Kafka carries the stream.', author: 'Bob', date: '2026-01-05' }],
    };
    const err = await summarizer()
      .summarize(input)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AtlasError);
    expect(err).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', retriable: true, details: { status: 500 } });
  });

  it('openAiSummarizer throws PROVIDER_UNAVAILABLE on an empty answer', async () => {
    mode.answers = { default: '   ' };
    const err = await summarizer()
      .summarize({ channel: 'dev', title: 'Kafka', keyFacts: [] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AtlasError);
    expect(err).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', retriable: true });
  });
});

describe('summarizeTopicPages with a stub summarizer', () => {
  it('bounds concurrency, preserves order and counts a throwing call as failed', async () => {
    let running = 0;
    let peak = 0;
    const seen: string[] = [];
    const stub: WikiSummarizer = {
      model: 'stub',
      async summarize(inp) {
        running++;
        peak = Math.max(peak, running);
        seen.push(inp.title);
        await new Promise((r) => setTimeout(r, 20));
        running--;
        if (inp.title === 'Kafka') throw new Error('nope');
        return `About ${inp.title} ${inp.keyFacts[0]!.marker}.`;
      },
    };
    const before = rendered();
    const out = await summarizeTopicPages(before, stub, { channel: 'dev' });
    expect(peak).toBe(2);
    expect(seen.sort()).toEqual(['Backups', 'Kafka', 'Postgres']);
    expect(out).toMatchObject({ summarized: 2, failed: 1, dropped: 0 });
    expect(out.pages.map((p) => p.id)).toEqual(before.map((p) => p.id));
    expect(out.pages.find((p) => p.id === 'topic-postgres')!.summary).toBe('About Postgres [1].');
    expect(out.pages.find((p) => p.id === 'topic-kafka')).toBe(before.find((p) => p.id === 'topic-kafka'));
  });
});

describe('summarizeTopicPages keeps markers numbered by first use', () => {
  it('a summary citing the last key fact first renumbers the page and its citations to match', async () => {
    let lastMarker = '';
    const stub: WikiSummarizer = {
      model: 'stub',
      async summarize(inp) {
        const last = inp.keyFacts.at(-1)!;
        lastMarker = last.marker;
        const text = last.text.replace(/\s*\\?\[\d+\\?\]/g, '').replace(/[.!?]+$/, '');
        return `${text} ${last.marker}. Also ${inp.keyFacts[0]!.marker}.`;
      },
    };
    const before = rendered().find((p) => p.id === 'topic-postgres')!;
    expect(before.citations.length).toBeGreaterThan(2);
    const out = await summarizeTopicPages([before], stub, { channel: 'dev' });
    const page = out.pages[0]!;
    expect(out.summarized).toBe(1);
    const used = citationMarkers(page.content);
    expect(used).toEqual(used.map((_, i) => `[${i + 1}]`));
    expect(page.citations.map((c) => c.id)).toEqual(used);
    // The summary's first marker is now [1] and points at the message the last key fact came from.
    expect(lastMarker).not.toBe('[1]');
    const lastOld = before.citations.find((c) => c.id === lastMarker)!;
    expect(citationMarkers(page.summary)[0]).toBe('[1]');
    expect(page.citations[0]).toMatchObject({ permalink: lastOld.permalink, text_excerpt: lastOld.text_excerpt });
    expect(checkWikiCitations([page], messages, {}).verified).toBe(used.length);
  });
});

describe('citedSummary', () => {
  const allowed = new Set(['[1]', '[2]', '[3]']);

  it('does not split at e.g. or inside version numbers, and keeps a marker after the final period', () => {
    expect(
      citedSummary(
        'They moved to 1.9.0, e.g. for the new sync mode [1]. Backups run nightly. [2] Nothing here.',
        allowed,
      ),
    ).toBe('They moved to 1.9.0, e.g. for the new sync mode [1]. Backups run nightly. [2]');
  });

  it('requires every marker of a sentence to be allowed, and some words besides markers', () => {
    expect(citedSummary('Lag is low [1][7]. Vacuum is weekly [3]. [2].', allowed)).toBe('Vacuum is weekly [3].');
    expect(citedSummary('An escaped \\[1\\] is no citation.', allowed)).toBeNull();
  });

  it('strips headings, bullets and emphasis and collapses whitespace', () => {
    const text = '# Summary\n\n- **Events** are   stored in\n  Postgres [1].\n- Lag is low [2].\n\n1. Backups run [3]!';
    expect(citedSummary(text, allowed)).toBe('Events are stored in Postgres [1]. Lag is low [2]. Backups run [3]!');
  });

  it('returns null when nothing is citable', () => {
    expect(citedSummary('Plain prose without citations. More prose.', allowed)).toBeNull();
    expect(citedSummary('', allowed)).toBeNull();
  });
});

describe('withSummary', () => {
  it('replaces only the summary paragraph; unchanged when the old summary is not where expected', () => {
    const pg = rendered().find((p) => p.id === 'topic-postgres')!;
    const next = withSummary(pg, 'Events live in Postgres [1].');
    expect(next).not.toBe(pg);
    expect(next.summary).toBe('Events live in Postgres [1].');
    expect(next.content).toBe(pg.content.replace(`\n\n${pg.summary}\n`, '\n\nEvents live in Postgres [1].\n'));
    expect(next.citations).toBe(pg.citations);
    expect(withSummary({ ...pg, summary: 'something else' }, 'Events live in Postgres [1].').content).toBe(pg.content);
    expect(withSummary(pg, 'Cites a missing fact [9].')).toBe(pg);
  });
});

describe('completionSummarizer (the quality tier chain as the wiki summarizer)', () => {
  const input: TopicSummaryInput = {
    channel: 'help',
    title: 'Kafka',
    keyFacts: [
      { marker: '[1]', text: 'The Kafka source retries every 30 seconds.', author: 'alice', date: '2026-01-01' },
    ],
  };

  it('sends the system and user prompts and returns the trimmed answer', async () => {
    const seen: { role: string; content: string }[][] = [];
    const s = completionSummarizer('m-quality', async (messages) => {
      seen.push(messages);
      return '  It retries every 30 seconds [1].  ';
    });
    expect(s.model).toBe('m-quality');
    expect(await s.summarize(input)).toBe('It retries every 30 seconds [1].');
    expect(seen[0]!.map((m) => m.role)).toEqual(['system', 'user']);
    expect(seen[0]![1]!.content).toContain('Kafka');
  });

  it('a failing chain or an empty answer is PROVIDER_UNAVAILABLE (the extractive summary stays)', async () => {
    const down = completionSummarizer('m', async () => {
      throw new Error('every provider failed');
    });
    await expect(down.summarize(input)).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE' });
    const empty = completionSummarizer('m', async () => '   ');
    await expect(empty.summarize(input)).rejects.toBeInstanceOf(AtlasError);
  });
});
