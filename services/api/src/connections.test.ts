import path from 'node:path';
import { Writable } from 'node:stream';
import { CredentialCipher, loadConfig } from '@atlas/core';
import { platformClient } from '@atlas/platforms';
import { DiscordEmulator, SLACK_ALL_SCOPES, SlackEmulator } from '@atlas/platforms/testing';
import { apiPorts, openRuntime, type Runtime } from '@atlas/runtime';
import { ConnectionStore } from '@atlas/stores';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';

const OLAKE = path.resolve(import.meta.dirname, '../../../../shared/data/slack-olake/export');
const ETHGLOBAL = path.resolve(import.meta.dirname, '../../../../shared/data/discord-ethglobal');
const KEY = '5a'.repeat(32);
/** The known secrets: none may appear in a response body or a log line. */
const TOKEN = 'xoxb-known-test-token-4242-s3cr3t';
const SIGNING = 'known-signing-secret-9f8e7d';
const TOKEN_B = 'known.discord-bot-token.7h1s-1s-s3cr3t';
const SECRETS = [TOKEN, SIGNING, TOKEN_B];

/**
 * The connections routes over the embedded runtime, against the Slack Web API emulator (the real platform client
 * pointed at it), with the app's logger at trace level writing to a buffer.
 */
describe('connections routes (platform_a on the Slack emulator, platform_b on the Discord emulator)', () => {
  let emu: SlackEmulator;
  let discord: DiscordEmulator;
  let rt: Runtime;
  let app: FastifyInstance;
  const logs: string[] = [];
  const bodies: string[] = [];
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) => {
    const res = await app.inject({ method, url, ...(payload === undefined ? {} : { payload }) });
    bodies.push(res.body);
    return { status: res.statusCode, body: res.body ? res.json() : undefined, raw: res.body };
  };
  const credsA = (over: object = {}) => ({ bot_token: TOKEN, signing_secret: SIGNING, ...over });
  const create = (over: object = {}) =>
    call('POST', '/api/connections', { platform: 'platform_a', name: 'Olake', credentials: credsA(), ...over });

  beforeAll(async () => {
    emu = await SlackEmulator.start(OLAKE);
    discord = await DiscordEmulator.start(ETHGLOBAL);
    discord.token = TOKEN_B;
    rt = await openRuntime(
      loadConfig({
        ATLAS_DATA_DIR: 'memory://',
        EMBEDDING_PROVIDER: 'none',
        CREDENTIAL_MASTER_KEY: KEY,
        PLATFORM_A_API_URL: emu.url,
        PLATFORM_B_API_URL: discord.url,
      }),
    );
    const ports = apiPorts(rt);
    app = await buildApp(
      {
        ...ports,
        connections: {
          ...ports.connections!,
          // The runtime's client, without retries so network faults answer at once.
          platformClient: (c) =>
            platformClient(c, { slackApiUrl: emu.url, discordApiUrl: discord.url, maxRetries: 0, backoffMs: 1 }),
        },
      },
      {
        logger: {
          level: 'trace',
          stream: new Writable({
            write(chunk, _enc, done) {
              logs.push(String(chunk));
              done();
            },
          }),
        },
      },
    );
  });
  beforeEach(() => {
    emu.clearFaults();
    emu.setToken(TOKEN, { state: 'ok', scopes: [...SLACK_ALL_SCOPES] });
  });
  afterAll(async () => {
    await app?.close();
    await rt?.close();
    await emu?.close();
    await discord?.close();
  });

  it('POST creates after validating: 201 with the spec fields, no last_sync, no credentials', async () => {
    const res = await create();
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['channel_count', 'created_at', 'id', 'name', 'platform', 'status']);
    expect(res.body).toMatchObject({ name: 'Olake', platform: 'platform_a', status: 'connected', channel_count: 0 });
    expect(emu.requests.some((r) => r.call === 'auth.test')).toBe(true);
    const list = await call('GET', '/api/connections');
    expect(list.body).toContainEqual({ ...res.body, last_sync: null });
    const detail = await call('GET', `/api/connections/${res.body.id}`);
    expect(detail.body).toMatchObject({
      ...res.body,
      last_sync: null,
      settings: { sync_interval_minutes: 60, wiki_enabled: true, graph_enabled: true },
    });
    expect(Date.parse(detail.body.validated_at)).not.toBeNaN();
    const raw = await sql<{
      credentials: string;
    }>`select credentials from connections where id = ${res.body.id}`.execute(rt.database.db);
    expect(raw.rows[0]!.credentials).toMatch(/^v2:/); // under the connection's data key (docs/credentials.md)
    expect(raw.rows[0]!.credentials).not.toContain(TOKEN);
  });

  it('credentials the platform refuses are not saved: 400 with the validation error', async () => {
    const before = (await call('GET', '/api/connections')).body.length;
    emu.setToken(TOKEN, { state: 'invalid_auth' });
    const bad = await create();
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      code: 'INVALID_REQUEST',
      details: { validation_error: { code: 'INVALID_CREDENTIALS' } },
    });
    emu.setToken(TOKEN, { state: 'ok', scopes: ['channels:read'] });
    const scopes = await create();
    expect(scopes.status).toBe(400);
    expect(scopes.body.error.details.validation_error.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(scopes.body.error.details.validation_error.required_scopes.length).toBeGreaterThan(0);
    emu.setToken(TOKEN, { scopes: [...SLACK_ALL_SCOPES] });
    emu.fault({ match: 'auth.test', kind: 'drop' });
    const down = await create();
    expect(down.status).toBe(503);
    expect(down.body.error.code).toBe('PROVIDER_UNAVAILABLE');
    expect((await call('GET', '/api/connections')).body).toHaveLength(before);
  });

  it('bad bodies are 400 INVALID_REQUEST before the platform is asked (missing fields, platform mismatch)', async () => {
    const asked = emu.requests.length;
    const cases: [object, RegExp][] = [
      [{ platform: 'platform_a', credentials: credsA() }, /name/],
      [{ platform: 'platform_c', name: 'x', credentials: credsA() }, /platform/],
      [{ platform: 'platform_a', name: 'x' }, /credentials/],
      [{ platform: 'platform_a', name: 'x', credentials: { bot_token: TOKEN } }, /signing_secret/],
      [{ platform: 'platform_a', name: 'x', credentials: credsA({ bot_token: '  ' }) }, /bot_token/],
      [{ platform: 'platform_a', name: 'x', credentials: credsA({ guild_id: '1' }) }, /platform mismatch/],
      [{ platform: 'platform_a', name: 'x', credentials: credsA({ platform: 'platform_b' }) }, /platform mismatch/],
      [{ platform: 'platform_a', name: 'x', credentials: credsA({ extra: 'y' }) }, /extra/],
      [{ platform: 'platform_a', name: 'x', credentials: credsA(), settings: { sync_interval_minutes: 0 } }, /sync/],
    ];
    for (const [payload, message] of cases) {
      const res = await call('POST', '/api/connections', payload);
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
      expect(res.body.error.message).toMatch(message);
    }
    expect(emu.requests.length).toBe(asked);
  });

  it('unknown connection: 404 NOT_FOUND on every route', async () => {
    const id = 'no-such-connection';
    for (const [method, url, payload] of [
      ['GET', `/api/connections/${id}`],
      ['PUT', `/api/connections/${id}`, { name: 'x' }],
      ['DELETE', `/api/connections/${id}`],
      ['POST', `/api/connections/${id}/validate`],
      ['GET', `/api/connections/${id}/channels`],
      ['PUT', `/api/connections/${id}/channels`, { sync_all: true }],
    ] as const) {
      const res = await call(method, url, payload);
      expect(res.status, `${method} ${url}`).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('PUT updates name and settings; new credentials are re-validated (refused: nothing changes)', async () => {
    const { id } = (await create({ name: 'Before' })).body;
    const ok = await call('PUT', `/api/connections/${id}`, { name: 'After', settings: { wiki_enabled: false } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      id,
      name: 'After',
      settings: { sync_interval_minutes: 60, wiki_enabled: false, graph_enabled: true },
    });
    const NEW = 'xoxb-rotated-token-1111';
    emu.setToken(NEW, { state: 'invalid_auth' });
    const refused = await call('PUT', `/api/connections/${id}`, {
      name: 'Never',
      credentials: credsA({ bot_token: NEW }),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.validation_error.code).toBe('INVALID_CREDENTIALS');
    expect((await call('GET', `/api/connections/${id}`)).body.name).toBe('After');
    expect((await rt.connections.credentials(id))!.credentials.bot_token).toBe(TOKEN);
    emu.setToken(NEW, { state: 'ok' });
    const rotated = await call('PUT', `/api/connections/${id}`, { credentials: credsA({ bot_token: NEW }) });
    expect(rotated.status).toBe(200);
    expect(rotated.body.status).toBe('connected');
    expect((await rt.connections.credentials(id))!.credentials.bot_token).toBe(NEW);
    for (const payload of [
      {},
      { platform: 'platform_b' },
      { credentials: { bot_token: NEW, guild_id: '1' } },
      { settings: { graph_enabled: 'yes' } },
      { name: '' },
    ]) {
      const res = await call('PUT', `/api/connections/${id}`, payload);
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
    }
  });

  it('POST validate: valid → connected with validated_at; refused → valid false with the spec code, status error', async () => {
    const { id } = (await create()).body;
    const ok = await call('POST', `/api/connections/${id}/validate`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ valid: true, connection: { id, status: 'connected' } });
    expect(Date.parse(ok.body.connection.validated_at)).not.toBeNaN();
    expect(ok.body.workspace).toMatchObject({ id: emu.team.id });
    emu.setToken(TOKEN, { state: 'token_expired' });
    const expired = await call('POST', `/api/connections/${id}/validate`);
    expect(expired.status).toBe(200);
    expect(expired.body).toEqual({ valid: false, error: { code: 'AUTH_EXPIRED', message: expect.any(String) } });
    expect((await call('GET', `/api/connections/${id}`)).body.status).toBe('error');
    emu.setToken(TOKEN, { state: 'ok', scopes: ['channels:read'] });
    const scopes = await call('POST', `/api/connections/${id}/validate`);
    expect(scopes.body.valid).toBe(false);
    expect(scopes.body.error.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(scopes.body.error.required_scopes.length).toBeGreaterThan(0);
    emu.setToken(TOKEN, { scopes: [...SLACK_ALL_SCOPES] });
    // A network failure says nothing of the credentials: valid false, NETWORK_ERROR, the status stays.
    await call('POST', `/api/connections/${id}/validate`);
    emu.fault({ match: 'auth.test', kind: 'drop' });
    const net = await call('POST', `/api/connections/${id}/validate`);
    expect(net.body).toMatchObject({ valid: false, error: { code: 'NETWORK_ERROR' } });
    expect((await call('GET', `/api/connections/${id}`)).body.status).toBe('connected');
    const again = await call('POST', `/api/connections/${id}/validate`);
    expect(again.body.valid).toBe(true);
    expect((await call('GET', `/api/connections/${id}`)).body.status).toBe('connected');
  });

  it('channels: the platform list merged with the saved selection; channel_ids, sync_all, unknown ids 400', async () => {
    const { id } = (await create()).body;
    const listed = await call('GET', `/api/connections/${id}/channels`);
    expect(listed.status).toBe(200);
    expect(listed.body.length).toBe(emu.channels.length);
    for (const c of listed.body) {
      expect(Object.keys(c).sort()).toEqual(['id', 'is_private', 'member_count', 'name', 'sync_enabled']);
      expect(c.name.startsWith('#')).toBe(true);
      expect(c.sync_enabled).toBe(false);
    }
    const first = listed.body[0].id;
    const one = await call('PUT', `/api/connections/${id}/channels`, { channel_ids: [first] });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ connection_id: id, channel_count: 1 });
    const after = (await call('GET', `/api/connections/${id}/channels`)).body;
    expect(after.filter((c: { sync_enabled: boolean }) => c.sync_enabled).map((c: { id: string }) => c.id)).toEqual([
      first,
    ]);
    expect((await call('GET', `/api/connections/${id}`)).body.channel_count).toBe(1);
    const all = await call('PUT', `/api/connections/${id}/channels`, { sync_all: true });
    const publics = listed.body.filter((c: { is_private: boolean }) => !c.is_private).length;
    expect(all.body.channel_count).toBe(publics);
    const unknown = await call('PUT', `/api/connections/${id}/channels`, { channel_ids: [first, 'C_NOPE'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.unknown_channel_ids).toEqual(['C_NOPE']);
    expect((await call('PUT', `/api/connections/${id}/channels`, {})).status).toBe(400);
    expect((await call('GET', `/api/connections/${id}`)).body.channel_count).toBe(publics);
    emu.fault({ match: 'conversations.list', kind: 'ratelimit', retryAfter: 7 });
    const limited = await call('GET', `/api/connections/${id}/channels`);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { retry_after: 7 } });
    emu.fault({ match: 'conversations.list', kind: 'status', status: 503, times: 5 });
    expect((await call('GET', `/api/connections/${id}/channels`)).body.error.code).toBe('PROVIDER_UNAVAILABLE');
    emu.clearFaults();
    emu.setToken(TOKEN, { state: 'token_revoked' });
    const revoked = await call('GET', `/api/connections/${id}/channels`);
    expect(revoked.status).toBe(400);
    expect((await call('GET', `/api/connections/${id}`)).body.status).toBe('error');
  });

  it('DELETE answers 204 with no body; the connection is gone', async () => {
    const { id } = (await create()).body;
    await call('PUT', `/api/connections/${id}/channels`, { sync_all: true });
    const del = await call('DELETE', `/api/connections/${id}`);
    expect(del.status).toBe(204);
    expect(del.raw).toBe('');
    expect((await call('GET', `/api/connections/${id}`)).status).toBe(404);
    expect((await call('DELETE', `/api/connections/${id}`)).status).toBe(404);
  });

  it('platform_b: create with bot_token and guild_id, validate, channels; a wrong guild or token is refused', async () => {
    const credsB = { bot_token: TOKEN_B, guild_id: discord.guild.id };
    const created = await call('POST', '/api/connections', {
      platform: 'platform_b',
      name: 'ETHGlobal',
      credentials: credsB,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ platform: 'platform_b', status: 'connected' });
    const { id } = created.body;
    const v = await call('POST', `/api/connections/${id}/validate`);
    expect(v.body).toMatchObject({
      valid: true,
      connection: { id, status: 'connected' },
      workspace: { id: discord.guild.id },
    });
    const channels = await call('GET', `/api/connections/${id}/channels`);
    expect(channels.status).toBe(200);
    expect(channels.body.length).toBeGreaterThan(0);
    const chosen = await call('PUT', `/api/connections/${id}/channels`, { channel_ids: [channels.body[0].id] });
    expect(chosen.body.channel_count).toBe(1);
    const mismatch = await call('PUT', `/api/connections/${id}`, {
      credentials: { bot_token: TOKEN_B, signing_secret: 'x' },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.message).toMatch(/platform mismatch/);
    const wrongToken = await call('POST', '/api/connections', {
      platform: 'platform_b',
      name: 'x',
      credentials: { ...credsB, bot_token: 'not.the-bot-token' },
    });
    expect(wrongToken.status).toBe(400);
    expect(wrongToken.body.error.details.validation_error.code).toBe('INVALID_CREDENTIALS');
    const wrongGuild = await call('POST', '/api/connections', {
      platform: 'platform_b',
      name: 'x',
      credentials: { ...credsB, guild_id: '999999999999999999' },
    });
    expect(wrongGuild.status).toBeGreaterThanOrEqual(400);
    expect(wrongGuild.status).toBeLessThan(500);
    expect((await call('GET', '/api/connections')).body.filter((c: { name: string }) => c.name === 'x')).toEqual([]);
  });

  it('credentials stored under another CREDENTIAL_MASTER_KEY: 500 INTERNAL_ERROR saying so; views still served', async () => {
    const { id } = (await create()).body;
    const ports = apiPorts(rt);
    const other = await buildApp({
      ...ports,
      connections: {
        ...ports.connections!,
        store: new ConnectionStore(rt.database.db, new CredentialCipher('6b'.repeat(32))),
      },
    });
    try {
      const res = await other.inject({ method: 'POST', url: `/api/connections/${id}/validate` });
      bodies.push(res.body);
      expect(res.statusCode).toBe(500);
      expect(res.json().error).toMatchObject({ code: 'INTERNAL_ERROR', details: { reason: 'wrong_key' } });
      expect(res.json().error.message).toMatch(/CREDENTIAL_MASTER_KEY/);
      expect((await other.inject({ method: 'GET', url: `/api/connections/${id}` })).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });

  // Last: every call above went through the same app and logger.
  it('the known token and signing secret appear in no log line and no response body', () => {
    expect(logs.length).toBeGreaterThan(20);
    expect(logs.some((l) => l.includes('/api/connections'))).toBe(true);
    // The error handler logged the 503s with their error objects (details included): those lines are checked too.
    expect(logs.some((l) => l.includes('"level":50') && l.includes('PROVIDER_UNAVAILABLE'))).toBe(true);
    expect(bodies.length).toBeGreaterThan(40);
    for (const secret of SECRETS) {
      for (const line of logs) expect(line).not.toContain(secret);
      for (const body of bodies) expect(body).not.toContain(secret);
    }
  });
});
