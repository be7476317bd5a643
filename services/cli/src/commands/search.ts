import { existsSync } from 'node:fs';
import { AtlasError, type Config, ERROR_STATUS, type ErrorCode } from '@atlas/core';
import { type SearchResponse, searchMemories } from '@atlas/query';
import { openRuntime } from '@atlas/runtime';
import { acquireLock, readLock } from '../lock.js';

/** How long the default server address gets to answer GET /api/health before the data dir is read instead, ms. */
export const HEALTH_PROBE_MS = 3000;

/** What `atlas search` answered and where it came from (both said on stderr, the results on stdout). */
export interface SearchOutcome {
  response: SearchResponse;
  /** Where the results came from, e.g. `searched the server at http://127.0.0.1:8000 (it holds /srv/atlas)`. */
  from: string;
  /** Set when what was searched holds nothing: which data dir, and what to do. */
  warning: string | null;
}

/** The API address of a configuration: ATLAS_API_URL, else http://HOST:PORT (127.0.0.1 for every interface). */
export const apiUrlOf = (cfg: Config): string =>
  cfg.ATLAS_API_URL ?? `http://${cfg.HOST === '0.0.0.0' || cfg.HOST === '::' ? '127.0.0.1' : cfg.HOST}:${cfg.PORT}`;

/** True when `url` answers GET /api/health as Atlas does (status and dependencies) within `timeoutMs`. */
export const answersHealth = async (url: string, timeoutMs = HEALTH_PROBE_MS): Promise<boolean> => {
  try {
    const res = await fetch(`${url.replace(/\/+$/, '')}/api/health`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.json()) as { status?: unknown; dependencies?: unknown };
    return typeof body.status === 'string' && typeof body.dependencies === 'object' && body.dependencies !== null;
  } catch {
    return false;
  }
};

/** POST /api/search on a server; its error body becomes an AtlasError of its code (else a plain Error). */
const searchServer = async (url: string, body: object): Promise<SearchResponse> => {
  const res = await fetch(`${url.replace(/\/+$/, '')}/api/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).catch((err: unknown) => {
    throw new AtlasError('STORE_UNAVAILABLE', `the server at ${url} does not answer: ${(err as Error).message}`);
  });
  const json = (await res.json().catch(() => ({}))) as SearchResponse & { error?: { code?: string; message?: string } };
  if (res.ok) return json;
  const code = json.error?.code;
  const message = `the server at ${url} answered ${res.status}: ${json.error?.message ?? res.statusText}`;
  throw code && code in ERROR_STATUS ? new AtlasError(code as ErrorCode, message) : new Error(message);
};

const emptyResponse = (): SearchResponse => ({ results: [], total: 0, query_time_ms: 0, search_method: 'keyword' });

/**
 * `atlas search "<query>"` (docs/import.md "Search from the command line"): keyword search with `<mark>` highlights
 * (spec "Search"), from the first of these that applies:
 * 1. the data dir is held by a running `atlas start` (its lock names the port): that server;
 * 2. no data dir was chosen (`dataDirGiven` false: neither --data-dir nor ATLAS_DATA_DIR) and the API at
 *    ATLAS_API_URL, else http://HOST:PORT, answers GET /api/health within HEALTH_PROBE_MS: that server;
 * 3. ATLAS_API_URL was set but does not answer: the error says so (STORE_UNAVAILABLE);
 * 4. the data dir itself (opened read-only in effect, under its lock; a data dir that does not exist is not
 *    created). When it holds no channels, `warning` names it and says what to do.
 * With DATABASE_URL the shared store is read directly. Errors: the server's error code, DATA_DIR_LOCKED when another
 * command holds the data dir, NOT_FOUND for an unknown channel.
 */
export const searchCommand = async (
  cfg: Config,
  query: string,
  opts: { channel?: string; limit: number; dataDirGiven?: boolean },
): Promise<SearchOutcome> => {
  const body = {
    query,
    channel_id: opts.channel ?? null,
    limit: opts.limit,
    include_citations: true,
    search_mode: 'keyword' as const,
  };
  const dir = cfg.ATLAS_DATA_DIR;
  const holder = cfg.DATABASE_URL ? null : readLock(dir);
  if (holder?.port) {
    const url = `http://127.0.0.1:${holder.port}`;
    return {
      response: await searchServer(url, body),
      from: `searched the server at ${url} (it holds ${dir})`,
      warning: null,
    };
  }
  const url = apiUrlOf(cfg);
  if (!cfg.DATABASE_URL && !opts.dataDirGiven) {
    if (await answersHealth(url))
      return { response: await searchServer(url, body), from: `searched the server at ${url}`, warning: null };
    if (cfg.ATLAS_API_URL)
      throw new AtlasError(
        'STORE_UNAVAILABLE',
        `ATLAS_API_URL ${url} does not answer GET /api/health: start the server, or unset ATLAS_API_URL and pass --data-dir <dir> to read a data dir`,
      );
  }
  const noServer = cfg.DATABASE_URL || opts.dataDirGiven ? '' : ` (no server answered at ${url})`;
  const hint =
    'import an export first (atlas import <path>), or pass --data-dir <dir> (or ATLAS_DATA_DIR) for another data dir, or start the server that holds it (atlas start --data-dir <dir>) and search again';
  if (!cfg.DATABASE_URL && !dir.startsWith('memory://') && !existsSync(dir))
    return {
      response: emptyResponse(),
      from: `searched nothing: there is no data dir at ${dir}${noServer}`,
      warning: `no data dir at ${dir}: ${hint}`,
    };
  const release = cfg.DATABASE_URL ? () => undefined : acquireLock(dir, { command: 'search' });
  try {
    const rt = await openRuntime(cfg);
    try {
      const channels = (await rt.documents.listChannels()).length;
      const where = cfg.DATABASE_URL ? 'the store at DATABASE_URL' : `the data dir ${dir}`;
      return {
        response: await searchMemories(rt, { ...body, fuzzy: false }),
        from: `searched ${where} (${channels} channel${channels === 1 ? '' : 's'})${noServer}`,
        warning: channels === 0 ? `${where} holds no channels: ${hint}` : null,
      };
    } finally {
      await rt.close();
    }
  } finally {
    release();
  }
};
