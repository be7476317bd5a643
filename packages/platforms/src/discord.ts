import { type Attachment, type MessageIngested, messageUuid, type Person, type Reaction } from '@atlas/core';
import { arr, isObj, type JsonObject, kindOf, nonEmpty, num, obj, str } from './json.js';
import { contentHash, type ImportOptions, type ImportPlan, mediaTypeOfName, PlanBuilder } from './plan.js';
import { type ExportSource, importFailed, openSource, readJson } from './source.js';

/**
 * Type rule (also in packages/platforms/README.md): keep user content — `Default`, `Reply`, and the application-command types
 * `ChatInputCommand` / `ContextMenuCommand` (DiscordChatExporter writes types it has no name for as their
 * number, so `20` / `23` too). Skip every other type (DCE's system messages: `ThreadCreated`,
 * `GuildMemberJoin`, `ChannelPinnedMessage`, `RecipientAdd`, `RecipientRemove`, `Call`, `ChannelNameChange`,
 * `ChannelIconChange`, and unknown ones), counted as `type:<name>`.
 */
export const DISCORD_KEPT_TYPES: ReadonlyMap<string, string> = new Map([
  ['Default', 'Default'],
  ['Reply', 'Reply'],
  ['ChatInputCommand', 'ChatInputCommand'],
  ['ContextMenuCommand', 'ContextMenuCommand'],
  ['20', 'ChatInputCommand'],
  ['23', 'ContextMenuCommand'],
]);

const PRIVATE_CHANNEL_TYPES = new Set(['DirectTextChat', 'DirectGroupTextChat', 'GuildPrivateThread']);
const DISCORD_EPOCH_MS = 1420070400000n;

/** One exported channel (files with the same channel id, e.g. DCE partitions, are merged). */
interface DiscordChannel {
  guildId: string;
  guildName: string;
  id: string;
  name: string;
  type: string | undefined;
  topic: string | null;
  messages: { raw: JsonObject; file: string }[];
}

/** Creation time of a snowflake id as ISO UTC, or null when the id is not a snowflake. */
export function snowflakeTime(id: string): string | null {
  if (!/^\d{15,20}$/.test(id)) return null;
  return new Date(Number((BigInt(id) >> 22n) + DISCORD_EPOCH_MS)).toISOString();
}

/** Snowflakes compare numerically; anything else by string. */
const compareIds = (a: string, b: string): number =>
  /^\d+$/.test(a) && /^\d+$/.test(b) ? (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0) : a < b ? -1 : 1;

/** Checks one DCE file's shape and returns its channel; throws IMPORT_FAILED naming the file. */
function readChannelFile(file: string, data: unknown): DiscordChannel {
  const guild = obj(data, 'guild');
  const channel = obj(data, 'channel');
  if (!isObj(data) || !guild || !channel || !Array.isArray(data.messages)) {
    throw importFailed(file, 'not a DiscordChatExporter JSON export (needs guild, channel and messages[])');
  }
  const id = str(channel, 'id');
  if (id === undefined) throw importFailed(file, 'channel has no id');
  const messages = data.messages.map((raw, i) => {
    if (!isObj(raw)) throw importFailed(file, `message #${i} is ${kindOf(raw)}, not an object`, { index: i });
    if (str(raw, 'id') === undefined) throw importFailed(file, `message #${i} has no id`, { index: i });
    const ts = str(raw, 'timestamp');
    if (ts === undefined || Number.isNaN(Date.parse(ts))) {
      throw importFailed(file, `message #${i} (${str(raw, 'id')}) has no valid timestamp`, { index: i });
    }
    return { raw, file };
  });
  return {
    guildId: str(guild, 'id') ?? '0',
    guildName: nonEmpty(guild, 'name') ?? 'Direct Messages',
    id,
    name: str(channel, 'name') ?? id,
    type: str(channel, 'type'),
    topic: nonEmpty(channel, 'topic') ?? null,
    messages,
  };
}

const personName = (u: unknown): string => nonEmpty(u, 'nickname') ?? nonEmpty(u, 'name') ?? str(u, 'id') ?? 'unknown';

function reactions(m: JsonObject): Reaction[] {
  return arr(m, 'reactions').map((r) => {
    const emoji = obj(r, 'emoji');
    const users = arr(r, 'users').map((u) => nonEmpty(u, 'name') ?? str(u, 'id') ?? 'unknown');
    const count = num(r, 'count');
    return {
      emoji: nonEmpty(emoji, 'name') ?? nonEmpty(emoji, 'code') ?? str(emoji, 'id') ?? '?',
      count: count !== undefined && Number.isInteger(count) && count >= 0 ? count : users.length,
      users,
    };
  });
}

function attachments(m: JsonObject): Attachment[] {
  return arr(m, 'attachments').map((a, i) => {
    const url = nonEmpty(a, 'url') ?? null;
    const name = nonEmpty(a, 'fileName') ?? url?.split('/').pop()?.split('?')[0] ?? `attachment-${i + 1}`;
    const size = num(a, 'fileSizeBytes');
    return {
      id: str(a, 'id') ?? String(i + 1),
      name,
      url,
      mimeType: null,
      size: size !== undefined && Number.isInteger(size) ? size : null,
      mediaType: mediaTypeOfName(name),
    };
  });
}

function mentions(m: JsonObject): Person[] {
  const seen = new Map<string, Person>();
  for (const u of arr(m, 'mentions')) {
    const id = str(u, 'id');
    if (id !== undefined && !seen.has(id)) seen.set(id, { id, name: personName(u) });
  }
  return [...seen.values()];
}

/** Id of the message directly replied to (only `Reply` messages: other references are forwards or threads). */
const replyTarget = (m: JsonObject): string | null =>
  str(m, 'type') === 'Reply' ? (str(obj(m, 'reference'), 'messageId') ?? null) : null;

/** The root of the reply chain of `target`: follow reply links inside the export; stop at a message outside it. */
function chainRoot(target: string, byId: ReadonlyMap<string, JsonObject>): string {
  const seen = new Set<string>();
  let cur = target;
  for (;;) {
    const msg = byId.get(cur);
    const next = msg ? replyTarget(msg) : null;
    if (next === null || seen.has(next)) return cur;
    seen.add(cur);
    cur = next;
  }
}

/**
 * Maps one kept DiscordChatExporter-shaped message to MessageIngested (`source: 'import'`). `byId` holds the messages
 * reply chains are followed through (the export; for live sync, the API messages converted to this shape).
 * Shared by the importer and the live Discord client, so both give the same event for the same message.
 */
export function mapDiscordMessage(
  m: JsonObject,
  ch: { guildId: string; id: string; name: string },
  byId: ReadonlyMap<string, JsonObject>,
): MessageIngested {
  const id = str(m, 'id')!;
  const type = DISCORD_KEPT_TYPES.get(str(m, 'type') ?? 'Default') ?? 'Default';
  const text = str(m, 'content') ?? '';
  const replyToId = replyTarget(m);
  const threadTs = replyToId !== null ? chainRoot(replyToId, byId) : null;
  const edited = nonEmpty(m, 'timestampEdited');
  const editedAt = edited !== undefined && !Number.isNaN(Date.parse(edited)) ? new Date(edited).toISOString() : null;
  const a = obj(m, 'author');
  const reacts = reactions(m);
  const atts = attachments(m);
  const guildPart = ch.guildId === '0' ? '@me' : ch.guildId;
  return {
    messageId: messageUuid('platform_b', ch.id, id),
    platform: 'platform_b',
    workspaceId: ch.guildId,
    channelId: ch.id,
    channelName: ch.name,
    platformMessageId: id,
    text,
    author: { id: str(a, 'id') ?? 'unknown', name: personName(a), isBot: a?.isBot === true },
    timestamp: new Date(str(m, 'timestamp')!).toISOString(),
    threadTs,
    replyToId,
    subtype: type === 'Default' ? null : type,
    reactions: reacts,
    attachments: atts,
    mentions: mentions(m),
    editedAt,
    permalink: `https://discord.com/channels/${guildPart}/${ch.id}/${id}`,
    contentHash: contentHash({ text, editedAt, reactions: reacts, attachments: atts, threadTs }),
    source: 'import',
  };
}

/** Adds one channel to the plan: its messages deduplicated by id, oldest first. */
function planChannel(plan: PlanBuilder, ch: DiscordChannel): void {
  const unique = new Map<string, JsonObject>();
  const skipped: string[] = [];
  for (const { raw } of ch.messages) {
    const id = str(raw, 'id')!;
    if (unique.has(id)) skipped.push('duplicate_id');
    else unique.set(id, raw);
  }
  const ordered = [...unique.values()].sort(
    (x, y) =>
      Date.parse(str(x, 'timestamp')!) - Date.parse(str(y, 'timestamp')!) || compareIds(str(x, 'id')!, str(y, 'id')!),
  );
  const kept: MessageIngested[] = [];
  for (const m of ordered) {
    const type = str(m, 'type') ?? 'Default';
    if (DISCORD_KEPT_TYPES.has(type)) kept.push(mapDiscordMessage(m, ch, unique));
    else skipped.push(`type:${type}`);
  }
  plan.channel({
    platform: 'platform_b',
    workspaceId: ch.guildId,
    workspaceName: ch.guildName,
    channelId: ch.id,
    name: ch.name,
    isPrivate: ch.type !== undefined && PRIVATE_CHANNEL_TYPES.has(ch.type),
    memberCount: new Set(kept.map((k) => k.author.id)).size,
    topic: ch.topic,
    createdAt: snowflakeTime(ch.id),
    source: 'import',
  });
  for (const k of kept) plan.keep(k);
  for (const reason of skipped) plan.skip(ch.id, reason);
}

/**
 * Plans the import of DiscordChatExporter JSON (platform_b) from an opened source (see parseDiscordExport);
 * `opts.onFileRead` is called after each file.
 */
export async function planDiscord(src: ExportSource, opts: ImportOptions = {}): Promise<ImportPlan> {
  const plan = new PlanBuilder('platform_b_export', src.path);
  const files = src.kind === 'file' ? src.files : src.files.filter((f) => !f.includes('/') && /\.json$/i.test(f));
  if (files.length === 0) throw importFailed(src.name, 'no DiscordChatExporter .json file found');
  const channels = new Map<string, DiscordChannel>();
  for (const file of files) {
    const ch = readChannelFile(file, await readJson(src, file));
    plan.filesRead += 1;
    opts.onFileRead?.(plan.filesRead, files.length);
    const prev = channels.get(ch.id);
    if (prev) prev.messages.push(...ch.messages);
    else channels.set(ch.id, ch);
  }
  for (const ch of channels.values()) planChannel(plan, ch);
  return plan.build();
}

/**
 * Parses DiscordChatExporter JSON (platform_b): one `.json` file, or a directory / `.zip` of such files (one channel
 * each; files of the same channel are merged). Timestamps become ISO UTC; `threadTs` of a reply is the root of its
 * reply chain (the replied-to id itself when it is outside the export). Returns the ImportPlan.
 * Throws AtlasError IMPORT_FAILED naming the file for invalid JSON, a file without guild/channel/messages[],
 * or a message without `id` or a valid `timestamp`.
 */
export async function parseDiscordExport(path: string, opts: ImportOptions = {}): Promise<ImportPlan> {
  const src = await openSource(path, opts);
  try {
    return await planDiscord(src, opts);
  } finally {
    await src.close();
  }
}
