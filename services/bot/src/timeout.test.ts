import { guardCacheQueue, MemoryCacheQueue } from '@atlas/stores';
import { afterAll, describe, expect, it } from 'vitest';
import { buildBotApp } from './app.js';
import { BackendClient } from './backend.js';
import { signA, slashCommand } from './bot.test-support.js';
import { OFFLINE_TEXT } from './commands.js';

/** A cache/queue store that accepts calls and never answers them (a hung server): only the 2 s timeout ends them. */
class HungStore extends MemoryCacheQueue {
  override claim(): Promise<boolean> {
    return new Promise(() => undefined);
  }
  override ping(): Promise<void> {
    return new Promise(() => undefined);
  }
}

/**
 * Spec "Degraded behaviour": the cache/queue store's timeout is 2 s. A store that hangs (no refusal, no answer) is cut
 * by its breaker at 2 s, so a slash command is still answered inside the platform's 3 s, with the offline text.
 */
describe('a hung cache/queue store: the 2 s timeout of its breaker', () => {
  const store = guardCacheQueue(new HungStore(), { name: 'cache_queue:hung-test' });
  afterAll(() => store.breaker.shutdown());

  it('a command answers "temporarily offline" after about 2 s (inside 3 s); health answers 503 offline', async () => {
    const app = await buildBotApp({
      store: { ...store, kind: 'memory' },
      backend: new BackendClient({ apiUrl: 'http://127.0.0.1:9', bridgeKey: null }),
      platformA: { signingSecret: 's' },
      platformB: null,
    });
    try {
      const payload = slashCommand({ text: 'ask anything', channel_id: 'C1', response_url: 'http://127.0.0.1:9/r' });
      const started = Date.now();
      const res = await app.inject({
        method: 'POST',
        url: '/platform_a/commands',
        payload,
        headers: signA('s', payload),
      });
      const ms = Date.now() - started;
      expect(res.json()).toMatchObject({ response_type: 'ephemeral', text: OFFLINE_TEXT });
      expect(ms).toBeGreaterThanOrEqual(1_900);
      expect(ms).toBeLessThan(3_000);
      const health = await app.inject({ method: 'GET', url: '/health' });
      expect(health.statusCode).toBe(503);
      expect(health.json()).toMatchObject({
        status: 'offline',
        dependencies: { cache_queue_store: 'failing', backend: 'failing' },
      });
    } finally {
      await app.close();
    }
  });
});
