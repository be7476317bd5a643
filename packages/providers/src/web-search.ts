import { AtlasError, type BreakerLogger, type CircuitBreaker, dependencyBreaker, isDependencyFault } from '@atlas/core';

/** One web result: its title, address and a short text from the page. */
export interface WebSearchResult {
  title: string;
  url: string;
  snippet: string;
}

/**
 * The web search provider port (spec "Degraded behaviour": web search provider, not critical, 5 s; none configured by
 * default). `search` returns at most `limit` results, best first. Errors: AtlasError PROVIDER_UNAVAILABLE (retriable)
 * when the provider is down, slow or its breaker open: the caller answers from internal results with a note.
 */
export interface WebSearchProvider {
  /** Names the endpoint, e.g. `web:search.example.com`. */
  readonly id: string;
  search(query: string, opts?: { limit?: number; signal?: AbortSignal }): Promise<WebSearchResult[]>;
}

export interface HttpWebSearchOptions {
  /** The endpoint: GET `<url>?q=<query>&limit=<n>` (existing query parameters kept, e.g. `format=json`). */
  url: string;
  /** Sent as `Authorization: Bearer <key>` when set. */
  apiKey?: string | undefined;
  /** Gets the breaker's openings and closings at info level. */
  logger?: BreakerLogger | null;
  /** Breaker settings for tests (spec defaults otherwise: 5 s timeout, 3 failures, 30 s streak, 30 s reset). */
  breaker?: { timeoutMs?: number; resetMs?: number; streakMs?: number; failureThreshold?: number };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * The results of a search endpoint's JSON, whichever common shape it has: `{results: [...]}` (SearXNG, Tavily),
 * `{web: {results: [...]}}` (Brave), `{items: [...]}` (Google Custom Search), `{data: [...]}`, or a bare array; each
 * item's title, url (or link) and snippet (or content, description). Items without a url are dropped.
 */
export const parseWebResults = (body: unknown): WebSearchResult[] => {
  const o = (body ?? {}) as Record<string, unknown>;
  const list = Array.isArray(body)
    ? body
    : Array.isArray(o.results)
      ? o.results
      : Array.isArray((o.web as Record<string, unknown> | undefined)?.results)
        ? ((o.web as Record<string, unknown>).results as unknown[])
        : Array.isArray(o.items)
          ? o.items
          : Array.isArray(o.data)
            ? o.data
            : [];
  return list.flatMap((item) => {
    const r = (item ?? {}) as Record<string, unknown>;
    const url = str(r.url) || str(r.link);
    if (!url) return [];
    return [
      { title: str(r.title) || url, url, snippet: (str(r.snippet) || str(r.content) || str(r.description)).trim() },
    ];
  });
};

/**
 * A web search provider over a generic JSON endpoint (HttpWebSearchOptions), behind its circuit breaker
 * (`web_search_provider`, 5 s: spec "Degraded behaviour when a dependency fails"). A non-2xx answer, a network
 * error, a timeout or an open breaker throw AtlasError PROVIDER_UNAVAILABLE (retriable); a 4xx other than 408/429
 * does not count against the breaker (the request was refused, the provider is up).
 */
export class HttpWebSearchProvider implements WebSearchProvider {
  readonly id: string;
  readonly breaker: CircuitBreaker;

  constructor(private readonly opts: HttpWebSearchOptions) {
    this.id = `web:${new URL(opts.url).host}`;
    this.breaker = dependencyBreaker('web_search_provider', {
      name: `web_search_provider:${new URL(opts.url).host}`,
      logger: opts.logger ?? null,
      isFailure: (err) => {
        const status = (err as { details?: { status?: number } } | null)?.details?.status;
        if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) return false;
        return isDependencyFault(err);
      },
      ...opts.breaker,
    });
  }

  async search(query: string, opts: { limit?: number; signal?: AbortSignal } = {}): Promise<WebSearchResult[]> {
    const limit = opts.limit ?? 5;
    const url = new URL(this.opts.url);
    url.searchParams.set('q', query);
    url.searchParams.set('limit', String(limit));
    try {
      return await this.breaker.fire(
        async (signal) => {
          let res: Response;
          try {
            res = await fetch(url, {
              signal,
              headers: {
                accept: 'application/json',
                ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}),
              },
            });
          } catch (err) {
            if (signal.aborted) throw err;
            throw this.unavailable(`request failed: ${err instanceof Error ? err.message : String(err)}`, err);
          }
          if (!res.ok) {
            await res.body?.cancel();
            throw this.unavailable(`HTTP ${res.status}`, undefined, res.status);
          }
          return parseWebResults(await res.json().catch(() => null)).slice(0, limit);
        },
        opts.signal ? { signal: opts.signal } : {},
      );
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      if (err instanceof AtlasError) throw err;
      throw this.unavailable(err instanceof Error ? err.message : String(err), err);
    }
  }

  /** Stops the breaker's timers. */
  close(): void {
    this.breaker.shutdown();
  }

  private unavailable(why: string, cause?: unknown, status?: number): AtlasError {
    return new AtlasError('PROVIDER_UNAVAILABLE', `web search ${this.id} unavailable: ${why}`, {
      retriable: true,
      cause,
      details: { provider: this.id, ...(status === undefined ? {} : { status }) },
    });
  }
}
