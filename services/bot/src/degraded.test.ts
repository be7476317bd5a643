import { randomUUID } from 'node:crypto';
import { loadConfig } from '@atlas/core';
import { parseAskStream } from '@atlas/query';
import {
  type Atlas,
  BRIDGE_KEY,
  type FaultProxy,
  faultProxy,
  kafkaConversation,
  openAtlas,
} from '@atlas/runtime/testing';
import { RedisCacheQueue } from '@atlas/stores';
import { freshChannelId, waitFor } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningBot, startBot } from './bot.js';
import { ed25519App, openReceiver, signA, slashCommand } from './bot.test-support.js';
import { OFFLINE_TEXT } from './commands.js';

/**
 * Spec "Degraded behaviour when a dependency fails": cache/queue store, not critical, 2 s, fallback "chat bot
 * offline"; "cache/queue store down: ingestion none, query none; the bot is unavailable". The bot runs on the Redis
 * adapter (ATLAS_TEST_REDIS_URL) reached through a TCP proxy that the test cuts (every open connection closed, new
 * ones closed at once) and restores; its breaker resets after 500 ms so the recovery is seen in the test's time. A
 * real Atlas API (embedded profile) serves beside it. Runs when Redis is listed; a listed Redis that does not answer
 * fails the suite (the "all up" case needs it).
 */
const REDIS = process.env.ATLAS_TEST_REDIS_URL;
const SECRET = 'platform-a-signing-secret';

describe.runIf(REDIS)('cache/queue store down (Redis behind a cut TCP proxy): only the bot goes offline', () => {
  let atlas: Atlas;
  let receiver: Awaited<ReturnType<typeof openReceiver>>;
  let proxy: FaultProxy;
  let bot: RunningBot;
  const keyPrefix = `atlas-test:${randomUUID()}:`;
  const b = ed25519App();
  const ch = freshChannelId();
  let apiHealthBefore: { status: string; dependencies: Record<string, string> };
  let searchBefore: string[];

  const slash = async (text: string, path: string) => {
    const body = slashCommand({ text, channel_id: ch, response_url: `${receiver.url}${path}` });
    const started = Date.now();
    const res = await fetch(`${bot.url}/platform_a/commands`, { method: 'POST', body, headers: signA(SECRET, body) });
    return { status: res.status, ms: Date.now() - started, body: (await res.json()) as { text: string } };
  };
  const interaction = async (sub: 'ask' | 'sync' | 'wiki', token: string) => {
    const body = JSON.stringify({
      id: randomUUID(),
      type: 2,
      application_id: 'app1',
      token,
      channel_id: ch,
      data: {
        name: 'atlas',
        options: [
          sub === 'ask'
            ? { name: 'ask', type: 1, options: [{ name: 'question', type: 3, value: 'Who owns the Kafka migration?' }] }
            : { name: sub, type: 1 },
        ],
      },
    });
    const res = await fetch(`${bot.url}/platform_b/interactions`, { method: 'POST', body, headers: b.headers(body) });
    return (await res.json()) as { type: number; data?: { content?: string; flags?: number } };
  };
  const botHealth = async () => {
    const res = await fetch(`${bot.url}/health`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const apiHealth = async () => {
    const r = await atlas.call('GET', '/api/health');
    return { status: r.body.status as string, dependencies: r.body.dependencies as Record<string, string> };
  };
  const search = async () => {
    const r = await atlas.call('POST', '/api/search', { query: 'Kafka migration brokers', channel_id: ch, limit: 10 });
    expect(r.status).toBe(200);
    return (r.body.results as { memory: { memory_text: string } }[]).map((x) => x.memory.memory_text);
  };
  const apiAsk = async () => {
    const res = await fetch(`${atlas.url}/api/ask`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-atlas-bridge-key': BRIDGE_KEY },
      body: JSON.stringify({ question: 'Who will own the Kafka migration?' }),
    });
    const events = parseAskStream([await res.text()]);
    return {
      status: res.status,
      text: events.flatMap((e) => (e.type === 'token' ? [e.content] : [])).join(''),
      done: events.some((e) => e.type === 'done'),
    };
  };

  beforeAll(async () => {
    const url = new URL(REDIS!);
    proxy = await faultProxy({ host: url.hostname, port: Number(url.port || 6379) });
    atlas = await openAtlas();
    receiver = await openReceiver();
    await atlas.ingest(kafkaConversation(ch));
    bot = await startBot(
      loadConfig({
        BOT_PORT: '0',
        ATLAS_API_URL: atlas.url,
        BRIDGE_API_KEY: BRIDGE_KEY,
        PLATFORM_A_SIGNING_SECRET: SECRET,
        PLATFORM_B_PUBLIC_KEY: b.publicHex,
        PLATFORM_B_API_URL: receiver.url,
        REDIS_URL: `redis://${proxy.host}:${proxy.port}${url.pathname}`,
        BREAKER_RESET_MS: '500',
      }),
      { keyPrefix, consumer: 'bot-degraded-test' },
    );
  }, 120_000);
  afterAll(async () => {
    await bot?.close();
    if (REDIS) {
      const cleanup = new RedisCacheQueue(REDIS, { keyPrefix });
      try {
        await cleanup.connect(5_000);
        expect(await cleanup.deleteAll()).toBeGreaterThan(0); // this run's keys (claims, cached answers) existed
      } finally {
        await cleanup.close();
      }
    }
    await proxy?.close();
    await receiver?.close();
    await atlas?.close();
  });

  it('all up: the bot is healthy on Redis and answers /atlas ask through the queue', async () => {
    const health = await botHealth();
    expect(health).toMatchObject({
      status: 200,
      body: { status: 'healthy', cache_queue: 'redis', dependencies: { cache_queue_store: 'healthy' } },
    });
    const ack = await slash('ask who will own the Kafka migration?', '/response/up');
    expect(ack.status).toBe(200);
    expect(ack.body.text).toMatch(/Looking into it/);
    expect((await receiver.next('/response/up')).body.text).toMatch(/Bob will own the Kafka migration/);
    apiHealthBefore = await apiHealth();
    searchBefore = await search();
    expect(searchBefore.length).toBeGreaterThan(0);
    expect(apiHealthBefore.dependencies).not.toHaveProperty('cache_queue'); // nothing of the API depends on it
  });

  it('Redis cut: bot health 503 offline, every command answers "temporarily offline" within 3 s, nothing queued', async () => {
    proxy.mode = 'down';
    const health = await botHealth();
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'offline', dependencies: { cache_queue_store: 'failing' } });

    for (const [text, path] of [
      ['ask who will own the Kafka migration?', '/response/down-ask'],
      ['sync', '/response/down-sync'],
      ['wiki', '/response/down-wiki'],
    ] as const) {
      const r = await slash(text, path);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ response_type: 'ephemeral', text: OFFLINE_TEXT });
      expect(r.ms).toBeLessThan(3_000);
    }
    for (const sub of ['ask', 'sync', 'wiki'] as const)
      expect(await interaction(sub, `down-${sub}`)).toEqual({
        type: 4,
        data: { content: OFFLINE_TEXT, allowed_mentions: { parse: [] }, flags: 64 },
      });
    // The failures opened the cache_queue breaker: calls are now refused at once, unsent.
    await waitFor(() => bot.store.breaker.state !== 'CLOSED', 'the cache_queue breaker to open', 5_000);
    expect(bot.store.breaker.dependency).toBe('cache_queue');
    expect((await botHealth()).status).toBe(503);

    await new Promise((r) => setTimeout(r, 1_000)); // time for a reply, had any command been queued
    expect(receiver.posts.filter((p) => p.path.includes('down'))).toEqual([]);
  });

  it('Redis cut: the API is unchanged: same /api/health, same search results, ask still answers', async () => {
    expect(proxy.mode).toBe('down');
    expect(await apiHealth()).toEqual(apiHealthBefore);
    expect(await search()).toEqual(searchBefore);
    const ask = await apiAsk();
    expect(ask.status).toBe(200);
    expect(ask.done).toBe(true);
    expect(ask.text).toMatch(/Bob will own the Kafka migration/);
  });

  it('Redis back: the half-open probe closes the breaker, health 200, and commands are answered again', async () => {
    proxy.mode = 'up';
    await waitFor(async () => (await botHealth()).status === 200, 'the bot to come back online', 20_000);
    expect(bot.store.breaker.state).toBe('CLOSED');
    expect((await botHealth()).body).toMatchObject({
      status: 'healthy',
      dependencies: { cache_queue_store: 'healthy' },
    });
    const ack = await slash('ask how many brokers does Kafka need in production?', '/response/back');
    expect(ack.body.text).toMatch(/Looking into it/);
    expect((await receiver.next('/response/back')).body.text).toMatch(/three brokers/);
    expect(await interaction('wiki', 'back-wiki')).toEqual({ type: 5, data: { flags: 64 } });
    expect((await receiver.next('/v10/webhooks/app1/back-wiki')).body.content).toMatch(/no wiki yet/);
  });
});
