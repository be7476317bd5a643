import { escapeMarkers } from './extractive.js';
import { CACHED_WIKI_NOTE, WEB_SEARCH_NOTE } from './notes.js';
import type { AskPorts, AskWebResult, AskWikiPage } from './types.js';

/** Web results shown with an answer. */
const WEB_RESULTS = 3;

/** A web search's results, or `failed` when the provider is down, slow or its breaker is open. */
export type WebResults = { results: AskWebResult[] } | { failed: true };

/**
 * The web search of the question (at most WEB_RESULTS), started now: resolves to the results, to `null` when no
 * provider is configured, or to `{failed: true}` when it is down, slow (5 s breaker timeout) or its breaker is open.
 */
export function webResultsOf(
  webSearch: AskPorts['webSearch'],
  question: string,
  signal: AbortSignal | undefined,
): Promise<WebResults | null> {
  if (!webSearch) return Promise.resolve(null);
  return webSearch.search(question, { limit: WEB_RESULTS, ...(signal ? { signal } : {}) }).then(
    (results) => ({ results }),
    () => ({ failed: true as const }),
  );
}

/** The text that follows an answer: web results as links, the note when web search failed, nothing for none found. */
export function webSection(web: WebResults): string {
  if ('failed' in web) return `\n\n_${WEB_SEARCH_NOTE}_`;
  if (web.results.length === 0) return '';
  const line = (r: AskWebResult) =>
    `- [${escapeMarkers(r.title).replace(/[[\]]/g, '')}](${r.url})${r.snippet ? `: ${escapeMarkers(r.snippet)}` : ''}`;
  return `\n\nFrom the web:\n${web.results.map(line).join('\n')}`;
}

/**
 * The answer from the cached wiki when search cannot run (vector and graph store down): the stored pages of the
 * scope's channels (the ask's channel, or every channel) that share the most words with the question, up to three,
 * each as its title and summary, then CACHED_WIKI_NOTE; `visible` keeps only those channels (AskRequest.channels). null when no page of the scope exists (or none can be read).
 */
export async function cachedWikiAnswer(
  ports: Pick<AskPorts, 'wiki' | 'documents'>,
  question: string,
  channelId: string | null,
  visible?: readonly string[],
): Promise<string | null> {
  if (!ports.wiki) return null;
  const wiki = ports.wiki;
  try {
    const all = channelId ? [channelId] : (await ports.documents.listChannels()).map((c) => c.id);
    const channels = visible ? all.filter((c) => visible.includes(c)) : all;
    const pages = (await Promise.all(channels.map((c) => wiki.pages(c).catch(() => [] as AskWikiPage[])))).flat();
    if (pages.length === 0) return null;
    const words = new Set(question.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []);
    const scored = pages
      .map((p) => {
        const text = `${p.title} ${p.summary} ${p.content}`.toLowerCase();
        let score = 0;
        for (const w of words) if (text.includes(w)) score++;
        return { p, score };
      })
      .sort((a, b) => b.score - a.score);
    const chosen = (scored[0]!.score > 0 ? scored.filter((x) => x.score > 0) : scored).slice(0, 3);
    const plain = (t: string) => t.replace(/\s*\[\d{1,3}\]/g, '').trim(); // no source markers: no citations here
    const lines = chosen.map(({ p }) => `**${plain(p.title)}**: ${plain(p.summary) || plain(p.content).slice(0, 300)}`);
    return `${lines.join('\n\n')}\n\n_${CACHED_WIKI_NOTE}_`;
  } catch {
    return null;
  }
}
