import { loadConfig } from '@atlas/core';
import { ADMIN_KEY, type Atlas, BRIDGE_KEY, kafkaConversation, openAtlas } from '@atlas/runtime/testing';
import { freshChannelId } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningBot, startBot } from './bot.js';
import { ed25519App, openReceiver, signA, slashCommand } from './bot.test-support.js';
import { HELP_TEXT } from './commands.js';
import { COMMAND_QUEUE } from './jobs.js';

/**
 * The bot end to end: a real Atlas API (embedded profile, every projector) over HTTP, the bot on its in-process
 * cache/queue store listening on a free port, a real HTTP server receiving platform_a's response_url posts and
 * platform_b's follow-ups, and requests signed for real (HMAC-SHA256; a fresh Ed25519 key pair).
 */
const SECRET = 'platform-a-signing-secret';

describe('bot: slash commands against a real Atlas API', () => {
  let atlas: Atlas;
  let receiver: Awaited<ReturnType<typeof openReceiver>>;
  let bot: RunningBot;
  const b = ed25519App();
  const ch = freshChannelId();
  const post = (path: string, body: string, headers: Record<string, string>) =>
    fetch(`${bot.url}${path}`, { method: 'POST', body, headers });

  beforeAll(async () => {
    atlas = await openAtlas();
    receiver = await openReceiver();
    await atlas.ingest(kafkaConversation(ch));
    bot = await startBot(
      loadConfig({
        BOT_PORT: '0',
        ATLAS_API_URL: atlas.url,
        PUBLIC_URL: 'https://atlas.example.org',
        BRIDGE_API_KEY: BRIDGE_KEY,
        PLATFORM_A_SIGNING_SECRET: SECRET,
        PLATFORM_B_PUBLIC_KEY: b.publicHex,
        PLATFORM_B_API_URL: receiver.url,
      }),
      { consumer: 'bot-test' },
    );
  }, 120_000);
  afterAll(async () => {
    await bot?.close();
    await receiver?.close();
    await atlas?.close();
  });

  it('GET /health: healthy, with the in-process cache/queue store and the backend healthy', async () => {
    const res = await fetch(`${bot.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: 'healthy',
      dependencies: { cache_queue_store: 'healthy', backend: 'healthy' },
      cache_queue: 'memory',
      platforms: { platform_a: true, platform_b: true },
    });
  });

  it('platform_a: a missing, wrong or stale signature is 401 with the shared error body', async () => {
    const body = slashCommand({ text: 'ask anything', channel_id: ch, response_url: `${receiver.url}/response/x` });
    const none = await post('/platform_a/commands', body, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    expect((await post('/platform_a/commands', body, signA('another-secret', body))).status).toBe(401);
    const tampered = signA(SECRET, body);
    expect((await post('/platform_a/commands', `${body}&text=sync`, tampered)).status).toBe(401);
    const sixMinutesAgo = Math.floor(Date.now() / 1000) - 6 * 60;
    expect((await post('/platform_a/commands', body, signA(SECRET, body, sixMinutesAgo))).status).toBe(401);
    expect(receiver.posts).toHaveLength(0);
    expect(await bot.store.port.depth(COMMAND_QUEUE)).toBe(0);
  });

  it('platform_a: an unknown or empty subcommand answers the help text at once, nothing queued', async () => {
    for (const text of ['dance', '', 'ask']) {
      const body = slashCommand({ text, channel_id: ch, response_url: `${receiver.url}/response/help` });
      const res = await post('/platform_a/commands', body, signA(SECRET, body));
      expect(res.status).toBe(200);
      // platform_a mrkdwn: `<` and `>` escaped, so `<question>` is not read as a link.
      const escaped = HELP_TEXT.replace('<', '&lt;').replace('>', '&gt;');
      expect(await res.json()).toMatchObject({ response_type: 'ephemeral', text: escaped });
    }
    expect(receiver.posts.filter((p) => p.path === '/response/help')).toHaveLength(0);
  });

  it('platform_a: /atlas ask is acknowledged within 3 s and the answer with linked sources is posted to response_url', async () => {
    const body = slashCommand({
      text: 'ask who will own the Kafka migration?',
      channel_id: ch,
      response_url: `${receiver.url}/response/ask1`,
    });
    const started = Date.now();
    const res = await post('/platform_a/commands', body, signA(SECRET, body));
    const ackMs = Date.now() - started;
    expect(res.status).toBe(200);
    expect(ackMs).toBeLessThan(3_000);
    expect(await res.json()).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringMatching(/Looking into it/),
    });
    const answer = await receiver.next('/response/ask1');
    expect(answer.body.response_type).toBe('in_channel');
    const text = answer.body.text as string;
    expect(text).toMatch(/Bob will own the Kafka migration/);
    expect(text).toMatch(/\*Sources:\*/);
    // Issue 27 point 3: how current the answer is, in the shared wording (the conversation's newest message, in UTC).
    expect(text).toMatch(/\n\n\(current to 14 Nov 2023 \d\d:\d\d UTC\)/);
    // Each source is a platform_a link to the message's permalink: <url|[n] author, #channel, date>.
    expect(text).toMatch(
      new RegExp(`<https://acme\\.slack\\.com/archives/${ch}/p\\d+\\|\\[1\\] \\w+, #platform, 2023-11-14>`),
    );
  });

  it('platform_a: a repeated delivery of one command (same trigger_id) is acknowledged but worked off once', async () => {
    const body = slashCommand({
      text: 'ask how many brokers does Kafka need?',
      channel_id: ch,
      response_url: `${receiver.url}/response/twice`,
      trigger_id: 'trigger-repeated',
    });
    const first = await post('/platform_a/commands', body, signA(SECRET, body));
    const retry = await post('/platform_a/commands', body, signA(SECRET, body, Math.floor(Date.now() / 1000) + 1));
    expect([first.status, retry.status]).toEqual([200, 200]);
    await receiver.next('/response/twice');
    await new Promise((r) => setTimeout(r, 1_500)); // time for a second delivery, if one had been queued
    expect(receiver.posts.filter((p) => p.path === '/response/twice')).toHaveLength(1);
  });

  it('platform_a: the same question again is answered from the answer cache, without a new ask to the backend', async () => {
    const sessions = async () => {
      const r = await atlas.call('GET', '/api/ask/sessions');
      return (Array.isArray(r.body) ? r.body : r.body.sessions).length as number;
    };
    const ask = async (n: number) => {
      const body = slashCommand({
        text: 'ask What is the retention of the event log?',
        channel_id: ch,
        response_url: `${receiver.url}/response/cache${n}`,
      });
      await post('/platform_a/commands', body, signA(SECRET, body));
      return receiver.next(`/response/cache${n}`);
    };
    const before = await sessions();
    const a = await ask(1);
    expect(await sessions()).toBe(before + 1);
    const b2 = await ask(2);
    expect(await sessions()).toBe(before + 1); // served from the cache/queue store
    expect(b2.body.text).toBe(a.body.text);
    expect(a.body.text).toMatch(/seven days/);
  });

  it('platform_a: /atlas sync of a channel in no connection says why; of a connected channel starts a job; twice is 409', async () => {
    const body = slashCommand({ text: 'sync', channel_id: ch, response_url: `${receiver.url}/response/sync0` });
    await post('/platform_a/commands', body, signA(SECRET, body));
    expect((await receiver.next('/response/sync0')).body.text).toMatch(/The sync could not start: .*in no connection/);

    const unknown = freshChannelId();
    const b1 = slashCommand({ text: 'sync', channel_id: unknown, response_url: `${receiver.url}/response/sync404` });
    await post('/platform_a/commands', b1, signA(SECRET, b1));
    expect((await receiver.next('/response/sync404')).body.text).toMatch(/is not in Atlas yet/);

    // ADAPTER_MOCK: a connection with any credentials, its #engineering channel selected (no sync worker runs here,
    // so the job stays queued and a second sync is a conflict).
    const created = await atlas.call('POST', '/api/connections', {
      platform: 'platform_a',
      name: 'Bot test',
      credentials: { bot_token: 'xoxb-anything', signing_secret: 'anything' },
    });
    expect(created.status).toBe(201);
    const channels = await atlas.call('GET', `/api/connections/${created.body.id}/channels`);
    const eng = channels.body[0].id as string;
    await atlas.call('PUT', `/api/connections/${created.body.id}/channels`, { channel_ids: [eng] });
    const b2 = slashCommand({
      text: 'sync',
      channel_id: eng,
      channel_name: 'engineering',
      response_url: `${receiver.url}/response/sync1`,
    });
    await post('/platform_a/commands', b2, signA(SECRET, b2));
    const started = (await receiver.next('/response/sync1')).body;
    expect(started.response_type).toBe('ephemeral');
    const jobId = /job ([0-9a-f-]{36})/.exec(started.text as string)?.[1];
    expect(started.text).toMatch(/^Sync of #engineering started/);
    const status = await atlas.call('GET', `/api/sync/status?channel_id=${eng}&job_id=${jobId}`);
    expect(status.status).toBe(200);
    expect(status.body.job_id).toBe(jobId);

    const b3 = slashCommand({
      text: 'sync',
      channel_id: eng,
      channel_name: 'engineering',
      response_url: `${receiver.url}/response/sync2`,
    });
    await post('/platform_a/commands', b3, signA(SECRET, b3));
    expect((await receiver.next('/response/sync2')).body.text).toBe(
      `A sync of #engineering is already running (job ${jobId}).`,
    );
  });

  it('platform_a: /atlas digest: the last 7 days of the channel (a quiet week says so); an unknown channel says how to add it', async () => {
    const body = slashCommand({ text: 'digest', channel_id: ch, response_url: `${receiver.url}/response/digest0` });
    await post('/platform_a/commands', body, signA(SECRET, body));
    const quiet = (await receiver.next('/response/digest0')).body;
    // The conversation is from 2023: nothing in the 7 days up to now, said only to the user who asked.
    expect(quiet.response_type).toBe('ephemeral');
    expect(quiet.text).toMatch(/Digest of #platform, \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d/);
    expect(quiet.text).toContain('No decision, action item or new topic in this period.');
    const week = (await atlas.call('GET', `/api/channels/${ch}/digest?days=7`)).body;
    expect(week.has_activity).toBe(false);
    const unknown = slashCommand({
      text: 'digest',
      channel_id: freshChannelId(),
      response_url: `${receiver.url}/response/digest404`,
    });
    await post('/platform_a/commands', unknown, signA(SECRET, unknown));
    expect((await receiver.next('/response/digest404')).body.text).toMatch(/is not in Atlas yet/);
  });

  it('platform_a: /atlas wiki before a generation says how to get one; after it links the wiki at PUBLIC_URL', async () => {
    const before = slashCommand({ text: 'wiki', channel_id: ch, response_url: `${receiver.url}/response/wiki0` });
    await post('/platform_a/commands', before, signA(SECRET, before));
    expect((await receiver.next('/response/wiki0')).body.text).toMatch(/has no wiki yet/);

    await atlas.rt.wikiGenerator!.generate(ch, 'full');
    const after = slashCommand({ text: 'wiki', channel_id: ch, response_url: `${receiver.url}/response/wiki1` });
    await post('/platform_a/commands', after, signA(SECRET, after));
    const text = (await receiver.next('/response/wiki1')).body.text as string;
    expect(text).toMatch(/^Wiki of #platform: \d+ sections, generated \d{4}-/);
    // The link opens the readable HTML wiki (docs/http.md "Readable wiki"), not the JSON of /api/wiki/{channel_id}.
    expect(text).toContain(`<https://atlas.example.org/wiki/${ch}|#platform wiki>`);
    expect((await atlas.call('GET', `/api/wiki/${ch}`)).status).toBe(200);
    // The same path on the API this test runs; HTML pages need a key like every route (docs/access.md).
    expect((await fetch(`${atlas.url}/wiki/${ch}`)).status).toBe(401);
    const page = await fetch(`${atlas.url}/wiki/${ch}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('1 Overview</a>');
  });

  it('the backend refuses a wrong bridge key and a request without any credential (never taken for the bridge); the right key passes', async () => {
    const wrong = await fetch(`${atlas.url}/api/channels`, { headers: { 'x-atlas-bridge-key': 'not-the-key' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({
      error: { code: 'UNAUTHORIZED', message: 'the x-atlas-bridge-key header does not match BRIDGE_API_KEY' },
    });
    expect((await atlas.call('GET', '/api/channels')).status).toBe(200);
    expect((await fetch(`${atlas.url}/api/channels`, { headers: { 'x-atlas-bridge-key': BRIDGE_KEY } })).status).toBe(
      200,
    );
    const bare = await fetch(`${atlas.url}/api/channels`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe('Bearer realm="atlas"');
  });

  it('a bot whose bridge key the backend refuses answers that in the reply', async () => {
    const other = await startBot(
      loadConfig({
        BOT_PORT: '0',
        ATLAS_API_URL: atlas.url,
        BRIDGE_API_KEY: 'a-stale-key',
        PLATFORM_A_SIGNING_SECRET: SECRET,
      }),
      { consumer: 'bot-test-stale' },
    );
    try {
      const body = slashCommand({ text: 'wiki', channel_id: ch, response_url: `${receiver.url}/response/stale` });
      await fetch(`${other.url}/platform_a/commands`, { method: 'POST', body, headers: signA(SECRET, body) });
      expect((await receiver.next('/response/stale')).body.text).toMatch(/refused this bot .*BRIDGE_API_KEY/);
    } finally {
      await other.close();
    }
  });

  it('platform_b: PING → PONG; a bad signature is 401; an unknown subcommand answers the help text', async () => {
    const ping = JSON.stringify({ id: 'i0', type: 1, application_id: 'app1', token: 't0' });
    const pong = await post('/platform_b/interactions', ping, b.headers(ping));
    expect(pong.status).toBe(200);
    expect(await pong.json()).toEqual({ type: 1 });
    const forged = ed25519App().headers(ping); // signed by another key
    expect((await post('/platform_b/interactions', ping, forged)).status).toBe(401);
    const headers = b.headers(ping);
    expect((await post('/platform_b/interactions', ping.replace('i0', 'i9'), headers)).status).toBe(401);

    const other = JSON.stringify({
      id: 'i1',
      type: 2,
      application_id: 'app1',
      token: 't1',
      channel_id: ch,
      data: { name: 'atlas', options: [{ name: 'dance', type: 1 }] },
    });
    const help = await post('/platform_b/interactions', other, b.headers(other));
    expect(await help.json()).toMatchObject({ type: 4, data: { content: HELP_TEXT, flags: 64 } });
  });

  it('platform_b: /atlas ask is deferred (type 5) and the answer with sources arrives as the follow-up', async () => {
    const body = JSON.stringify({
      id: 'i2',
      type: 2,
      application_id: 'app1',
      token: 'token-ask',
      channel_id: ch,
      member: { user: { id: 'U9' } },
      data: {
        name: 'atlas',
        options: [
          { name: 'ask', type: 1, options: [{ name: 'question', type: 3, value: 'Who owns the Kafka migration?' }] },
        ],
      },
    });
    const started = Date.now();
    const res = await post('/platform_b/interactions', body, b.headers(body));
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await res.json()).toEqual({ type: 5 });
    const followUp = await receiver.next('/v10/webhooks/app1/token-ask');
    const content = followUp.body.content as string;
    expect(content).toMatch(/Bob will own the Kafka migration/);
    expect(content).toMatch(
      new RegExp(`\\[1\\] \\[\\w+, #platform, 2023-11-14\\]\\(<https://acme\\.slack\\.com/archives/${ch}/p\\d+>\\)`),
    );
    expect(content.length).toBeLessThanOrEqual(2_000);
    expect(followUp.body.allowed_mentions).toEqual({ parse: [] });
  });

  it('platform_b: /atlas wiki is deferred ephemeral and followed by the link', async () => {
    const body = JSON.stringify({
      id: 'i3',
      type: 2,
      application_id: 'app1',
      token: 'token-wiki',
      channel_id: ch,
      data: { name: 'atlas', options: [{ name: 'wiki', type: 1 }] },
    });
    const res = await post('/platform_b/interactions', body, b.headers(body));
    expect(await res.json()).toEqual({ type: 5, data: { flags: 64 } });
    const followUp = await receiver.next('/v10/webhooks/app1/token-wiki');
    expect(followUp.body.content).toContain(`[#platform wiki](<https://atlas.example.org/wiki/${ch}>)`);
    expect(followUp.body.flags).toBe(64);
  });
});
