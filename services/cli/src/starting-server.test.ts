import type { AddressInfo } from 'node:net';
import { PROJECTOR_NAMES } from '@atlas/runtime';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { PROJECTOR_SERVICES, SERVICES, unknownService } from './services.js';
import { listenWhileStarting } from './starting-server.js';

describe('listenWhileStarting (atlas start opens its port before anything heavy)', () => {
  it('answers /api/health from the first moment, other routes 503 with Retry-After, then hands the port to Fastify', async () => {
    const startedAt = Date.now() - 1500;
    const starting = await listenWhileStarting({ port: 0, host: '127.0.0.1', startedAt });
    const base = `http://127.0.0.1:${(starting.server.address() as AddressInfo).port}`;
    try {
      starting.step('migrating');
      const health = await fetch(`${base}/api/health`);
      expect(health.status).toBe(200);
      const body = (await health.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ status: 'degraded', dependencies: {}, starting: 'migrating' });
      expect(body.uptime).toBeGreaterThanOrEqual(1.5);
      expect(body.degraded_since).toBe(new Date(startedAt).toISOString());

      const read = await fetch(`${base}/api/channels`, { headers: { 'x-request-id': 'r-1' } });
      expect(read.status).toBe(503);
      expect(read.headers.get('retry-after')).toBe('1');
      expect(read.headers.get('x-request-id')).toBe('r-1');
      expect(await read.json()).toEqual({
        error: {
          code: 'STORE_UNAVAILABLE',
          message: 'Atlas is starting (migrating); retry in a moment',
          details: { starting: 'migrating', request_id: 'r-1' },
        },
      });
      // A body that is never read does not hold the answer up.
      const post = await fetch(`${base}/api/search`, {
        method: 'POST',
        body: JSON.stringify({ query: 'x'.repeat(1e5) }),
      });
      expect(post.status).toBe(503);

      const app = Fastify({ serverFactory: starting.serverFactory, requestTimeout: 12_345, keepAliveTimeout: 4_321 });
      app.get('/api/health', async () => ({ status: 'healthy' }));
      app.get('/api/channels', async () => [{ id: 'c1' }]);
      await app.ready();
      expect(app.server).toBe(starting.server); // the same socket: no moment without a listener
      expect(starting.server.requestTimeout).toBe(12_345); // the timeouts Fastify would set on a server of its own
      expect(starting.server.keepAliveTimeout).toBe(4_321);
      expect((await fetch(`${base}/api/channels`)).status).toBe(503); // until serve()
      starting.serve();
      expect(await (await fetch(`${base}/api/health`)).json()).toEqual({ status: 'healthy' });
      expect(await (await fetch(`${base}/api/channels`)).json()).toEqual([{ id: 'c1' }]);
      await app.close();
    } finally {
      await starting.close();
    }
    expect(starting.server.listening).toBe(false);
  });

  it('fails with the listen error when the port is taken', async () => {
    const first = await listenWhileStarting({ port: 0, host: '127.0.0.1', startedAt: Date.now() });
    try {
      const port = (first.server.address() as AddressInfo).port;
      await expect(listenWhileStarting({ port, host: '127.0.0.1', startedAt: Date.now() })).rejects.toMatchObject({
        code: 'EADDRINUSE',
      });
    } finally {
      await first.close();
    }
  });
});

describe('the services `atlas --help` names without loading them', () => {
  it('are the projectors of @atlas/projectors, in their order', () => {
    expect([...PROJECTOR_SERVICES]).toEqual(PROJECTOR_NAMES);
  });

  it('an unknown name is refused with the list', () => {
    expect(unknownService('all')).toBeNull();
    expect(unknownService('facts')).toBeNull();
    expect(unknownService('nope')).toBe(`unknown service 'nope' (one of: ${SERVICES.join(', ')})`);
  });
});
