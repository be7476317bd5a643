import {
  type Attachment,
  type MessageIngested,
  messageUuid,
  PLATFORM_A_SYSTEM_SUBTYPES,
  type Reaction,
} from '@atlas/core';
import { arr, isObj, type JsonObject, nonEmpty, num, obj, str } from './json.js';
import { contentHash, mediaTypeOfMime } from './plan.js';
import { type SlackContext, slackMentions } from './slack-context.js';

/**
 * Subtype rule (also in packages/platforms/README.md and docs/ingestion.md):
 * - keep ordinary messages (no subtype) and the user-content subtypes below;
 * - skip the system subtypes below, and any other subtype whose message is `hidden: true`;
 * - keep any other (unknown, visible) subtype, labelled with its subtype.
 * Skipped messages are counted as `subtype:<name>`.
 */
export const SLACK_KEPT_SUBTYPES: ReadonlySet<string> = new Set([
  'bot_message',
  'file_share',
  'thread_broadcast',
  'me_message',
  'file_comment',
]);

/** System subtypes (one list for the whole service, in @atlas/core). */
export const SLACK_SYSTEM_SUBTYPES = PLATFORM_A_SYSTEM_SUBTYPES;

/** The skip reason of a raw message, or null when it is kept. */
export function slackSkipReason(m: JsonObject): string | null {
  const type = str(m, 'type');
  if (type !== undefined && type !== 'message') return `type:${type}`;
  const subtype = str(m, 'subtype');
  if (subtype === undefined || SLACK_KEPT_SUBTYPES.has(subtype)) return null;
  if (SLACK_SYSTEM_SUBTYPES.has(subtype) || m.hidden === true) return `subtype:${subtype}`;
  return null;
}

/** Slack `ts` ("1517559148.000044", seconds) as ISO 8601 UTC with millisecond precision. */
export function slackTsToIso(ts: string): string {
  const [sec = '0', frac = ''] = ts.split('.');
  return new Date(Number(sec) * 1000 + Number(`${frac}000`.slice(0, 3))).toISOString();
}

/** Compares two Slack ts strings numerically (seconds, then the fraction). */
export function compareTs(a: string, b: string): number {
  const [as = '0', af = ''] = a.split('.');
  const [bs = '0', bf = ''] = b.split('.');
  return Number(as) - Number(bs) || Number(`0.${af}`) - Number(`0.${bf}`) || (a < b ? -1 : a > b ? 1 : 0);
}

function author(m: JsonObject, ctx: SlackContext): MessageIngested['author'] {
  const id = nonEmpty(m, 'user') ?? nonEmpty(obj(m, 'comment'), 'user') ?? nonEmpty(m, 'bot_id');
  const known = id !== undefined ? ctx.users.get(id) : undefined;
  const profile = obj(m, 'user_profile');
  const name =
    known?.name ??
    nonEmpty(profile, 'display_name') ??
    nonEmpty(profile, 'real_name') ??
    nonEmpty(profile, 'name') ??
    nonEmpty(m, 'username') ??
    nonEmpty(obj(m, 'bot_profile'), 'name') ??
    id ??
    'unknown';
  const isBot = str(m, 'subtype') === 'bot_message' || nonEmpty(m, 'bot_id') !== undefined || known?.isBot === true;
  return { id: id ?? nonEmpty(m, 'username') ?? 'unknown', name, isBot };
}

function fileAttachment(f: JsonObject): Attachment {
  const id = str(f, 'id') ?? 'unknown';
  const mimeType = nonEmpty(f, 'mimetype') ?? null;
  const size = num(f, 'size');
  return {
    id,
    name: nonEmpty(f, 'name') ?? nonEmpty(f, 'title') ?? id,
    url: nonEmpty(f, 'url_private') ?? nonEmpty(f, 'permalink') ?? null,
    mimeType,
    size: size !== undefined && Number.isInteger(size) ? size : null,
    mediaType: mediaTypeOfMime(mimeType),
  };
}

/** Files (`files[]`, old-style `file`) then link unfurls (`attachments[]` with from_url / title_link). */
export function slackAttachments(m: JsonObject): Attachment[] {
  const out: Attachment[] = [];
  const single = obj(m, 'file');
  for (const f of [...arr(m, 'files'), ...(single ? [single] : [])]) if (isObj(f)) out.push(fileAttachment(f));
  arr(m, 'attachments').forEach((a, i) => {
    const url = nonEmpty(a, 'from_url') ?? nonEmpty(a, 'title_link');
    if (url === undefined) return;
    out.push({
      id: str(a, 'id') ?? String(i + 1),
      name: nonEmpty(a, 'title') ?? nonEmpty(a, 'fallback') ?? url,
      url,
      mimeType: null,
      size: null,
      mediaType: 'link',
    });
  });
  return out;
}

/** Reactions with user ids resolved to display names (count stays the platform's, `users` may be truncated). */
export function slackReactions(m: JsonObject, ctx: SlackContext): Reaction[] {
  const out: Reaction[] = [];
  for (const r of arr(m, 'reactions')) {
    const emoji = nonEmpty(r, 'name');
    if (emoji === undefined) continue;
    const ids = arr(r, 'users').filter((u): u is string => typeof u === 'string');
    const count = num(r, 'count');
    out.push({
      emoji,
      count: count !== undefined && Number.isInteger(count) && count >= 0 ? count : ids.length,
      users: ids.map((id) => ctx.users.get(id)?.name ?? id),
    });
  }
  return out;
}

/** `https://<ws>.slack.com/archives/<channel>/p<ts digits>`, plus `?thread_ts=..&cid=..` for thread replies. */
export function slackPermalink(baseUrl: string, channelId: string, ts: string, threadTs: string | null): string {
  const link = `${baseUrl}/archives/${channelId}/p${ts.replace('.', '')}`;
  return threadTs !== null && threadTs !== ts ? `${link}?thread_ts=${threadTs}&cid=${channelId}` : link;
}

/** Maps one kept raw Slack message (which has a string `ts`) to MessageIngested. */
export function mapSlackMessage(
  m: JsonObject,
  channel: { id: string; name: string },
  ctx: SlackContext,
): MessageIngested {
  const ts = str(m, 'ts')!;
  const text = str(m, 'text') ?? '';
  const threadTs = nonEmpty(m, 'thread_ts') ?? null;
  const editedTs = nonEmpty(obj(m, 'edited'), 'ts');
  const editedAt = editedTs !== undefined ? slackTsToIso(editedTs) : null;
  const reactions = slackReactions(m, ctx);
  const attachments = slackAttachments(m);
  return {
    messageId: messageUuid('platform_a', channel.id, ts),
    platform: 'platform_a',
    workspaceId: ctx.workspaceId,
    channelId: channel.id,
    channelName: channel.name,
    platformMessageId: ts,
    text,
    author: author(m, ctx),
    timestamp: slackTsToIso(ts),
    threadTs,
    replyToId: null,
    subtype: str(m, 'subtype') ?? null,
    reactions,
    attachments,
    mentions: slackMentions(text, ctx.users),
    editedAt,
    permalink: slackPermalink(ctx.baseUrl, channel.id, ts, threadTs),
    contentHash: contentHash({ text, editedAt, reactions, attachments, threadTs }),
    source: 'import',
  };
}
