import path from 'node:path';

/** The real exports the suite imports (shared data, never copied into the repository). */
export const DATA = path.resolve(import.meta.dirname, '../../../../shared/data');
export const OLAKE = path.join(DATA, 'slack-olake/export');
/** The contract's route list (spec "Endpoints"), one `METHOD /path` a line. */
export const ENDPOINTS = path.resolve(import.meta.dirname, '../../../../shared/spec/endpoints.txt');

/** An ask stream event as the rules read it (validated against AskStreamEventSchema separately). */
type StreamEvent = { type?: unknown } & Record<string, unknown>;

/**
 * The spec's four rules of the ask stream ("Events → Ask stream"), on a complete stream whose answer was stored as
 * `answer`: returns each violation. 1: tokens in order concatenate to the answer, one done, last. 2: one citation
 * event per source reference, citations_count equals their number. 3: citation ids `[n]` match the references of the
 * answer text both ways. 4: done carries the session_id (a follow-up continuing it is checked by the caller) and the
 * tokens' message_id.
 */
export const streamRuleViolations = (events: readonly StreamEvent[], answer: string | undefined): string[] => {
  const out: string[] = [];
  const done = events.filter((e) => e.type === 'done');
  if (done.length !== 1) return [`${done.length} done events`];
  const last = done[0]!;
  if (events.at(-1) !== last) out.push('events after done');
  const tokens = events.filter((e) => e.type === 'token');
  const text = tokens.map((t) => String(t.content)).join('');
  if (tokens.length === 0) out.push('no token event');
  if (answer !== undefined && text !== answer) out.push('tokens do not concatenate to the stored answer');
  if (tokens.some((t) => t.message_id !== last.message_id)) out.push('a token carries another message_id than done');
  const ids = events.filter((e) => e.type === 'citation').map((e) => (e.citation as { id?: string }).id ?? '');
  if (last.citations_count !== ids.length) out.push(`citations_count ${last.citations_count}, ${ids.length} citations`);
  if (new Set(ids).size !== ids.length) out.push('a citation id repeats');
  for (const id of ids) if (!text.includes(id)) out.push(`citation ${id} is not referenced in the answer`);
  for (const ref of new Set(text.match(/\[\d+\]/g) ?? [])) if (!ids.includes(ref)) out.push(`${ref} has no citation`);
  if (typeof last.session_id !== 'string' || last.session_id === '') out.push('done has no session_id');
  return out;
};

/** An HTTP method of the API. */
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Every route taking a channel_id (in its path, query or body), called with the unknown channel `nope`
 * (docs/conventions.md "Unknown channel": one rule everywhere, 404); `sessionId` is a real session of another channel.
 */
export const unknownChannelCalls = (nope: string, sessionId: string): [Method, string, object?][] => [
  ['GET', `/api/channels/${nope}`],
  ['GET', `/api/channels/${nope}/messages`],
  ['GET', `/api/channels/${nope}/settings`],
  ['PUT', `/api/channels/${nope}/settings`, { wiki_enabled: true }],
  ['GET', `/api/channels/${nope}/stats`],
  ['GET', `/api/channels/${nope}/sync/status`],
  ['POST', `/api/channels/${nope}/sync`, {}],
  ['DELETE', `/api/channels/${nope}/data`],
  ['POST', `/api/channels/${nope}/ask`, { question: 'anything?' }],
  ['POST', `/api/channels/${nope}/ask/feedback`, { session_id: sessionId, message_id: 'm', rating: 'up' }],
  ['GET', `/api/channels/${nope}/ask/history`],
  ['GET', `/api/channels/${nope}/ask/sessions`],
  ['GET', `/api/channels/${nope}/decisions`],
  ['GET', `/api/decisions?channel_id=${nope}`],
  ['GET', `/api/channels/${nope}/ask/sessions/${sessionId}`],
  ['DELETE', `/api/channels/${nope}/ask/sessions/${sessionId}`],
  ['GET', `/api/stats/channel/${nope}`],
  ['GET', `/api/wiki/${nope}`],
  ['GET', `/api/wiki/${nope}/topics/topic-x`],
  ['GET', `/api/memories?channel_id=${nope}`],
  ['GET', `/api/memories/topics?channel_id=${nope}`],
  ['GET', `/api/memories/entities?channel_id=${nope}`],
  ['GET', `/api/graph/entities?channel_id=${nope}`],
  ['GET', `/api/graph/relationships?channel_id=${nope}`],
  ['GET', `/api/graph/decisions?channel_id=${nope}`],
  ['GET', `/api/graph/entities/cards?channel_id=${nope}`],
  ['GET', `/api/graph/subgraph?entities=OLake&channel_id=${nope}`],
  ['GET', `/api/graph/path?source=OLake&target=Postgres&channel_id=${nope}`],
  ['GET', `/api/graph/common-neighbors?entities=OLake,Postgres&channel_id=${nope}`],
  ['GET', `/api/wiki/structure?channel_id=${nope}`],
  ['GET', `/api/wiki/pages/overview?channel_id=${nope}`],
  ['GET', `/api/wiki/versions?channel_id=${nope}`],
  ['GET', `/api/wiki/versions/1?channel_id=${nope}`],
  ['GET', `/api/wiki/activity?channel_id=${nope}`],
  ['GET', `/api/wiki/sync-history?channel_id=${nope}`],
  ['GET', `/api/wiki/status?channel_id=${nope}`],
  ['GET', `/api/wiki/metadata?channel_id=${nope}`],
  ['GET', `/api/sync/status?channel_id=${nope}`],
  ['GET', `/api/sync/history?channel_id=${nope}`],
  ['GET', `/api/stats/top-authors?channel_id=${nope}`],
  ['GET', `/api/stats/top-topics?channel_id=${nope}`],
  ['GET', `/api/stats/export?channel_id=${nope}`],
  ['POST', '/api/search', { query: 'postgres', channel_id: nope }],
  ['POST', '/api/memories/search', { query: 'postgres', channel_id: nope }],
  ['POST', '/api/sync', { channel_id: nope }],
  ['PUT', '/api/sync/schedules', { channel_id: nope, schedule: '0 3 * * *' }],
  ['POST', '/api/wiki/refresh', { channel_id: nope }],
  ['POST', '/api/admin/wiki/rebuild', { channel_id: nope }],
];

/**
 * Invalid requests and unknown ids with the status each answers (limits of spec "Limits", enums, required fields;
 * 404 for unknown ids); `help` is an imported channel in no connection, `synced` a synced one, `sessionId` a session.
 */
export const invalidRequests = (
  help: string,
  synced: string,
  sessionId: string,
): [Method, string, object?, number?][] => [
  ['GET', `/api/memories?channel_id=${help}&limit=101`, undefined, 400],
  ['GET', '/api/memories', undefined, 400],
  ['GET', `/api/channels/${help}/messages?limit=201`, undefined, 400],
  ['GET', `/api/graph/entities?channel_id=${help}&limit=201`, undefined, 400],
  ['GET', `/api/graph/entities?channel_id=${help}&type=Animal`, undefined, 400],
  ['GET', `/api/graph/entities/${help}/neighbors?depth=4`, undefined, 400],
  ['POST', '/api/search', { query: 'x', channel_id: null, limit: 51 }, 400],
  ['POST', '/api/search', { query: 'x' }, 400],
  ['POST', '/api/ask/feedback', { session_id: sessionId, message_id: 'x', rating: 'meh' }, 400],
  ['GET', '/api/memories/00000000-0000-5000-8000-000000000000', undefined, 404],
  ['GET', '/api/graph/entities/00000000-0000-5000-8000-000000000000', undefined, 404],
  ['GET', '/api/graph/entities/no-such-entity-name/card', undefined, 404],
  ['GET', '/api/connections/no-such-connection', undefined, 404],
  ['GET', '/api/ask/sessions/no-such-session', undefined, 404],
  ['GET', `/api/wiki/pages/no-such-page?channel_id=${help}`, undefined, 404],
  ['GET', `/api/wiki/versions/99?channel_id=${help}`, undefined, 404],
  ['GET', `/api/sync/status?channel_id=${synced}&job_id=no-such-job`, undefined, 404],
  ['POST', '/api/sync', { channel_id: help }, 400], // in no connection
];

/** A parsed JSON body, altered freely. */
type Json = ReturnType<typeof JSON.parse>;

/**
 * Alterations of real answers that their schema must refuse: a wrong type, a field the form must not have (detail
 * only, list form only, credentials), a missing one, a bad enum, a timestamp or date in the wrong form, a range broken.
 */
export const ALTERATIONS: [string, (b: Json) => void][] = [
  ['GET /api/channels', (b) => (b[0].connected = 'yes')],
  ['GET /api/channels', (b) => (b[0].settings = { sync_enabled: true, wiki_enabled: true, graph_enabled: true })],
  ['GET /api/channels/{channel_id}', (b) => delete b.wiki_page_count],
  ['GET /api/channels/{channel_id}/messages', (b) => (b.messages[0].timestamp = '2026-08-09 14:33')],
  ['GET /api/memories', (b) => (b.memories[0].fact_type = 'rumour')],
  ['GET /api/memories/{memory_id}', (b) => (b.permalink = 'https://example.com/p1')],
  ['GET /api/memories/{memory_id}', (b) => (b.quality_score = 1.2)],
  ['GET /api/connections', (b) => (b[0].credentials = { bot_token: 'x' })],
  ['GET /api/graph/entities', (b) => (b[0].source_message_id = 'm1')],
  ['GET /api/graph/entities/{entity_id}', (b) => (b.type = 'Animal')],
  ['GET /api/graph/relationships', (b) => (b[0].valid_from = '2026-05-16T00:00:00Z')],
  ['GET /api/graph/relationships', (b) => (b[0].confidence = 1.5)],
  ['GET /api/sync/status', (b) => (b.progress.percentage = 101)],
  ['GET /api/sync/history', (b) => (b.history[0].duration_seconds = 1.5)],
  ['GET /api/stats', (b) => (b.total_facts = -1)],
  ['GET /api/wiki/structure', (b) => (b.pages[0].page_type = 'entity')],
  ['GET /api/wiki/versions', (b) => (b.versions[0].version_number = '1')],
  ['POST /api/search', (b) => (b.results[0].score = -0.1)],
  ['GET /api/ask/sessions/{session_id}', (b) => (b.messages[0].role = 'system')],
  ['GET /api/health', (b) => delete b.dependencies.web_search_provider],
  ['GET /api/stats/health', (b) => (b.components.graph_store.latency_ms = -1)],
];
