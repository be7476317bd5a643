import path from 'node:path';
import { openShapeHarness, type ShapeHarness } from '@atlas/runtime/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const ENG = 'C0MOCKENG'; // the mock platform_a #engineering: synced through the start_sync tool

type Json = ReturnType<typeof JSON.parse>;

/** The JSON a tool answered (its one text content), failing on an error result. */
const json = (r: CallToolResult): Json => {
  const t = (r.content[0] as { text: string }).text;
  expect(r.isError, t).toBeFalsy();
  return JSON.parse(t);
};
const errorText = (r: CallToolResult): string => {
  expect(r.isError).toBe(true);
  return (r.content[0] as { text: string }).text;
};

/**
 * The MCP server (issue 25 "Done when"): the SDK's own client over Streamable HTTP (`/mcp` of a listening app) and
 * over stdio (`atlas mcp` as a child process calling that app), on real imported data (the OLake Slack export, the
 * ETHGlobal Discord export, a channel synced from the mock platform): every tool run, resources and prompts read,
 * a key scoped to one channel that finds nothing of another, roles and per-tool rate limits.
 */
describe('MCP server on real data', () => {
  let h: ShapeHarness;
  let base = '';
  let help = '';
  let eth = '';
  let admin = '';
  let reader = '';
  let scoped = '';
  const clients: Client[] = [];
  const connect = async (key: string) => {
    const c = new Client({ name: 'atlas-test', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    clients.push(c);
    return c;
  };
  const call = async (c: Client, name: string, args: Record<string, unknown> = {}) =>
    (await c.callTool({ name, arguments: args })) as CallToolResult;

  beforeAll(async () => {
    h = await openShapeHarness();
    const channels = (await h.call('GET', '/api/channels')).body as { id: string; name: string; platform: string }[];
    help = channels.find((c) => c.name === 'help' && c.platform === 'platform_a')!.id;
    eth = channels.find((c) => c.platform === 'platform_b')!.id;
    // The wiki of #help, while the API is still open to local callers (no key yet).
    await h.call('POST', '/api/wiki/refresh', { channel_id: help });
    await h.wikiIdle(help);
    // A connection on the mock platform with #engineering selected, for start_sync.
    const conn = await h.call('POST', '/api/connections', {
      platform: 'platform_a',
      name: 'Northstar',
      credentials: { bot_token: 'xoxb-mock', signing_secret: 'mock' },
    });
    await h.call('PUT', `/api/connections/${conn.body.id}/channels`, { channel_ids: [ENG] });
    const key = async (role: 'reader' | 'member' | 'admin', channels: string[] | null = null) =>
      (
        await h.rt.apiKeys.create({
          name: `mcp-${role}`,
          role,
          ...(channels ? { scope: { channels, connections: null } } : {}),
        })
      ).secret;
    admin = await key('admin');
    reader = await key('reader');
    scoped = await key('member', [eth]); // one project's channel, nothing else
    await new Promise((r) => setTimeout(r, 2_100)); // the open local default ends once its check sees the keys (2 s)
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const addr = h.app.server.address() as { port: number };
    base = `http://127.0.0.1:${addr.port}`;
  }, 300_000);
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await h?.close();
  });

  it('Streamable HTTP: lists the tools, resources and prompts', async () => {
    const c = await connect(admin);
    const tools = (await c.listTools()).tools.map((t) => t.name).sort();
    expect(tools).toEqual(
      [
        'ask',
        'channel_stats',
        'decisions',
        'entity_card',
        'get_fact',
        'list_channels',
        'list_entities',
        'list_facts',
        'relationships',
        'search_facts',
        'start_sync',
        'sync_status',
        'wiki_page',
        'wiki_page_diff',
        'wiki_structure',
      ].sort(),
    );
    const search = (await c.listTools()).tools.find((t) => t.name === 'search_facts')!;
    expect(search.inputSchema.required).toContain('query');
    expect((await c.listPrompts()).prompts.map((p) => p.name).sort()).toEqual([
      'briefing',
      'recent_decisions',
      'who_owns',
    ]);
    const resources = (await c.listResources()).resources.map((r) => r.uri);
    expect(resources).toContain('atlas://stats');
    expect(resources.some((u) => u.startsWith(`atlas://wiki/${help}/`))).toBe(true);
  });

  it('Streamable HTTP: every tool answers on the imported data, citing permalinks', async () => {
    const c = await connect(admin);
    const channels = json(await call(c, 'list_channels')) as Json[];
    expect(channels.map((ch) => ch.id)).toEqual(expect.arrayContaining([help, eth]));

    const found = json(await call(c, 'search_facts', { query: 'kafka connector', channel_id: help, limit: 500 }));
    expect(found.results.length).toBeGreaterThan(0);
    expect(found.results.length).toBeLessThanOrEqual(50); // clamped to the spec's limit
    expect(found.results[0].permalink).toMatch(/^https?:\/\//);

    const page = json(await call(c, 'list_facts', { channel_id: help, limit: 5 }));
    expect(page.facts).toHaveLength(5);
    const one = json(await call(c, 'get_fact', { memory_id: page.facts[0].id }));
    expect(one.id).toBe(page.facts[0].id);

    const entities = json(await call(c, 'list_entities', { channel_id: help })) as Json[];
    expect(entities.length).toBeGreaterThan(0);
    const card = json(await call(c, 'entity_card', { name: entities[0].name }));
    expect(card.entity_name).toBe(entities[0].name);
    expect(Array.isArray(json(await call(c, 'relationships', { channel_id: help })))).toBe(true);
    expect(Array.isArray(json(await call(c, 'decisions', { channel_id: help })))).toBe(true);

    const structure = json(await call(c, 'wiki_structure', { channel_id: help }));
    expect(structure.pages.length).toBeGreaterThan(0);
    const wiki = json(await call(c, 'wiki_page', { channel_id: help, page_id: structure.pages[0].id }));
    expect(wiki.content.length).toBeGreaterThan(0);
    // The page diff tool answers what its route answers (one version here: unchanged against itself).
    const diff = json(await call(c, 'wiki_page_diff', { channel_id: help, page_id: structure.pages[0].id, from: 1 }));
    const diffRest = await h.call(
      'GET',
      `/api/wiki/pages/${structure.pages[0].id}/diff?channel_id=${help}&from=1`,
      undefined,
      { authorization: `Bearer ${admin}` },
    );
    expect(diffRest.status).toBe(200);
    expect(diff).toEqual(diffRest.body);
    expect(diff).toMatchObject({ changed: false, diff: '', from: { version_number: 1, page_exists: true } });
    expect(json(await call(c, 'wiki_structure', { channel_id: help, as_of: '2999-01-01' })).pages).toEqual(
      structure.pages,
    );
    expect(errorText(await call(c, 'wiki_structure', { channel_id: help, as_of: '2001-01-01' }))).toMatch(
      /^404 NOT_FOUND: .*had no wiki version as of 2001-01-01/,
    );
    const stats = json(await call(c, 'channel_stats', { channel_id: help }));
    expect(stats.fact_count).toBe(page.total); // the stats and the facts agree

    const asked = json(await call(c, 'ask', { question: 'How do I configure the Kafka connector?', channel_id: help }));
    expect(asked.answer.length).toBeGreaterThan(0);
    expect(asked.session_id).toBeTruthy();
    expect(asked.citations.length).toBeGreaterThan(0);

    const started = json(await call(c, 'start_sync', { channel_id: ENG }));
    expect(started.job_id).toBeTruthy();
    let status: Json;
    for (let n = 0; ; n++) {
      status = json(await call(c, 'sync_status', { channel_id: ENG, job_id: started.job_id }));
      if (['completed', 'failed', 'cancelled'].includes(status.status)) break;
      if (n > 600) throw new Error('the sync did not finish');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status.status).toBe('completed');

    const stat = await c.readResource({ uri: 'atlas://stats' });
    expect(JSON.parse((stat.contents[0] as { text: string }).text)).toHaveProperty('total_facts');
    const md = await c.readResource({ uri: `atlas://wiki/${help}/${structure.pages[0].id}` });
    expect((md.contents[0] as { text: string }).text).toBe(wiki.content);
    const prompt = await c.getPrompt({ name: 'who_owns', arguments: { name: 'OLake' } });
    expect(JSON.stringify(prompt.messages)).toContain('OLake');
  });

  it('access: no key is refused; a reader cannot start a sync; bad arguments are refused', async () => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    const r = await connect(reader);
    expect(errorText(await call(r, 'start_sync', { channel_id: ENG }))).toMatch(/^403 FORBIDDEN/);
    const bad = await call(r, 'search_facts', { query: '' });
    expect(bad.isError).toBe(true);
  });

  it('stdio (`atlas mcp`): a key scoped to one channel finds nothing of another', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(ROOT, 'bin/atlas.mjs'), 'mcp', '--url', base],
      env: { ...(process.env as Record<string, string>), ATLAS_API_KEY: scoped },
      cwd: ROOT,
      stderr: 'pipe',
    });
    const c = new Client({ name: 'atlas-stdio-test', version: '1.0.0' });
    await c.connect(transport);
    clients.push(c);
    expect((await c.listTools()).tools.length).toBe(15);
    const channels = json(await call(c, 'list_channels')) as Json[];
    expect(channels.map((ch) => ch.id)).toEqual([eth]);
    const everywhere = json(await call(c, 'search_facts', { query: 'kafka connector setup' }));
    const ids = everywhere.results.map((r: Json) => r.id);
    const helpFacts = json(await call(await connect(admin), 'list_facts', { channel_id: help, limit: 100 }));
    expect(ids.filter((id: string) => helpFacts.facts.some((f: Json) => f.id === id))).toEqual([]);
    expect(errorText(await call(c, 'search_facts', { query: 'kafka', channel_id: help }))).toMatch(/^404/);
    expect(errorText(await call(c, 'list_facts', { channel_id: help }))).toMatch(/^404/);
    expect(json(await call(c, 'list_facts', { channel_id: eth, limit: 3 })).facts.length).toBeGreaterThan(0);
  }, 120_000);

  it('rate limits each tool per caller', async () => {
    const key = (await h.rt.apiKeys.create({ name: 'mcp-burst', role: 'reader' })).secret;
    const c = await connect(key);
    const results = [];
    for (let i = 0; i < 61; i++) results.push(await call(c, 'list_channels'));
    expect(results.slice(0, 60).every((r) => !r.isError)).toBe(true);
    expect(errorText(results[60]!)).toMatch(/^RATE_LIMIT_EXCEEDED/);
    expect(json(await call(c, 'channel_stats', { channel_id: help }))).toBeTruthy(); // another tool: its own budget
  });
});
