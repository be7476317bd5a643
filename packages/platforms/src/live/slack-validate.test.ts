import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { close as closeServer, listen } from './emulator-http.test-support.js';
import { PlatformError, platformClient, SLACK_REQUIRED_SCOPES } from './index.js';
import { SlackEmulator } from './slack-emulator.test-support.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../../shared/data/slack-olake/export');
const FAST = { maxRetries: 2, backoffMs: 5, maxBackoffMs: 20, timeoutMs: 5000 };

describe('Slack client against the emulator: validate and listChannels (olake export)', () => {
  let emu: SlackEmulator;
  const client = (token: string, extra = {}) =>
    platformClient(
      { platform: 'platform_a', bot_token: token, signing_secret: '8f742231b10e8888abcd99yyyzzz85a5' },
      { slackApiUrl: emu.url, ...FAST, ...extra },
    );
  beforeAll(async () => {
    emu = await SlackEmulator.start(OLAKE);
  });
  afterAll(() => emu.close());

  it('a valid token: the workspace from auth.test, the bot user, the granted scopes', async () => {
    const r = await client(emu.token).validate();
    expect(r).toEqual({
      valid: true,
      workspace: { id: 'T0820LGJGRF', name: 'getolake' },
      bot: { id: 'U0ATLASBOT', name: 'atlas' },
      scopes: expect.arrayContaining([...SLACK_REQUIRED_SCOPES]),
    });
    const call = emu.requests.at(-1)!;
    expect(call).toMatchObject({ method: 'POST', call: 'auth.test' });
    expect(JSON.stringify(call)).not.toContain(emu.token);
  });

  it.each([
    ['invalid_auth', 'INVALID_CREDENTIALS'],
    ['token_revoked', 'INVALID_CREDENTIALS'],
    ['account_inactive', 'INVALID_CREDENTIALS'],
    ['token_expired', 'AUTH_EXPIRED'],
  ] as const)('a token in state %s → %s, the token never in the answer', async (state, code) => {
    const token = `xoxb-${state}-999-secretpart`;
    emu.setToken(token, { state });
    const r = await client(token).validate();
    expect(r).toMatchObject({ valid: false, error: { code } });
    expect(JSON.stringify(r)).not.toContain(token);
  });

  it('an unknown token → INVALID_CREDENTIALS; an empty one is refused without a call', async () => {
    expect(await client('xoxb-unknown-1').validate()).toMatchObject({ error: { code: 'INVALID_CREDENTIALS' } });
    const before = emu.requests.length;
    expect(await client('  ').validate()).toMatchObject({ error: { code: 'INVALID_CREDENTIALS' } });
    expect(emu.requests.length).toBe(before);
  });

  it('missing scopes (x-oauth-scopes) → INSUFFICIENT_PERMISSIONS with the missing ones', async () => {
    const token = 'xoxb-few-scopes-1';
    emu.setToken(token, { scopes: ['channels:history', 'channels:read', 'users:read', 'chat:write'] });
    const r = await client(token).validate();
    expect(r).toEqual({
      valid: false,
      error: {
        code: 'INSUFFICIENT_PERMISSIONS',
        message: expect.any(String),
        required_scopes: ['groups:history', 'groups:read'],
      },
    });
  });

  it('a 429 → RATE_LIMITED with retry_after (validate does not wait)', async () => {
    emu.fault({ match: 'auth.test', kind: 'ratelimit', retryAfter: 7 });
    const t0 = Date.now();
    const r = await client(emu.token).validate();
    expect(r).toMatchObject({ valid: false, error: { code: 'RATE_LIMITED', retry_after: 7 } });
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('a 5xx or an ok:false internal_error → PLATFORM_ERROR', async () => {
    emu.fault({ match: 'auth.test', kind: 'status', status: 503 });
    expect(await client(emu.token).validate()).toMatchObject({ error: { code: 'PLATFORM_ERROR' } });
    emu.fault({ match: 'auth.test', kind: 'error', error: 'internal_error' });
    expect(await client(emu.token).validate()).toMatchObject({ error: { code: 'PLATFORM_ERROR' } });
  });

  it('a dropped connection or a refused one → NETWORK_ERROR', async () => {
    emu.fault({ match: 'auth.test', kind: 'drop' });
    expect(await client(emu.token).validate()).toMatchObject({ error: { code: 'NETWORK_ERROR' } });
    const { server, origin } = await listen(async () => {});
    await closeServer(server);
    const r = await client(emu.token, { slackApiUrl: `${origin}/api/` }).validate();
    expect(r).toMatchObject({ valid: false, error: { code: 'NETWORK_ERROR' } });
  });

  it('listChannels: every channel of channels.json with its member count', async () => {
    const channels = await client(emu.token).listChannels();
    expect(channels.map((c) => c.name).sort()).toEqual([
      'announcements',
      'contributing-to-olake',
      'discussions',
      'general',
      'help',
    ]);
    const ann = channels.find((c) => c.name === 'announcements')!;
    expect(ann).toEqual({
      id: 'C081GUXUQ5U',
      name: 'announcements',
      is_private: false,
      member_count: 614,
      topic: expect.toBeOneOf([expect.any(String), null]),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('listChannels with a revoked token throws PlatformError AUTH_ERROR without the token in it', async () => {
    const token = 'xoxb-revoked-for-list-secret';
    emu.setToken(token, { state: 'token_revoked' });
    const err = await client(token)
      .listChannels()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ code: 'AUTH_ERROR', retriable: false });
    expect(`${(err as Error).message} ${(err as Error).stack} ${JSON.stringify(err)}`).not.toContain(token);
  });

  it('listChannels retries a 5xx and a 429 (Retry-After honoured), then succeeds', async () => {
    emu.fault({ match: 'conversations.list', kind: 'status', status: 500 });
    emu.fault({ match: 'conversations.list', kind: 'ratelimit', retryAfter: 1 });
    const t0 = Date.now();
    expect(await client(emu.token).listChannels()).toHaveLength(5);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
  });

  it('listChannels gives up after maxRetries with a retriable PLATFORM_ERROR', async () => {
    emu.fault({ match: 'conversations.list', kind: 'status', status: 502, times: 3 });
    await expect(client(emu.token).listChannels()).rejects.toMatchObject({ code: 'PLATFORM_ERROR', retriable: true });
  });
});
