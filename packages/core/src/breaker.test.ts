import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  BreakerOpenError,
  type BreakerState,
  BreakerTimeoutError,
  type BreakerTransition,
  CircuitBreaker,
  type CircuitBreakerOptions,
} from './breaker.js';

// Spec "Dependency circuit breaker" with its times shortened: 3 failures, reset 100 ms, streak 150 ms, timeout 50 ms.
const breakers: CircuitBreaker[] = [];
const logged: { obj: object | string; msg?: string | undefined }[] = [];
const make = (opts: Partial<CircuitBreakerOptions> = {}) => {
  const b = new CircuitBreaker({
    name: 'dep',
    timeoutMs: 50,
    resetMs: 100,
    streakMs: 150,
    logger: { info: (obj, msg) => logged.push({ obj, msg }) },
    ...opts,
  });
  breakers.push(b);
  return b;
};
afterEach(() => {
  for (const b of breakers.splice(0)) b.shutdown();
  logged.length = 0;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const boom = () => Promise.reject(new Error('boom'));
const ok = (v = 'ok') => Promise.resolve(v);
const stateIs = (b: CircuitBreaker, state: BreakerState) =>
  new Promise<void>((resolve) => {
    if (b.state === state) return resolve();
    const off = b.onStateChange((t) => {
      if (t.to === state) {
        off();
        resolve();
      }
    });
  });
const failTimes = async (b: CircuitBreaker, n: number) => {
  for (let i = 0; i < n; i++) await expect(b.fire(boom)).rejects.toThrow('boom');
};

describe('CircuitBreaker', () => {
  it('passes values through while CLOSED', async () => {
    const b = make();
    expect(await b.fire(() => ok('v'))).toBe('v');
    expect(b.state).toBe('CLOSED');
  });

  it('opens after 3 consecutive failures, logs at info, and then rejects without calling', async () => {
    const b = make();
    const transitions: BreakerTransition[] = [];
    b.onStateChange((t) => transitions.push(t));
    await failTimes(b, 2);
    expect(b.state).toBe('CLOSED');
    await failTimes(b, 1);
    expect(b.state).toBe('OPEN');
    expect(transitions).toMatchObject([{ from: 'CLOSED', to: 'OPEN', reason: 'consecutive_failures' }]);
    expect(logged).toMatchObject([
      { obj: { breaker: 'dep', reason: 'consecutive_failures' }, msg: expect.stringContaining('opened') },
    ]);
    let calls = 0;
    const err = await b.fire(() => ok(String(++calls))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BreakerOpenError);
    expect(err).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', retriable: true, state: 'OPEN' });
    expect(calls).toBe(0);
  });

  it('a success ends the run of failures', async () => {
    const b = make();
    await failTimes(b, 2);
    await b.fire(() => ok());
    await failTimes(b, 2);
    expect(b.state).toBe('CLOSED');
    expect(b.snapshot()).toMatchObject({ state: 'CLOSED', consecutiveFailures: 2, openedAt: null });
  });

  it('a call past its timeout is aborted and counts as a failure', async () => {
    const b = make();
    let aborted = 0;
    const hang = (signal: AbortSignal) =>
      new Promise<string>((_, reject) =>
        signal.addEventListener('abort', () => {
          aborted++;
          reject(new Error('aborted'));
        }),
      );
    for (let i = 0; i < 3; i++) await expect(b.fire(hang)).rejects.toBeInstanceOf(BreakerTimeoutError);
    expect(aborted).toBe(3);
    expect(b.state).toBe('OPEN');
  });

  it('HALF_OPEN after the reset time lets exactly one probe through; its success closes the breaker', async () => {
    const b = make();
    await failTimes(b, 3);
    await stateIs(b, 'HALF_OPEN');
    let calls = 0;
    const slow = async () => {
      calls++;
      await sleep(20);
      return 'probe';
    };
    const results = await Promise.allSettled([b.fire(slow), b.fire(slow), b.fire(slow)]);
    expect(calls).toBe(1);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'probe' });
    for (const r of results.slice(1)) {
      expect(r.status === 'rejected' && r.reason).toBeInstanceOf(BreakerOpenError);
    }
    expect(b.state).toBe('CLOSED');
    expect(logged.at(-1)?.msg).toContain('closed');
  });

  it('a failed probe opens it again for another reset period', async () => {
    const b = make();
    const transitions: BreakerTransition[] = [];
    b.onStateChange((t) => transitions.push(t));
    await failTimes(b, 3);
    await stateIs(b, 'HALF_OPEN');
    await failTimes(b, 1);
    expect(b.state).toBe('OPEN');
    expect(transitions.map((t) => `${t.to}${t.reason ? `:${t.reason}` : ''}`)).toEqual([
      'OPEN:consecutive_failures',
      'HALF_OPEN',
      'OPEN:probe_failed',
    ]);
    await stateIs(b, 'HALF_OPEN');
    expect(await b.fire(() => ok('back'))).toBe('back');
    expect(b.state).toBe('CLOSED');
  });

  it('a failure streak that has lasted the streak time opens it before 3 failures (the spec\'s "30 s timeout")', async () => {
    const b = make({ failureThreshold: 100 });
    const transitions: BreakerTransition[] = [];
    b.onStateChange((t) => transitions.push(t));
    await failTimes(b, 1);
    await sleep(80);
    await failTimes(b, 1);
    expect(b.state).toBe('CLOSED');
    await sleep(90); // 170 ms since the streak's first failure
    await failTimes(b, 1);
    expect(b.state).toBe('OPEN');
    expect(transitions).toMatchObject([{ to: 'OPEN', reason: 'failure_streak' }]);
  });

  it('a success restarts the streak clock', async () => {
    const b = make({ failureThreshold: 100 });
    await failTimes(b, 1);
    await sleep(100);
    await b.fire(() => ok());
    await failTimes(b, 1);
    await sleep(80);
    await failTimes(b, 1);
    expect(b.state).toBe('CLOSED');
  });

  it("the caller's abort is no evidence: not counted while CLOSED", async () => {
    const b = make({ timeoutMs: 1_000 });
    for (let i = 0; i < 4; i++) {
      const ctl = new AbortController();
      const call = b.fire(
        (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
        {
          signal: ctl.signal,
        },
      );
      ctl.abort(new Error('user went away'));
      await expect(call).rejects.toThrow('user went away');
    }
    expect(b.state).toBe('CLOSED');
  });

  it('a probe the caller aborts counts as failed: the breaker opens again rather than wait with no probe', async () => {
    const b = make({ timeoutMs: 1_000 });
    await failTimes(b, 3);
    await stateIs(b, 'HALF_OPEN');
    const ctl = new AbortController();
    const probe = b.fire(
      (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      {
        signal: ctl.signal,
      },
    );
    ctl.abort('gone');
    await expect(probe).rejects.toMatchObject({ name: 'AbortError', message: 'gone' });
    expect(b.state).toBe('OPEN');
  });

  it('errors isFailure rejects do not count and end the streak', async () => {
    const b = make({ isFailure: (err) => !(err instanceof Error && err.message === 'bad request') });
    await failTimes(b, 2);
    await expect(b.fire(() => Promise.reject(new Error('bad request')))).rejects.toThrow('bad request');
    await failTimes(b, 2);
    expect(b.state).toBe('CLOSED');
  });

  it('recordFailure counts a failure seen after the call resolved', async () => {
    const b = make();
    await failTimes(b, 2);
    await b.recordFailure(new Error('stream broke'));
    expect(b.state).toBe('OPEN');
  });

  it("failures of calls fired before opossum's rolling window (failures > fires there) do not open it", async () => {
    vi.useFakeTimers();
    try {
      const b = make({ timeoutMs: 60_000, streakMs: 60_000 });
      const late = () => new Promise<never>((_, reject) => setTimeout(() => reject(new Error('late')), 11_000));
      const calls = [b.fire(late).catch(() => undefined), b.fire(late).catch(() => undefined)];
      await vi.advanceTimersByTimeAsync(12_000);
      await Promise.all(calls);
      expect(b.state).toBe('CLOSED');
      expect(b.snapshot().consecutiveFailures).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
