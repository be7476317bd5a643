import type { SourceRow, WikiSink } from './generate-types.js';
import type { TopicCluster, WikiPage } from './types.js';

/** What the cache holds for one channel: the state of its current version as this process last wrote or read it. */
interface Entry {
  version: number;
  sources?: SourceRow[];
  clusters?: TopicCluster[];
  pages?: WikiPage[];
}

/**
 * A WikiSink that keeps, per channel, the sources, clusters and pages of the current version in memory, so that a
 * long-lived process (the wiki scheduler) does not read them back from the store on its next incremental run.
 * Writes go to the store first and then update the cached copy (savePages: the pages, the sources and the
 * clusters saved with them). Entries are tied to a version number: when the store's current
 * version (currentVersion, read at the start of every run) is not the cached one, another process generated the
 * channel meanwhile, and the entry is dropped. Everything else passes through. Not for several processes writing
 * without reading currentVersion first.
 */
export function cachedWikiSink<S extends WikiSink>(sink: S): S {
  const cache = new Map<string, Entry>();
  const cached = async <K extends 'sources' | 'clusters' | 'pages'>(
    channelId: string,
    key: K,
    read: () => Promise<NonNullable<Entry[K]>>,
  ): Promise<NonNullable<Entry[K]>> => {
    const e = cache.get(channelId);
    const hit = e?.[key];
    if (hit) return hit as NonNullable<Entry[K]>;
    const value = await read();
    const now = cache.get(channelId);
    if (now) now[key] = value;
    return value;
  };
  const wrapper = {
    ...bindAll(sink),
    async currentVersion(channelId: string) {
      const v = await sink.currentVersion(channelId);
      const e = cache.get(channelId);
      if (!v) cache.delete(channelId);
      else if (!e || e.version !== v.version_number) cache.set(channelId, { version: v.version_number });
      return v;
    },
    sources: (channelId: string) => cached(channelId, 'sources', () => sink.sources(channelId)),
    clusters: (channelId: string) => cached(channelId, 'clusters', () => sink.clusters(channelId)),
    pages: (channelId: string) => cached(channelId, 'pages', () => sink.pages(channelId)),
    async savePages(...[channelId, wiki, meta]: Parameters<WikiSink['savePages']>) {
      const before = cache.get(channelId);
      const result = await sink.savePages(channelId, wiki, meta);
      const next: Entry = { version: result.version_number, pages: [...wiki.pages] };
      const w = meta.clusters;
      if (w?.replace) next.clusters = [...w.clusters];
      else if (w && before?.clusters) {
        const removed = new Set(w.removedIds);
        const byId = new Map(before.clusters.filter((c) => !removed.has(c.id)).map((c) => [c.id, c]));
        for (const c of w.changed) byId.set(c.id, c);
        next.clusters = [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
      }
      if (meta.sources) {
        const base = meta.sources.replace ? [] : before?.sources;
        if (base) {
          const key = (r: { kind: string; id: string }) => `${r.kind}\u0000${r.id}`;
          const rows = new Map(base.map((r) => [key(r), r]));
          for (const r of meta.sources.remove) rows.delete(key(r));
          for (const r of meta.sources.upsert) rows.set(key(r), r);
          next.sources = [...rows.values()];
        }
      }
      cache.set(channelId, next);
      return result;
    },
  };
  return wrapper as S;
}

/** An object's methods (its own and its prototypes') bound to it, as own properties: what a wrapper passes through. */
export function bindAll<T extends object>(sink: T): T {
  const out: Record<string, unknown> = {};
  let proto: object | null = sink;
  while (proto && proto !== Object.prototype) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const v = (sink as unknown as Record<string, unknown>)[name];
      if (name !== 'constructor' && typeof v === 'function' && !(name in out)) out[name] = v.bind(sink);
    }
    proto = Object.getPrototypeOf(proto);
  }
  return out as unknown as T;
}
