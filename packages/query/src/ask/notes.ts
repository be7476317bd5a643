/** The note an extractive answer ends with (spec: "with no LLM configured the answer is extractive and says so"). */
export const EXTRACTIVE_NOTE =
  'Extractive answer: no language model is configured, so these are the stored memories that best match the question.';
/** The note of an extractive answer because every provider of the quality tier failed before its first token. */
export const FALLBACK_NOTE =
  'Extractive answer: the language model is unavailable right now, so these are the stored memories that best match the question.';
/** What follows an answer the LLM stopped mid-stream, before the retrieved sources. */
export const INTERRUPTED_NOTE = 'The language model stopped answering; the memories found for the question:';
/** The note when web search is configured but failing (spec: external search timeout → internal-only results with a note). */
export const WEB_SEARCH_NOTE =
  'External search is unavailable right now, so this answer uses only what Atlas knows from your channels.';
/** The note of an answer from the cached wiki (spec: vector and graph store both down → the cached wiki). */
export const CACHED_WIKI_NOTE =
  'Search is temporarily unavailable (the vector store and the graph store are down), so this answer comes from the cached wiki.';
/**
 * The error of an ask when the vector store and the graph store are both down and no cached wiki exists (spec "HTTP
 * statuses": an error object whose message says the system is temporarily unavailable).
 */
export const TEMPORARILY_UNAVAILABLE =
  'Atlas is temporarily unavailable: the vector store and the graph store are both down and there is no cached wiki to answer from. Try again in a minute.';
/** Seconds a client waits before asking again after TEMPORARILY_UNAVAILABLE (a breaker's 30 s reset). */
export const UNAVAILABLE_RETRY_AFTER_S = 30;
