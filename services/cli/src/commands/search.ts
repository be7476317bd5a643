import { type SearchResponse, searchMemories } from '@atlas/api';
import type { Config } from '@atlas/core';
import { acquireLock, readLock } from '../lock.js';
import { openRuntime } from '../runtime.js';

/**
 * `atlas search "<query>"`: asks the running server when one holds the data dir (over HTTP),
 * else opens the store directly. Keyword search with `<mark>` highlights (spec "Search").
 */
export const searchCommand = async (
  cfg: Config,
  query: string,
  opts: { channel?: string; limit: number },
): Promise<SearchResponse> => {
  const body = {
    query,
    channel_id: opts.channel ?? null,
    limit: opts.limit,
    include_citations: true,
    search_mode: 'keyword' as const,
  };
  const holder = cfg.DATABASE_URL ? null : readLock(cfg.ATLAS_DATA_DIR);
  if (holder?.port) {
    const res = await fetch(`http://127.0.0.1:${holder.port}/api/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as SearchResponse & { error?: { message: string } };
    if (!res.ok) throw new Error(json.error?.message ?? `server answered ${res.status}`);
    return json;
  }
  const release = cfg.DATABASE_URL ? () => undefined : acquireLock(cfg.ATLAS_DATA_DIR, { command: 'search' });
  try {
    const rt = await openRuntime(cfg);
    try {
      return await searchMemories(rt, { ...body, fuzzy: false });
    } finally {
      await rt.close();
    }
  } finally {
    release();
  }
};
