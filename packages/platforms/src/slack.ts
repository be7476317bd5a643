import { isObj, type JsonObject, kindOf, nonEmpty, num, obj, str } from './json.js';
import { type ImportOptions, type ImportPlan, PlanBuilder } from './plan.js';
import { buildSlackContext, parseUsers, type SlackContext } from './slack-context.js';
import { compareTs, mapSlackMessage, slackSkipReason } from './slack-message.js';
import { type ExportSource, importFailed, openSource, parseJsonText, readJson } from './source.js';

/** One channels.json entry. */
interface SlackChannel {
  id: string;
  name: string;
  isPrivate: boolean;
  members: number | undefined;
  /** The member user ids channels.json lists (`members`), when it lists them. */
  memberIds: string[] | undefined;
  topic: string | null;
  createdAt: string | null;
}

/** Raw messages of one channel, already checked to be objects with a string `ts`. */
interface ChannelDays {
  channel: SlackChannel;
  messages: JsonObject[];
  files: number;
}

/**
 * Parses channels.json: an array of `{id, name, created?, is_private?, members?, num_members?, topic?}`. A channel is
 * private when `is_private` is true; its `members` (user ids; other entries ignored) are its member list.
 */
function parseChannels(file: string, data: unknown): SlackChannel[] {
  if (!Array.isArray(data)) throw importFailed(file, `expected an array of channels, got ${kindOf(data)}`);
  return data.map((c, i) => {
    const memberIds = isObj(c) && Array.isArray(c.members) ? c.members.filter((m) => typeof m === 'string') : undefined;
    return channelOf(file, c, i, isObj(c) && c.is_private === true, memberIds);
  });
}

/**
 * Parses groups.json (private channels of an export that includes them): an array of `{id, name, created?, members?,
 * topic?, ...}`, every one private. `members`, when present, must be an array of user id strings; a group without it
 * is private with no members (nobody but admins sees it). Throws IMPORT_FAILED on anything else.
 */
function parseGroups(file: string, data: unknown): SlackChannel[] {
  if (!Array.isArray(data)) throw importFailed(file, `expected an array of private channels, got ${kindOf(data)}`);
  return data.map((c, i) => {
    const raw = isObj(c) ? c.members : undefined;
    if (raw !== undefined && raw !== null && !Array.isArray(raw)) {
      throw importFailed(file, `channel #${i} has members ${kindOf(raw)}, not an array of user ids`, { index: i });
    }
    const bad = (raw ?? []).findIndex((m) => typeof m !== 'string' || m === '');
    if (bad >= 0) {
      const what = raw![bad] === '' ? 'an empty string' : kindOf(raw![bad]);
      throw importFailed(file, `channel #${i} has members[${bad}] ${what}, not a user id`, { index: i });
    }
    const listed = (raw as string[] | null | undefined) ?? undefined;
    return { ...channelOf(file, c, i, true, listed), memberIds: listed ?? [] };
  });
}

/** One channel entry of channels.json or groups.json (`#i` in errors); throws IMPORT_FAILED without id or name. */
function channelOf(
  file: string,
  c: unknown,
  i: number,
  isPrivate: boolean,
  memberIds: string[] | undefined,
): SlackChannel {
  const id = nonEmpty(c, 'id');
  const name = nonEmpty(c, 'name');
  if (id === undefined || name === undefined) throw importFailed(file, `channel #${i} has no id or name`, { index: i });
  const created = num(c, 'created');
  return {
    id,
    name,
    isPrivate,
    members: memberIds?.length ?? num(c, 'num_members'),
    memberIds,
    topic: nonEmpty(obj(c, 'topic'), 'value') ?? null,
    createdAt: created !== undefined && created > 0 ? new Date(created * 1000).toISOString() : null,
  };
}

/**
 * channels.json's channels, then groups.json's not already listed; a groups.json entry replaces a channels.json one
 * with the same id (it is private: access fails closed rather than open).
 */
function mergeChannels(channels: SlackChannel[], groups: SlackChannel[]): SlackChannel[] {
  const byId = new Map(groups.map((g) => [g.id, g]));
  const merged = channels.map((c) => byId.get(c.id) ?? c);
  const listed = new Set(channels.map((c) => c.id));
  return [...merged, ...groups.filter((g) => !listed.has(g.id))];
}

/** Parses one day file: an array of message objects, each with a string `ts`. */
function parseDay(file: string, text: string): JsonObject[] {
  const data = parseJsonText(file, text);
  if (!Array.isArray(data)) throw importFailed(file, `expected an array of messages, got ${kindOf(data)}`);
  data.forEach((m, i) => {
    if (!isObj(m)) throw importFailed(file, `message #${i} is ${kindOf(m)}, not an object`, { index: i });
    if (typeof m.ts !== 'string' || !/^\d+(\.\d+)?$/.test(m.ts)) {
      throw importFailed(file, `message #${i} has no valid ts`, { index: i });
    }
  });
  return data as JsonObject[];
}

/** `<folder>/*.json` files of the source, sorted. */
const dayFiles = (src: ExportSource, folder: string): string[] =>
  src.files.filter((f) => f.startsWith(`${folder}/`) && f.toLowerCase().endsWith('.json'));

/** The day files of each channel: its folder by name, else by id. */
const channelDayFiles = (src: ExportSource, channels: SlackChannel[]): { channel: SlackChannel; files: string[] }[] =>
  channels.map((channel) => {
    const files = dayFiles(src, channel.name);
    return { channel, files: files.length > 0 ? files : dayFiles(src, channel.id) };
  });

/**
 * Reads every day file of every channel (in parallel), then parses them in order: the first bad file throws.
 * `onRead` is called after each file read.
 */
async function readChannelDays(
  src: ExportSource,
  channels: SlackChannel[],
  onRead: () => void = () => undefined,
): Promise<ChannelDays[]> {
  const perChannel = await Promise.all(
    channelDayFiles(src, channels).map(async ({ channel, files }) => {
      const texts = await Promise.all(
        files.map(async (f) => {
          const text = await src.readText(f);
          onRead();
          return text;
        }),
      );
      return { channel, files, texts };
    }),
  );
  return perChannel.map(({ channel, files, texts }) => {
    const messages = files.flatMap((f, i) => parseDay(f, texts[i]!));
    messages.sort((a, b) => compareTs(a.ts as string, b.ts as string));
    return { channel, messages, files: files.length };
  });
}

/** The first `team_id` / `context_team_id` found in users.json or channels.json (when messages carry no `team`). */
function fallbackTeam(users: unknown, channels: unknown): string | undefined {
  const fromList = (list: unknown, key: string): string | undefined =>
    Array.isArray(list) ? list.map((x) => nonEmpty(x, key)).find((v) => v !== undefined) : undefined;
  return fromList(users, 'team_id') ?? fromList(channels, 'context_team_id');
}

/**
 * Plans the import of a Slack export layout (platform_a) from an opened source.
 * Throws IMPORT_FAILED when channels.json is missing, or on the first invalid file (see parseSlackExport).
 */
export async function planSlack(src: ExportSource, opts: ImportOptions = {}): Promise<ImportPlan> {
  if (!src.files.includes('channels.json')) {
    throw importFailed('channels.json', 'missing: a Slack export needs channels.json at its root', {
      found: src.files.slice(0, 20),
    });
  }
  const plan = new PlanBuilder('platform_a_export', src.path);
  const rawChannels = await readJson(src, 'channels.json');
  let channels = parseChannels('channels.json', rawChannels);
  plan.filesRead += 1;
  if (src.files.includes('groups.json')) {
    channels = mergeChannels(channels, parseGroups('groups.json', await readJson(src, 'groups.json')));
    plan.filesRead += 1;
  }
  let rawUsers: unknown = [];
  if (src.files.includes('users.json')) {
    rawUsers = await readJson(src, 'users.json');
    plan.filesRead += 1;
  }
  const users = parseUsers('users.json', rawUsers);
  // Files read: channels.json, groups.json, users.json, then the day files (their number is known once those are).
  const total = plan.filesRead + channelDayFiles(src, channels).reduce((n, c) => n + c.files.length, 0);
  let read = plan.filesRead;
  opts.onFileRead?.(read, total);
  const days = await readChannelDays(src, channels, () => opts.onFileRead?.(++read, total));
  const ctx = buildSlackContext({
    messages: days.flatMap((d) => d.messages),
    users,
    fallbackTeam: fallbackTeam(rawUsers, rawChannels),
    folderName: src.name,
    workspaceUrl: opts.workspaceUrl,
  });
  for (const day of days) {
    plan.filesRead += day.files;
    planChannel(plan, day, ctx);
  }
  return plan.build();
}

/** Adds one channel and its kept messages (and skip counts) to the plan. */
function planChannel(plan: PlanBuilder, { channel, messages }: ChannelDays, ctx: SlackContext): void {
  const { kept, skipped } = partition(messages);
  const mapped = kept.map((m) => mapSlackMessage(m, channel, ctx));
  plan.channel({
    platform: 'platform_a',
    workspaceId: ctx.workspaceId,
    workspaceName: ctx.workspaceName,
    channelId: channel.id,
    name: channel.name,
    isPrivate: channel.isPrivate,
    memberCount: channel.members ?? new Set(mapped.map((m) => m.author.id)).size,
    topic: channel.topic,
    createdAt: channel.createdAt,
    source: 'import',
  });
  // Channel access: a private channel's listed members (a groups.json channel without a list: none, so only admins
  // see it); a public one, or a channels.json private one without a list, is public to the workspace.
  if (channel.isPrivate && channel.memberIds) plan.members(channel.id, channel.memberIds);
  for (const m of mapped) plan.keep(m);
  for (const reason of skipped) plan.skip(channel.id, reason);
}

/** Splits messages by the subtype rule; a repeated ts (same channel) is skipped as `duplicate_ts`. */
function partition(messages: JsonObject[]): { kept: JsonObject[]; skipped: string[] } {
  const kept: JsonObject[] = [];
  const skipped: string[] = [];
  const seen = new Set<string>();
  for (const m of messages) {
    const ts = str(m, 'ts')!;
    const reason = slackSkipReason(m) ?? (seen.has(ts) ? 'duplicate_ts' : null);
    if (reason !== null) skipped.push(reason);
    else {
      seen.add(ts);
      kept.push(m);
    }
  }
  return { kept, skipped };
}

/**
 * Parses a Slack export (platform_a): a directory or a `.zip` holding `channels.json`, optional `groups.json` (private
 * channels: every one private, its `members` the member list; none listed → no members), optional `users.json`, and
 * `<channel-name>/<YYYY-MM-DD>.json` arrays of messages (dms.json, mpims.json and folders listed in neither
 * channels.json nor groups.json are ignored). Returns the ImportPlan; keeps messages by the subtype rule (see
 * slack-message.ts). Throws AtlasError IMPORT_FAILED (`details.file` relative to the export root, `details.problem`)
 * when channels.json is missing, a file is not valid JSON, channels.json or groups.json is not an array of channels
 * with id and name (groups.json: `members` not an array of user id strings), a day file is not an array, or a message
 * has no `ts`.
 */
export async function parseSlackExport(path: string, opts: ImportOptions = {}): Promise<ImportPlan> {
  const src = await openSource(path, opts);
  try {
    return await planSlack(src, opts);
  } finally {
    await src.close();
  }
}
