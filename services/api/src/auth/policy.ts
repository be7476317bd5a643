import type { Role } from '@atlas/core';

/** Who may call a route: anyone (`public`), or a principal holding at least this role (docs/access.md "Roles"). */
export type RouteAccess = 'public' | Role;

/**
 * Rules in order, first match wins: a method (or `*`) and a route pattern as Fastify registers it (`:param` segments),
 * either exact or a prefix ending in `*`. Readers read; members also ask, give feedback, upload, and trigger syncs and
 * wiki refreshes of channels they can see; admins manage connections, keys, settings, schedules, deletions and every
 * `/api/admin/*` route (issue 23, point 3). Every route not named here needs `reader` (GET) or `admin` (anything else),
 * so a route added without a rule is closed rather than open.
 */
export const ROUTE_RULES: readonly { method: string; route: string; access: RouteAccess }[] = [
  { method: 'GET', route: '/api/health', access: 'public' },
  // The API's own description (docs/openapi.md): what exists is no secret, what it holds is.
  { method: 'GET', route: '/api/openapi.json', access: 'public' },
  { method: 'GET', route: '/api/docs', access: 'public' },
  { method: 'GET', route: '/api/docs/*', access: 'public' },
  // The MCP server (routes/mcp.ts): readers connect; each tool's REST call is checked again as the caller.
  { method: '*', route: '/mcp', access: 'reader' },
  // Managing: admins only.
  { method: '*', route: '/api/admin/*', access: 'admin' },
  { method: '*', route: '/api/connections*', access: 'admin' },
  { method: 'DELETE', route: '/api/channels/:channel_id/data', access: 'admin' },
  { method: 'PUT', route: '/api/channels/:channel_id/settings', access: 'admin' },
  { method: 'PUT', route: '/api/sync/schedules', access: 'admin' },
  { method: 'GET', route: '/metrics', access: 'admin' },
  // Importing an export from the browser, and its jobs (docs/import.md "Importing from the browser").
  { method: '*', route: '/api/imports', access: 'admin' },
  { method: 'GET', route: '/api/imports/:import_id', access: 'admin' },
  // Asking, feedback, uploads, sessions of one's own: members.
  { method: 'POST', route: '/api/ask', access: 'member' },
  { method: 'POST', route: '/api/ask/*', access: 'member' },
  { method: 'POST', route: '/api/channels/:channel_id/ask', access: 'member' },
  { method: 'POST', route: '/api/channels/:channel_id/ask/*', access: 'member' },
  { method: 'DELETE', route: '/api/ask/sessions/:session_id', access: 'member' },
  { method: 'DELETE', route: '/api/channels/:channel_id/ask/sessions/:session_id', access: 'member' },
  // Triggering work on visible channels: members.
  { method: 'POST', route: '/api/sync', access: 'member' },
  { method: 'POST', route: '/api/sync/cancel', access: 'member' },
  { method: 'POST', route: '/api/channels/:channel_id/sync', access: 'member' },
  { method: 'POST', route: '/api/wiki/refresh', access: 'member' },
  // Reads that take a body: readers.
  { method: 'POST', route: '/api/search', access: 'reader' },
  { method: 'POST', route: '/api/memories/search', access: 'reader' },
];

const matches = (pattern: string, route: string): boolean =>
  pattern.endsWith('*') ? route.startsWith(pattern.slice(0, -1)) : pattern === route;

/**
 * The access a request needs: the first rule of ROUTE_RULES matching `method` and `route` (the route pattern, e.g.
 * `/api/channels/:channel_id`; HEAD is read as GET), else `reader` for GET and `admin` for any other method.
 */
export const routeAccess = (method: string, route: string): RouteAccess => {
  const m = method === 'HEAD' ? 'GET' : method;
  for (const r of ROUTE_RULES) if ((r.method === '*' || r.method === m) && matches(r.route, route)) return r.access;
  return m === 'GET' ? 'reader' : 'admin';
};
