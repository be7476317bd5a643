import type { Person } from '@atlas/core';
import { arr, isObj, type JsonObject, kindOf, nonEmpty, obj, str } from './json.js';
import { importFailed } from './source.js';

/** A users.json entry reduced to what the mapper needs. */
export interface SlackUser {
  name: string;
  isBot: boolean;
}

/** Workspace facts shared by every message of one Slack export. */
export interface SlackContext {
  workspaceId: string;
  workspaceName: string;
  /** `https://<ws>.slack.com` when known, else `https://slack.com`. */
  baseUrl: string;
  users: Map<string, SlackUser>;
}

/** Display name of a user object: profile.display_name, then real_name, then name. */
export function displayName(u: unknown): string | undefined {
  const profile = obj(u, 'profile');
  return (
    nonEmpty(profile, 'display_name') ??
    nonEmpty(profile, 'real_name') ??
    nonEmpty(u, 'real_name') ??
    nonEmpty(u, 'name')
  );
}

/** Parses users.json (an array of user objects) into id -> {name, isBot}. */
export function parseUsers(file: string, data: unknown): Map<string, SlackUser> {
  if (!Array.isArray(data)) throw importFailed(file, `expected an array of users, got ${kindOf(data)}`);
  const users = new Map<string, SlackUser>();
  for (const u of data) {
    const id = str(u, 'id');
    if (id === undefined) continue;
    users.set(id, { name: displayName(u) ?? id, isBot: isObj(u) && u.is_bot === true });
  }
  return users;
}

const NOT_A_WORKSPACE = new Set(['files', 'app', 'api', 'hooks', 'www', 'slack-files', 'status']);
const WS_URL = /^https:\/\/([a-z0-9][a-z0-9-]*)\.(?:enterprise\.)?slack\.com\//i;

/** Workspace URLs of a message's files (permalink / edit_link), then of its link attachments. */
function* workspaceUrlCandidates(m: JsonObject): Generator<string> {
  const files = [...arr(m, 'files'), ...(obj(m, 'file') ? [obj(m, 'file')] : [])];
  for (const f of files) {
    for (const k of ['permalink', 'edit_link']) {
      const v = str(f, k);
      if (v) yield v;
    }
  }
  for (const a of arr(m, 'attachments')) {
    for (const k of ['author_link', 'from_url', 'original_url']) {
      const v = str(a, k);
      if (v) yield v;
    }
  }
}

/** The most frequent `<ws>` among `https://<ws>.slack.com/` URLs in the messages (ties: alphabetical), if any. */
export function inferWorkspaceHost(messages: Iterable<JsonObject>): string | undefined {
  const counts = new Map<string, number>();
  for (const m of messages) {
    for (const url of workspaceUrlCandidates(m)) {
      const ws = WS_URL.exec(url)?.[1]?.toLowerCase();
      if (ws !== undefined && !NOT_A_WORKSPACE.has(ws)) counts.set(ws, (counts.get(ws) ?? 0) + 1);
    }
  }
  const ranked = [...counts].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
  return ranked[0]?.[0];
}

/** Normalises a workspace URL option (`acme.slack.com`, `https://acme.slack.com/`) to an origin. */
export function normaliseWorkspaceUrl(url: string): URL {
  try {
    return new URL(/^https?:\/\//i.test(url) ? url : `https://${url}`);
  } catch (err) {
    throw importFailed('options', `invalid workspaceUrl '${url}'`, {}, err);
  }
}

/** Builds the shared context: workspace id from `team`, name and base URL from the workspace URL or folder name. */
export function buildSlackContext(args: {
  messages: JsonObject[];
  users: Map<string, SlackUser>;
  fallbackTeam: string | undefined;
  folderName: string;
  workspaceUrl: string | undefined;
}): SlackContext {
  let team: string | undefined;
  for (const m of args.messages) {
    team = nonEmpty(m, 'team') ?? nonEmpty(m, 'user_team');
    if (team) break;
  }
  let baseUrl = 'https://slack.com';
  let workspaceName = args.folderName;
  const origin = args.workspaceUrl ? normaliseWorkspaceUrl(args.workspaceUrl) : undefined;
  const host = origin ? origin.hostname : inferWorkspaceHost(args.messages);
  if (host !== undefined) {
    const fullHost = host.includes('.') ? host : `${host}.slack.com`;
    baseUrl = `https://${fullHost}`;
    workspaceName = fullHost.replace(/\.(?:enterprise\.)?slack\.com$/i, '');
  }
  return {
    workspaceId: team ?? args.fallbackTeam ?? args.folderName,
    workspaceName,
    baseUrl,
    users: args.users,
  };
}

const MENTION = /<@([A-Z0-9]+)(?:\|([^>]*))?>/g;

/** Users mentioned as `<@U123>` or `<@U123|label>`, resolved via users.json, then the label, then the id. */
export function slackMentions(text: string, users: Map<string, SlackUser>): Person[] {
  const seen = new Map<string, Person>();
  for (const match of text.matchAll(MENTION)) {
    const id = match[1]!;
    if (seen.has(id)) continue;
    const label = match[2]?.trim();
    seen.set(id, { id, name: users.get(id)?.name ?? (label ? label : id) });
  }
  return [...seen.values()];
}
