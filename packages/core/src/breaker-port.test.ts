import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { CircuitBreaker } from './breaker.js';
import { dependencyBreaker, guardPort, isDependencyFault } from './breaker-port.js';
import { BREAKER_STATE_VALUE, BreakerSet, healthOfBreakers } from './breaker-set.js';
import { AtlasError } from './errors.js';

const made: CircuitBreaker[] = [];
afterEach(() => {
  for (const b of made.splice(0)) b.shutdown();
});
const breaker = (resetMs = 100) => {
  const b = dependencyBreaker('graph_store', { name: 'graph_store:test', timeoutMs: 100, resetMs, logger: null });
  made.push(b);
  return b;
};

/** A port on a real TCP dependency: `ping` connects and waits for the server's first byte. */
class TcpPort {
  calls = 0;
  constructor(public port: number) {}
  async ping(): Promise<string> {
    this.calls++;
    return new Promise((resolve, reject) => {
      const s = net.connect(this.port, '127.0.0.1');
      s.once('data', (d) => {
        s.destroy();
        resolve(d.toString());
      });
      s.once('error', reject);
    });
  }
  async bad(): Promise<never> {
    throw new AtlasError('INVALID_REQUEST', 'bad input');
  }
  close(): string {
    return 'closed';
  }
}

/** A real server: answers `hi`, stalls (accepts and says nothing), or is closed (connections refused). */
const server = async (mode: { stall: boolean }) => {
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    if (!mode.stall) s.write('hi');
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        srv.close(() => r());
      }),
  };
};

describe('guardPort', () => {
  it('passes calls through while CLOSED and lists the breaker under its dependency', async () => {
    const srv = await server({ stall: false });
    const b = breaker();
    const port = guardPort(new TcpPort(srv.port), b, { errorCode: 'STORE_UNAVAILABLE', methods: { close: 'bypass' } });
    expect(await port.ping()).toBe('hi');
    expect(port.close()).toBe('closed'); // bypassed: synchronous, not through the breaker
    const snap = new BreakerSet()
      .add(b)
      .snapshots()
      .find((s) => s.name === 'graph_store:test');
    expect(snap).toMatchObject({ dependency: 'graph_store', state: 'CLOSED', consecutiveFailures: 0 });
    expect(healthOfBreakers([snap!])).toBe('healthy');
    await srv.close();
  });

  it('a refused connection becomes STORE_UNAVAILABLE; 3 open the breaker, then calls are not sent', async () => {
    const srv = await server({ stall: false });
    await srv.close(); // nothing listens on the port any more
    const b = breaker();
    const target = new TcpPort(srv.port);
    const port = guardPort(target, b, { errorCode: 'STORE_UNAVAILABLE' });
    for (let i = 0; i < 3; i++) {
      const err = await port.ping().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AtlasError);
      expect(err).toMatchObject({ code: 'STORE_UNAVAILABLE', retriable: true });
    }
    expect(b.state).toBe('OPEN');
    const err = await port.ping().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STORE_UNAVAILABLE', details: { dependency: 'graph_store', state: 'OPEN' } });
    expect(target.calls).toBe(3);
    expect(healthOfBreakers([b.snapshot()])).toBe('failing');
    expect(BREAKER_STATE_VALUE[b.state]).toBe(2);
  });

  it('a stalled server times out (a failure); after the reset one probe closes it when the server is back', async () => {
    const mode = { stall: true };
    const srv = await server(mode);
    const b = breaker(200);
    const port = guardPort(new TcpPort(srv.port), b, { errorCode: 'STORE_UNAVAILABLE' });
    for (let i = 0; i < 3; i++) await expect(port.ping()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(b.state).toBe('OPEN');
    mode.stall = false;
    await new Promise((r) => setTimeout(r, 250));
    expect(b.state).toBe('HALF_OPEN');
    expect(healthOfBreakers([b.snapshot()])).toBe('degraded');
    expect(await port.ping()).toBe('hi');
    expect(b.state).toBe('CLOSED');
    await srv.close();
  });

  it('errors of the request itself pass through and do not count', async () => {
    const b = breaker();
    const port = guardPort(new TcpPort(1), b, { errorCode: 'STORE_UNAVAILABLE' });
    for (let i = 0; i < 4; i++) await expect(port.bad()).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect(b.state).toBe('CLOSED');
  });

  it('a per-call timeout (cold start) lets a slow first call finish', async () => {
    const b = breaker();
    const slow = {
      first: true,
      async load() {
        await new Promise((r) => setTimeout(r, 300));
        return 'loaded';
      },
    };
    const port = guardPort(slow, b, {
      errorCode: 'STORE_UNAVAILABLE',
      timeoutFor: () => (slow.first ? 1_000 : undefined),
    });
    expect(await port.load()).toBe('loaded');
    slow.first = false;
    await expect(port.load()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('shutdown removes the breaker from its set', () => {
    const b = breaker();
    const set = new BreakerSet().add(b);
    expect(set.snapshots().some((s) => s.name === b.name)).toBe(true);
    b.shutdown();
    expect(set.snapshots().some((s) => s.name === b.name)).toBe(false);
  });
});

describe('isDependencyFault', () => {
  it('tells outages from bad requests', () => {
    expect(isDependencyFault(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDependencyFault(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe(true);
    expect(isDependencyFault(Object.assign(new Error('role cannot log in'), { code: '28000' }))).toBe(true);
    expect(isDependencyFault(Object.assign(new Error('syntax error'), { code: '42601' }))).toBe(false);
    expect(isDependencyFault(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDependencyFault(new TypeError('x is undefined'))).toBe(false);
    expect(isDependencyFault(new AtlasError('NOT_FOUND', 'x'))).toBe(false);
    expect(isDependencyFault(new AtlasError('STORE_UNAVAILABLE', 'x', { retriable: true }))).toBe(true);
  });
});
