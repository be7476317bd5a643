import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hasMembersIntent } from './discord-client.js';
import { DISCORD_DEFAULT_PERMISSIONS, DiscordEmulator } from './discord-emulator.test-support.js';
import { close as closeServer, listen } from './emulator-http.test-support.js';
import { PlatformError, platformClient } from './index.js';

const ETHGLOBAL = path.resolve(import.meta.dirname, '../../../../../shared/data/discord-ethglobal');
const FAST = { maxRetries: 2, backoffMs: 5, maxBackoffMs: 20, timeoutMs: 5000 };
const CHANNEL = '1319401418532065280';

describe('Discord client against the emulator: validate and listChannels (ethglobal export)', () => {
  let emu: DiscordEmulator;
  const client = (token = emu.token, guild_id = emu.guild.id, extra = {}) =>
    platformClient(
      { platform: 'platform_b', bot_token: token, guild_id },
      { discordApiUrl: emu.url, ...FAST, ...extra },
    );
  beforeAll(async () => {
    emu = await DiscordEmulator.start(ETHGLOBAL);
  });
  afterAll(() => emu.close());
  beforeEach(() => {
    emu.everyonePermissions = DISCORD_DEFAULT_PERMISSIONS;
    emu.botPermissions = DISCORD_DEFAULT_PERMISSIONS;
    emu.setMembersIntent(true);
    for (const c of emu.channels) c.permission_overwrites = []; // public again
  });

  it('a valid token: the guild, the bot user, its permissions, the members intent (GET /users/@me, /guilds/{id}, the bot member, /applications/@me)', async () => {
    const r = await client().validate();
    expect(r).toEqual({
      valid: true,
      workspace: { id: '554623348622098432', name: 'ETHGlobal' },
      bot: { id: emu.bot.id, name: 'atlas-bot' },
      scopes: expect.arrayContaining(['VIEW_CHANNEL', 'READ_MESSAGE_HISTORY']),
    });
    expect(emu.requests.slice(-4).map((q) => q.call)).toEqual([
      '/users/@me',
      '/guilds/554623348622098432',
      `/guilds/554623348622098432/members/${emu.bot.id}`,
      '/applications/@me',
    ]);
  });

  it('an application without the Server Members Intent → INSUFFICIENT_PERMISSIONS requiring guild.members', async () => {
    emu.setMembersIntent(false);
    expect(await client().validate()).toEqual({
      valid: false,
      error: {
        code: 'INSUFFICIENT_PERMISSIONS',
        message: expect.stringMatching(/Server Members Intent.*private channels/),
        required_scopes: ['guild.members'],
      },
    });
    // With a missing permission too, both are named.
    emu.everyonePermissions = 0n;
    emu.botPermissions = 1n << 10n;
    const r = await client().validate();
    expect(r).toMatchObject({ error: { required_scopes: ['READ_MESSAGE_HISTORY', 'guild.members'] } });
    expect(r.valid ? '' : r.error.message).toMatch(/lack READ_MESSAGE_HISTORY; .*Server Members Intent/);
    // Switched back on, the same bot validates.
    emu.everyonePermissions = DISCORD_DEFAULT_PERMISSIONS;
    emu.setMembersIntent(true);
    expect(await client().validate()).toMatchObject({ valid: true });
  });

  it('the intent is either application flag (GATEWAY_GUILD_MEMBERS or its _LIMITED form); no flags is none', () => {
    expect(hasMembersIntent({ flags: 1 << 14 })).toBe(true);
    expect(hasMembersIntent({ flags: (1 << 15) | (1 << 19) })).toBe(true);
    expect(hasMembersIntent({ flags: 1 << 19 })).toBe(false);
    expect(hasMembersIntent({})).toBe(false);
  });

  it('without the intent, listMembers of a private channel fails (403 on the member list), saying why', async () => {
    emu.setPrivate(CHANNEL);
    emu.setMembersIntent(false);
    const err = await client()
      .listMembers(CHANNEL)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({
      code: 'PLATFORM_ERROR',
      retriable: false,
      opts: { status: 403, platformCode: '50001' },
    });
    expect((err as Error).message).toMatch(/Server Members Intent/);
    emu.setMembersIntent(true);
    expect(await client().listMembers(CHANNEL)).toMatchObject({ is_private: true, members: expect.any(Array) });
  });

  it('a wrong token → INVALID_CREDENTIALS (401, code 0), the token never in the answer', async () => {
    const token = 'MTIz.wrong-discord-token.secretpart';
    const r = await client(token).validate();
    expect(r).toMatchObject({ valid: false, error: { code: 'INVALID_CREDENTIALS' } });
    expect(JSON.stringify(r)).not.toContain(token);
  });

  it('an unknown guild (404, 10004) → INVALID_CREDENTIALS; a guild_id that is no snowflake is refused without a call', async () => {
    expect(await client(emu.token, '123456789012345678').validate()).toMatchObject({
      error: { code: 'INVALID_CREDENTIALS', message: expect.stringContaining('guild') },
    });
    const before = emu.requests.length;
    expect(await client(emu.token, 'not-a-guild').validate()).toMatchObject({ error: { code: 'INVALID_CREDENTIALS' } });
    expect(emu.requests.length).toBe(before);
  });

  it('roles without READ_MESSAGE_HISTORY → INSUFFICIENT_PERMISSIONS with the missing permission', async () => {
    emu.everyonePermissions = 0n;
    emu.botPermissions = 1n << 10n; // VIEW_CHANNEL only
    expect(await client().validate()).toEqual({
      valid: false,
      error: {
        code: 'INSUFFICIENT_PERMISSIONS',
        message: expect.any(String),
        required_scopes: ['READ_MESSAGE_HISTORY'],
      },
    });
  });

  it('ADMINISTRATOR is enough', async () => {
    emu.everyonePermissions = 0n;
    emu.botPermissions = 1n << 3n;
    expect(await client().validate()).toMatchObject({ valid: true, scopes: expect.arrayContaining(['ADMINISTRATOR']) });
  });

  it('a 403 Missing Access (50001) → INSUFFICIENT_PERMISSIONS', async () => {
    emu.fault({ match: '/guilds/', kind: 'status', status: 403 });
    const r = await client().validate();
    expect(r).toMatchObject({ valid: false, error: { code: 'INSUFFICIENT_PERMISSIONS' } });
  });

  it('a 429 → RATE_LIMITED with retry_after, without waiting', async () => {
    emu.fault({ match: '/users/@me', kind: 'ratelimit', retryAfter: 4 });
    const t0 = Date.now();
    expect(await client().validate()).toMatchObject({ valid: false, error: { code: 'RATE_LIMITED', retry_after: 4 } });
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('a 5xx → PLATFORM_ERROR; a dropped or refused connection → NETWORK_ERROR', async () => {
    emu.fault({ match: '/users/@me', kind: 'status', status: 502 });
    expect(await client().validate()).toMatchObject({ error: { code: 'PLATFORM_ERROR' } });
    emu.fault({ match: '/users/@me', kind: 'drop' });
    expect(await client().validate()).toMatchObject({ error: { code: 'NETWORK_ERROR' } });
    const { server, origin } = await listen(async () => {});
    await closeServer(server);
    expect(await client(emu.token, emu.guild.id, { discordApiUrl: `${origin}/api` }).validate()).toMatchObject({
      error: { code: 'NETWORK_ERROR' },
    });
  });

  it('listChannels: the text channel, public, with the guild member count', async () => {
    expect(await client().listChannels()).toEqual([
      {
        id: CHANNEL,
        name: '👾agentic-ethereum-chat',
        is_private: false,
        member_count: expect.any(Number),
        topic: expect.toBeOneOf([expect.any(String), null]),
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ]);
    emu.setPrivate(CHANNEL);
    expect((await client().listChannels())[0]!.is_private).toBe(true);
  });

  it('listChannels with a wrong token throws PlatformError AUTH_ERROR without the token in it', async () => {
    const token = 'MTIz.listing-token.secretpart';
    const err = await client(token)
      .listChannels()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ code: 'AUTH_ERROR', retriable: false });
    expect(`${(err as Error).message} ${(err as Error).stack} ${JSON.stringify(err)}`).not.toContain(token);
  });
});
