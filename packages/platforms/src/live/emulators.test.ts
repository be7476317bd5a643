import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformClient } from './index.js';
import { SlackEmulator } from './slack-emulator.test-support.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../../shared/data/slack-olake/export');
const HELP = 'C081MV728N7';

describe('Slack emulator: the documented request and answer shapes', () => {
  let emu: SlackEmulator;
  beforeAll(async () => {
    emu = await SlackEmulator.start(OLAKE);
  });
  afterAll(() => emu.close());

  it('accepts GET query strings and JSON bodies as well as the SDK form posts; scopes in x-oauth-scopes', async () => {
    const get = await fetch(`${emu.url}auth.test?token=${emu.token}`);
    expect(get.status).toBe(200);
    expect(get.headers.get('x-oauth-scopes')).toContain('channels:history');
    expect(await get.json()).toMatchObject({ ok: true, team_id: 'T0820LGJGRF', url: 'https://getolake.slack.com/' });
    const json = await fetch(`${emu.url}conversations.history`, {
      method: 'POST',
      headers: { authorization: `Bearer ${emu.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: HELP, limit: 2 }),
    });
    const body = (await json.json()) as {
      messages: { ts: string }[];
      has_more: boolean;
      response_metadata: { next_cursor: string };
    };
    expect(body.messages).toHaveLength(2);
    expect(Number(body.messages[0]!.ts)).toBeGreaterThan(Number(body.messages[1]!.ts)); // newest first
    expect(body.has_more).toBe(true);
    expect(body.response_metadata.next_cursor).not.toBe('');
    expect(await (await fetch(`${emu.url}auth.test`, { method: 'POST' })).json()).toEqual({
      ok: false,
      error: 'not_authed',
    });
  });

  it('missing_scope carries needed and provided; the request log never holds the token', async () => {
    emu.setToken('xoxb-noscope', { scopes: ['channels:read'] });
    const r = await fetch(`${emu.url}users.list?token=xoxb-noscope&limit=1`);
    expect(await r.json()).toEqual({
      ok: false,
      error: 'missing_scope',
      needed: 'users:read',
      provided: 'channels:read',
    });
    expect(JSON.stringify(emu.requests)).not.toContain('xoxb-noscope');
  });

  it('an edited reply comes back edited from fetchReplies (editedAt and contentHash change)', async () => {
    const c = platformClient(
      { platform: 'platform_a', bot_token: emu.token, signing_secret: 's' },
      { slackApiUrl: emu.url, backoffMs: 5 },
    );
    const page = await c.fetchMessages(HELP, { limit: 5 });
    const reply = page.messages.find((m) => m.threadTs !== null && m.threadTs !== m.platformMessageId)!;
    emu.editMessage(HELP, reply.platformMessageId, 'edited text');
    const again = (await c.fetchReplies(HELP, reply.threadTs!, { limit: 100 })).find(
      (m) => m.platformMessageId === reply.platformMessageId,
    )!;
    expect(again.text).toBe('edited text');
    expect(again.editedAt).not.toBeNull();
    expect(again.contentHash).not.toBe(reply.contentHash);
  });

  it('non-Marketplace mode: 15 messages a page and one history call a minute (429 with Retry-After)', async () => {
    emu.nonMarketplace = true;
    try {
      const c = platformClient(
        { platform: 'platform_a', bot_token: emu.token, signing_secret: 's' },
        { slackApiUrl: emu.url, maxRetryAfterMs: 1000 },
      );
      const first = await fetch(`${emu.url}conversations.history?token=${emu.token}&channel=${HELP}&limit=100`);
      expect(((await first.json()) as { messages: unknown[] }).messages).toHaveLength(15);
      await expect(c.fetchMessages(HELP, { limit: 100 })).rejects.toMatchObject({
        code: 'RATE_LIMIT',
        retryAfter: expect.any(Number),
      });
    } finally {
      emu.nonMarketplace = false;
    }
  });
});
