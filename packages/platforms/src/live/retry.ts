import pRetry from 'p-retry';
import type { ClientLogEvent, PlatformClientOptions, PlatformError, PlatformId } from './types.js';

/** Resolved retry settings (milliseconds). */
export interface RetrySettings {
  maxRetries: number;
  backoffMs: number;
  maxBackoffMs: number;
  maxRetryAfterMs: number;
  log: (event: ClientLogEvent) => void;
}

/** Defaults of PlatformClientOptions: 5 retries, 1 s doubling to 30 s, Retry-After waited up to 120 s. */
export function retrySettings(opts: PlatformClientOptions): RetrySettings {
  return {
    maxRetries: opts.maxRetries ?? 5,
    backoffMs: opts.backoffMs ?? 1000,
    maxBackoffMs: opts.maxBackoffMs ?? 30_000,
    maxRetryAfterMs: opts.maxRetryAfterMs ?? 120_000,
    log: opts.log ?? (() => {}),
  };
}

/** The reason of an aborted signal, as an Error (a DOMException `AbortError` when the caller gave none). */
const abortReason = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted', 'AbortError');

/** Waits `ms`; rejects with the abort reason as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `promise`, or a rejection with the abort reason when `signal` aborts first (the request itself may run on). */
export function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * Runs `fn` until it succeeds, retrying retriable PlatformErrors (from `toError`) with p-retry: a RATE_LIMIT waits its
 * `retryAfter` seconds (thrown at once when longer than `maxRetryAfterMs`), anything else waits
 * `backoffMs · 2^attempt` capped by `maxBackoffMs`. At most `maxRetries` retries, then the last PlatformError.
 * An abort of `signal` rejects at once with its reason (not a PlatformError). Each retry is logged with its wait.
 */
export async function withRetry<T>(
  platform: PlatformId,
  call: string,
  fn: () => Promise<T>,
  toError: (err: unknown) => PlatformError,
  settings: RetrySettings,
  signal?: AbortSignal,
): Promise<T> {
  const attempt = async (): Promise<T> => {
    if (signal?.aborted) throw abortReason(signal);
    try {
      return await abortable(fn(), signal);
    } catch (err) {
      if (signal?.aborted) throw abortReason(signal);
      throw toError(err);
    }
  };
  try {
    return await pRetry(attempt, {
      retries: settings.maxRetries,
      // The wait depends on the error (Retry-After or backoff), so shouldRetry waits it and p-retry adds none.
      minTimeout: 0,
      signal,
      shouldRetry: async ({ error, attemptNumber }) => {
        const e = error as PlatformError;
        if (signal?.aborted || !e.retriable) return false;
        const rateLimited = e.code === 'RATE_LIMIT' && e.retryAfter !== undefined;
        const waitMs = rateLimited
          ? e.retryAfter! * 1000
          : Math.min(settings.maxBackoffMs, settings.backoffMs * 2 ** (attemptNumber - 1));
        if (rateLimited && waitMs > settings.maxRetryAfterMs) return false;
        settings.log({ level: 'info', platform, msg: 'retrying', call, attempt: attemptNumber, waitMs, code: e.code });
        await sleep(waitMs, signal);
        return true;
      },
    });
  } catch (err) {
    if (signal?.aborted) throw abortReason(signal);
    throw err;
  }
}
