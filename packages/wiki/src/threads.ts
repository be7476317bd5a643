// Conversations: facts grouped by the thread their message belongs to.
import type { WikiFact } from './types.js';

/**
 * Facts (best first) regrouped by conversation: each thread's facts (threadKey) together, in message time order, at
 * the place of the thread's best fact. A problem and its fix then read in order instead of apart.
 */
export function byThread(facts: readonly WikiFact[]): WikiFact[] {
  const groups = new Map<string, WikiFact[]>();
  for (const f of facts) {
    const k = threadKey(f);
    const g = groups.get(k);
    if (g) g.push(f);
    else groups.set(k, [f]);
  }
  return [...groups.values()].flatMap((g) =>
    g.length < 2 ? g : [...g].sort((a, b) => a.message_ts.localeCompare(b.message_ts) || a.id.localeCompare(b.id)),
  );
}

/**
 * The thread a fact's message belongs to: the `thread_ts` query parameter of its permalink (workplace
 * chat replies), else its own message id (a thread root, or a platform without threads in permalinks).
 */

export function threadKey(fact: Pick<WikiFact, 'permalink' | 'source_message_id'>): string {
  const m = /[?&]thread_ts=([^&#]+)/.exec(fact.permalink ?? '');
  return m ? decodeURIComponent(m[1]!) : fact.source_message_id;
}
